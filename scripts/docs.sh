#!/usr/bin/env bash
# Renders docs/reference/ (one page per module) from the modules' own documentation with
# antsibull-docs, offline. --check fails when docs/reference/ is out of date instead.
# Only files git knows (committed or staged) are rendered, as in a fresh clone.
source "$(dirname "$0")/env.sh" || exit 1
cd "$REPO_ROOT" || exit 1
set -euo pipefail

rendered="$BUILD_DIR/docs-render"
tree="$BUILD_DIR/docs-tree"
rm -rf "$rendered" "$tree" && mkdir -p "$rendered" "$tree/ansible_collections/cephops/osd_tuning"
git ls-files -z --cached | xargs -0 cp --parents -t "$tree/ansible_collections/cephops/osd_tuning"
if ! output=$(ANSIBLE_COLLECTIONS_PATH="$tree:$ANSIBLE_COLLECTIONS_PATH" antsibull-docs collection-plugins --dest-dir "$rendered" --fail-on-error \
    --no-add-antsibull-docs-version --output-format simplified-rst --use-current \
    cephops.osd_tuning 2>&1); then
  printf '%s\n' "$output" | grep -v '^Exception ignored\|^Traceback\|^  \|^OSError' >&2
  exit 1
fi

if [ "${1:-}" = "--check" ]; then
  if ! diff -ru docs/reference "$rendered"; then
    echo "docs/reference is out of date: run scripts/docs.sh" >&2
    exit 1
  fi
else
  rm -rf docs/reference && cp -r "$rendered" docs/reference
fi
