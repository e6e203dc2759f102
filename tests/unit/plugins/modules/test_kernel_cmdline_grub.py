"""grub defaults editing on the /etc/default/grub Debian and Ubuntu ship (tests/unit/fixtures/grub/README.md)."""

import pytest

from ansible_collections.cephops.osd_tuning.plugins.modules import kernel_cmdline as cmdline_utils

# file, and its GRUB_CMDLINE_LINUX_DEFAULT as shipped
SHIPPED_DEFAULTS = {"debian12": ("grub/debian12_default_grub", "quiet"),
                    "ubuntu2404": ("grub/ubuntu2404_default_grub", "quiet splash")}


@pytest.fixture(params=sorted(SHIPPED_DEFAULTS))
def shipped(request, fixture_text):
    """(text, GRUB_CMDLINE_LINUX_DEFAULT's arguments) of a shipped grub defaults file."""
    name, default = SHIPPED_DEFAULTS[request.param]
    return fixture_text(name), default


def with_line(text, old, new):
    assert old in text
    return text.replace(old, new)


def test_removes_elevator_and_keeps_everything_else(shipped):
    text, default = shipped
    line = 'GRUB_CMDLINE_LINUX_DEFAULT="%s"' % default
    new, before, after = cmdline_utils.edit_text(with_line(text, line, line[:-1] + ' elevator=noop"'), remove=["elevator"])
    assert new == text
    assert (before, after) == (default.split() + ["elevator=noop"], default.split())


def test_nothing_to_remove_changes_nothing(shipped):
    text, default = shipped
    assert cmdline_utils.edit_text(text, remove=["elevator"]) == (text, default.split(), default.split())


def test_sets_into_the_target_and_drops_it_elsewhere(shipped):
    text, default = shipped
    line = 'GRUB_CMDLINE_LINUX_DEFAULT="%s"' % default
    new, before, after = cmdline_utils.edit_text(with_line(text, line, line[:-1] + ' elevator=cfq"'),
                                                 set_args={"elevator": "deadline"}, target="GRUB_CMDLINE_LINUX")
    assert new == with_line(text, 'GRUB_CMDLINE_LINUX=""', 'GRUB_CMDLINE_LINUX="elevator=deadline"')
    assert after == default.split() + ["elevator=deadline"]


def test_set_replaces_in_place_and_deduplicates():
    new, before, after = cmdline_utils.edit_text(
        'GRUB_CMDLINE_LINUX="a elevator=cfq b elevator=noop"\n', set_args={"elevator": "deadline"},
        target="GRUB_CMDLINE_LINUX")
    assert new == 'GRUB_CMDLINE_LINUX="a elevator=deadline b"\n'
    assert after == ["a", "elevator=deadline", "b"]


def test_set_goes_into_the_last_assignment_only():
    text = 'GRUB_CMDLINE_LINUX="a"\nGRUB_CMDLINE_LINUX="$GRUB_CMDLINE_LINUX b"\n'
    new, before, after = cmdline_utils.edit_text(text, set_args={"elevator": "noop"}, target="GRUB_CMDLINE_LINUX")
    assert new == 'GRUB_CMDLINE_LINUX="a"\nGRUB_CMDLINE_LINUX="$GRUB_CMDLINE_LINUX b elevator=noop"\n'


def test_missing_target_is_appended():
    new, before, after = cmdline_utils.edit_text("GRUB_TIMEOUT=5", set_args={"elevator": "noop"}, target="GRUB_CMDLINE_LINUX")
    assert new == 'GRUB_TIMEOUT=5\nGRUB_CMDLINE_LINUX="elevator=noop"\n'
    assert (before, after) == ([], ["elevator=noop"])


@pytest.mark.parametrize("line,expected", [
    ("GRUB_CMDLINE_LINUX='quiet elevator=noop'  # old tuning\n", "GRUB_CMDLINE_LINUX='quiet'  # old tuning\n"),
    ("export GRUB_CMDLINE_LINUX=\"elevator=noop\"\n", "export GRUB_CMDLINE_LINUX=\"\"\n"),
    ("GRUB_CMDLINE_LINUX=elevator=noop\n", 'GRUB_CMDLINE_LINUX=""\n'),
    ('  GRUB_CMDLINE_LINUX="${GRUB_CMDLINE_LINUX} elevator=noop"\n', '  GRUB_CMDLINE_LINUX="${GRUB_CMDLINE_LINUX}"\n'),
])
def test_quoting_and_comments_stay_as_written(line, expected):
    assert cmdline_utils.edit_text(line, remove=["elevator"])[0] == expected


