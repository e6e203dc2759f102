"""fstab: parsing and in-place editing of fstab lines, option merging, remount planning."""

import pytest

from ansible_collections.cephops.osd_tuning.plugins.module_utils import fstab, mountinfo


@pytest.fixture
def host_fstab(fixture_text):
    return fixture_text("fstab/debian_ceph_host.fstab")


@pytest.fixture
def entries(host_fstab):
    return fstab.fstab_index(fstab.parse_fstab(host_fstab))


@pytest.fixture
def live(fixture_text):
    """The host's mounts, as /proc/self/mountinfo shows them on a 6.x kernel (captured on the test host)."""
    return mountinfo.live_index(fixture_text("fstab/debian_ceph_host.mountinfo"))


def edit(text, target, options, absent=()):
    """The fstab text after ensuring options on one target, as the module writes it."""
    entry = fstab.fstab_index(fstab.parse_fstab(text))[target]
    plan = fstab.plan_mount(target, entry, None, options, absent, "6.1.0-18-amd64")
    return fstab.replace_lines(text, {plan["lineno"]: plan["after"]})


# --------------------------------------------------------------------------- parsing

def test_comments_blank_and_swap_lines_are_not_entries(host_fstab, entries):
    lines = fstab.parse_fstab(host_fstab)
    assert [line["entry"] for line in lines[:3]] == [None, None, None]
    assert lines[4]["entry"] is None and lines[4]["text"] == ""
    assert sorted(entries) == ["/", "/boot/efi", "/srv/ceph journal", "/var/lib/ceph/mon/ceph-a",
                               "/var/lib/ceph/osd/ceph-0", "/var/lib/ceph/osd/ceph-1",
                               "/var/lib/ceph/osd/ceph-2", "/var/lib/ceph/tmp"]


def test_sources_are_read_as_written(entries):
    assert entries["/"]["source"] == "UUID=8c3e2a4f-1b7d-4e55-9a0c-6f2d1e9b7a31"
    assert entries["/boot/efi"]["source"] == "PARTUUID=5d1c0a7e-02"
    assert entries["/var/lib/ceph/osd/ceph-0"]["source"] == "LABEL=osd0"


def test_escaped_space_in_mount_point(entries):
    assert entries["/srv/ceph journal"]["lineno"] == 10


def test_missing_options_field_reads_as_defaults(entries):
    assert entries["/var/lib/ceph/osd/ceph-2"]["options"] == ["defaults"]


def test_target_on_two_lines_is_refused():
    text = "/dev/sdb1 /data xfs defaults 0 0\n# x\n/dev/sdc1 /data/ xfs noatime 0 0\n"
    with pytest.raises(fstab.OptionError, match="/data is on fstab lines 1 and 3"):
        fstab.fstab_index(fstab.parse_fstab(text))


# --------------------------------------------------------------------------- editing lines

def test_only_the_options_field_changes_and_every_other_byte_stays(host_fstab):
    after = edit(host_fstab, "/var/lib/ceph/mon/ceph-a", ["noatime"])
    old, new = host_fstab.splitlines(True), after.splitlines(True)
    assert [i for i, (a, b) in enumerate(zip(old, new)) if a != b] == [7]
    assert new[7] == "  UUID=0b1e8c52-3c4e-4f0e-9d55-2d6a7c0b8f10 /var/lib/ceph/mon/ceph-a xfs noatime 0 2\n"
    assert len(new) == len(old)


def test_tabs_between_fields_are_kept(host_fstab):
    after = edit(host_fstab, "/boot/efi", ["noatime"])
    assert "PARTUUID=5d1c0a7e-02\t/boot/efi\tvfat\tumask=0077,noatime\t0\t1\n" in after


def test_aligned_columns_are_kept(host_fstab):
    after = edit(host_fstab, "/", ["noatime"])
    assert ("UUID=8c3e2a4f-1b7d-4e55-9a0c-6f2d1e9b7a31 /               ext4    "
            "errors=remount-ro,noatime 0       1\n") in after


