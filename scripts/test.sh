#!/usr/bin/env bash
# The whole test suite: lint, sanity, unit, integration (loop devices), cores (playbook
# tests on the older ansible-core releases) and lab stages.
# usage: scripts/test.sh [STAGE ...]   (default: every stage, in order)
# Each stage's output goes to the terminal and to .build/logs/STAGE.log; a summary
# follows, and the exit status is non-zero when any stage failed.

source "$(dirname "$0")/env.sh" || exit 1
source "$(dirname "$0")/lab_rotation.sh" || exit 1
cd "$REPO_ROOT" || exit 1

ALL_STAGES=(lint sanity units integration cores rotation lab)
STAGES=("$@")
[ ${#STAGES[@]} -eq 0 ] && STAGES=("${ALL_STAGES[@]}")
LOG_DIR="$BUILD_DIR/logs"
mkdir -p "$LOG_DIR"
# Touched once the run's foreground stages have ended (stage_lab_releases waits on it).
FOREGROUND_DONE="$LOG_DIR/foreground.done"
rm -f "$FOREGROUND_DONE"

stage_lint() {
  ansible-lint --profile production --offline &&
    antsibull-changelog lint &&
    bash scripts/docs.sh --check &&
    python3 scripts/role_readme.py --check &&
    echo "changelog fragments, docs/reference and role READMEs are up to date"
}

stage_sanity() {
  # ansible-test needs the collection under ansible_collections/NS/NAME and checks only
  # what git tracks; a copy of the tracked and new files keeps the checkout untouched.
  local tree="$BUILD_DIR/sanity/ansible_collections/cephops/osd_tuning"
  rm -rf "$BUILD_DIR/sanity" && mkdir -p "$tree"
  git ls-files -z --cached --others --exclude-standard | xargs -0 cp --parents -t "$tree"
  git -C "$tree" init -q && git -C "$tree" add -A
  python3 "$REPO_ROOT/scripts/ansible_test_offline.py"
  local default entry version python start
  default="$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
  (cd "$tree" && ansible-test sanity --python "$default" --color no) || return 1
  # Each other claimed managed-host Python: the tests that run per Python (compile, import),
  # by the ansible-test of the newest ansible-core that supports it.
  check_claimed_pythons || return 1
  for entry in "${CLAIMED_PYTHONS[@]}"; do
    version="${entry%%=*}"
    [ "$version" = "$default" ] && continue
    use_core "${entry#*=}" || return 1
    python="$(claimed_python "$version")"
    printf '\n--> Python %s, ansible-test of ansible-core %s\n' "$version" "${entry#*=}"
    start=$SECONDS
    "$VENV_DIR/bin/python3" "$REPO_ROOT/scripts/ansible_test_offline.py" "$version"
    (cd "$tree" && PATH="$(dirname "$python"):$PATH" \
      "$VENV_DIR/bin/ansible-test" sanity --test compile --test import --python "$version" --color no) || return 1
    echo "Python $version: $((SECONDS - start)) s"
  done
}

# pytest as every stage runs it: the 30 slowest tests listed and a JUnit file per run in
# .build/logs, so where the time goes can be read off any run.
# Always the main venv's pytest, also where PATH puts an older ansible-core first (cores).
# usage: run_pytest NAME PYTEST-ARGS...
run_pytest() {
  local name="$1"
  shift
  "$VIRTUAL_ENV/bin/python3" -m pytest -q -p no:cacheprovider --durations=30 --junitxml="$LOG_DIR/$name.junit.xml" "$@"
}

# audited COMMAND...: COMMAND with the audit of scripts/proven.py on (scripts/audit/sitecustomize.py
# in every Python process it starts notes the files of the checkout and the peers each test
# file reads) into a fresh .build/audit-$AUDIT_RUN.
audited() {
  local folder="$BUILD_DIR/audit-$AUDIT_RUN"
  rm -rf "$folder" && mkdir -p "$folder"
  CEPHOPS_AUDIT_DIR="$folder" CEPHOPS_AUDIT_ROOTS="$REPO_ROOT:$PEERS_DIR" \
    PYTHONPATH="$REPO_ROOT/scripts/audit${PYTHONPATH:+:$PYTHONPATH}" "$@"
}

# proven_pytest NAME MARKER PYTEST-ARGS...: run_pytest NAME over the integration test files
# (with `-m MARKER` where MARKER is given) but those that passed before on these same inputs
# (scripts/proven.py says which, and why a file runs), audited, then keeps the passes of this
# run where it was complete and clean; a file read outside its key fails the run.
proven_pytest() {
  local name="$1" marker="$2" files rc=0
  shift 2
  files="$(CEPHOPS_PYTEST_ARGS="$*" python3 "$REPO_ROOT/scripts/proven.py" select "$name" "$marker" tests/integration/test_*.py)" || return 1
  [ -n "$files" ] || return 0
  rm -f "$LOG_DIR/$name.junit.xml"
  # shellcheck disable=SC2086 # one test file a line, no spaces in their names
  AUDIT_RUN="$name" audited run_pytest "$name" -p sitecustomize ${marker:+-m "$marker"} "$@" $files || rc=$?
  AUDIT_RUN="$name" python3 "$REPO_ROOT/scripts/proven.py" record "$name" "$LOG_DIR/$name.junit.xml" "$rc" || return 1
  # pytest's 5: none of the files left to run holds a test of MARKER.
  [ "$rc" -eq 5 ] && [ -n "$marker" ] && rc=0
  return "$rc"
}

stage_units() {
  run_pytest units tests/unit
}

stage_integration() {
  if [ "$(id -u)" -ne 0 ]; then
    echo "integration tests need root (loop devices, mount namespaces)"
    return 1
  fi
  # INTEGRATION_WORKERS pytest-xdist workers, each given whole files (--dist loadfile): a
  # file's tests share its fixtures, and no two files share a disk. Single module runs skip
  # Ansible's controller here (CEPHOPS_DIRECT_MODULES, tests/integration/modulerun.py); the
  # cores stage runs the tests that prove the controller's part through it.
  CEPHOPS_DIRECT_MODULES=1 proven_pytest integration "" -n "${INTEGRATION_WORKERS:-2}" --dist loadfile
}

# How many runs of the cores stage go at once: each is one pytest process on loop disks of
# its own, so two keep both cores busy without sharing a disk.
CORES_PARALLEL="${CORES_PARALLEL:-2}"

# cores_run NAME CORE PYTHON MARKER: the integration tests marked MARKER on ansible-core CORE
# (from its venv, with its collections), with PYTHON as the modules' interpreter if given;
# the output goes to .build/logs/cores-NAME.log.
cores_run() {
  local start=$SECONDS rc=0
  use_core "$2" || return 1
  "$VENV_DIR/bin/ansible-playbook" --version | sed -n 1p >"$LOG_DIR/cores-$1.log"
  # A run of its own (started with &): the export stays in it.
  [ -n "$3" ] && export CEPHOPS_TEST_PYTHON="$3"
  PATH="$VENV_DIR/bin:$PATH" ANSIBLE_COLLECTIONS_PATH="$COLLECTIONS_DIR" PYTHONPATH="$COLLECTIONS_DIR" \
    proven_pytest "cores-$1" "$4" --basetemp="$BUILD_DIR/pytest-cores-$1" \
    >>"$LOG_DIR/cores-$1.log" 2>&1 || rc=1
  echo "$1: $([ "$rc" -eq 0 ] && echo PASS || echo FAIL) in $((SECONDS - start)) s" >>"$LOG_DIR/cores-$1.log"
  return "$rc"
}

stage_cores() {
  # The integration stage runs every test on the ansible-core of the main venv; the playbook
  # tests marked `cores` run here again on each release of OLDER_CORES, from its own venv
  # and with the collections of its `ansible` release; then the tests marked `pythons` with
  # the oldest and newest claimed managed-host Python. CORES_PARALLEL runs go at once.
  if [ "$(id -u)" -ne 0 ]; then
    echo "integration tests need root (loop devices, mount namespaces)"
    return 1
  fi
  check_claimed_pythons || return 1
  local entry core jobs=() names=() failed=0 running=0 name python marker
  for entry in "${OLDER_CORES[@]}"; do
    jobs+=("core-${entry%%=*}|${entry%%=*}||cores")
  done
  # The oldest and the newest claimed managed-host Python (every one with
  # CEPHOPS_MODULE_PYTHONS=all), each under the newest ansible-core that supports it: every
  # module runs with it as ansible_python_interpreter.
  local pythons=("${CLAIMED_PYTHONS[0]}" "${CLAIMED_PYTHONS[-1]}")
  [ "${CEPHOPS_MODULE_PYTHONS:-}" = all ] && pythons=("${CLAIMED_PYTHONS[@]}")
  for entry in "${pythons[@]}"; do
    jobs+=("python-${entry%%=*}|${entry#*=}|$(claimed_python "${entry%%=*}")|pythons")
  done
  # Venvs and collections first, one at a time: pip must not build two into the cache at once.
  for entry in "${jobs[@]}"; do
    IFS='|' read -r name core python marker <<<"$entry"
    use_core "$core" || return 1
  done
  for entry in "${jobs[@]}"; do
    IFS='|' read -r name core python marker <<<"$entry"
    names+=("$name")
    if [ "$running" -ge "$CORES_PARALLEL" ]; then
      wait -n || failed=1
      running=$((running - 1))
    fi
    cores_run "$name" "$core" "$python" "$marker" &
    running=$((running + 1))
  done
  while [ "$running" -gt 0 ]; do
    wait -n || failed=1
    running=$((running - 1))
  done
  for name in "${names[@]}"; do
    printf '\n--> %s (.build/logs/cores-%s.log)\n' "$name" "$name"
    cat "$LOG_DIR/cores-$name.log"
  done
  return "$failed"
}

# The lab's image is built (or found in the cache) in the background while the stages before
# the lab run: on a machine without the cache that is minutes of mmdebstrap off the critical path.
# Each stage runs in a subshell (its output is piped to tee), which cannot wait for a job of
# the main shell: the build leaves its exit status in a file the lab stage waits for.
LAB_IMAGE_STARTED=""
start_lab_image() {
  rm -f "$LOG_DIR/lab-image.rc"
  (
    python3 lab/labctl.py image >"$LOG_DIR/lab-image.log" 2>&1
    echo $? >"$LOG_DIR/lab-image.rc"
    # Then the rotation's own images, off its path: built in its stage, a release's image came
    # after the integration stage, with one core otherwise idle at the end of the run. Their
    # build lock makes the rotation's VMs wait for a build still under way.
    [[ " ${STAGES[*]} " == *" rotation "* ]] && pick_rotation 2>/dev/null && for pick in $ROTATION_PICK; do
      case "$pick" in
        releases) for suite in "${LAB_RELEASES[@]}"; do python3 lab/labctl.py --suite "$suite" image || exit 1; done ;;
        ceph) python3 lab/labctl.py --variant ceph image ;;
      esac
    done >"$LOG_DIR/rotation-image.log" 2>&1
  ) &
  LAB_IMAGE_STARTED=1
}

