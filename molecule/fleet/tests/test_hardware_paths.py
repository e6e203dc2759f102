"""playbooks/validate_hardware.yml on the lab's emulated drives, as an operator runs it on a spare:
one run over both hosts, the SATA spare on fleet1 and the NVMe disk on fleet2, after the
rollback and the reboot have left both blank.

QEMU's drives show what the playbook does where a path cannot work: the SATA spare refuses SET
MAX ADDRESS, and QEMU's NVMe controller advertises namespace management but refuses to delete a
namespace; each path fails, says so, and leaves the drive as it was. The paths that can work on
them (the write cache switched with the drive's own tool, over-provisioning by partition) pass,
and the drive reads back as before. The success paths of HPA and namespaces need real drives.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import testinfra

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "default" / "tests"))

from test_lab import SATA_SPARE, whole_disk_by_serial  # noqa: E402
from test_site_defaults import modulerun  # noqa: E402

testinfra_hosts = ["ansible://osds"]

PLAYBOOK = Path(__file__).resolve().parents[3] / "playbooks" / "validate_hardware.yml"
RECORDS = "/var/lib/cephops-validate-test"
NVME = "CEPHOPS-NVME-0001"
# The drive each host validates, by serial.
DRIVES = {"fleet1": SATA_SPARE, "fleet2": NVME}
EXPECTED = {
    "fleet1": {"controller_cache": "not applicable", "write_cache": "passed", "partition": "passed",
               "nvme_namespace": "not applicable", "ata_hpa": "failed"},
    "fleet2": {"controller_cache": "not applicable", "write_cache": "passed", "partition": "passed",
               "nvme_namespace": "failed", "ata_hpa": "not applicable"},
}


def state(host, disk):
    """What a path must leave as it was: the size, the partitions, and on SATA the visible
    maximum (hdparm -N) and the write cache (hdparm -W)."""
    found = {"size": host.check_output("blockdev --getsize64 %s", disk),
             "names": host.check_output("lsblk --noheadings --output NAME %s", disk).split()}
    if "/sd" in disk:
        found["hdparm"] = [line.strip() for line in host.check_output("hdparm -N -W %s", disk).splitlines()[1:]]
    return found


@pytest.fixture(scope="module")
def validated(tmp_path_factory):
    """The play's exit status and {host: (the records it left, the drive's state before, its
    report, the drive's state after)}."""
    inventory = os.environ["MOLECULE_INVENTORY_FILE"]
    hosts = {name: testinfra.get_host("ansible://" + name, ansible_inventory=inventory) for name in DRIVES}
    disks = {name: whole_disk_by_serial(hosts[name], serial) for name, serial in DRIVES.items()}
    before = {name: state(hosts[name], disks[name]) for name in DRIVES}
    reports = tmp_path_factory.mktemp("reports")
    device = "{{ %s[inventory_hostname] }}" % json.dumps(disks)
    confirm = "{{ %s[inventory_hostname] }}" % json.dumps(DRIVES)
    extra = {"cephops_report_dir": str(reports), "cephops_validate_device": device, "cephops_validate_confirm": confirm,
             "cephops_validate_probe_seconds": 2, "cephops_validate_record_dir": RECORDS}
    done = subprocess.run(["ansible-playbook", "-i", inventory, "-e", json.dumps(extra), str(PLAYBOOK)],
                          capture_output=True, text=True, env=modulerun.json_env(), check=False)
    found = {}
    for name in DRIVES:
        report = reports / f"validate-hardware-{name}.json"
        assert report.exists(), done.stdout[-4000:] + done.stderr[-2000:]
        assert (reports / f"validate-hardware-{name}.md").exists()
        records = hosts[name].check_output("ls -A %s 2>/dev/null || true", RECORDS).split()
        found[name] = (records, before[name], json.loads(report.read_text()), state(hosts[name], disks[name]))
        hosts[name].check_output("rm -rf %s", RECORDS)
    return done.returncode, found


def test_each_path_fails_where_the_drive_refuses_and_passes_where_it_can(host, validated):
    rc, found = validated
    name = host.backend.get_hostname()
    _records, before, report, after = found[name]
    assert {path["path"]: path["status"] for path in report["paths"]} == EXPECTED[name], report["paths"]
    # The play fails because a path failed, not because the drive changed.
    assert rc != 0 and report["restored"] is True, report["verify"]
    assert after == before, (before, after)


def test_the_refusals_say_what_refused_and_leave_nothing_to_restore(host, validated):
    _rc, found = validated
    name = host.backend.get_hostname()
    records, _before, report, _after = found[name]
    messages = {path["path"]: path["message"] for path in report["paths"]}
    if name == "fleet1":
        # SET MAX was refused: the module's message, and no record a later run would restore from.
        assert messages["ata_hpa"] and not [r for r in records if r.startswith("hpa-")], (messages, records)
    else:
        assert "refused to delete namespace 1" in messages["nvme_namespace"], messages
        assert "nothing changed" in messages["nvme_namespace"], messages
