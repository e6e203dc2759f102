"""The flow the over-provisioning modules share: entries, finding disks, refusing before any
change, applying one disk after the other, the record."""

import json
import os

import pytest

from ansible_collections.cephops.osd_tuning.plugins.module_utils import blockdev, overprovision
from ansible_collections.cephops.osd_tuning.plugins.module_utils.overprovision import Failed, Plan, Refused


# --------------------------------------------------------------------------- arithmetic and words

@pytest.mark.parametrize("total,reserve,unit,expected", [
    (8 * 1024 ** 3, 20, 1024 ** 2, 6553 * 1024 ** 2),  # an 8 GiB disk, whole MiB
    (1953525168, 20, 2048, 1562818560),                 # a 1 TB disk in sectors
    (1953525168, 12.5, 2048, 1709332480),
    (2 ** 40 + 1, 0, 1, 2 ** 40 + 1),                   # exact where a float would round
])
def test_reserved_size_rounds_down_to_the_unit(total, reserve, unit, expected):
    assert overprovision.reserved_size(total, reserve, unit) == expected


def test_an_entry_is_described_by_its_selector():
    assert overprovision.describe(dict(serial="S4EW", wwn=None, device=None, reserve_percent=20)) == "{'serial': 'S4EW'}"


def test_reserves_outside_the_range_are_named():
    entries = [dict(device="/dev/sdb", reserve_percent=20.0), dict(serial="S4EW", reserve_percent=60.0)]
    assert overprovision.check_reserve(entries, 1, 50) == ["{'serial': 'S4EW'}: reserve_percent 60.0 is outside 1-50"]


# --------------------------------------------------------------------------- finding disks

IDENTITIES = {
    "sda": dict(wwn="0x5002538e40a1b2c3", serial="S4EWNX0R123456"),
    "sdb": dict(wwn=None, serial="MULTIPATH-1"),
    "sdc": dict(wwn=None, serial="MULTIPATH-1"),
    "nvme0n1": dict(wwn="eui.0025385b71b0a1c2", serial="S64FNE0R123456"),
}


@pytest.fixture
def host(monkeypatch):
    def resolve(spec):
        name = os.path.basename(spec)
        if name not in IDENTITIES and not name.startswith(("loop", "dm-")):
            raise blockdev.DeviceError("%s: no such device" % spec)
        return name
    monkeypatch.setattr(overprovision, "_listdir", lambda path: sorted(IDENTITIES) + ["dm-0", "loop0"])
    monkeypatch.setattr(blockdev, "identity", lambda name: IDENTITIES[name])
    monkeypatch.setattr(blockdev, "resolve_disk", resolve)


def entry(**selector):
    return dict(dict(serial=None, wwn=None, device=None), **selector)


def test_each_selector_finds_its_disk(host):
    entries = [entry(serial="S4EWNX0R123456"), entry(wwn="EUI.0025385B71B0A1C2"), entry(device="/dev/loop0")]
    assert overprovision.find_disks(entries) == ["sda", "nvme0n1", "loop0"]


def test_every_entry_that_finds_no_disk_or_several_is_named(host):
    entries = [entry(serial="NO-SUCH"), entry(serial="MULTIPATH-1"), entry(device="/dev/nope"),
               entry(device="/dev/dm-0"), entry(serial="S4EWNX0R123456"), entry(device="/dev/sda")]
    with pytest.raises(blockdev.DeviceError) as raised:
        overprovision.find_disks(entries)
    assert str(raised.value).split("; ") == [
        "entry {'serial': 'NO-SUCH'}: no disk of this host matches",
        "entry {'serial': 'MULTIPATH-1'}: matches several disks: /dev/sdb, /dev/sdc",
        "/dev/nope: no such device",
        "/dev/dm-0: a virtual device (dm-0), not a disk",
        "/dev/sda: named by more than one entry",
    ]


# --------------------------------------------------------------------------- the flow

class Exit(Exception):
    def __init__(self, result):
        super(Exit, self).__init__(result.get("msg"))
        self.result = result