def test_line_without_fields_5_and_6_gets_no_invented_fields(host_fstab):
    after = edit(host_fstab, "/srv/ceph journal", ["noatime"])
    assert "/dev/sdc1 /srv/ceph\\040journal ext4 nofail,noatime\n" in after


def test_line_without_options_field_gets_one(host_fstab):
    after = edit(host_fstab, "/var/lib/ceph/osd/ceph-2", ["noatime"])
    assert "/dev/sdd1 /var/lib/ceph/osd/ceph-2 xfs noatime\n" in after


def test_crlf_line_endings_and_missing_final_newline_are_kept():
    text = "/dev/sdb1 /a xfs defaults 0 0\r\n/dev/sdc1 /b xfs defaults 0 0"
    assert edit(text, "/b", ["noatime"]) == "/dev/sdb1 /a xfs defaults 0 0\r\n/dev/sdc1 /b xfs noatime 0 0"
    assert edit(text, "/a", ["noatime"]) == "/dev/sdb1 /a xfs noatime 0 0\r\n/dev/sdc1 /b xfs defaults 0 0"


def test_appended_line_after_a_file_without_final_newline():
    assert fstab.replace_lines("# x", {}, ["UUID=1 /a xfs noatime 0 0"]) == "# x\nUUID=1 /a xfs noatime 0 0\n"


def test_escape_round_trips_with_unescape():
    assert fstab.escape("/srv/ceph journal") == "/srv/ceph\\040journal"
    assert mountinfo.unescape(fstab.escape("/a b\\c")) == "/a b\\c"


# --------------------------------------------------------------------------- merging options

@pytest.mark.parametrize("current,options,absent,expected", [
    (["defaults"], ["noatime"], [], ["noatime"]),
    (["defaults", "nofail"], ["noatime"], [], ["nofail", "noatime"]),
    (["defaults", "noatime"], ["noatime"], [], ["defaults", "noatime"]),
    (["noatime"], [], ["noatime"], ["defaults"]),
    (["rw", "relatime", "nodiratime"], ["noatime"], [], ["rw", "noatime"]),
    (["rw", "strictatime"], ["noatime"], [], ["rw", "noatime"]),
    (["rw", "noatime"], ["relatime"], [], ["rw", "relatime"]),
    (["relatime"], ["nodiratime"], [], ["relatime", "nodiratime"]),
    (["noatime"], ["nodiratime"], [], ["noatime"]),
    (["noatime", "nodiratime"], ["noatime"], [], ["noatime", "nodiratime"]),
    (["rw", "atime"], ["noatime"], [], ["rw", "noatime"]),
    (["rw", "lazytime"], ["noatime"], [], ["rw", "lazytime", "noatime"]),
    (["logbsize=32k", "noatime"], ["logbsize=256k"], [], ["noatime", "logbsize=256k"]),
    (["logbsize=256k"], ["logbsize=256k"], [], ["logbsize=256k"]),
    (["logbsize=256k", "noatime"], [], ["logbsize"], ["noatime"]),
    (["logbsize=256k", "noatime"], [], ["logbsize=32k"], ["logbsize=256k", "noatime"]),
    (["exec", "rw"], ["noexec"], [], ["rw", "noexec"]),
    (["ro"], ["rw"], [], ["rw"]),
    (["inode32"], ["inode64"], [], ["inode64"]),
    (["nobarrier", "noatime"], [], ["nobarrier"], ["noatime"]),
])
def test_merge_options(current, options, absent, expected):
    assert fstab.merge_options(current, options, absent) == expected


def test_merge_returns_the_same_list_when_nothing_changes():
    current = ["defaults", "noatime"]
    assert fstab.merge_options(current, ["noatime"]) is current


