"""udev rules rendering and the checks that keep input from changing a rule's meaning."""

import pytest

from ansible_collections.cephops.osd_tuning.plugins.modules import udev_queue_rules as rules_utils

SSD = {"comment": "SATA/SAS SSD", "match": {"KERNEL": "sd*", "ATTR{queue/rotational}": "0"},
       "attributes": {"iosched/fifo_batch": 1, "max_sectors_kb": 64, "scheduler": "mq-deadline"}}


def test_render_orders_scheduler_before_its_tunables():
    text = rules_utils.render([SSD], "Managed by test.")
    assert text == (
        "# Managed by test.\n"
        "\n"
        "# SATA/SAS SSD\n"
        'ACTION=="add|change", SUBSYSTEM=="block", ENV{DEVTYPE}=="disk", ATTR{queue/rotational}=="0", '
        'KERNEL=="sd*", ATTR{queue/scheduler}="mq-deadline", ATTR{queue/max_sectors_kb}="64", '
        'ATTR{queue/iosched/fifo_batch}="1"\n'
    )


def test_render_is_stable_for_idempotence():
    assert rules_utils.render([SSD, SSD], "h") == rules_utils.render([dict(SSD), dict(SSD)], "h")


def test_a_skip_rule_jumps_past_every_later_rule_to_the_file_s_last_line():
    skip = {"comment": "disk vda, left alone", "match": {"ENV{ID_SERIAL}": "OS-0001"}, "skip": True}
    assert rules_utils.check([skip, SSD]) == []
    lines = rules_utils.render([skip, SSD], "h").splitlines()
    assert lines[3] == 'ACTION=="add|change", SUBSYSTEM=="block", ENV{DEVTYPE}=="disk", ENV{ID_SERIAL}=="OS-0001", GOTO="cephops_end"'
    assert lines[-1] == 'LABEL="cephops_end"' and lines[-3].endswith('ATTR{queue/iosched/fifo_batch}="1"')
    assert "LABEL" not in rules_utils.render([SSD], "h")


def test_valid_rules_pass():
    assert rules_utils.check([SSD, {"match": {"ENV{ID_SERIAL_SHORT}": "S3Z9NB0K123456"}, "attributes": {"scheduler": "none"}}]) == []


@pytest.mark.parametrize("rule,message", [
    ({"match": {}, "attributes": {"scheduler": "none"}}, "rule 1: needs at least one match key"),
    ({"match": {"KERNEL": "sd*"}, "attributes": {}}, "rule 1: sets no attribute and runs nothing"),
    ({"match": {"KERNEL": "sd*"}, "run": [["hdparm", "-W0", "$devnode"]]}, "not a program by its absolute path"),
    ({"match": {"KERNEL": "sd*"}, "run": [[]]}, "not a program by its absolute path"),
    ({"match": {"KERNEL": "sd*"}, "action": "remove", "attributes": {"scheduler": "none"}}, "action 'remove' is not one of"),
    ({"match": {"KERNEL": "sd*"}, "run": [["/bin/sh", "-c", "echo 'x'"]]}, "holds a quote"),
    ({"match": {"KERNEL": "sd*"}, "run": [["/usr/sbin/hdparm", "-W0\"", "$devnode"]]}, "holds a quote"),
    ({"match": {"KERNEL": "sd*"}, "run": [["/usr/sbin/hdparm", "", "$devnode"]]}, "is empty"),
    ({"match": {"RUN": "/bin/sh"}, "attributes": {"scheduler": "none"}}, "match key 'RUN' is not one of"),
    ({"match": {"KERNEL": 'sd*", RUN+="/bin/sh'}, "attributes": {"scheduler": "none"}}, "holds a quote"),
    ({"match": {"ENV{ID_MODEL}": "A\nRUN"}, "attributes": {"scheduler": "none"}}, "line break"),
    ({"match": {"ENV{ID_MODEL}": "A\\"}, "attributes": {"scheduler": "none"}}, "backslash"),
    ({"match": {"KERNEL": ""}, "attributes": {"scheduler": "none"}}, "is empty"),
    ({"match": {"KERNEL": "sd*"}, "attributes": {"../../dev": "x"}}, "'../../dev' is not a queue attribute name"),
    ({"match": {"KERNEL": "sd*"}, "attributes": {"scheduler": 'none"'}}, "holds a quote"),
    ({"match": {"KERNEL": "sd*"}, "attributes": {"scheduler": "none"}, "comment": "a\nb"}, "comment must be one line"),
    ({"match": {"KERNEL": "sd*"}, "attributes": {"scheduler": "none"}, "skip": True}, "a skip rule sets nothing"),
    ({"match": {}, "skip": True}, "rule 1: needs at least one match key"),
])
def test_check_refuses_with_the_reason(rule, message):
    errors = rules_utils.check([rule])
    assert any(message in error for error in errors), errors