class Module:
    """What overprovision.run needs of AnsibleModule."""

    def __init__(self, check_mode=False, **params):
        defaults = dict(disks=[], reserve_percent=20.0, erase=True, record=None, restore=False,
                        accept_sampled_content_check=False)
        self.params = dict(defaults, **params)
        self.check_mode = check_mode
        self.run_command_environ_update = {}

    def run_command(self, argv, environ_update=None):
        return 0, "", ""

    @staticmethod
    def atomic_move(src, dest):
        os.rename(src, dest)

    def exit_json(self, **result):
        raise Exit(result)

    def fail_json(self, **result):
        raise Exit(dict(result, failed=True))


class Method:
    """A method that plans a change on every disk, refuses those listed, fails on those listed."""

    name = "test"
    defaults = dict(done=False)

    def __init__(self, refuse=(), fail=()):
        self.refuse, self.fail, self.applied = refuse, fail, []

    def check_entries(self, entries):
        return overprovision.check_reserve(entries, 1, 50)

    def prepare(self):
        pass

    def inspect(self, disk, block, entry):
        if disk["name"] == "sdz":
            raise Refused("/dev/sdz: not for this method; refused, nothing was run", ["not for this method"])
        return dict(size=100)

    def plan(self, disk, state, entry, recorded):
        checks = ["not blank"] if disk["name"] in self.refuse else []
        return Plan(change=True, checks=checks, actions=[["/usr/bin/tool", disk["path"]]],
                    before=disk["path"] + ": whole", after=disk["path"] + ": smaller", reserve=entry["reserve_percent"])

    def plan_restore(self, disk, state, recorded):
        if recorded.get("put_back_by_hand"):
            return Plan()
        return Plan(change=True, actions=[["/usr/bin/undo", disk["path"]]], before="smaller", after="whole")

    def refusal(self, disk, checks, restoring):
        return "%s: refused, %s" % (disk["path"], "; ".join(checks))

    def apply(self, disk, state, plan):
        if disk["name"] in self.fail:
            raise Failed("%s: the tool failed, nothing changed" % disk["path"])
        self.applied.append(disk["name"])
        return dict(done=True)

    def record_entry(self, disk, plan, applied, recorded):
        return overprovision.record_entry(self.name, disk, reserve=plan["fields"]["reserve"])


@pytest.fixture
def disks(monkeypatch):
    names = ["sda", "sdb", "sdz"]
    monkeypatch.setattr(overprovision, "find_disks", lambda entries: [os.path.basename(e["device"]) for e in entries])
    monkeypatch.setattr(overprovision, "_listdir", lambda path: names)
    monkeypatch.setattr(blockdev, "identity_key", lambda name: "serial:" + name.upper())
    monkeypatch.setattr(blockdev, "take_snapshot", lambda run, names, **_options: dict(
        blocks=dict((n, {}) for n in names)))
    monkeypatch.setattr(blockdev, "build_disks", lambda snapshot, min_size_bytes: [
        dict(name=n, path="/dev/" + n, devnum="259:9999", partitions=[], serial=n.upper(), wwn=None)
        for n in sorted(snapshot["blocks"])])
    return lambda *names: [dict(entry(device="/dev/" + n), reserve_percent=None) for n in names]


def run(module, method):
    with pytest.raises(Exit) as done:
        overprovision.run(module, method)
    return done.value.result


def test_one_refused_disk_changes_nothing_on_any_disk(disks):
    method = Method(refuse=["sdb"])
    result = run(Module(disks=disks("sda", "sdb", "sdz")), method)
    assert result["failed"] is True and result["changed"] is False and result["actions"] == []
    assert result["msg"] == "/dev/sdb: refused, not blank; /dev/sdz: not for this method; refused, nothing was run"
    assert [d["checks"] for d in result["disks"]] == [[], ["not blank"], ["not for this method"]]
    assert result["disks"][2]["done"] is False  # the method's fields, also for a disk refused early
    assert method.applied == []


def test_a_reserve_out_of_range_is_refused_before_any_disk_is_read(disks):
    result = run(Module(disks=disks("sda"), reserve_percent=70.0), Method())
    assert result["msg"] == "{'device': '/dev/sda'}: reserve_percent 70.0 is outside 1-50; nothing was read or written"