# lab_image_ready: waits for the background build, shows its log, fails if it failed.
lab_image_ready() {
  [ -n "$LAB_IMAGE_STARTED" ] || return 0
  while [ ! -s "$LOG_DIR/lab-image.rc" ]; do sleep 2; done
  printf -- '--> lab image (built beside the earlier stages)\n'
  cat "$LOG_DIR/lab-image.log"
  return "$(cat "$LOG_DIR/lab-image.rc")"
}

# molecule_timed ARGS...: molecule, each action followed by its seconds, so a lab stage's log
# shows where its time went (converge, idempotence, the reboot, verify).
molecule_timed() {
  molecule "$@" 2>&1 | {
    # Once per action: molecule's recap repeats each "Executed" line.
    local line started=""
    while IFS= read -r line; do
      printf '%s\n' "$line"
      case "$line" in
        *Testinfra*) ;;
        *"➜ "*Executing*) started=$SECONDS ;;
        *"➜ "*Executed*) [ -n "$started" ] && printf '    %s s\n' "$((SECONDS - started))" && started="" ;;
      esac
    done
  }
  return "${PIPESTATUS[0]}"
}

# The steps between create and verify whose outcome a scenario keeps: the scenario's own sequence
# less its reboot (side_effect in the default one), for which the boot of the kept disks stands.
declare -A KEPT_STEPS=([default]="prepare converge idempotence" [releases]="prepare converge idempotence"
  [ceph]="prepare converge" [fleet]="converge side-effect")
