"""udev_queue_rules writes, backs up, removes and refuses, on a real file.

Reload and trigger need a running udev, which the lab has (the molecule default scenario
proves the rules act at boot); here the file handling runs with reload disabled, and a host
whose udev does not answer (no daemon behind its socket file, or no socket) gets the rules for
the next boot without failing.
"""

import json
import os
import stat

import pytest

from loopdisk import run
from modulerun import ansible_module

RULES = [{"comment": "SSD", "match": {"KERNEL": "sd*", "ATTR{queue/rotational}": "0"},
          "attributes": {"scheduler": "none"}}]


def rules_file(path, rules=None, check=False, prefix=(), **options):
    args = dict(path=str(path), rules=RULES if rules is None else rules, reload=False, owner="test")
    args.update(options)
    return ansible_module("udev_queue_rules", args, check=check, prefix=prefix)


@pytest.mark.pythons
def test_writes_once_then_changes_nothing(tmp_path):
    path = tmp_path / "60-test.rules"
    first = rules_file(path)
    assert first["changed"] is True, first
    text = path.read_text()
    assert text.startswith("# Managed by test. Local changes are overwritten.\n")
    assert 'KERNEL=="sd*", ATTR{queue/scheduler}="none"' in text
    assert first["validated_with"] in ("udevadm verify", "structure")
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o644
    assert rules_file(path)["changed"] is False


def test_check_mode_shows_a_diff_and_writes_nothing(tmp_path):
    path = tmp_path / "60-test.rules"
    result = rules_file(path, check=True)
    assert result["changed"] is True
    assert 'ATTR{queue/scheduler}="none"' in result["diff"]["after"]
    assert not path.exists()


def test_a_change_backs_up_a_file_of_another_but_not_the_module_s_own(tmp_path):
    """The module can write its own file again; a copy of it would only outlive the undo."""
    path = tmp_path / "60-test.rules"
    theirs = 'KERNEL=="sd*", ATTR{queue/scheduler}="bfq"\n'
    path.write_text(theirs)
    result = rules_file(path)
    with open(result["backup_file"]) as handle:
        assert handle.read() == theirs
    result = rules_file(path, rules=[dict(RULES[0], attributes={"scheduler": "mq-deadline"})])
    assert result["changed"] is True and "backup_file" not in result
    assert 'ATTR{queue/scheduler}="mq-deadline"' in path.read_text()


def test_unsafe_input_is_refused_and_the_file_left_alone(tmp_path):
    path = tmp_path / "60-test.rules"
    rules_file(path)
    before = path.read_bytes()
    result = rules_file(path, rules=[{"match": {"ENV{ID_MODEL}": 'X", RUN+="/bin/sh -c reboot'},
                                      "attributes": {"scheduler": "none"}}])
    assert result["failed"] is True
    assert result["msg"].startswith("rules refused, nothing written: rule 1: match value")
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["60-test.rules"]


def test_disk_rules_in_a_file_udev_runs_before_it_knows_the_serial_are_refused(tmp_path):
    path = tmp_path / "60-cephops-io-scheduler.rules"
    result = rules_file(path, rules=[{"match": {"ENV{ID_SERIAL_SHORT}": "S3Z9NB0K123456"},
                                      "attributes": {"scheduler": "none"}}])
    assert result["failed"] is True
    assert "matches ENV{ID_SERIAL_SHORT}, which udev sets in 60-persistent-storage.rules" in result["msg"]
    assert not path.exists()
    assert rules_file(path)["changed"] is True  # class rules need no identity: any name will do


def test_absent_removes_its_own_file_without_a_backup_and_another_s_with_one(tmp_path):
    path = tmp_path / "60-test.rules"
    rules_file(path)
    result = rules_file(path, state="absent")
    assert result["changed"] is True and not path.exists() and "backup_file" not in result
    assert sorted(p.name for p in tmp_path.iterdir()) == []
    assert rules_file(path, state="absent")["changed"] is False
    path.write_text('KERNEL=="sd*", ATTR{queue/scheduler}="bfq"\n')
    result = rules_file(path, state="absent")
    assert result["changed"] is True and not path.exists() and os.path.exists(result["backup_file"])


# A udev control socket no daemon listens on, as a container, chroot or image build keeps it:
# under a tmpfs /run in the test's own mount namespace, so the host's /run is never touched.
DEAD_SOCKET = ("mount -t tmpfs tmpfs /run && mkdir /run/udev && python3 -c 'import socket; "
               "socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET).bind(\"/run/udev/control\")'")


