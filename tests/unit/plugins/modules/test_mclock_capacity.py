"""mclock_capacity's map of OSDs to disks from ceph-volume's two lists, in the shapes Ceph 18.2
prints them: raw list also finds an lvm OSD's bluestore label, on its LV."""

import json

from ansible_collections.cephops.osd_tuning.plugins.modules import mclock_capacity

LVM = {"0": [{"devices": ["/dev/nullb0"], "type": "block", "tags": {"ceph.osd_id": "0"}}],
       "1": [{"devices": ["/dev/sdc"], "type": "block", "tags": {"ceph.osd_id": "1"}},
             {"devices": ["/dev/sdd"], "type": "db", "tags": {"ceph.osd_id": "1"}}]}
RAW = {"0f1e": {"osd_id": 0, "device": "/dev/mapper/ceph--a-osd--block--b", "type": "bluestore"},
       "7c2d": {"osd_id": 5, "device": "/dev/sde", "type": "bluestore"}}


class CephVolume:
    def __init__(self, raw_rc=0):
        self.raw_rc = raw_rc

    def get_bin_path(self, name):
        return "/usr/sbin/" + name

    def run_command(self, argv):
        if argv[1] == "lvm":
            return 0, json.dumps(LVM), ""
        return (0, json.dumps(RAW), "") if self.raw_rc == 0 else (1, "", "raw list failed")


def test_lvm_list_names_an_osd_s_data_disk_and_raw_list_adds_only_the_osds_lvm_has_not(monkeypatch):
    monkeypatch.setattr(mclock_capacity, "whole_disk", lambda path: path.rsplit("/", 1)[-1])
    found, errors = mclock_capacity.list_osds(CephVolume(), ["ceph-volume"])
    # osd.0's LV, which raw list names, is not its disk; osd.1's DB disk is not its data disk.
    assert (found, errors) == ({0: "nullb0", 1: "sdc", 5: "sde"}, [])


def test_one_list_failing_is_named_and_the_other_still_maps(monkeypatch):
    monkeypatch.setattr(mclock_capacity, "whole_disk", lambda path: path.rsplit("/", 1)[-1])
    found, errors = mclock_capacity.list_osds(CephVolume(raw_rc=1), ["ceph-volume"])
    assert found == {0: "nullb0", 1: "sdc"} and errors == ["ceph-volume raw list --format json: raw list failed"]


class Bounds:
    """ceph config get as a release answers it: a value, or None where it has no such option."""

    def __init__(self, values):
        self.values = values

    def get(self, osd, option):
        return self.values.get(option)


def test_a_figure_above_or_below_the_cluster_s_bounds_is_clamped_and_named():
    reef = Bounds({"osd_mclock_iops_capacity_threshold_hdd": "500.000000",
                   "osd_mclock_iops_capacity_low_threshold_hdd": "50.000000"})
    notes = []
    bounds = mclock_capacity.bounds_of(reef, 3, "hdd", notes)
    assert bounds == {"high": 500.0, "low": 50.0} and notes == []
    assert mclock_capacity.clamp(2281.0, bounds, notes) == 500.0
    assert mclock_capacity.clamp(20.0, bounds, notes) == 50.0
    assert mclock_capacity.clamp(315.0, bounds, notes) == 315.0
    assert notes == ["the figure 2281 is above osd_mclock_iops_capacity_threshold (500): clamped",
                     "the figure 20 is below osd_mclock_iops_capacity_low_threshold (50): clamped"]


def test_a_release_without_a_bound_has_it_named_and_not_applied():
    notes = []
    bounds = mclock_capacity.bounds_of(Bounds({"osd_mclock_iops_capacity_threshold_ssd": "80000"}), 0, "ssd", notes)
    assert bounds == {"high": 80000.0, "low": None}
    assert notes == ["this release has no osd_mclock_iops_capacity_low_threshold_ssd: not applied"]
    assert mclock_capacity.clamp(5.0, bounds, []) == 5.0