# The peer snapshots beside the checkout: the ceph scenario's osds play comes from its ceph-ansible
# and openstack.config_template (molecule/ceph/converge.yml); tests read them too.
PEERS_DIR="$(cd "$REPO_ROOT/.." && pwd)/shared/peers"

# lab_kept SCENARIO: a lab scenario as `molecule test` runs it, its verify audited, with what
# passed kept by scripts/proven.py. Where its verify passed on these very inputs (lab-select),
# nothing runs. Else, after its steps before verify (KEPT_STEPS) the guests are shut down, and their
# disks, write limits and the reports left on the controller are kept under the key of what those
# steps read (lab-key); verify runs on the guests booted again from them (a cold boot through grub
# stands for the reboot). Where that key's state is kept already (and young enough, `fresh`), the
# run boots it and goes straight to verify. A kept state whose verify fails in a later run is
# dropped, so the run after makes it again; in the run that made it, a failing verify more likely
# lies in a test, whose fix the next run then proves on the same state.
lab_kept() {
  local scenario="$1" key saved step made="" rc=0 proven=(python3 "$REPO_ROOT/scripts/proven.py")
  local labctl=(python3 lab/labctl.py --state-dir "$REPO_ROOT/.lab/${CEPHOPS_LAB_SUITE:-molecule}-$1")
  local junit="$LOG_DIR/${CEPHOPS_LAB_SUITE:-lab}-$scenario.junit.xml"
  "${proven[@]}" lab-select "$scenario" && return 0
  key="$("${proven[@]}" lab-key "$scenario")" || return 1
  saved="$CEPHOPS_CACHE/lab/converged-${CEPHOPS_LAB_SUITE:-$scenario}-$key"
  molecule_timed destroy -s "$scenario" || return 1
  if "${proven[@]}" fresh "$saved"; then
    printf -- '--> state %s kept: booting it, no %s\n' "$key" "${KEPT_STEPS[$scenario]}"
  else
    printf -- '--> no state %s kept%s: %s, then keeping it\n' "$key" \
      "$([ "${CEPHOPS_REUSE:-1}" = 0 ] && echo " that CEPHOPS_REUSE=0 lets a run use")" "${KEPT_STEPS[$scenario]}"
    rm -rf "$saved"
    molecule_timed syntax -s "$scenario" && molecule_timed create -s "$scenario" || rc=1
    for step in ${KEPT_STEPS[$scenario]}; do
      [ "$rc" -eq 0 ] && { molecule_timed "$step" -s "$scenario" || rc=1; }
    done
    [ "$rc" -eq 0 ] && { "${labctl[@]}" save --to "$saved" || rc=1; }
    molecule_timed destroy -s "$scenario" || rc=1
    [ "$rc" -eq 0 ] || return 1
    made=1
  fi
  rm -f "$junit"
  if CEPHOPS_LAB_SAVED="$saved" molecule_timed create -s "$scenario"; then
    AUDIT_RUN="lab-$scenario${CEPHOPS_LAB_SUITE:+-$CEPHOPS_LAB_SUITE}" audited molecule_timed verify -s "$scenario" || rc=1
  else
    rc=1
  fi
  AUDIT_RUN="lab-$scenario${CEPHOPS_LAB_SUITE:+-$CEPHOPS_LAB_SUITE}" "${proven[@]}" lab-record "$scenario" "$junit" "$rc" || rc=1
  [ "$rc" -eq 0 ] || [ -n "$made" ] || rm -rf "$saved"
  molecule_timed destroy -s "$scenario" || rc=1
  return "$rc"
}

