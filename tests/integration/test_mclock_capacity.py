"""mclock_capacity on this host: Ceph's own ceph-volume lists OSDs on loop disks (LVs tagged as
ceph-volume tags them), and Ceph's own monitor (Debian 12's, Ceph 16.2, started here for the
test) holds the configuration database the module reads and changes. That release has neither
capacity threshold, so the module must find them missing rather than assume them; the lab's
Ceph 18.2 (molecule/ceph) proves the clamping. Without a cluster, Ceph's own CLI fails as on a
host without a keyring: nothing is set and the exact lines are returned."""

import json

import pytest

from modulerun import ansible_module
from loopdisk import run

OPTION_HDD = "osd_mclock_max_capacity_iops_hdd"


def held(ceph, osd, option):
    """What the monitors' database holds for osd.N, None for nothing."""
    found = [e["value"] for e in json.loads(run(ceph + ["config", "dump", "--format", "json"]).stdout)
             if e["section"] == "osd.%d" % osd and e["name"] == option]
    return found[0] if found else None


def seed(disk, iops=41000.0):
    return {"name": disk.name, "wwn": None, "serial": None, "model": None, "iops": iops,
            "why": "the median deep-queue IOPS of 3 disks"}


def ours(result, *osd_ids):
    return dict((entry["osd"], entry) for entry in result["osds"] if entry["osd"] in osd_ids)


@pytest.mark.parametrize("check", [False, True], ids=["run", "check"])
def test_without_a_cluster_nothing_is_set_and_the_exact_lines_are_returned(osd_on, tmp_path, check):
    measured, unmeasured = osd_on(9007), osd_on(9008)
    record = tmp_path / "mclock.json"
    result = ansible_module("mclock_capacity", {"seeds": [seed(measured)], "record": str(record)}, check=check)
    assert not result.get("failed"), result
    assert result["changed"] is False and not record.exists()
    assert result["cluster"].startswith("the cluster cannot be reached from this host (ceph "), result["cluster"]
    found = ours(result, 9007, 9008)
    assert (found[9007]["device"], found[9007]["action"], found[9007]["option"], found[9007]["value"]) == (
        measured.path, "not_reached", OPTION_HDD, 41000.0)
    # A loop disk says it spins, and without the OSD's metadata its store is taken to as well.
    assert found[9007]["notes"][0] == "store rotational yes as the disk's flag says (no OSD metadata)"
    assert (found[9008]["action"], found[9008]["notes"]) == (
        "left_alone", ["the gate never measured %s: its own value stands" % unmeasured.path])
    assert "ceph config set osd.9007 %s 41000" % OPTION_HDD in result["commands"]
    assert not [line for line in result["commands"] if "osd.9008" in line]
    assert "osd.9008 (%s): left alone: the gate never measured" % unmeasured.path in "\n".join(result["lines"])


def test_an_operator_who_requires_the_cluster_gets_a_failure_naming_why(osd_on, tmp_path):
    disk = osd_on(9009)
    result = ansible_module("mclock_capacity", {"seeds": [seed(disk)], "record": str(tmp_path / "r.json"),
                                                "require_cluster": True})
    assert result["failed"] and result["msg"].startswith("the cluster cannot be reached from this host"), result


def test_a_seed_without_a_positive_figure_is_refused_before_anything_runs(tmp_path):
    result = ansible_module("mclock_capacity", {"seeds": [{"name": "sdb", "iops": 0}], "record": str(tmp_path / "r")})
    assert result["failed"] and result["msg"].startswith("every seed needs a positive iops"), result


def test_each_measured_osd_is_set_recorded_and_put_back_as_it_was(osd_on, ceph_mon, tmp_path):
    """osd.9011 holds its own bench result, osd.9012 nothing, osd.9013's disk was never measured."""
    benched, fresh, unmeasured = osd_on(9011), osd_on(9012), osd_on(9013)
    run(ceph_mon + ["config", "set", "osd.9011", OPTION_HDD, "1633.5"])
    run(ceph_mon + ["config", "set", "osd.9013", OPTION_HDD, "315"])
    args = {"seeds": [seed(benched), seed(fresh)], "record": str(tmp_path / "mclock.json"), "ceph": ceph_mon}

    planned = ansible_module("mclock_capacity", args, check=True)
    assert planned["changed"] is True and held(ceph_mon, 9011, OPTION_HDD) == "1633.500000"
    assert not (tmp_path / "mclock.json").exists()

    result = ansible_module("mclock_capacity", args)
    assert result["changed"] is True and result["cluster"] is None, result
    assert planned["commands"] == result["commands"] == [
        "ceph config set osd.9011 %s 41000" % OPTION_HDD, "ceph config set osd.9012 %s 41000" % OPTION_HDD]
    found = ours(result, 9011, 9012, 9013)
    assert [(found[n]["action"], found[n]["before"]) for n in (9011, 9012, 9013)] == [
        ("set", "1633.500000"), ("set", None), ("left_alone", None)]
    # Ceph 16.2 has neither threshold: found missing, not assumed.
    assert found[9011]["bounds"] == {"high": None, "low": None}
    assert "this release has no osd_mclock_iops_capacity_threshold_hdd: not applied" in found[9011]["notes"]
    assert [held(ceph_mon, n, OPTION_HDD) for n in (9011, 9012, 9013)] == ["41000.000000", "41000.000000", "315.000000"]

    again = ansible_module("mclock_capacity", args)
    assert again["changed"] is False and again["commands"] == []
    assert [e["action"] for e in again["osds"] if e["osd"] in (9011, 9012)] == ["unchanged", "unchanged"]

    # Someone sets osd.9012 by hand: the undo leaves that, and names it.
    run(ceph_mon + ["config", "set", "osd.9012", OPTION_HDD, "5000"])
    undo = {"state": "absent", "record": args["record"], "ceph": ceph_mon}
    assert ansible_module("mclock_capacity", undo, check=True)["commands"] == [
        "ceph config set osd.9011 %s 1633.500000" % OPTION_HDD]
    assert held(ceph_mon, 9011, OPTION_HDD) == "41000.000000"
    undone = ansible_module("mclock_capacity", undo)
    assert undone["changed"] is True
    assert [(e["osd"], e["action"]) for e in undone["osds"]] == [(9011, "restored"), (9012, "kept")]
    assert [held(ceph_mon, n, OPTION_HDD) for n in (9011, 9012, 9013)] == ["1633.500000", "5000.000000", "315.000000"]
    assert not (tmp_path / "mclock.json").exists()
    assert ansible_module("mclock_capacity", undo)["changed"] is False


def test_an_osd_that_had_no_value_has_none_again_after_the_undo(osd_on, ceph_mon, tmp_path):
    disk = osd_on(9014)
    args = {"seeds": [seed(disk, 2500.0)], "record": str(tmp_path / "mclock.json"), "ceph": ceph_mon}
    assert ansible_module("mclock_capacity", args)["changed"] is True
    assert held(ceph_mon, 9014, OPTION_HDD) == "2500.000000"
    undone = ansible_module("mclock_capacity", {"state": "absent", "record": args["record"], "ceph": ceph_mon})
    assert undone["commands"] == ["ceph config rm osd.9014 %s" % OPTION_HDD]
    assert held(ceph_mon, 9014, OPTION_HDD) is None


def test_ceph_volume_s_own_list_is_what_maps_an_osd_to_its_disk(osd_on):
    disk = osd_on(9010)
    listed = json.loads(run(["ceph-volume", "lvm", "list", "--format", "json"]).stdout)
    assert [volume["devices"] for volume in listed["9010"]] == [[disk.path]]
