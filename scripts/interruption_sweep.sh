#!/usr/bin/env bash
# The interruption sweep: site.yml stopped at every task boundary, once by a failing task and once
# by SIGINT to the controller, each stop run again and rolled back on loop disks
# (tests/integration/test_interruption.py, which `make test` runs with one stop per role). Hours
# on the test machine, so it is run by hand, as root; docs/safety.md keeps its last result.
# usage: scripts/interruption_sweep.sh [EVERY]   every EVERY-th boundary (default 1: all of them)
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/env.sh
source scripts/env.sh
set -euo pipefail
export CEPHOPS_INTERRUPTION_EVERY="${1:-1}" CEPHOPS_DIRECT_MODULES=1
exec "$VIRTUAL_ENV/bin/python3" -m pytest -q -p no:cacheprovider -s tests/integration/test_interruption.py