def test_check_mode_plans_every_disk_and_changes_none(disks, tmp_path):
    method, record = Method(), tmp_path / "record.json"
    result = run(Module(check_mode=True, disks=disks("sda", "sdb"), record=str(record)), method)
    assert result["changed"] is True and method.applied == [] and not record.exists()
    assert result["actions"] == ["tool /dev/sda", "tool /dev/sdb"]
    assert result["diff"] == dict(before="/dev/sda: whole\n/dev/sdb: whole\n", after="/dev/sda: smaller\n/dev/sdb: smaller\n")
    assert [d["reserve"] for d in result["disks"]] == [20.0, 20.0]


def test_a_failure_keeps_the_record_of_the_disks_changed_before_it(disks, tmp_path):
    method, record = Method(fail=["sdb"]), tmp_path / "record.json"
    result = run(Module(disks=disks("sda", "sdb", "sdc"), record=str(record)), method)
    assert result["failed"] is True and result["changed"] is True
    assert result["msg"] == "/dev/sdb: the tool failed, nothing changed"
    assert method.applied == ["sda"]
    assert [(d["device"], d["changed"], d["done"]) for d in result["disks"]] == [
        ("/dev/sda", True, True), ("/dev/sdb", False, False), ("/dev/sdc", False, False)]
    assert sorted(json.loads(record.read_text())["disks"]) == ["serial:SDA"]


def test_a_disk_opened_since_the_inventory_is_refused_right_before_its_write(disks, tmp_path, monkeypatch):
    """The open check runs again per disk just before its first write: a process that opened sdb
    after the inventory stops the run there, with sda (done before) kept in the record."""
    monkeypatch.setattr(blockdev, "open_now", lambda disks: dict(
        (d["name"], blockdev.REASON_OPEN % "qemu-system-x86 (pid 4242)") for d in disks if d["name"] == "sdb"))
    method, record = Method(), tmp_path / "record.json"
    result = run(Module(disks=disks("sda", "sdb", "sdc"), record=str(record)), method)
    assert result["failed"] is True and method.applied == ["sda"]
    assert result["msg"] == ("/dev/sdb: refused by the open check: open by another process: qemu-system-x86 "
                             "(pid 4242) since the inventory; nothing was written to it")
    assert sorted(json.loads(record.read_text())["disks"]) == ["serial:SDA"]


def test_restore_puts_back_every_recorded_disk_and_drops_the_file(disks, tmp_path):
    record = tmp_path / "record.json"
    record.write_text(json.dumps({"disks": {"serial:SDA": {"device": "/dev/sda"},
                                            "serial:GONE": {"device": "/dev/sdq"}}}))
    method = Method()
    result = run(Module(restore=True, record=str(record)), method)
    assert method.applied == ["sda"] and result["missing"] == ["/dev/sdq (serial:GONE)"]
    assert json.loads(record.read_text()) == {"disks": {"serial:GONE": {"device": "/dev/sdq"}}}
    record.write_text(json.dumps({"disks": {"serial:SDA": {"device": "/dev/sda"}}}))
    run(Module(restore=True, record=str(record)), Method())
    assert not record.exists()


def test_restore_of_listed_disks_leaves_the_others_in_the_record(disks, tmp_path):
    record = tmp_path / "record.json"
    record.write_text(json.dumps({"disks": {"serial:SDA": {}, "serial:SDB": {}}}))
    method = Method()
    result = run(Module(restore=True, record=str(record), disks=disks("sdb", "sdz")), method)
    assert method.applied == ["sdb"] and result["not_recorded"] == ["/dev/sdz"]
    assert json.loads(record.read_text()) == {"disks": {"serial:SDA": {}}}


def test_restore_drops_a_disk_whose_original_is_back_already(disks, tmp_path):
    record = tmp_path / "record.json"
    record.write_text(json.dumps({"disks": {"serial:SDA": {"put_back_by_hand": True}}}))
    method = Method()
    checked = run(Module(check_mode=True, restore=True, record=str(record)), method)
    assert checked["changed"] is False and record.exists()
    result = run(Module(restore=True, record=str(record)), method)
    assert result["changed"] is False and method.applied == [] and not record.exists()


def test_every_command_runs_in_the_c_locale(disks):
    module = Module(check_mode=True, disks=disks("sda"))
    run(module, Method())
    assert module.run_command_environ_update == {"LC_ALL": "C"}