stage_lab() {
  # One host through site.yml, idempotence, a reboot and every test of the zoo, the
  # field-drive tests (marked `drives`) among them. Its verify runs wherever one of its inputs
  # changed (or its pass is 7 days old), on the kept state where nothing the converge reads changed.
  lab_image_ready && lab_kept default
}

# Not in ALL_STAGES (make lab-fleet): two hosts at once through site.yml, a ceph-ansible-shaped
# play, qualify.yml (with a third, unreachable host) and rollback.yml, then a reboot.
stage_lab_fleet() {
  lab_kept fleet
}

# Not in ALL_STAGES (make lab-ceph): a monitor and a manager, then ceph-ansible's osds play with
# the gate deploys OSDs; verify checks they are on the approved disks only.
stage_lab_ceph() {
  lab_kept ceph
}

# Not in ALL_STAGES (make lab-releases): the default scenario again on Debian 11 and 13, the
# lab's releases other than the default one, each on its own image (CEPHOPS_LAB_SUITE), without
# the field-drive tests, which prove the emulated drives rather than the release, and the tests
# marked same_on_every_release, which would only repeat Debian 12's run. Each release has a
# state and a molecule directory of its own, and its output in .build/logs/releases-SUITE.log.
# The next release starts when the one before ends or when a core is free, whichever comes
# first: both at once beside the lab and the cores stage took as long as one after the other
# (1890 s against 1884 s) and slowed the lab (3181 s against 2091 s), as the machine had no idle
# core to give them; but one after the other, the second ran alone on one core for its last
# 1247 s after the lab had ended. A core is free once the run's foreground stages have ended
# ($FOREGROUND_DONE); by hand (make lab-releases) they run one after the other.
# The releases this scenario runs, whose images the background build makes ahead of it.
LAB_RELEASES=(bullseye trixie)
stage_lab_releases() {
  local suite previous="" failed=0
  local -A pid
  for suite in "${LAB_RELEASES[@]}"; do
    if [ -n "$previous" ]; then
      while kill -0 "${pid[$previous]}" 2>/dev/null && [ ! -e "$FOREGROUND_DONE" ]; do sleep 5; done
    fi
    (
      start=$SECONDS
      export CEPHOPS_LAB_SUITE="$suite" MOLECULE_EPHEMERAL_DIRECTORY="$REPO_ROOT/.lab/$suite-releases.molecule"
      if lab_kept releases; then
        echo "$suite: PASS in $((SECONDS - start)) s"
      else
        echo "$suite: FAIL in $((SECONDS - start)) s"
        exit 1
      fi
    ) >"$LOG_DIR/releases-$suite.log" 2>&1 &
    pid[$suite]=$!
    printf -- '--> the default scenario on %s started at %s (its log: .build/logs/releases-%s.log)\n' \
      "$suite" "$(date -u +%H:%M:%S)" "$suite"
    previous=$suite
  done
  for suite in "${LAB_RELEASES[@]}"; do
    wait "${pid[$suite]}" || failed=1
    printf '\n--> the default scenario on %s\n' "$suite"
    cat "$LOG_DIR/releases-$suite.log"
  done
  return "$failed"
}

