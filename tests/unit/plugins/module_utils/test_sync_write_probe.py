"""sync_write_probe (module_utils): the result records."""

from ansible_collections.cephops.osd_tuning.plugins.module_utils import sync_write_probe as probe_utils

from .test_probe_cache import DISK, stored


def test_served_result_carries_the_disk_as_it_is_now_and_says_cached():
    renamed = dict(DISK, name="sdf", path="/dev/sdf")
    result = probe_utils.cached_result(renamed, stored(), 120)
    assert (result["device"], result["name"], result["verdict"], result["write_iops"]) == ("/dev/sdf", "sdf", "suitable", 8713.0)
    assert (result["cached"], result["cache_age_seconds"], result["written"], result["zeroed"]) == (True, 120, False, None)
