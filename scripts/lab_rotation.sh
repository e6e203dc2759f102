# shellcheck shell=bash
# shellcheck disable=SC2034 # ROTATION_PICK and ROTATION_WHY are what the sourcing script reads
# The rotation of `make test`: which lab scenario beside the default one a run adds. Sourced by
# scripts/test.sh (stage rotation) and by its unit test; needs CEPHOPS_CACHE and a git checkout.

# The lab scenarios beside the default one, one of them in each `make test` (stage rotation):
# NAME:PATHS, where PATHS are what only that scenario proves (a change there runs it first).
ROTATION=(
  "fleet:molecule/fleet playbooks/qualify.yml playbooks/rollback.yml"
  "ceph:molecule/ceph"
  "releases:lab/labimage.py"
)
# Each scenario's last passing rotation run, as "RUN COMMIT" (RUN counts the passing rotation
# runs), kept with the other caches so that a fresh clone on the same machine continues the round.
ROTATION_RECORD="$CEPHOPS_CACHE/rotation"

# pick_rotation: sets ROTATION_PICK and ROTATION_WHY: the scenario CEPHOPS_ROTATION names (`all`:
# every one, in turn, as make test-full runs them), else
# 0. the scenario whose last passing run was of this very commit: a run of the same commit again
#    (CI after a run by hand, a run again in another clone) picks what passed, whose verify is kept;
# 1. a scenario that has missed the last len(ROTATION)-1 passing runs (so each one runs at least
#    every len(ROTATION)-th passing run, however often another one's files change);
# 2. a scenario whose own paths changed since its last passing run (since the commit before
#    HEAD where it has none);
# 3. the scenario that passed longest ago;
# 4. where no scenario has passed on this machine, the commit count modulo len(ROTATION).
pick_rotation() {
  local entry name paths run commit since last=0 n=${#ROTATION[@]} oldest="" oldest_run=""
  local -A COMMIT
  mkdir -p "$ROTATION_RECORD"
  if [ "${CEPHOPS_ROTATION:-}" = all ]; then
    ROTATION_PICK="${ROTATION[*]%%:*}" ROTATION_WHY="CEPHOPS_ROTATION=all names every one"
    return
  fi
  if [ -n "${CEPHOPS_ROTATION:-}" ]; then
    for entry in "${ROTATION[@]}"; do
      if [ "${entry%%:*}" = "$CEPHOPS_ROTATION" ]; then
        ROTATION_PICK=$CEPHOPS_ROTATION ROTATION_WHY="CEPHOPS_ROTATION names it"
        return
      fi
    done
    echo "CEPHOPS_ROTATION=$CEPHOPS_ROTATION names no scenario of the rotation (${ROTATION[*]%%:*})" >&2
    return 1
  fi
  for entry in "${ROTATION[@]}"; do
    name="${entry%%:*}" run=0 commit=""
    [ -s "$ROTATION_RECORD/$name" ] && read -r run commit <"$ROTATION_RECORD/$name"
    COMMIT[$name]=$commit
    [ "$run" -gt "$last" ] && last=$run
    if [ -z "$oldest_run" ] || [ "$run" -lt "$oldest_run" ]; then oldest=$name oldest_run=$run; fi
  done
  for entry in "${ROTATION[@]}"; do
    if [ -n "${COMMIT[${entry%%:*}]}" ] && [ "${COMMIT[${entry%%:*}]}" = "$(git rev-parse -q --verify HEAD)" ]; then
      ROTATION_PICK="${entry%%:*}" ROTATION_WHY="it passed a rotation run of this very commit"
      return
    fi
  done
  if [ "$last" -eq 0 ]; then
    run="$(git rev-list --count HEAD)"
    entry="${ROTATION[$((run % n))]}"
    ROTATION_PICK="${entry%%:*}" ROTATION_WHY="no scenario has passed a rotation run on this machine: commit $run of the branch, modulo $n"
    return
  fi
  if [ $((last - oldest_run)) -ge $((n - 1)) ]; then
    ROTATION_PICK=$oldest ROTATION_WHY="it has missed the last $((last - oldest_run)) passing runs"
    return
  fi
  for entry in "${ROTATION[@]}"; do
    name="${entry%%:*}" paths="${entry#*:}" since="${COMMIT[${entry%%:*}]}"
    git merge-base --is-ancestor "$since" HEAD 2>/dev/null || since="$(git rev-parse -q --verify HEAD~1)"
    # shellcheck disable=SC2086 # PATHS is a list of paths
    if [ -n "$since" ] && [ -n "$(git diff --name-only "$since" HEAD -- $paths)" ]; then
      ROTATION_PICK=$name ROTATION_WHY="its own files changed since ${since:0:12}: $paths"
      return
    fi
  done
  ROTATION_PICK=$oldest ROTATION_WHY="its last passing run is the oldest (run $oldest_run of $last)"
}

# record_rotation NAME: NAME passed this run, at HEAD.
record_rotation() {
  local run last=0
  mkdir -p "$ROTATION_RECORD"
  for run in "$ROTATION_RECORD"/*; do
    [ -s "$run" ] && read -r run _ <"$run" && [ "$run" -gt "$last" ] && last=$run
  done
  echo "$((last + 1)) $(git rev-parse HEAD)" >"$ROTATION_RECORD/$1"
}
