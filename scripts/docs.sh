#!/usr/bin/env bash
# Renders docs/modules/ (one page per module) from the modules' own documentation with
# antsibull-docs, offline. --check fails when docs/modules/ is out of date instead.
source "$(dirname "$0")/env.sh" || exit 1
cd "$REPO_ROOT" || exit 1
set -euo pipefail

rendered="$BUILD_DIR/docs-render"
rm -rf "$rendered" && mkdir -p "$rendered"
if ! output=$(antsibull-docs collection-plugins --dest-dir "$rendered" --fail-on-error \
    --no-add-antsibull-docs-version --output-format simplified-rst --use-current \
    cephops.osd_tuning 2>&1); then
  printf '%s\n' "$output" | grep -v '^Exception ignored\|^Traceback\|^  \|^OSError' >&2
  exit 1
fi

if [ "${1:-}" = "--check" ]; then
  if ! diff -ru docs/modules "$rendered"; then
    echo "docs/modules is out of date: run scripts/docs.sh" >&2
    exit 1
  fi
else
  rm -rf docs/modules && cp -r "$rendered" docs/modules
fi