@pytest.mark.parametrize("path,refused", [
    ("/etc/udev/rules.d/60-cephops-io-scheduler.rules", True),  # sorts before 60-persistent-storage
    ("/etc/udev/rules.d/60-persistent-storage.rules", True),
    ("/etc/udev/rules.d/61-cephops-io-scheduler.rules", False),
    ("/etc/udev/rules.d/99-local.rules", False),
])
def test_identity_rules_must_sort_after_the_file_that_sets_the_identity(path, refused):
    rules = [SSD, {"match": {"ENV{ID_WWN}": "0x5000c500a1b2c3d4"}, "attributes": {"scheduler": "none"}}]
    errors = rules_utils.check_order(path, rules)
    assert bool(errors) is refused
    if refused:
        assert "matches ENV{ID_WWN}, which udev sets in 60-persistent-storage.rules" in errors[0]
    assert rules_utils.check_order("/etc/udev/rules.d/10-early.rules", [SSD]) == []  # class rules need no identity


def test_render_runs_programs_after_the_attributes_with_words_quoted_where_they_hold_spaces():
    rule = {"match": {"ENV{ID_SERIAL_SHORT}": "S3Z9NB0K123456"}, "attributes": {"scheduler": "none"},
            "action": "add", "run": [["/usr/bin/sdparm", "--clear=WCE", "--quiet", "$devnode"],
                                     ["/bin/sh", "-c", "echo 1 > /sys$devpath/device/rescan"]]}
    assert rules_utils.check([rule]) == []
    assert rules_utils.render([rule], "h").splitlines()[-1] == (
        'ACTION=="add", SUBSYSTEM=="block", ENV{DEVTYPE}=="disk", ENV{ID_SERIAL_SHORT}=="S3Z9NB0K123456", '
        'ATTR{queue/scheduler}="none", RUN+="/usr/bin/sdparm --clear=WCE --quiet $devnode", '
        'RUN+="/bin/sh -c \'echo 1 > /sys$devpath/device/rescan\'"')


class Module:
    """What _apply asks of AnsibleModule: the commands it runs and the warnings it gives."""

    def __init__(self, open_check):
        self.params = {"trigger_action": "add", "trigger_open_check": open_check}
        self.commands, self.warnings = [], []

    def get_bin_path(self, name, required=False):  # pylint: disable=unused-argument
        return "/usr/bin/" + name

    def run_command(self, argv):
        self.commands.append(argv)
        return 0, "", ""

    def warn(self, text):
        self.warnings.append(text)


@pytest.mark.parametrize("open_check", [True, False])
def test_the_open_check_keeps_the_event_off_a_disk_another_process_holds(monkeypatch, open_check):
    asked = []
    monkeypatch.setattr(rules_utils.blockdev, "held_now", lambda names: asked.append(names) or {
        "sdb": "open by another process: qemu-system-x86 (pid 4242)"})
    module = Module(open_check)
    triggered, held = rules_utils._apply(module, ["sda", "sdb"])
    trigger = [argv for argv in module.commands if argv[1] == "trigger"][0]
    if open_check:
        assert (triggered, asked) == (["sda"], [["sda", "sdb"]])
        assert held == {"sdb": "open by another process: qemu-system-x86 (pid 4242)"}
        assert trigger[-1] == "--sysname-match=sda" and "--sysname-match=sdb" not in trigger
        assert module.warnings == ["sdb: the event was not replayed, refused by the open check: open by another "
                                   "process: qemu-system-x86 (pid 4242); the rules act when the disk next appears"]
    else:
        assert (triggered, held, asked, module.warnings) == (["sda", "sdb"], {}, [], [])
        assert trigger[-2:] == ["--sysname-match=sda", "--sysname-match=sdb"]


def test_with_every_disk_held_only_the_rules_are_reloaded(monkeypatch):
    monkeypatch.setattr(rules_utils.blockdev, "held_now",
                        lambda names: dict((n, "open by another process: x (pid 1)") for n in names))
    module = Module(True)
    assert rules_utils._apply(module, ["sda"])[0] == []
    assert [argv[1] for argv in module.commands] == ["control"]