@pytest.mark.parametrize("options,absent,expected", [
    (["noatime", "nodiratime"], [], ["noatime"]),
    (["nodiratime", "noatime"], [], ["noatime"]),
    (["defaults", "noatime", "noatime"], [], ["noatime"]),
    (["relatime", "nodiratime"], [], ["relatime", "nodiratime"]),
])
def test_normalize_request(options, absent, expected):
    assert fstab.normalize_request(options, absent) == (expected, absent)


@pytest.mark.parametrize("options,absent,message", [
    (["noatime", "relatime"], [], "options noatime and relatime contradict each other"),
    (["strictatime", "noatime"], [], "options strictatime and noatime contradict each other"),
    (["diratime", "noatime"], [], "options diratime and noatime contradict each other"),
    (["logbsize=32k", "logbsize=256k"], [], "options logbsize=32k and logbsize=256k contradict"),
    (["ro", "rw"], [], "options ro and rw contradict"),
    (["noatime"], ["noatime"], "option noatime is both wanted and absent"),
    (["logbsize=256k"], ["logbsize"], "option logbsize is both wanted and absent"),
])
def test_contradicting_requests_are_refused(options, absent, message):
    with pytest.raises(fstab.OptionError, match=message):
        fstab.normalize_request(options, absent)


# --------------------------------------------------------------------------- kernel refusals

@pytest.mark.parametrize("release,refused", [("6.1.0-18-amd64", True), ("4.19.0", True), ("4.18.20", False)])
def test_xfs_barrier_options_are_refused_from_4_19(release, refused):
    reasons = fstab.removed_option_refusals("xfs", ["noatime", "nobarrier"], release)
    assert bool(reasons) is refused
    if refused:
        assert reasons[0].startswith("nobarrier: XFS removed this option in Linux 4.19")


def test_ext4_nobarrier_is_not_refused():
    assert fstab.removed_option_refusals("ext4", ["nobarrier", "barrier=0"], "6.1.0") == []


def test_plan_refuses_nobarrier_on_xfs_naming_mount_and_option(entries):
    with pytest.raises(fstab.OptionError, match="^/var/lib/ceph/osd/ceph-0: nobarrier: XFS removed"):
        fstab.plan_mount("/var/lib/ceph/osd/ceph-0", entries["/var/lib/ceph/osd/ceph-0"], None,
                         ["noatime", "nobarrier"], [], "6.1.0")


def test_plan_warns_about_a_stale_nobarrier_already_in_fstab(entries):
    plan = fstab.plan_mount("/var/lib/ceph/osd/ceph-1", entries["/var/lib/ceph/osd/ceph-1"], None,
                            ["noatime"], [], "6.1.0")
    assert plan["warnings"] == ["/var/lib/ceph/osd/ceph-1: fstab line 9 has nobarrier: XFS removed this option "
                                "in Linux 4.19 and this kernel is 6.1.0: a mount with it fails, and in fstab "
                                "it stops the host from booting (add it to absent_options)"]
    assert plan["after"].endswith("xfs nobarrier,noatime 0 0")


def test_new_mount_is_refused_where_the_fstab_or_a_mount_puts_something_else(entries):
    target = "/var/lib/ceph/osd/ceph-1"
    source = entries[target]["source"]
    assert fstab.new_mount_refusal(target, source, "/dev/sdc", entries, {}) is None
    assert fstab.new_mount_refusal(target, None, "/dev/sdc", entries, {}) == (
        "%s: fstab line 9 mounts %s there, not /dev/sdc" % (target, source))
    live = {"/srv/x": {"source": "/dev/sdd"}}
    assert fstab.new_mount_refusal("/srv/x", "UUID=1", "/dev/sdc", entries, live) == "/srv/x: /dev/sdd is mounted there"
    assert fstab.new_mount_refusal("/srv/y", None, "/dev/sdc", entries, live) is None


# --------------------------------------------------------------------------- live mounts

