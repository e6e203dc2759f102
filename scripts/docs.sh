#!/usr/bin/env bash
# Renders docs/modules/ (one page per module) from the modules' own documentation with
# antsibull-docs, offline. --check renders to a temporary folder and fails when
# docs/modules/ is out of date.
source "$(dirname "$0")/env.sh" || exit 1
cd "$REPO_ROOT" || exit 1
set -euo pipefail

render() {
  rm -rf "$1" && mkdir -p "$1"
  antsibull-docs collection-plugins --dest-dir "$1" --fail-on-error --no-add-antsibull-docs-version \
    --output-format simplified-rst --use-current --cleanup everything cephops.osd_tuning >/dev/null
}

if [ "${1:-}" = "--check" ]; then
  render "$BUILD_DIR/docs-check"
  if ! diff -ru docs/modules "$BUILD_DIR/docs-check"; then
    echo "docs/modules is out of date: run scripts/docs.sh" >&2
    exit 1
  fi
else
  render docs/modules
fi
