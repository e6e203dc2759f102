"""The NVMe namespace method: nvme-cli's JSON, the plan and its refusals, and the replacement of a
namespace with its way back when a step fails.

QEMU's controller rejects namespace management, so the success path cannot run on any host
at hand; these tests run it against nvme-cli outputs. Fixtures in tests/unit/fixtures/nvme/,
transcribed, not captured:
- the JSON files have the keys, order and layout of nvme-cli 2.3's JSON printers
  (nvme-print.c: json_nvme_id_ctrl, json_nvme_id_ns, json_nvme_list_ns, json_nvme_list_ctrl;
  json-c's pretty printer). id_ctrl_qemu.json and id_ns_qemu.json hold the values of QEMU's
  emulated controller (hw/nvme/ctrl.c, hw/nvme/ns.c: OACS 0x12a with namespace management,
  controller id 0, eight LBA formats) for the lab's 10 GiB disk; the other files describe a
  data-centre drive with and without namespace management, 4 KiB formatted. Values the
  module does not read are zero or plausible;
- the .stderr files are nvme_show_status (nvme-print.c) with libnvme 1.3's status strings,
  as nvme-cli prints a command the controller rejected.
"""

import os

import pytest

from ansible_collections.cephops.osd_tuning.plugins.modules import nvme_namespace as nvme

NVME = "/usr/sbin/nvme"
CTRL = "/dev/nvme0"
QEMU_NSZE = 20971520  # the lab's 10 GiB disk in 512-byte blocks
QEMU_20 = 16777216  # 80 % of it, whole MiB


@pytest.fixture
def out(fixture_text):
    return lambda name: fixture_text("nvme/" + name)


@pytest.fixture
def parsed(out):
    return lambda name: nvme.parse(out(name), name)


# --------------------------------------------------------------------------- reading JSON

def test_the_controller_says_whether_it_manages_namespaces(parsed):
    assert nvme.controller_info(parsed("id_ctrl_qemu.json")) == dict(
        cntlid=0, manageable=True, serial="CEPHOPS-NVME-0001", model="QEMU NVMe Ctrl")
    assert nvme.controller_info(parsed("id_ctrl_no_ns_management.json"))["manageable"] is False
    assert nvme.controller_info(parsed("id_ctrl_ns_management.json"))["cntlid"] == 6


def test_the_namespace_gives_its_size_format_and_block_size(parsed):
    assert nvme.namespace_info(parsed("id_ns_qemu.json")) == dict(nsze=QEMU_NSZE, flbas=0, block_size=512, nmic=0, dps=0)
    assert nvme.namespace_info(parsed("id_ns_4kn.json")) == dict(nsze=234423126, flbas=1, block_size=4096, nmic=0, dps=0)


@pytest.mark.parametrize("flbas,index", [(0, 0), (1, 1), (0x11, 1), (0x20, 16), (0x6f, 63)])
def test_the_format_index_skips_the_metadata_bit(flbas, index):
    assert nvme.format_index(flbas) == index


def test_namespace_and_controller_lists(parsed):
    assert nvme.nsid_list(parsed("list_ns_all_1_2.json")) == [1, 2]
    assert nvme.nsid_list(parsed("list_ns_all_empty.json")) == []
    assert nvme.controller_list(parsed("list_ctrl_6_7.json")) == [6, 7]


def test_prose_is_never_taken_for_an_answer(out):
    with pytest.raises(nvme.NvmeError, match=r"^nvme id-ns printed no JSON: NVMe status: Invalid Command Opcode"):
        nvme.parse(out("delete_ns_invalid_opcode.stderr"), "id-ns")


# --------------------------------------------------------------------------- plan

def blank(**changes):
    disk = dict(name="nvme0n1", path="/dev/nvme0n1", reject_reasons=[], data_reasons=[])
    disk.update(changes)
    return disk


def state(parsed, ctrl="id_ctrl_qemu.json", ns="id_ns_qemu.json", attached="list_ctrl_0.json"):
    return dict(controller=nvme.controller_info(parsed(ctrl)), namespace=nvme.namespace_info(parsed(ns)),
                attached=nvme.controller_list(parsed(attached)))


def recorded(nsze=QEMU_20, before=QEMU_NSZE, reserve=20.0):
    return dict(method="nvme_namespace", nsze=nsze, nsze_before=before, reserve_percent=reserve)


def test_the_reserve_is_in_whole_mib_of_the_block_size():
    assert nvme.target_blocks(QEMU_NSZE, 20, 512) == QEMU_20
    assert nvme.target_blocks(234423126, 20, 4096) == 187538432  # 732572 MiB


