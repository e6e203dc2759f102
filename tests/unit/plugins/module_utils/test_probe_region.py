"""The probe region: zero checks, restore runs and the journal, on files in a temporary directory
(O_DIRECT works on them as on a disk) and on this process's own /proc entries."""

import json
import os
import subprocess

import pytest

from ansible_collections.cephops.osd_tuning.plugins.module_utils import probe_region

MIB = 1024 ** 2
REGION = (4 * MIB, 8 * MIB)


def write(path, offset, data):
    with open(path, "r+b") as handle:
        handle.seek(offset)
        handle.write(data)


def test_runs_merge_blocks_across_small_gaps_and_stay_within_one_mib():
    runs = []
    for offset in (0, 4096, 65536, 65536 + 4096 + probe_region.MERGE_GAP):
        probe_region._add_block(runs, offset)
    assert runs == [(0, 65536 + 4096), (65536 + 4096 + probe_region.MERGE_GAP, 4096)]
    dense = []
    for offset in range(0, 3 * MIB, 4096):
        probe_region._add_block(dense, offset)
    assert dense == [(0, MIB), (MIB, MIB), (2 * MIB, MIB)]


def test_zero_region_has_no_nonzero_mib_and_no_runs(disk_file):
    write(disk_file, 0, b"x" * 4096)  # outside the region
    write(disk_file, REGION[0] + REGION[1], b"x" * 4096)
    assert probe_region.nonzero_mib(disk_file, REGION) == []
    assert probe_region.written_runs(disk_file, REGION) == []
    assert probe_region.restore_zeros(disk_file, REGION) == 0


def test_restore_zeroes_exactly_the_written_blocks_and_nothing_outside(disk_file):
    write(disk_file, REGION[0] - 4096, b"a" * 4096)
    write(disk_file, REGION[0] + 5 * MIB + 8192, b"\x01")
    write(disk_file, REGION[0] + 7 * MIB, b"b" * 8192)
    write(disk_file, REGION[0] + REGION[1], b"c" * 4096)
    assert probe_region.nonzero_mib(disk_file, REGION) == [REGION[0] + 5 * MIB, REGION[0] + 7 * MIB]
    assert probe_region.written_runs(disk_file, REGION) == [
        (REGION[0] + 5 * MIB + 8192, 4096), (REGION[0] + 7 * MIB, 8192)]
    assert probe_region.restore_zeros(disk_file, REGION) == 4096 + 8192
    assert probe_region.nonzero_mib(disk_file, REGION) == []
    with open(disk_file, "rb") as handle:
        data = handle.read()
    assert data[REGION[0] - 4096:REGION[0]] == b"a" * 4096
    assert data[REGION[0] + REGION[1]:REGION[0] + REGION[1] + 4096] == b"c" * 4096


def test_a_region_past_the_end_is_an_error_not_a_zero_region(disk_file):
    with pytest.raises(probe_region.RegionError, match="ended at byte"):
        probe_region.nonzero_mib(disk_file, (12 * MIB, 8 * MIB))


DISK = {"name": "sdb", "path": "/dev/sdb", "devnum": "259:999", "model": "M", "serial": "S1", "wwn": None, "size_bytes": 16 * MIB}


def test_journal_identity_is_stable_only_with_a_wwn_serial_or_backing_file():
    assert probe_region.journal_identity(DISK) == (
        {"wwn": None, "serial": "S1", "backing_file": None, "size_bytes": 16 * MIB}, True)
    bare = dict(DISK, serial=None)
    assert probe_region.journal_identity(bare) == ({"name": "sdb", "size_bytes": 16 * MIB}, False)
    assert probe_region.journal_identity(bare, "/srv/disk.img")[1] is True


def test_journal_records_durably_and_forgets_once_finished(tmp_path):
    journal = probe_region.Journal(str(tmp_path / "journal"))
    identity, _stable = probe_region.journal_identity(DISK)
    assert journal.find(identity) is None
    record = journal.begin(identity, DISK, REGION, True, 0)
    assert journal.find(identity) == record
    assert oct(os.stat(str(tmp_path / "journal")).st_mode & 0o777) == "0o700"
    assert [r["device"] for r in journal.records()] == ["/dev/sdb"]
    assert probe_region.owner_alive(record) is True
    journal.finish(identity)
    assert journal.find(identity) is None and journal.records() == []


def test_journal_that_cannot_be_written_says_nothing_was_written(tmp_path):
    (tmp_path / "file").write_text("not a directory")
    journal = probe_region.Journal(str(tmp_path / "file" / "journal"))
    with pytest.raises(probe_region.JournalError, match="so nothing was written to it"):
        journal.begin({"serial": "S1"}, DISK, REGION, True, 0)


