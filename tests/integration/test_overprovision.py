"""The overprovision role on loop devices, run with ansible-playbook as a site would run it.

The partition method runs end to end (discard, aligned partition, idempotence, rollback);
the hpa method and every non-blank disk are refused with every byte unchanged. The records
go to tmp_path, never to the host's /var/lib/cephops-osd-tuning.
"""

import json

import pytest

from modulerun import ansible_module, failed, json_env, run_playbook
from loopdisk import run
from test_disk_facts import NON_BLANK, make_data_mid_disk, make_xfs, writers_reasons

MIB = 1024 * 1024
GPT_BACKUP_BYTES = 33 * 512  # backup GPT entries and header at the very end of the disk

PLAY = """
- name: Over-provision
  hosts: localhost
  gather_facts: false
  tasks:
    - name: Run the role
      ansible.builtin.include_role:
        name: cephops.osd_tuning.overprovision
        tasks_from: "{{ entry_point }}"
"""


class Role:
    def __init__(self, tmp_path):
        self.record_file = tmp_path / "records" / "overprovision-partition.json"
        self.playbook = tmp_path / "play.yml"
        self.playbook.write_text(PLAY)

    def play(self, disks, entry_point="main", check=False, **extra):
        extra_vars = dict(overprovision_disks=disks, overprovision_record_dir=str(self.record_file.parent),
                          overprovision_allow_erase=True, entry_point=entry_point)
        extra_vars.update(extra)
        argv = ["ansible-playbook", "--inventory", "localhost,", "--connection", "local",
                "--extra-vars", json.dumps(extra_vars), str(self.playbook)] + (["--check"] if check else [])
        report = run_playbook(argv, json_env())[1]
        stats = report["stats"]["localhost"]
        # A failed loop says "One or more items failed"; its items carry the messages.
        failures = [item["msg"] for play in report["plays"] for task in play["tasks"]
                    for host in task["hosts"].values() if host.get("failed")
                    for item in (host.get("results") or [host]) if failed(item)]
        return stats, failures

    def record(self):
        """The partition method's record, by device."""
        return dict((entry["device"], entry) for entry in json.loads(self.record_file.read_text())["disks"].values())


@pytest.fixture
def role(tmp_path):
    return Role(tmp_path)


def layout(disk):
    """(start, end) in bytes of each partition, from sgdisk's sector numbers (end exclusive)."""
    out = run(["sgdisk", "--print", disk.path]).stdout
    rows = [line.split() for line in out.splitlines() if line.strip()[:1].isdigit()]
    return [(int(r[1]) * 512, (int(r[2]) + 1) * 512) for r in rows]


def read_range(disk, start, stop):
    with open(disk.path, "rb") as handle:
        handle.seek(start)
        return handle.read(stop - start)


def facts(disk):
    result = ansible_module("disk_facts", dict(devices=[disk.path], include_loop=True))
    return result["disks"][0]


