import pytest

from ansible_collections.cephops.osd_tuning.plugins.modules import mkfs_check

UUID = "5b6f1c2e-7a0d-4d57-9a1e-0c3f2b8e9d41"
TARGET = "/var/lib/ceph/osd/ceph-7"
HIDDEN = "Has data without a signature (3 of 64 sampled MiB not zero)"


def disk(reasons=(), data_reasons=(), signatures=()):
    return {"name": "sdc", "path": "/dev/sdc", "signatures": list(signatures),
            "reject_reasons": list(reasons) + list(data_reasons), "data_reasons": list(data_reasons)}


def spec(**extra):
    return dict(dict(device="/dev/sdc", mountpoint=TARGET + "/", mkfs_options=["-f", "-i", "size=2048"],
                     overwrite_data=False), **extra)


MADE = disk(["mounted", "Has a FileSystem"], signatures=[{"device": "sdc", "type": "xfs", "uuid": UUID}])
IN_FSTAB = {TARGET: {"source": "UUID=" + UUID, "lineno": 4}}


@pytest.mark.parametrize("mkfs_options,refused", [
    (["-f", "-i", "size=2048"], False),
    (["-f", "-n", "size=64K"], True),
    (["-f", "-n", "size=65536"], True),
    (["-f", "-nsize=64k"], True),
    (["-f", "-n", "ftype=1,size=64k"], True),
    (["-f", "-n", "size=8k"], False),
])
def test_mkfs_directory_block_size_of_64k_is_refused(mkfs_options, refused):
    reasons = mkfs_check.option_refusals(mkfs_options)
    assert bool(reasons) is refused
    if refused:
        assert "severe problems on systems under load" in reasons[0]


def test_an_option_with_a_blank_is_refused_as_it_would_be_split():
    assert mkfs_check.option_refusals(["-f", "-L", "osd data"]) == [
        '"osd data": holds a blank, which would split it into two options']


def test_a_blank_disk_is_formatted():
    assert mkfs_check.plan(spec(), disk(), {}, {}) == {"create": True, "refusal": None}


def test_data_without_a_signature_refuses_unless_overwrite_data_names_the_disk():
    hidden = disk(data_reasons=[HIDDEN])
    assert mkfs_check.plan(spec(), hidden, {}, {})["refusal"] == (
        "/dev/sdc: refused to create a filesystem, the disk is not blank: " + HIDDEN)
    assert mkfs_check.plan(spec(overwrite_data=True), hidden, {}, {}) == {"create": True, "refusal": None}


def test_overwrite_data_does_not_lift_a_signature():
    signed = disk(["Has a FileSystem"], data_reasons=[HIDDEN])
    assert mkfs_check.plan(spec(overwrite_data=True), signed, {}, {})["refusal"] == (
        "/dev/sdc: refused to create a filesystem, the disk is not blank: Has a FileSystem")


def test_the_filesystem_of_an_earlier_run_is_left_alone():
    assert mkfs_check.plan(spec(), MADE, IN_FSTAB, {}) == {"create": False, "refusal": None}


def test_an_xfs_the_fstab_does_not_know_is_not_blank():
    assert mkfs_check.plan(spec(), MADE, {}, {})["refusal"] == (
        "/dev/sdc: refused to create a filesystem, the disk is not blank: mounted, Has a FileSystem")


def test_another_source_in_the_fstab_or_a_mount_there_refuses():
    assert mkfs_check.plan(spec(), disk(), IN_FSTAB, {})["refusal"] == (
        "%s: fstab line 4 mounts UUID=%s there, not /dev/sdc" % (TARGET, UUID))
    assert mkfs_check.plan(spec(), disk(), {}, {TARGET: {"source": "/dev/sdd"}})["refusal"] == (
        "%s: /dev/sdd is mounted there" % TARGET)


def test_bad_mkfs_options_refuse_before_the_disk_is_looked_at():
    refusal = mkfs_check.plan(spec(mkfs_options=["-f", "-n", "size=64k"]), MADE, IN_FSTAB, {})["refusal"]
    assert refusal.startswith("/dev/sdc: refused mkfs.xfs option -n size=64k: a 64 KiB directory block size")


def test_an_xfs_in_a_partition_is_not_the_disk_s_filesystem():
    parted = disk(["Has partitions"], signatures=[{"device": "sdc1", "type": "xfs", "uuid": UUID}])
    assert mkfs_check.xfs_uuid(parted) is None
    assert mkfs_check.xfs_uuid(MADE) == UUID
