"""fio_probe: the result records."""

from ansible_collections.cephops.osd_tuning.plugins.module_utils import fio_probe

from .test_probe_cache import DISK, stored


def test_served_result_carries_the_disk_as_it_is_now_and_says_cached():
    renamed = dict(DISK, name="sdf", path="/dev/sdf")
    result = fio_probe.cached_result(renamed, stored(), 120)
    assert (result["device"], result["name"], result["verdict"], result["write_iops"]) == ("/dev/sdf", "sdf", "suitable", 8713.0)
    assert (result["cached"], result["cache_age_seconds"], result["written"], result["zeroed"]) == (True, 120, False, None)
