#!/usr/bin/env bash
# The main job on the built-in lab: boots a throwaway Debian host with a drive zoo (fast and
# slow SATA SSDs, HDD, NVMe, virtio, disks holding data) under QEMU, runs playbooks/site.yml
# against it on the roles' defaults, shows the gate's verdict per disk and, last, each disk's
# read figures as site.yml found it and as it leaves it with any change put back, and tears
# the lab down.
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
# The roles' defaults, with only the lab's hardware next to the inventory (the gate's scale for
# emulated disks, which disks to gate), the emulated NVMe disk left alone and an example rule,
# commented out; the tests' values (molecule/shared/group_vars/osds/tests.yml) stay out.
rm -rf "$state/group_vars" && mkdir -p "$state/group_vars/osds"
ln -sfn ../../../../molecule/shared/group_vars/osds/lab.yml "$state/group_vars/osds/lab.yml"
cat >"$state/group_vars/osds/demo.yml" <<'RULES'
---
# QEMU's emulated NVMe controller stops completing I/O under the scheduler role's 4 KiB random
# reads at a queue depth of 32 when software emulation starves it (the guest resets it): the
# demo leaves the NVMe class alone. Real NVMe drives need no such line.
io_scheduler_nvme: null
# A model rule, as an operator would add one (roles/io_scheduler/README.md):
# io_scheduler_models:
#   - {model: "CEPHOPS SATA SSD 870 EVO 500GB", scheduler: mq-deadline}
RULES

log "running playbooks/site.yml"
ansible-playbook -i "$state/inventory.yml" playbooks/site.yml -e "cephops_report_dir=$report"

log "the gate's verdicts (full report: $report/disk_gate.html)"
cat "$report/disk_gate.md"

log "each disk as site.yml found it and as it leaves it (full report: $report/tuning.json)"
python3 - "$report/tuning.json" <<'TABLE'
import json
import sys

report = json.load(open(sys.argv[1]))


def figure(side):
    if side.get("read_mib_s") is None:
        return "not measured"
    text = "%s MiB/s" % side["read_mib_s"]
    return text + (", %s IOPS" % side["random_iops"] if side.get("random_iops") is not None else "")


print("| host | disk | changes | as found | as left | verdict |")
print("| --- | --- | --- | --- | --- | --- |")
undone = []
for host in report["hosts"]:
    for disk in host["disks"]:
        changes = ", ".join("%s %s%s" % (c["setting"], c["value"], " (undone)" if c["undone"] else "")
                            for c in disk["changes"])
        undone += ["%s %s: %s" % (host["host"], disk["device"], c["read"]["line"]) for c in disk["changes"] if c["undone"]]
        whole = disk["whole"]
        if whole:
            print("| %s | %s | %s | %s | %s | %s |" % (host["host"], disk["device"], changes, figure(whole["found"]),
                                                       figure(whole["left"]), whole["verdict"]))
        else:
            print("| %s | %s | %s | not measured | not measured | |" % (host["host"], disk["device"], changes))
print("\nundone: %s" % ("none" if not undone else ""))
for line in undone:
    print("  " + line)
TABLE
