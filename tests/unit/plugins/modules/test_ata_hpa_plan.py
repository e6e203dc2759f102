"""hdparm -N parsing, the visible-size arithmetic and the safety plan of ata_hpa.

Fixtures in tests/unit/fixtures/hdparm/:
- captured with hdparm 9.65 on a loop device of the test host: loop_not_ata.txt (``hdparm -N``
  prints only the device name and exits 0 on a disk that does not answer ATA commands) and
  loop_set_silently_ignored.txt (``-N p1000 --yes-i-know-what-i-am-doing`` on the same loop
  device: it claims to set and exits 0, yet nothing happens; only a read-back tells);
- transcribed from the printf/perror calls of hdparm 9.65 (hdparm.c, ``get_native_max_sectors``
  and ``do_set_max_sectors``), since no drive with a HPA is at hand: every other file.
"""

import pytest

from ansible_collections.cephops.osd_tuning.plugins.modules import ata_hpa as hpa

NATIVE = 1953525168  # a 1 TB SATA SSD


@pytest.fixture
def hdparm(fixture_text):
    return lambda name: fixture_text("hdparm/" + name)


@pytest.mark.parametrize("name,visible,native,state,amax,dco", [
    ("hpa_disabled.txt", NATIVE, NATIVE, "disabled", False, None),
    ("hpa_enabled.txt", 1758172651, NATIVE, "enabled", False, None),
    ("amax_disabled.txt", NATIVE, NATIVE, "disabled", True, None),
    ("amax_enabled.txt", 1562820608, NATIVE, "enabled", True, None),
    ("hpa_invalid.txt", NATIVE, 1758172651, "invalid", False, None),
    ("hpa_invalid_dco.txt", NATIVE, 1758172651, "invalid", False, NATIVE),
])
def test_every_state_variant_is_parsed(hdparm, name, visible, native, state, amax, dco):
    assert hpa.parse_state(hdparm(name)) == {
        "visible_sectors": visible, "native_sectors": native, "hpa": state,
        "accessible_max_address": amax, "dco_max_sectors": dco,
    }


def test_a_disk_that_does_not_answer_is_an_error(hdparm):
    with pytest.raises(hpa.HpaError, match=r"^the drive did not answer hdparm -N \(no output\)$"):
        hpa.parse_state(hdparm("loop_not_ata.txt"), "")


def test_a_failed_read_native_max_is_named(hdparm):
    with pytest.raises(hpa.HpaError, match=r"\(READ_NATIVE_MAX_ADDRESS_EXT failed: Input/output error\)$"):
        hpa.parse_state(hdparm("read_native_failed.stdout"), hdparm("read_native_failed.stderr"))


def test_the_silent_set_on_a_loop_device_reports_no_state(hdparm):
    """hdparm exits 0 and says 'setting' although nothing happened: no state line to trust."""
    with pytest.raises(hpa.HpaError):
        hpa.parse_state(hdparm("loop_set_silently_ignored.txt"))


def test_a_rejected_set_reads_back_unchanged_and_names_the_failure(hdparm):
    after = hpa.parse_state(hdparm("set_rejected.stdout"), hdparm("set_rejected.stderr"))
    assert after["visible_sectors"] == NATIVE
    assert hpa.command_failures(hdparm("set_rejected.stderr")) == ["SET_MAX_ADDRESS(_EXT) failed: Input/output error"]


def test_an_unknown_state_text_is_an_error():
    with pytest.raises(hpa.HpaError, match="unknown hdparm -N state"):
        hpa.parse_state(" max sectors   = 10/10, something new\n")


# --------------------------------------------------------------------------- arithmetic

@pytest.mark.parametrize("reserve,expected", [
    (0, 1953523712),     # whole MiB below the native maximum
    (10, 1758171136),
    (20, 1562818560),
    (12.5, 1709332480),
])
def test_reserve_percent_rounds_down_to_a_whole_mib(reserve, expected):
    target = hpa.target_sectors(NATIVE, 512, reserve_percent=reserve)
    assert target == expected
    assert target % 2048 == 0
    assert NATIVE * (100 - reserve) / 100 - 2048 < target <= NATIVE * (100 - reserve) / 100


def test_4kn_disks_round_to_256_sectors():
    native = 244190646  # 1 TB in 4096-byte sectors
    target = hpa.target_sectors(native, 4096, reserve_percent=20)
    assert target == 195352320 and target % 256 == 0


def test_visible_sectors_is_taken_as_given():
    assert hpa.target_sectors(NATIVE, 512, visible_sectors=1000000001) == 1000000001