# One more lab scenario per run, chosen by scripts/lab_rotation.sh (every one with
# CEPHOPS_ROTATION=all); the run says which and why.
stage_rotation() {
  local rc=0 pick
  lab_image_ready || return 1
  pick_rotation || return 1
  printf 'rotation: %s, because %s\n' "$ROTATION_PICK" "$ROTATION_WHY"
  for pick in $ROTATION_PICK; do
    if "stage_lab_$pick"; then record_rotation "$pick"; else rc=1; fi
  done
  return "$rc"
}

declare -A RESULT DURATION
failed=0

# record_stage STAGE RC SECONDS
record_stage() {
  DURATION[$1]=$3
  if [ "$2" -eq 0 ]; then RESULT[$1]=PASS; else RESULT[$1]="FAIL (rc=$2)"; failed=$((failed + 1)); fi
}

# The lab keeps one core busy (QEMU's TCG runs the VM's one vCPU on one host thread), and lint,
# sanity and units leave one of the two idle: with LAB_BESIDE=1 (the default) the lab stage
# starts in the background as the run's first stage starts, writes its output to its log only,
# and is waited for, and its log shown, at its own place in the order. Its time in the summary is its own, from its start. The lab is the longest stage, so
# the stages that run beside it yield the CPU to it (nice 10): without that, the lab's converge,
# idempotence and reboot took 952 s against about 560 s alone, and the whole run gained little.
# Likewise, with ROTATION_BESIDE=1 (the default) the rotation's VMs start as the cores stage
# starts instead of after it: integration, cores and the rotation one after another were the
# run's longest path (3485 s of a 3492 s CI run).
LAB_BESIDE="${LAB_BESIDE:-1}" ROTATION_BESIDE="${ROTATION_BESIDE:-1}"
# STAGE=the stage at whose start it goes to the background
declare -A BESIDE=()
[ "$LAB_BESIDE" = 1 ] && [ "${STAGES[0]}" != lab ] && BESIDE[lab]=${STAGES[0]}
[ "$ROTATION_BESIDE" = 1 ] && BESIDE[rotation]=cores
declare -A BESIDE_PID=()

# start_beside STAGE: runs it in the background, its output to its log, its status and seconds
# to STAGE.result.
start_beside() {
  rm -f "$LOG_DIR/$1.result"
  (
    start=$SECONDS
    "stage_$1" >"$LOG_DIR/$1.log" 2>&1
    echo "$? $((SECONDS - start))" >"$LOG_DIR/$1.result"
  ) &
  BESIDE_PID[$1]=$!
  printf '\n==> stage %s started in the background (its log: .build/logs/%s.log)\n' "$1" "$1"
}