def test_a_blank_namespace_of_a_managing_controller_is_replaced(parsed):
    assert nvme.plan(blank(), state(parsed), 20, True, False, None) == dict(target=QEMU_20, change=True, checks=[])


def test_every_failed_check_is_named(parsed):
    found = nvme.plan(blank(reject_reasons=["Has GPT headers", "Has partitions"]),
                      state(parsed, "id_ctrl_no_ns_management.json", attached="list_ctrl_6_7.json"), 20, False, False, None)
    assert found["checks"] == [
        "the namespace is not blank: Has GPT headers, Has partitions",
        "the controller does not support namespace management (nvme id-ctrl OACS bit 3, Namespace Management and "
        "Attachment, is clear); use the partition method for /dev/nvme0n1",
        "the namespace is attached to other controllers too (cntlid 6, cntlid 7); only a namespace of this "
        "controller alone is changed",
        "erase=true is required: the namespace is deleted and created smaller, which erases it",
    ]


def test_overwrite_data_lifts_the_content_reasons_alone(parsed):
    data = "Has data without a signature (3 of 64 sampled MiB not zero)"
    assert nvme.plan(blank(reject_reasons=[data], data_reasons=[data]), state(parsed), 20, True, True, None)["checks"] == []


def test_the_recorded_size_is_done_and_a_second_run_does_not_shrink_again(parsed):
    done = state(parsed, ns="id_ns_4kn_reserved.json", ctrl="id_ctrl_ns_management.json", attached="list_ctrl_6.json")
    made = recorded(187538432, 234423126)
    in_use = blank(reject_reasons=["Has BlueStore device label"])
    assert nvme.plan(in_use, done, 20, False, False, made) == dict(target=187538432, change=False, checks=[])
    other = nvme.plan(in_use, done, 30, True, False, made)
    assert other["change"] is False and other["checks"] == [
        "the namespace was made for a reserve of 20.0 %, not 30 %; restore it first, while the namespace is empty"]


def test_a_namespace_changed_by_other_means_is_refused(parsed):
    found = nvme.plan(blank(), state(parsed), 20, True, False, recorded(nsze=1000))
    assert found["checks"] == ["the namespace has %d blocks, neither the 1000 the record holds nor its original %d: it "
                               "was changed by other means" % (QEMU_NSZE, QEMU_NSZE)]


def test_restore_gives_a_blank_namespace_its_original_size(parsed):
    made = state(parsed, ns="id_ns_4kn_reserved.json", ctrl="id_ctrl_ns_management.json", attached="list_ctrl_6.json")
    assert nvme.plan_restore(blank(), made, recorded(187538432, 234423126)) == dict(
        target=234423126, change=True, checks=[])
    refused = nvme.plan_restore(blank(reject_reasons=["Has BlueStore device label"]), made, recorded(187538432, 234423126))
    assert refused["checks"] == ["the namespace is not blank: Has BlueStore device label"]
    back = state(parsed, ns="id_ns_4kn.json", ctrl="id_ctrl_ns_management.json", attached="list_ctrl_6.json")
    assert nvme.plan_restore(blank(), back, recorded(187538432, 234423126))["change"] is False


def test_the_planned_commands_keep_the_format_and_attach_to_this_controller(parsed):
    namespace = nvme.namespace_info(parsed("id_ns_4kn.json"))
    assert nvme.replace_argvs(NVME, CTRL, 1, 6, namespace, 187538432) == [
        [NVME, "delete-ns", CTRL, "--namespace-id=1"],
        [NVME, "create-ns", CTRL, "--nsze=187538432", "--ncap=187538432", "--flbas=1", "--dps=0", "--nmic=0"],
        [NVME, "attach-ns", CTRL, "--namespace-id=NEW", "--controllers=6"],
        [NVME, "ns-rescan", CTRL],
    ]


# --------------------------------------------------------------------------- replace, and the way back

class Controller:
    """nvme-cli as a script: each call must be the next expected command; it answers with the
    exit status and output given."""

    def __init__(self, *steps):
        self.steps = list(steps)
        self.calls = []

    def __call__(self, argv):
        self.calls.append(argv[1:])
        assert self.steps, "unexpected command %s" % argv
        command, rc, out, err = self.steps.pop(0)
        assert argv[1:1 + len(command)] == list(command), (argv, command)
        return rc, out, err


@pytest.fixture
def qemu_namespace(parsed):
    return nvme.namespace_info(parsed("id_ns_qemu.json"))


def create(blocks):
    return ("create-ns", CTRL, "--nsze=%d" % blocks, "--ncap=%d" % blocks, "--flbas=0", "--dps=0", "--nmic=0")


