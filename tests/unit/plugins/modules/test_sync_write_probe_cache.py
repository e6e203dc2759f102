"""sync_write_probe's result cache: entries bound to the disk's identity and the measuring settings, served until
they expire, never for errors, written atomically and pruned."""

import os

from ansible_collections.cephops.osd_tuning.plugins.module_utils import fio_job, probe_verdict
from ansible_collections.cephops.osd_tuning.plugins.modules import sync_write_probe

THRESHOLDS = dict(probe_verdict.DEFAULT_THRESHOLDS)
REGION = (1024 * 1024 ** 2, 512 * 1024 ** 2)


DISK = {"name": "sdb", "path": "/dev/sdb", "wwn": "0x55cd2e404c0a1b2c", "serial": "BTWL1234", "firmware": "G2010140",
        "size_bytes": 1600321314816, "model": "INTEL SSDSC2BB016T4", "transport": "sata", "rotational": False}
SETTINGS = dict(mode="randwrite", method="fio", fio="/usr/bin/fio", options=fio_job.job_options("randwrite"),
                runtime=15, region=REGION, thresholds=THRESHOLDS, parallel=True, adaptive=False, stage_seconds=2,
                margin=1.5, timeout=75, plp_runtime=3, compare_write_cache=False, write_cache="as_is",
                min_gain=0.1, max_numjobs=16, deep_queue={"seconds": 0, "iodepth": 32})


def stored(verdict="suitable"):
    return dict(probe_verdict.empty_result("/dev/sdb", DISK), verdict=verdict, write_iops=8713.0, written=True,
                zeroed=True, reasons=["write IOPS 8713 >= 5000"])


def key_of(disk=None, **changes):
    return sync_write_probe.entry_key(sync_write_probe.disk_identity(disk or DISK), dict(SETTINGS, **changes))


def test_cache_key_follows_identity_and_measuring_settings_only():
    key = key_of()
    assert key == key_of() and len(key) == 64
    for field, value in (("wwn", "0x55cd2e404c0a9999"), ("firmware", "G2010150"), ("size_bytes", 800 * 10 ** 9),
                         ("model", "INTEL SSDSC2BB016T7")):
        assert key_of(dict(DISK, **{field: value})) != key, field
    for setting, value in (("runtime", 30), ("mode", "journal"), ("thresholds", dict(THRESHOLDS, min_iops=8000)),
                           ("options", fio_job.job_options("randwrite", {"bs": "16k"})), ("parallel", False),
                           ("write_cache", "disabled")):
        assert key_of(**{setting: value}) != key, setting
    # Neither the kill timeout nor where fio is installed changes what is measured.
    assert key_of(timeout=600, fio="/opt/fio/bin/fio") == key


def test_a_setting_added_later_keeps_the_keys_stored_before_it_at_its_old_behaviour():
    # The key these settings have had since the power-loss verdict took its flush cost from the
    # probe's fsync latency (CACHE_FORMAT 3, a result of another shape, which made every entry
    # stored before miss once); write_cache at its old behaviour leaves it alone.
    assert key_of(write_cache="as_is") == "ff07bc90cbef936dd7a47b8919a49711590345bd612fae9bc57704cc6e0ec714"
    assert key_of(write_cache="disabled") != key_of()
    # An entry stored before the deep-queue figure existed has none: a run that wants one misses it.
    assert key_of(deep_queue={"seconds": 3, "iodepth": 32}) != key_of()


# A SATA drive as sysfs shows it cuts both strings: device/model keeps 16 of the model's 40
# characters, device/rev the last 4 of the firmware's 8. The cache takes them whole.
SATA = dict(DISK, model="CEPHOPS SATA SSD 870 PRO 3840GB WITH PLP", firmware="CVO12B6Q")


