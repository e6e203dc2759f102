#!/usr/bin/env bash
# Runs one benchmark (or all) in the test suite's environment and prints its table.
# usage: bench/run.sh NAME [ARGS...]   (NAME: probe_fidelity, gating_scale, adaptive,
#        fleet_report, noatime, ...; "all" runs each with its defaults)
source "$(dirname "$0")/../scripts/env.sh" || exit 1
cd "$REPO_ROOT/bench" || exit 1
name="${1:?usage: bench/run.sh NAME [ARGS...]}"
shift
if [ "$name" = all ]; then
  for script in *.py; do
    [ "$script" = benchlib.py ] && continue
    python3 "$script" || exit 1
  done
else
  exec python3 "$name.py" "$@"
fi