def test_a_namespace_is_replaced_and_its_new_id_read_from_list_ns(out, qemu_namespace):
    run = Controller(
        (("delete-ns", CTRL, "--namespace-id=1"), 0, "delete-ns: Success, deleted nsid:1\n", ""),
        (("list-ns", CTRL, "--all", "--output-format=json"), 0, out("list_ns_all_empty.json"), ""),
        (create(QEMU_20), 0, "create-ns: Success, created nsid:1\n", ""),
        (("list-ns", CTRL, "--all"), 0, out("list_ns_all_1.json"), ""),
        (("attach-ns", CTRL, "--namespace-id=1", "--controllers=0"), 0, "attach-ns: Success, nsid:1\n", ""),
        (("ns-rescan", CTRL), 0, "", ""),
    )
    assert nvme.replace(run, NVME, CTRL, 1, 0, qemu_namespace, QEMU_20, "/dev/nvme0n1") == 1
    assert run.steps == []


def test_a_refused_delete_changes_nothing_and_says_so(out, qemu_namespace):
    run = Controller((("delete-ns", CTRL, "--namespace-id=1"), 1, "", out("delete_ns_invalid_opcode.stderr")))
    with pytest.raises(nvme.NvmeError) as raised:
        nvme.replace(run, NVME, CTRL, 1, 0, qemu_namespace, QEMU_20, "/dev/nvme0n1")
    assert raised.value.changed is False
    assert str(raised.value) == (
        "/dev/nvme0: the controller refused to delete namespace 1 (NVMe status: Invalid Command Opcode: A reserved "
        "coded value or an unsupported value in the command opcode field(0x4001)), so nothing changed on "
        "/dev/nvme0n1. It advertises namespace management (OACS bit 3) but does not carry it out; use the partition "
        "method for this disk.")
    assert run.calls == [["delete-ns", CTRL, "--namespace-id=1"]]


def test_a_failed_create_puts_the_namespace_back_at_its_size(out, qemu_namespace):
    run = Controller(
        (("delete-ns", CTRL, "--namespace-id=1"), 0, "", ""),
        (("list-ns", CTRL, "--all"), 0, out("list_ns_all_empty.json"), ""),
        (create(QEMU_20), 1, "", out("create_ns_insufficient_capacity.stderr")),
        (("list-ns", CTRL, "--all"), 0, out("list_ns_all_empty.json"), ""),
        (create(QEMU_NSZE), 0, "create-ns: Success, created nsid:1\n", ""),
        (("list-ns", CTRL, "--all"), 0, out("list_ns_all_1.json"), ""),
        (("attach-ns", CTRL, "--namespace-id=1", "--controllers=0"), 0, "", ""),
        (("ns-rescan", CTRL), 0, "", ""),
    )
    with pytest.raises(nvme.NvmeError) as raised:
        nvme.replace(run, NVME, CTRL, 1, 0, qemu_namespace, QEMU_20, "/dev/nvme0n1")
    assert raised.value.changed is True and run.steps == []
    assert str(raised.value) == (
        "/dev/nvme0: creating the namespace with %d blocks failed (nvme create-ns failed (NVMe status: Namespace "
        "Insufficient Capacity: Creating the namespace requires more free space than is currently available"
        "(0x4115))); the namespace was put back with its earlier %d blocks, blank." % (QEMU_20, QEMU_NSZE))


def test_a_namespace_that_cannot_be_attached_is_deleted_before_the_put_back(out, qemu_namespace):
    run = Controller(
        (("delete-ns", CTRL, "--namespace-id=1"), 0, "", ""),
        (("list-ns", CTRL, "--all"), 0, out("list_ns_all_empty.json"), ""),
        (create(QEMU_20), 0, "", ""),
        (("list-ns", CTRL, "--all"), 0, out("list_ns_all_1.json"), ""),
        (("attach-ns", CTRL, "--namespace-id=1"), 1, "", out("attach_ns_controller_list_invalid.stderr")),
        (("delete-ns", CTRL, "--namespace-id=1"), 0, "", ""),
        (("list-ns", CTRL, "--all"), 0, out("list_ns_all_empty.json"), ""),
        (create(QEMU_NSZE), 0, "", ""),
        (("list-ns", CTRL, "--all"), 0, out("list_ns_all_1.json"), ""),
        (("attach-ns", CTRL, "--namespace-id=1", "--controllers=0"), 0, "", ""),
        (("ns-rescan", CTRL), 0, "", ""),
    )
    with pytest.raises(nvme.NvmeError, match=r"nvme attach-ns failed \(NVMe status: Controller List Invalid.*the "
                                             r"namespace was put back with its earlier 20971520 blocks, blank\.$"):
        nvme.replace(run, NVME, CTRL, 1, 0, qemu_namespace, QEMU_20, "/dev/nvme0n1")
    assert run.steps == []