[[ " ${STAGES[*]} " == *" lab "* ]] && start_lab_image
for stage in "${STAGES[@]}"; do
  if ! declare -F "stage_$stage" >/dev/null; then
    echo "unknown stage: $stage (stages: ${ALL_STAGES[*]})" >&2
    exit 2
  fi
done
for stage in "${STAGES[@]}"; do
  for background in "${!BESIDE[@]}"; do
    if [ "${BESIDE[$background]}" = "$stage" ] && [[ " ${STAGES[*]} " == *" $background "* ]]; then
      start_beside "$background"
    fi
  done
  printf '\n==> stage %s\n' "$stage"
  if [ -n "${BESIDE_PID[$stage]:-}" ]; then
    # The stages left run in the background: the core the foreground stages used is free.
    touch "$FOREGROUND_DONE"
    echo "(started in the background; waiting for it)"
    wait "${BESIDE_PID[$stage]}"
    unset "BESIDE_PID[$stage]"
    cat "$LOG_DIR/$stage.log"
    read -r rc seconds <"$LOG_DIR/$stage.result" || { rc=1 seconds=0; }
    record_stage "$stage" "$rc" "$seconds"
    continue
  fi
  start=$SECONDS
  if [ ${#BESIDE_PID[@]} -gt 0 ]; then
    (renice -n 10 "$BASHPID" >/dev/null && "stage_$stage") 2>&1 | tee "$LOG_DIR/$stage.log"
  else
    "stage_$stage" 2>&1 | tee "$LOG_DIR/$stage.log"
  fi
  record_stage "$stage" "${PIPESTATUS[0]}" "$((SECONDS - start))"
done

# plain_log LOG: the log without colours and without molecule's frame at the start of each line.
plain_log() {
  sed -E 's/\x1b\[[0-9;]*m//g; s/^ *(│ ?)?//' "$1" 2>/dev/null
}

# failure_lines LOG: the failed tests (also as molecule wraps them), failed molecule steps and
# the last two failed tasks (earlier ones may have been rescued) of a stage's log.
failure_lines() {
  plain_log "$1" | awk '
    wrapped { sub(/^ +/, ""); print "FAILED " $0; wrapped = 0; next }
    /^FAILED$/ { wrapped = 1; next }
    /^(FAILED|ERROR) [^ ]+::/ || /^ERROR .*Executed: Failed/ || /^CRITICAL / { if (shown++ < 5) print }
    /fatal: \[/ { fatal[++fatals] = $0 }
    END { for (i = (fatals > 2 ? fatals - 1 : 1); i <= fatals; i++) print fatal[i] }'
}

# failure_reasons LOG: the "msg" and the end of the "stderr" of the last failed task, which the
# fatal line, cut to its first 150 characters, leaves out; molecule wraps a task's result over
# indented lines, which are joined again first.
failure_reasons() {
  plain_log "$1" | awk '
    /fatal: \[/ { last = $0; open = 1; next }
    open && /^  / { sub(/^ +/, ""); last = last " " $0; next }
    { open = 0 }
    END { print last }' |
    grep -oE '"(msg|stderr)": "([^"\\]|\\.)*"' | sed -E 's/^"stderr": "(.*)"$/stderr: …\1/' |
    awk '{ print (length($0) > 400 ? substr($0, 1, 40) "…" substr($0, length($0) - 360) : $0) }'
}

printf '\n==> summary\n'
for stage in "${STAGES[@]}"; do
  printf '  %-12s %-12s %5ss   log: .build/logs/%s.log\n' "$stage" "${RESULT[$stage]}" "${DURATION[$stage]}" "$stage"
done
# Where a failed stage failed, from its log: a run seen only by the end of its output (as CI
# shows it) still names the failing tests, tasks and molecule steps.
for stage in "${STAGES[@]}"; do
  [ "${RESULT[$stage]}" = PASS ] && continue
  failure_lines "$LOG_DIR/$stage.log" | cut -c1-150 | sed "s/^/  $stage: /"
  failure_reasons "$LOG_DIR/$stage.log" | sed "s/^/  $stage: /"
done
printf 'whole run: %d s\n' "$SECONDS"
printf 'stages: %d passed, %d failed\n' "$((${#STAGES[@]} - failed))" "$failed"
[ "$failed" -eq 0 ]