@pytest.mark.parametrize("control", ["dead socket", "no socket"])
def test_without_a_udev_daemon_the_rules_are_written_for_the_next_boot_and_check_mode_says_so(
        mount_ns, tmp_path, control):
    run(mount_ns + ["sh", "-c", DEAD_SOCKET if control == "dead socket" else "mount -t tmpfs tmpfs /run"])
    path = tmp_path / "60-test.rules"
    planned = rules_file(path, check=True, reload=True, trigger=["loop0"], prefix=mount_ns)
    result = rules_file(path, reload=True, trigger=["loop0"], prefix=mount_ns)
    assert not result.get("failed"), result
    assert result["changed"] is True and path.exists() and result["triggered"] == []
    reason = "Connection refused" if control == "dead socket" else "No such file or directory"
    assert result["udev"].startswith("not answering (udevadm control --ping: ") and reason in result["udev"], result
    assert result["udev"].endswith("): the rules take effect at the next boot")
    assert planned["udev"] == result["udev"] and planned["changed"] is True
    assert result["warnings"] == ["%s: %s" % (path, result["udev"])]


def test_an_operator_who_requires_udev_gets_a_failure_before_anything_is_written(mount_ns, tmp_path):
    run(mount_ns + ["sh", "-c", DEAD_SOCKET])
    path = tmp_path / "60-test.rules"
    result = rules_file(path, reload=True, require_udev=True, prefix=mount_ns)
    assert result["failed"] is True and not path.exists()
    assert result["msg"].startswith("no udev daemon answers on this host (udevadm control --ping: "), result["msg"]


def test_restore_removes_a_file_the_module_made(tmp_path):
    path, record = tmp_path / "60-test.rules", tmp_path / "records" / "udev.json"
    assert rules_file(path, record=str(record))["changed"] is True
    assert json.loads(record.read_text()) == {"files": {str(path): None}}
    assert rules_file(path, record=str(record), restore=True, check=True)["changed"] is True
    assert path.exists()
    result = rules_file(path, record=str(record), restore=True)
    assert result["changed"] is True and not path.exists() and not record.exists()


def test_restore_puts_back_the_file_it_replaced_and_keeps_the_first_original(tmp_path):
    path, record = tmp_path / "60-test.rules", tmp_path / "udev.json"
    theirs = 'ACTION=="add", KERNEL=="sd*", ATTR{queue/scheduler}="bfq"\n'
    path.write_text(theirs)
    rules_file(path, record=str(record))
    rules_file(path, rules=[dict(RULES[0], attributes={"scheduler": "mq-deadline"})], record=str(record))
    assert json.loads(record.read_text()) == {"files": {str(path): theirs}}
    assert rules_file(path, record=str(record), restore=True)["changed"] is True
    assert path.read_text() == theirs and not record.exists()


def test_restore_without_a_record_removes_only_a_file_with_the_header(tmp_path):
    ours, theirs, record = tmp_path / "60-ours.rules", tmp_path / "61-theirs.rules", tmp_path / "udev.json"
    rules_file(ours)  # an earlier run that kept no record
    theirs.write_text('KERNEL=="sd*", ATTR{queue/scheduler}="bfq"\n')
    assert rules_file(ours, record=str(record), restore=True)["changed"] is True and not ours.exists()
    assert rules_file(theirs, record=str(record), restore=True)["changed"] is False and theirs.exists()


def test_a_program_given_by_name_runs_by_its_path_on_the_host(tmp_path):
    path = tmp_path / "62-test.rules"
    rule = {"match": {"ENV{ID_SERIAL_SHORT}": "S1"}, "run": [["hdparm", "-W0", "$devnode"]]}
    result = rules_file(path, rules=[rule])
    assert result["changed"] is True, result
    hdparm = [d + "/hdparm" for d in ("/usr/sbin", "/sbin", "/usr/bin", "/bin") if os.path.exists(d + "/hdparm")][0]
    assert path.read_text().splitlines()[-1].endswith(', RUN+="%s -W0 $devnode"' % hdparm)


def test_a_program_the_host_does_not_have_is_refused_and_nothing_written(tmp_path):
    path = tmp_path / "62-test.rules"
    rule = {"match": {"ENV{ID_SERIAL_SHORT}": "S1"}, "run": [["cephops-no-such-tool", "$devnode"]]}
    result = rules_file(path, rules=[rule])
    assert result["failed"] is True
    assert "cephops-no-such-tool is not installed on this host" in result["msg"], result
    assert not path.exists()


def test_with_a_record_backups_go_beside_it_and_the_rules_folder_keeps_only_the_rules(tmp_path):
    rules_dir, state = tmp_path / "rules.d", tmp_path / "state"
    rules_dir.mkdir()
    path, record = rules_dir / "60-test.rules", state / "udev.json"
    theirs = 'KERNEL=="sd*", ATTR{queue/scheduler}="bfq"\n'
    path.write_text(theirs)
    changed = rules_file(path, record=str(record))
    assert changed["backup_file"].startswith(str(state / "backups") + "/")
    with open(changed["backup_file"]) as handle:
        assert handle.read() == theirs
    assert rules_file(path, record=str(record), restore=True)["changed"] is True
    assert sorted(p.name for p in rules_dir.iterdir()) == ["60-test.rules"] and path.read_text() == theirs