@pytest.mark.parametrize("vfs,options,absent,satisfied", [
    (["rw", "noatime"], ["noatime"], [], True),
    (["rw", "relatime"], ["noatime"], [], False),
    (["rw"], ["strictatime"], [], True),
    (["rw", "relatime", "nodiratime"], ["nodiratime"], [], True),
    (["rw", "noatime"], ["nodiratime"], [], True),
    (["rw", "relatime"], ["nodiratime"], [], False),
    (["rw", "noatime"], ["logbsize=256k"], [], True),
    (["rw", "noatime"], [], ["noatime"], False),
    (["ro", "noatime"], ["rw"], [], False),
])
def test_live_satisfies(vfs, options, absent, satisfied):
    assert fstab.live_satisfies(vfs, options, absent) is satisfied


def test_remount_passes_the_live_flags_back():
    # A classic remount resets every per-mount flag it is not given: nosuid must travel along.
    assert fstab.remount_options(["rw", "nosuid", "relatime"], ["noatime"]) == ["rw", "nosuid", "noatime"]


def test_remount_names_an_atime_mode_when_noatime_is_removed():
    # Without any atime flag the kernel keeps the current mode, so relatime is given.
    assert fstab.remount_options(["rw", "noatime"], [], ["noatime"]) == ["rw", "relatime"]


def test_remount_carries_new_filesystem_options():
    assert fstab.remount_options(["rw", "relatime"], ["noatime", "logbsize=256k"], [], ["logbsize=256k"]) == [
        "rw", "noatime", "logbsize=256k"]


def test_plan_remounts_only_when_the_live_mount_differs(entries, live):
    osd0 = fstab.plan_mount("/var/lib/ceph/osd/ceph-0", entries["/var/lib/ceph/osd/ceph-0"],
                            live["/var/lib/ceph/osd/ceph-0"], ["noatime"], [], "6.1.0")
    assert osd0["after"] == osd0["before"] and osd0["remount_options"] is None
    journal = fstab.plan_mount("/srv/ceph journal", entries["/srv/ceph journal"], live["/srv/ceph journal"],
                               ["noatime"], [], "6.1.0")
    assert journal["remount_options"] == ["rw", "noatime"]


def test_plan_for_a_mount_missing_from_fstab_says_so(live):
    plan = fstab.plan_mount("/var/lib/ceph/osd/ceph-9", None, live["/var/lib/ceph/osd/ceph-9"], ["noatime"], [],
                            "6.1.0")
    assert plan["unmanaged"].startswith("mounted but not in fstab")
    unit = fstab.plan_mount("/var/lib/ceph/osd/ceph-9", None, live["/var/lib/ceph/osd/ceph-9"], ["noatime"], [],
                            "6.1.0", "/etc/systemd/system/var-lib-ceph-osd-ceph\\x2d9.mount")
    assert unit["unmanaged"].startswith("defined by systemd unit /etc/systemd/system/var-lib-ceph-osd-ceph\\x2d9.mount")


@pytest.mark.parametrize("target,unit", [
    ("/", "-.mount"),
    ("/var/lib/ceph/osd/ceph-0", "var-lib-ceph-osd-ceph\\x2d0.mount"),
    ("/srv/ceph journal/", "srv-ceph\\x20journal.mount"),
    ("/.hidden/x", "\\x2ehidden-x.mount"),  # only a leading dot is escaped
    ("/srv/.hidden", "srv-.hidden.mount"),
])
def test_systemd_unit_name(target, unit):
    assert fstab.systemd_unit_name(target) == unit


# --------------------------------------------------------------------------- selection