def test_a_firmware_change_in_the_characters_sysfs_hides_misses(tmp_path):
    updated = dict(SATA, firmware="CVO22B6Q")
    assert updated["firmware"][-4:] == SATA["firmware"][-4:]  # what device/rev shows: 2B6Q both
    sync_write_probe.store(str(tmp_path), key_of(SATA), stored(), 1000.0)
    assert sync_write_probe.lookup(str(tmp_path), key_of(SATA), 1001.0, 3600) is not None
    assert sync_write_probe.lookup(str(tmp_path), key_of(updated), 1001.0, 3600) is None


def test_two_models_sharing_their_first_16_characters_never_share_an_entry(tmp_path):
    # Same serial, WWN, firmware and size: only the model after its 16th character differs.
    other = dict(SATA, model="CEPHOPS SATA SSD 870 EVO 500GB")
    assert other["model"][:16] == SATA["model"][:16] == "CEPHOPS SATA SSD"
    for first, second in ((SATA, other), (other, SATA)):
        cache = tmp_path / first["model"].replace(" ", "_")
        sync_write_probe.store(str(cache), key_of(first), stored(), 1000.0)
        assert sync_write_probe.lookup(str(cache), key_of(second), 1001.0, 3600) is None
    assert sync_write_probe.disk_identity(SATA)["model"] == SATA["model"]


def test_disk_without_stable_identity_is_not_cached_but_a_loop_device_is():
    anonymous = dict(DISK, wwn=None, serial=None)
    assert sync_write_probe.disk_identity(anonymous) is None
    assert sync_write_probe.disk_identity(anonymous, "/srv/disk0.img")["backing_file"] == "/srv/disk0.img"
    assert sync_write_probe.disk_identity(dict(DISK, wwn=None))["serial"] == "BTWL1234"


def test_stored_result_is_served_until_it_expires(tmp_path):
    key = key_of()
    sync_write_probe.store(str(tmp_path / "gate"), key, stored(), 1000.0)
    assert oct((tmp_path / "gate").stat().st_mode & 0o777) == "0o700"
    result, age = sync_write_probe.lookup(str(tmp_path / "gate"), key, 1000.0 + 3600, 7 * 86400)
    assert (result["verdict"], result["write_iops"], age) == ("suitable", 8713.0, 3600)
    assert sync_write_probe.lookup(str(tmp_path / "gate"), key, 1000.0 + 7 * 86400 + 1, 7 * 86400) is None
    # A clock set back makes the entry look as if from the future: not trusted.
    assert sync_write_probe.lookup(str(tmp_path / "gate"), key, 900.0, 7 * 86400) is None
    assert [p.name for p in (tmp_path / "gate").iterdir()] == [key + ".json"]


def test_missing_damaged_or_foreign_entries_are_misses(tmp_path):
    key, other = key_of(), key_of(runtime=30)
    assert sync_write_probe.lookup(str(tmp_path), key, 1000.0, 3600) is None
    (tmp_path / (key + ".json")).write_text('{"key": "%s", "stored_at": 99' % key)
    assert sync_write_probe.lookup(str(tmp_path), key, 1000.0, 3600) is None
    sync_write_probe.store(str(tmp_path), other, stored(), 1000.0)
    (tmp_path / (other + ".json")).rename(tmp_path / (key + ".json"))
    assert sync_write_probe.lookup(str(tmp_path), key, 1000.0, 3600) is None


def test_errors_are_never_served_from_cache(tmp_path):
    key = key_of()
    sync_write_probe.store(str(tmp_path), key, stored("error"), 1000.0)
    assert sync_write_probe.lookup(str(tmp_path), key, 1001.0, 3600) is None


def test_prune_removes_only_expired_entries(tmp_path):
    old, young = key_of(), key_of(runtime=30)
    sync_write_probe.store(str(tmp_path), old, stored(), 1000.0)
    sync_write_probe.store(str(tmp_path), young, stored(), 1000.0)
    os.utime(str(tmp_path / (old + ".json")), (1000.0, 1000.0))
    os.utime(str(tmp_path / (young + ".json")), (5000.0, 5000.0))
    sync_write_probe.prune(str(tmp_path), 6000.0, 3600)
    assert [p.name for p in tmp_path.iterdir()] == [young + ".json"]