@pytest.mark.parametrize("kwargs,message", [
    (dict(reserve_percent=95), "outside 0-90"),
    (dict(reserve_percent=-1), "outside 0-90"),
    (dict(visible_sectors=NATIVE + 1), "above the native maximum"),
    (dict(visible_sectors=0), "at least 1"),
])
def test_impossible_targets_are_refused(kwargs, message):
    with pytest.raises(hpa.HpaError, match=message):
        hpa.target_sectors(NATIVE, 512, **kwargs)


def test_the_set_command_is_permanent_and_confirmed():
    assert hpa.set_argv("/usr/sbin/hdparm", "/dev/sdb", 1562818560) == [
        "/usr/sbin/hdparm", "--yes-i-know-what-i-am-doing", "-N", "p1562818560", "/dev/sdb"]


# --------------------------------------------------------------------------- plan

def sata_disk(**changes):
    disk = dict(transport="sata", reject_reasons=[], data_reasons=[], discard=True, logical_sector_size=512)
    disk.update(changes)
    return disk


def state(visible, native=NATIVE):
    return dict(visible_sectors=visible, native_sectors=native, hpa="enabled" if visible < native else "disabled",
                accessible_max_address=False, dco_max_sectors=None)


TARGET_20 = 1562818560  # 20 % of NATIVE hidden, whole MiB


def test_a_blank_disk_is_discarded_then_shrunk():
    plan = hpa.plan(sata_disk(), state(NATIVE), TARGET_20, erase=True)
    assert plan == dict(target=TARGET_20, change=True, discard=True, checks=[])


def test_already_at_target_needs_nothing_even_on_a_disk_in_use():
    plan = hpa.plan(sata_disk(reject_reasons=["LVM detected"]), state(TARGET_20), TARGET_20)
    assert plan == dict(target=TARGET_20, change=False, discard=False, checks=[])


def test_every_failed_check_is_named():
    plan = hpa.plan(sata_disk(reject_reasons=["Has GPT headers", "Has partitions"], discard=False),
                    state(NATIVE), TARGET_20, erase=False, ignore_hpa=True,
                    changed_since_boot="/dev/sdb set to 1 sectors at 2024-01-01T00:00:00+0000")
    assert plan["checks"] == [
        "not blank: Has GPT headers, Has partitions",
        "libata.ignore_hpa=1 unlocks the HPA at every boot",
        "a permanent change was already made to this drive since boot (/dev/sdb set to 1 sectors at "
        "2024-01-01T00:00:00+0000); power-cycle it before the next one",
        "erase=true is required: the whole disk is discarded before sectors are hidden",
        "the disk cannot discard, so the hidden area would keep stale data; erase it otherwise "
        "(ATA secure erase) first",
    ]


def test_overwrite_data_lifts_the_content_reasons_alone():
    data = "Has data without a signature (3 of 64 sampled MiB not zero)"
    disk = sata_disk(reject_reasons=[data], data_reasons=[data])
    refused = hpa.plan(disk, state(NATIVE), TARGET_20, erase=True)
    assert refused["checks"] == ["not blank: " + data]
    assert hpa.plan(disk, state(NATIVE), TARGET_20, erase=True, overwrite_data=True)["checks"] == []
    disk = sata_disk(reject_reasons=["Has a FileSystem", data], data_reasons=[data])
    plan = hpa.plan(disk, state(NATIVE), TARGET_20, erase=True, overwrite_data=True)
    assert plan["checks"] == ["not blank: Has a FileSystem"]


def test_restoring_the_recorded_size_needs_no_erase_but_a_blank_disk():
    plan = hpa.plan(sata_disk(), state(TARGET_20), NATIVE, restoring=True, ignore_hpa=True)
    assert plan == dict(target=NATIVE, change=True, discard=False, checks=[])
    refused = hpa.plan(sata_disk(reject_reasons=["Has a FileSystem"]), state(TARGET_20), NATIVE, restoring=True)
    assert refused["checks"] == ["not blank: Has a FileSystem"]


def test_an_invalid_hpa_setting_is_never_acted_on(hdparm):
    with pytest.raises(hpa.HpaError, match="does not pass ATA commands through faithfully"):
        hpa.plan(sata_disk(), hpa.parse_state(hdparm("hpa_invalid.txt")), NATIVE, restoring=True)


@pytest.mark.parametrize("kwargs,refused", [
    (dict(reserve_percent=20), []),
    (dict(reserve_percent=1000.0), ["reserve_percent 1000.0 is outside 0-90"]),
    (dict(reserve_percent=20, visible_sectors=0), ["visible_sectors 0 must be at least 1"]),
    (dict(reserve_percent=1000.0, visible_sectors=1000), []),  # the entry's own size wins over the default
])
def test_requests_no_disk_could_satisfy_are_named_before_any_disk_is_read(kwargs, refused):
    assert hpa.check_request(**kwargs) == refused