def test_ceph_selector_takes_disk_filesystems_below_the_ceph_dir(entries, live):
    targets, skipped = fstab.select_targets(["ceph"], entries, live, "/var/lib/ceph")
    assert targets == ["/var/lib/ceph/mon/ceph-a", "/var/lib/ceph/osd/ceph-0", "/var/lib/ceph/osd/ceph-1",
                       "/var/lib/ceph/osd/ceph-2", "/var/lib/ceph/osd/ceph-9"]
    assert skipped == [{"mountpoint": "/var/lib/ceph/osd/ceph-3", "reason": "tmpfs is not a disk filesystem"},
                       {"mountpoint": "/var/lib/ceph/tmp", "reason": "tmpfs is not a disk filesystem"}]


def test_local_selector_takes_every_disk_filesystem(entries, live):
    targets = fstab.select_targets(["local"], entries, live, "/var/lib/ceph")[0]
    assert "/" in targets and "/srv/ceph journal" in targets
    assert "/boot/efi" not in targets and "/var/lib/ceph/tmp" not in targets


def test_explicit_mount_points_and_errors(entries):
    assert fstab.select_targets(["/srv/ceph journal/", "/"], entries, {}, "/var/lib/ceph")[0] == [
        "/srv/ceph journal", "/"]
    with pytest.raises(fstab.OptionError, match="^/nowhere: not mounted and not in fstab$"):
        fstab.select_targets(["/nowhere"], entries, {}, "/var/lib/ceph")
    with pytest.raises(fstab.OptionError, match="^cephfs: not a mount point"):
        fstab.select_targets(["cephfs"], entries, {}, "/var/lib/ceph")


def test_verify_messages_keep_problems_and_parse_errors_only():
    out = ("/a\n   [W] target specified more than once\n   [ ] target exists\n"
           "/b\n   [E] unreachable on boot required source: UUID=1\n")
    err = "findmnt: /tmp/.fstab-verify.x1: parse error at line 7 -- ignored\n"
    assert fstab.verify_messages(out, err) == {
        "/a: [W] target specified more than once",
        "/b: [E] unreachable on boot required source: UUID=1",
        "parse error at line 7 -- ignored",
    }


def test_record_keeps_the_first_original_and_the_line_written_last():
    record = {"mounts": {}}
    fstab.remember(record, [("/var/lib/ceph", ["defaults"], "/dev/a /var/lib/ceph xfs defaults 0 0",
                             "/dev/a /var/lib/ceph xfs noatime 0 0")])
    fstab.remember(record, [("/var/lib/ceph", ["noatime"], "/dev/a /var/lib/ceph xfs noatime 0 0",
                             "/dev/a /var/lib/ceph xfs noatime,inode64 0 0")])
    kept = record["mounts"]["/var/lib/ceph"]
    assert kept == {"options": ["defaults"], "line": "/dev/a /var/lib/ceph xfs defaults 0 0",
                    "written": "/dev/a /var/lib/ceph xfs noatime,inode64 0 0"}
    assert fstab.original_line(kept, "/dev/a /var/lib/ceph xfs noatime,inode64 0 0") == kept["line"]
    # Changed by hand since: the options come back, not the line.
    assert fstab.original_line(kept, "/dev/a /var/lib/ceph xfs noatime,nodev 0 0") is None
    # A record of 0.1.0: the options alone.
    assert fstab.original_options(["defaults"]) == ["defaults"] and fstab.original_line(["defaults"], "x") is None
    assert fstab.forget(record, ["/var/lib/ceph"]) == {"mounts": {}}


@pytest.mark.parametrize("original,current,expected", [
    (["defaults"], ["noatime"], ([], ["noatime", "strictatime", "nodiratime"])),
    (["rw", "relatime"], ["rw", "noatime"], (["rw", "relatime"], ["noatime", "strictatime", "nodiratime"])),
    (["noatime", "inode64"], ["noatime", "inode64"], (["noatime", "inode64"], ["strictatime", "nodiratime"])),
    (["rw"], ["rw", "noatime", "logbsize=256k"], (["rw"], ["noatime", "logbsize=256k", "strictatime", "nodiratime"])),
])
def test_restore_request(original, current, expected):
    assert fstab.restore_request(original, current) == expected