def test_when_the_put_back_fails_too_the_message_says_how_to_recreate_it(out, qemu_namespace):
    refused = out("create_ns_insufficient_capacity.stderr")
    run = Controller(
        (("delete-ns", CTRL, "--namespace-id=1"), 0, "", ""),
        (("list-ns", CTRL, "--all"), 0, out("list_ns_all_empty.json"), ""),
        (create(QEMU_20), 1, "", refused),
        (("list-ns", CTRL, "--all"), 0, out("list_ns_all_empty.json"), ""),
        (create(QEMU_NSZE), 1, "", refused),
    )
    with pytest.raises(nvme.NvmeError) as raised:
        nvme.replace(run, NVME, CTRL, 1, 0, qemu_namespace, QEMU_20, "/dev/nvme0n1")
    message = str(raised.value)
    assert raised.value.changed is True
    assert "putting it back with its earlier %d blocks failed too" % QEMU_NSZE in message
    assert message.endswith("the controller has no namespace in place of /dev/nvme0n1. Create it by hand: %s "
                            "create-ns %s --nsze=%d --ncap=%d --flbas=0 --dps=0 --nmic=0, then nvme attach-ns %s "
                            "--namespace-id=ID --controllers=0" % (NVME, CTRL, QEMU_NSZE, QEMU_NSZE, CTRL))


def test_a_create_that_list_ns_does_not_show_is_a_failure(out, qemu_namespace):
    run = Controller(
        (("delete-ns", CTRL, "--namespace-id=1"), 0, "", ""),
        (("list-ns", CTRL, "--all"), 0, out("list_ns_all_empty.json"), ""),
        (create(QEMU_20), 0, "", ""),
        (("list-ns", CTRL, "--all"), 0, out("list_ns_all_empty.json"), ""),
        (("list-ns", CTRL, "--all"), 0, out("list_ns_all_empty.json"), ""),
        (create(QEMU_NSZE), 0, "", ""),
        (("list-ns", CTRL, "--all"), 0, out("list_ns_all_1.json"), ""),
        (("attach-ns", CTRL, "--namespace-id=1"), 0, "", ""),
        (("ns-rescan", CTRL), 0, "", ""),
    )
    with pytest.raises(nvme.NvmeError, match=r"list-ns shows no new namespace ids"):
        nvme.replace(run, NVME, CTRL, 1, 0, qemu_namespace, QEMU_20, "/dev/nvme0n1")


# --------------------------------------------------------------------------- sysfs

@pytest.fixture
def sysfs(tmp_path, monkeypatch):
    """A /sys/block with a namespace of a plain controller (nvme1n1), one behind native
    multipath with one controller (nvme0n1) and one reached through two (nvme2n1)."""
    block, devices = tmp_path / "block", tmp_path / "devices"
    for ctrl in ("nvme0", "nvme1", "nvme2", "nvme3"):
        (devices / ctrl).mkdir(parents=True)
    for subsys, ctrls in (("nvme-subsys0", ["nvme0"]), ("nvme-subsys2", ["nvme2", "nvme3"])):
        (devices / subsys).mkdir()
        for ctrl in ctrls:
            os.symlink(str(devices / ctrl), str(devices / subsys / ctrl))
    for name, parent, nsid in (("nvme0n1", "nvme-subsys0", "1"), ("nvme1n1", "nvme1", "1"),
                               ("nvme2n1", "nvme-subsys2", "1"), ("nvme0n2", "nvme-subsys0", "2")):
        (block / name).mkdir(parents=True)
        os.symlink(str(devices / parent), str(block / name / "device"))
        (block / name / "nsid").write_text(nsid + "\n")
    monkeypatch.setattr(nvme, "SYS_BLOCK", str(block))
    return block


def test_the_controller_of_a_namespace_comes_from_sysfs(sysfs):
    assert nvme.controller_of("nvme1n1") == "nvme1"
    assert nvme.controller_of("nvme0n1") == "nvme0"  # native multipath: the subsystem's one controller
    with pytest.raises(nvme.NvmeError, match=r"reached through 2 controllers of nvme-subsys2 \(nvme2, nvme3\)"):
        nvme.controller_of("nvme2n1")
    assert nvme.namespace_id("nvme0n2") == 2


def test_the_new_namespace_is_found_by_controller_and_id(sysfs):
    names = sorted(os.listdir(str(sysfs)))
    assert nvme.block_device("nvme0", 2, names) == "nvme0n2"
    assert nvme.block_device("nvme0", 3, names) is None
