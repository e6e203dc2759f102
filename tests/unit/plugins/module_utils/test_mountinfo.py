"""mountinfo: the kernel's mount table and the field encoding fstab shares with it."""

from ansible_collections.cephops.osd_tuning.plugins.module_utils import mountinfo


def test_mountinfo_fields(fixture_text):
    live = mountinfo.live_index(fixture_text("fstab/debian_ceph_host.mountinfo"))
    assert live["/srv/ceph journal"]["source"] == "/dev/loop1"
    osd = live["/var/lib/ceph/osd/ceph-0"]
    assert osd["vfs_options"] == ["rw", "nosuid", "noatime"]
    assert osd["super_options"][-2:] == ["logbsize=32k", "noquota"]
    assert osd["root"] == "/"


def test_a_later_mount_on_a_target_hides_the_earlier_one():
    text = ("63 29 7:0 / /mnt rw,relatime - xfs /dev/loop0 rw\n"
            "64 63 7:1 / /mnt rw,noatime - ext4 /dev/loop1 rw\n")
    assert [e["devnum"] for e in mountinfo.parse_mountinfo(text)] == ["7:0", "7:1"]
    assert mountinfo.live_index(text)["/mnt"]["source"] == "/dev/loop1"


def test_quoted_option_values_keep_their_commas():
    assert mountinfo.split_options('rw,context="system_u:object_r:a,b",noatime') == [
        "rw", 'context="system_u:object_r:a,b"', "noatime"]
