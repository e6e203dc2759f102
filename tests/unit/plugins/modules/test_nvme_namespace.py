"""nvme_namespace module: arguments and refusals that need no NVMe drive, and the method
against nvme-cli's JSON (tests/unit/fixtures/nvme/, see test_nvme_namespace.py of
module_utils for their source)."""

import json

import pytest

from ansible_collections.cephops.osd_tuning.plugins.modules import nvme_namespace as nvme_utils
from ansible_collections.cephops.osd_tuning.plugins.module_utils.overprovision import Failed
from ansible_collections.cephops.osd_tuning.plugins.modules import nvme_namespace


def test_a_record_is_required(run_module):
    result = run_module(nvme_namespace.main, {"disks": [{"serial": "S64FNE0R123456"}]})
    assert result["failed"] is True
    assert result["msg"] == "missing required arguments: record"


def test_a_reserve_outside_1_to_50_is_refused_before_any_disk_is_read(run_module, tmp_path):
    result = run_module(nvme_namespace.main, {"disks": [{"serial": "S64FNE0R123456", "reserve_percent": 55}],
                                              "record": str(tmp_path / "r.json")})
    assert result["msg"] == "{'serial': 'S64FNE0R123456'}: reserve_percent 55.0 is outside 1-50; nothing was read or written"


def test_a_serial_no_disk_has_is_named(run_module, tmp_path):
    result = run_module(nvme_namespace.main, {"disks": [{"serial": "CEPHOPS-NO-SUCH-DISK"}],
                                              "record": str(tmp_path / "r.json")})
    assert result["msg"] == "entry {'serial': 'CEPHOPS-NO-SUCH-DISK'}: no disk of this host matches"
    assert result["changed"] is False and result["disks"] == []


# --------------------------------------------------------------------------- the method, against nvme-cli's JSON

DISK = dict(name="nvme0n1", path="/dev/nvme0n1", transport="nvme", reject_reasons=[], data_reasons=[],
            serial="CEPHOPS-NVME-0001", wwn=None)


class Module:
    """What the method needs of AnsibleModule; nvme-cli answers from the fixtures."""

    def __init__(self, answers, erase=True):
        self.params = dict(erase=erase)
        self.answers, self.calls, self.warnings = answers, [], []

    def run_command(self, argv, environ_update=None):
        self.calls.append(" ".join(argv[1:3]))
        return self.answers(argv)

    def get_bin_path(self, name, required=False):
        return None if name == "udevadm" else "/usr/sbin/" + name

    def warn(self, message):
        self.warnings.append(message)


@pytest.fixture
def method(fixture_text, monkeypatch):
    monkeypatch.setattr(nvme_utils, "controller_of", lambda name: "nvme0")
    monkeypatch.setattr(nvme_utils, "namespace_id", lambda name: 1)

    def build(id_ns="id_ns_qemu.json", shared=False, after=None):
        def answers(argv):
            if argv[1] == "id-ctrl":
                return 0, fixture_text("nvme/id_ctrl_qemu.json"), ""
            if argv[1] == "id-ns":
                found = json.loads(fixture_text("nvme/" + (id_ns if argv[2] == "/dev/nvme0n1" else after)))
                found["nmic"] = 1 if shared else 0
                return 0, json.dumps(found), ""
            if argv[1] == "list-ctrl":
                return 0, fixture_text("nvme/list_ctrl_6_7.json"), ""
            return 0, "", ""
        found = nvme_namespace.NvmeNamespace(Module(answers))
        found.prepare()
        return found
    return build


def test_a_private_namespace_needs_no_controller_list(method):
    found = method()
    state = found.inspect(DISK, {}, None)
    assert state["attached"] == [0] and found.module.calls == ["id-ctrl /dev/nvme0", "id-ns /dev/nvme0n1"]


def test_a_shared_namespace_attached_elsewhere_too_is_refused(method):
    found = method(shared=True)
    state = found.inspect(DISK, {}, None)
    plan = found.plan(DISK, state, dict(reserve_percent=20.0, overwrite_data=False), None)
    assert plan["checks"] == ["the namespace is attached to other controllers too (cntlid 6, cntlid 7); only a "
                              "namespace of this controller alone is changed"]


def test_the_plan_lists_the_commands_with_the_new_id_to_come(method):
    found = method()
    plan = found.plan(DISK, found.inspect(DISK, {}, None), dict(reserve_percent=20.0, overwrite_data=False), None)
    assert [" ".join(a[1:]) for a in plan["actions"]] == [
        "delete-ns /dev/nvme0 --namespace-id=1",
        "create-ns /dev/nvme0 --nsze=16777216 --ncap=16777216 --flbas=0 --dps=0 --nmic=0",
        "attach-ns /dev/nvme0 --namespace-id=NEW --controllers=0",
        "ns-rescan /dev/nvme0",
    ]
    assert (plan["fields"]["nsze_before"], plan["fields"]["nsze"], plan["fields"]["block_size"]) == (20971520, 16777216, 512)


def test_a_read_back_of_another_size_fails_after_the_change(method, monkeypatch):
    found = method(after="id_ns_qemu.json")  # the new namespace reads back at the old size
    state = found.inspect(DISK, {}, None)
    plan = found.plan(DISK, state, dict(reserve_percent=20.0, overwrite_data=False), None)
    monkeypatch.setattr(nvme_utils, "replace", lambda *args: 1)
    with pytest.raises(Failed) as raised:
        found.apply(DISK, state, plan)
    assert raised.value.changed is True
    assert str(raised.value) == "/dev/nvme0: namespace 1 was made with 16777216 blocks, but it reads back with 20971520 blocks"