@pytest.mark.parametrize("line", [
    'GRUB_CMDLINE_LINUX="$(cat /etc/cmdline) elevator=noop"\n',
    'GRUB_CMDLINE_LINUX="`cat /etc/cmdline`"\n',
    'GRUB_CMDLINE_LINUX="$OTHER quiet"\n',
    'GRUB_CMDLINE_LINUX="a \\" b"\n',
    'GRUB_CMDLINE_LINUX="unterminated\n',
])
def test_values_only_a_shell_understands_are_refused(line):
    with pytest.raises(ValueError, match="edit it by hand"):
        cmdline_utils.edit_text(line, remove=["elevator"])


def test_assigns(shipped):
    assert cmdline_utils.assigns(shipped[0], "GRUB_CMDLINE_LINUX")
    assert not cmdline_utils.assigns("#GRUB_CMDLINE_LINUX=\"x\"\n", "GRUB_CMDLINE_LINUX")


def test_parse_grubby_info_rhel86(fixture_text):
    entries = cmdline_utils.parse_grubby_info(fixture_text("grub/rhel86_grubby_info_all.txt"))
    assert [kernel for kernel, args in entries] == ["/boot/vmlinuz-4.18.0-372.9.1.el8.x86_64",
                                                    "/boot/vmlinuz-0-rescue-67db13ba8cdb420794ef3ee0a8313205"]
    assert entries[0][1] == ["ro", "crashkernel=auto", "resume=/dev/mapper/rhel-swap", "rd.lvm.lv=rhel/root",
                             "rd.lvm.lv=rhel/swap", "rhgb", "quiet", "$tuned_params", "zswap.enabled=1"]
    assert entries[1][1][-1] == "quiet"


def test_parse_grubby_info_rocky91(fixture_text):
    entries = cmdline_utils.parse_grubby_info(fixture_text("grub/rocky91_grubby_info_all.txt"))
    assert [kernel for kernel, args in entries] == ["/boot/vmlinuz-5.14.0-162.6.1.el9_1.x86_64",
                                                    "/boot/vmlinuz-5.14.0-70.30.1.el9_0.x86_64",
                                                    "/boot/vmlinuz-5.14.0-70.22.1.el9_0.x86_64",
                                                    "/boot/vmlinuz-0-rescue-a98618aa1631441dbb52c75a50834a0a"]
    assert all(args == ["ro", "crashkernel=1G-4G:192M,4G-64G:256M,64G-:512M", "rd.lvm.lv=rl_devmaster1/root",
                        "net.ifnames=0"] for _kernel, args in entries)


def test_args_satisfy():
    args = ["ro", "quiet", "elevator=deadline"]
    assert not cmdline_utils.args_satisfy(args, absent=["elevator"])
    assert cmdline_utils.args_satisfy(args, present={"elevator": "deadline"})
    assert not cmdline_utils.args_satisfy(args, present={"elevator": "noop"})
    assert cmdline_utils.args_satisfy(["ro"], absent=["elevator"])


def test_record_keeps_the_first_originals_and_undoes_them():
    record = {"removed": [], "replaced": {}}
    cmdline_utils.remember(record, ["elevator"], {}, [["quiet", "elevator=noop"], []])
    cmdline_utils.remember(record, ["elevator"], {}, [["quiet", "elevator=cfq"]])  # later: the first original stays
    assert record == {"removed": ["elevator=noop"], "replaced": {}}
    assert cmdline_utils.restore_request(record) == ([], {"elevator": "noop"})


def test_record_of_a_set_argument():
    record = cmdline_utils.remember({"removed": [], "replaced": {}}, [], {"elevator": "deadline"}, [["quiet"]])
    assert record == {"removed": [], "replaced": {"elevator": []}}
    assert cmdline_utils.restore_request(record) == (["elevator"], {})
    record = cmdline_utils.remember({"removed": [], "replaced": {}}, [], {"elevator": "deadline"}, [["elevator=cfq"]])
    assert cmdline_utils.restore_request(record) == ([], {"elevator": "cfq"})