def dead_process():
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


@pytest.mark.parametrize("changes", [dict(pid=None), dict(boot_id="another boot"), dict(pid_start=1)],
                         ids=["no pid", "earlier boot", "pid reused"])
def test_owner_is_dead_after_a_reboot_or_when_the_pid_now_names_another_process(tmp_path, changes):
    journal = probe_region.Journal(str(tmp_path))
    record = journal.begin({"serial": "S1"}, DISK, REGION, True, 0)
    assert probe_region.owner_alive(dict(record, **changes)) is False
    assert probe_region.owner_alive(dict(record, pid=dead_process())) is False


def test_a_killed_owner_left_unreaped_is_dead():
    """A probe killed by Ansible's async timeout stays a zombie until something reaps it."""
    child = subprocess.Popen(["sleep", "60"])
    record = dict(pid=child.pid, pid_start=probe_region._process_start(child.pid),
                  boot_id=probe_region._boot_id())
    try:
        assert probe_region.owner_alive(record) is True
        child.kill()
        os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)  # exited, not yet reaped
        assert probe_region.owner_alive(record) is False
    finally:
        child.wait()


class Interrupted:
    """A journal holding one record whose process is gone, over a file standing for the disk."""

    def __init__(self, tmp_path, disk_file, stable=True):
        self.journal = probe_region.Journal(str(tmp_path / "journal"))
        self.disk = dict(DISK, path=disk_file)
        self.identity = {"serial": "S1"} if stable else {"name": "sdb"}
        record = self.journal.begin(self.identity, self.disk, REGION, stable, 0)
        record["pid"] = dead_process()
        with open(self.journal.path(self.identity), "w") as handle:
            json.dump(record, handle)
        write(disk_file, REGION[0] + MIB, b"probe data" * 400)

    def recovery(self, stable=True, blocking=(), overwrite=False, check_mode=False):
        return probe_region.recovery(self.journal, self.disk, self.identity, stable, list(blocking), overwrite,
                                     check_mode)


def test_recovery_zeroes_what_an_interrupted_probe_left_and_drops_the_record(tmp_path, disk_file):
    case = Interrupted(tmp_path, disk_file)
    action, text, details = case.recovery()
    assert action == "restored" and "zeroed the region a probe interrupted at" in text
    assert details["zeroed_bytes"] == 4096 and details["region"] == {"offset": REGION[0], "length": REGION[1]}
    assert probe_region.nonzero_mib(disk_file, REGION) == []
    assert case.journal.find(case.identity) is None
    assert case.recovery() is None


def test_recovery_in_check_mode_only_plans(tmp_path, disk_file):
    case = Interrupted(tmp_path, disk_file)
    assert case.recovery(check_mode=True)[0] == "planned"
    assert probe_region.nonzero_mib(disk_file, REGION) != []
    assert case.journal.find(case.identity) is not None


def test_recovery_never_zeroes_a_disk_taken_into_use_since(tmp_path, disk_file):
    case = Interrupted(tmp_path, disk_file)
    action, text, _details = case.recovery(blocking=["Has partitions", "mounted"])
    assert action == "refused"
    assert "the disk is in use now (Has partitions, mounted), so it was not zeroed" in text
    assert "dd if=/dev/zero of=%s bs=1M seek=4 count=8 oflag=direct" % disk_file in text
    assert probe_region.nonzero_mib(disk_file, REGION) != []


def test_recovery_of_a_disk_without_identity_needs_the_users_word(tmp_path, disk_file):
    case = Interrupted(tmp_path, disk_file, stable=False)
    action, text, _details = case.recovery(stable=False)
    assert action == "refused" and "cannot prove it is the same disk" in text
    assert probe_region.nonzero_mib(disk_file, REGION) != []
    assert case.recovery(stable=False, overwrite=True)[0] == "restored"
    assert probe_region.nonzero_mib(disk_file, REGION) == []


def test_recovery_refuses_while_the_probe_still_runs(tmp_path, disk_file):
    journal = probe_region.Journal(str(tmp_path / "journal"))
    journal.begin({"serial": "S1"}, DISK, REGION, True, 0)  # this process: alive
    action, text, _details = probe_region.recovery(journal, dict(DISK, path=disk_file), {"serial": "S1"}, True, [],
                                                   False, False)
    assert action == "refused" and "(pid %d) is still writing to this disk" % os.getpid() in text
