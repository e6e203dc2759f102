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
