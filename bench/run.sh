#!/usr/bin/env bash
# Runs one benchmark, or a set, in the test suite's environment and prints its table(s).
# usage: bench/run.sh NAME [ARGS...]   NAME: a script of bench/ without .py
#        bench/run.sh loop | lab | all  every loop-device benchmark, every lab one, or both,
#                                       with their defaults (lab: about an hour and a half under TCG)
source "$(dirname "$0")/../scripts/env.sh" || exit 1
cd "$REPO_ROOT/bench" || exit 1
name="${1:?usage: bench/run.sh NAME [ARGS...] | loop | lab | all}"
shift

loop_set=("probe_fidelity" "probe_fidelity --written" "probe_fidelity --independent flush" "gating_scale" "gating_scale --independent" "gating_scale --independent flush" "region_check" "region_check --independent flush" "content_check" "adaptive" "fleet_report" "controller_per_host" "noatime --fs xfs" "noatime --fs ext4" "read_verdict")
lab_set=("probe_fidelity --lab --pairs 30 --disks CEPHOPS-SSD-0001 CEPHOPS-NVME-0001" "probe_fidelity --lab --disks CEPHOPS-SLOW-0001" "region_check --lab" "adaptive --lab" "max_sectors_kb" "noatime --lab" "nochange_run" "read_verdict --lab --trials 2 --runtime 2")
case "$name" in
  loop) runs=("${loop_set[@]}") ;;
  lab) runs=("${lab_set[@]}") ;;
  all) runs=("${loop_set[@]}" "${lab_set[@]}") ;;
  *) exec python3 "$name.py" "$@" ;;
esac
for run in "${runs[@]}"; do
  read -r -a argv <<<"$run"
  log "bench: ${argv[*]}"
  python3 "${argv[0]}.py" "${argv[@]:1}" || exit 1
done
