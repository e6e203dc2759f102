#!/usr/bin/env bash
# The main job on the built-in lab: boots a throwaway Debian host with a drive zoo (fast and
# slow SATA SSDs, HDD, NVMe, virtio, disks holding data) under QEMU, runs playbooks/site.yml
# against it, shows what was tuned and the gate's verdict per disk, and tears the lab down.
# usage: scripts/demo.sh     (root; the first run builds the lab images, a few minutes)
source "$(dirname "$0")/env.sh" || exit 1
cd "$REPO_ROOT" || exit 1
set -euo pipefail

state="$REPO_ROOT/.lab/demo"
report="$state/report"
labctl() { python3 lab/labctl.py --state-dir "$state" "$@"; }

trap 'log "tearing the lab down"; labctl down' EXIT
log "building or reusing the lab image"
labctl image
log "booting the lab host (about a minute under software emulation)"
labctl up --name demo1
# The lab's variables (thresholds for emulated disks, which disks to gate) sit next to the inventory.
ln -sfn ../../molecule/shared/group_vars "$state/group_vars"

log "running playbooks/site.yml"
ansible-playbook -i "$state/inventory.yml" playbooks/site.yml -e "cephops_report_dir=$report"

log "the gate's verdicts (full report: $report/disk_gate.html)"
cat "$report/disk_gate.md"