@pytest.mark.cores
def test_partition_method_end_to_end(loop_disks, role):
    disk = loop_disks()
    # Old data everywhere, also in what becomes the reserve: the discard must remove it. The
    # inventory sees data without a signature, so the entry says it may be destroyed.
    disk.write(disk.size - 64 * MIB, b"old data" * 1024)
    disk.write(disk.size // 2, b"old data" * 1024)
    disk.write(disk.size - MIB, b"old data" * 1024)
    wanted = [{"device": disk.path, "method": "partition", "reserve_percent": 20, "overwrite_data": True}]

    stats, failures = role.play(wanted)
    assert failures == [] and stats["changed"] > 0

    end = int(disk.size * 0.8) // MIB * MIB
    assert layout(disk) == [(MIB, end)]
    assert end % MIB == 0 and disk.size - end >= disk.size * 0.2 - MIB
    # The reserve is unallocated and holds no data: zeros up to the backup GPT.
    assert read_range(disk, end, disk.size - GPT_BACKUP_BYTES).count(0) == disk.size - GPT_BACKUP_BYTES - end
    assert b"old data" not in read_range(disk, disk.size // 2, disk.size // 2 + 8192)
    entry = role.record()[disk.path]
    assert entry["method"] == "partition"
    assert (entry["start_bytes"], entry["end_bytes"], entry["reserve_percent"]) == (MIB, end, 20.0)

    before = disk.checksum()
    stats, failures = role.play(wanted)
    assert failures == [] and stats["changed"] == 0
    assert disk.checksum() == before

    stats, failures = role.play([], entry_point="rollback")
    assert failures == [] and stats["changed"] > 0
    assert layout(disk) == [] and disk.partitions() == []
    found = facts(disk)
    assert found["available"] is True, found["reject_reasons"]
    assert not role.record_file.exists()  # nothing left to undo: the record goes


def test_check_mode_plans_and_writes_nothing(loop_disks, role):
    disk = loop_disks()
    before = disk.checksum()
    stats, failures = role.play([{"device": disk.path, "method": "partition"}], check=True)
    assert failures == [] and stats["changed"] > 0
    assert disk.checksum() == before
    assert not role.record_file.exists()


def test_a_partition_made_by_someone_else_is_not_blank(loop_disks, role):
    disk = loop_disks()
    run(["sgdisk", "--new=1:1MiB:+400MiB", disk.path])
    run(["partx", "--add", disk.path])
    before = disk.checksum()
    stats, failures = role.play([{"device": disk.path, "method": "partition"}])
    assert failures == ["%s: refused, the disk is not blank: Has GPT headers, Has partitions" % disk.path]
    assert disk.checksum() == before


def test_rollback_refuses_a_partition_in_use(loop_disks, role):
    disk = loop_disks()
    stats, failures = role.play([{"device": disk.path, "method": "partition"}])
    assert failures == []
    run(["mkfs.xfs", "-q", "/dev/%sp1" % disk.name])
    before = disk.checksum()
    stats, failures = role.play([], entry_point="rollback")
    assert failures == ["%s: refused to remove the partition layout: the partition is in use: "
                        "partition signature xfs" % disk.path]
    assert disk.checksum() == before
    assert disk.path in role.record()


def test_old_data_is_refused_unless_the_entry_allows_overwriting_it(loop_disks, role):
    disk = loop_disks()
    make_data_mid_disk(disk)
    assert facts(disk)["reject_reasons"][0].startswith("Has data without a signature (")
    before = disk.checksum()
    stats, failures = role.play([{"device": disk.path, "method": "partition"}])
    assert failures == ["%s: refused, the disk is not blank: %s"
                        % (disk.path, writers_reasons("data_mid_disk", None)[0])]
    assert disk.checksum() == before
    assert not role.record_file.exists()


def test_overwrite_data_does_not_lift_a_signature(loop_disks, role):
    disk = loop_disks()
    make_xfs(disk)
    before = disk.checksum()
    stats, failures = role.play([{"device": disk.path, "method": "partition", "overwrite_data": True}])
    assert failures == ["%s: refused, the disk is not blank: Has a FileSystem" % disk.path]
    assert disk.checksum() == before


def test_nothing_happens_without_consent_to_erase(loop_disks, role):
    disk = loop_disks()
    before = disk.checksum()
    stats, failures = role.play([{"device": disk.path, "method": "partition"}], overprovision_allow_erase=False)
    assert failures == ["%s: refused, overprovision_allow_erase is false; set it to true to let the role "
                        "discard this blank disk and partition it" % disk.path]
    assert disk.checksum() == before


@pytest.mark.parametrize("kind,prepare,reasons", NON_BLANK, ids=[case[0] for case in NON_BLANK])
def test_non_blank_disk_is_refused_and_left_unchanged(loop_disks, role, kind, prepare, reasons):
    disk = loop_disks()
    prepare(disk)
    before = disk.checksum()
    stats, failures = role.play([{"device": disk.path, "method": "partition"}])
    assert failures == ["%s: refused, the disk is not blank: %s" % (disk.path, ", ".join(reasons))]
    assert disk.checksum() == before
    assert not role.record_file.exists()


def test_hpa_method_on_a_loop_disk_is_refused_as_not_ata(loop_disks, role):
    disk = loop_disks()
    before = disk.checksum()
    stats, failures = role.play([{"device": disk.path, "method": "hpa"}])
    assert failures == ["%s: not a direct-attached ATA disk (transport loop); refused, hdparm was not run" % disk.path]
    assert disk.checksum() == before


def test_an_entry_matching_no_disk_is_refused(role):
    stats, failures = role.play([{"serial": "CEPHOPS-NO-SUCH-DISK", "method": "partition"}])
    assert len(failures) == 1
    assert "'serial': 'CEPHOPS-NO-SUCH-DISK'" in failures[0] and failures[0].endswith("no disk of this host matches")
