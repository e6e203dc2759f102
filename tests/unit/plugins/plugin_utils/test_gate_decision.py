"""gate_decision: which disks pass, from the candidates and the probe jobs; the fleet document."""

import pytest

from ansible_collections.cephops.osd_tuning.plugins.plugin_utils import gate_decision
from gate_samples import SETTINGS, candidate, finished_ok, fleet, record, result


def test_only_suitable_passes_and_marginal_when_allowed():
    candidates = [candidate("/dev/sdb"), candidate("/dev/sdc"), candidate("/dev/sdd"), candidate("/dev/sde")]
    probe = finished_ok(result("/dev/sdb", "suitable", 8713.0), result("/dev/sdc", "marginal", 1500.0),
                        result("/dev/sdd", "unsuitable", 574.0), result("/dev/sde", "refused", reasons=["Has GPT headers"]))
    strict = record(candidates, probe)
    assert (strict["approved"], strict["blocked"], strict["passed"]) == (
        ["/dev/sdb"], ["/dev/sdc", "/dev/sdd", "/dev/sde"], False)
    lenient = record(candidates, probe, allow_marginal=True)
    assert lenient["approved"] == ["/dev/sdb", "/dev/sdc"]
    assert lenient["devices"] == ["/dev/sdb", "/dev/sdc"]


def test_errors_fail_closed():
    candidates = [candidate("/dev/sdb"), candidate("/dev/sdc"), candidate("/dev/sdd", rotational=True)]
    probe = finished_ok(result("/dev/sdb", "error", reasons=["fio did not finish within 75 s; killed"]))
    found = record(candidates, probe)
    by_device = {d["device"]: d for d in found["disks"]}
    assert by_device["/dev/sdb"]["approved"] is False
    assert by_device["/dev/sdc"]["reasons"] == ["the probe returned no result for this disk"]
    assert not found["approved"] and not found["passed"]
    # A job that lost its host blocks every disk it probed, of every class.
    lost = record(candidates, {"unreachable": True, "msg": "ssh: connection reset"})
    assert [d["reasons"] for d in lost["disks"]] == [["host unreachable during the probe: ssh: connection reset"]] * 3
    assert lost["status"] == "error" and lost["approved"] == [] and not lost["passed"]


@pytest.mark.parametrize("status,error", [
    ({"finished": 1, "failed": True, "msg": "Failed to find required executable \"fio\""},
     'the probe failed: Failed to find required executable "fio"'),
    ({"finished": 1, "failed": 1, "msg": "Timeout exceeded"}, "the probe failed: Timeout exceeded"),
    ({"finished": 0, "started": 1}, "the probe failed: unfinished"),
    # What the role's poll really returns for a module failure: finished, failed cleared by failed_when.
    ({"finished": 1, "failed": False, "changed": False, "msg": "marginal_min_iops must not exceed min_iops"},
     "the probe failed: marginal_min_iops must not exceed min_iops"),
])
def test_failed_or_timed_out_jobs_block_every_disk(status, error):
    found = record([candidate("/dev/sdb")], status)
    assert (found["disks"][0]["verdict"], found["disks"][0]["reasons"], found["blocked"]) == ("error", [error], ["/dev/sdb"])


def test_unreachable_at_start_blocks_too():
    start = {"unreachable": True, "msg": "Failed to connect"}
    found = gate_decision.host_record("osd1", [candidate("/dev/sdb")], start, {"skipped": True}, SETTINGS)
    assert found["disks"][0]["reasons"] == ["host unreachable when the probe started: Failed to connect"]


@pytest.mark.parametrize("started,finished,error", [
    ({"failed": True, "msg": "no fio"}, {"skipped": True}, "the probe did not start: no fio"),
    # The wait task never ran, or its result is missing.
    ({"ansible_job_id": "j1", "started": 1}, {"skipped": True}, "no status of the probe job"),
    ({"ansible_job_id": "j1", "started": 1}, {}, "no status of the probe job"),
])
def test_a_job_that_did_not_start_or_left_no_status_blocks_every_disk(started, finished, error):
    found = gate_decision.host_record("osd1", [candidate("/dev/sdb"), candidate("/dev/sdc", rotational=True)],
                                      started, finished, SETTINGS)
    assert [d["reasons"] for d in found["disks"]] == [[error], [error]] and found["errors"] == [error]


def test_hdd_skip_passes_ungated_and_hdd_probe_judges_it_with_the_rest():
    candidates = [candidate("/dev/sdb"), candidate("/dev/sdd", rotational=True)]
    skipped = record(candidates, finished_ok(result("/dev/sdb", "suitable", 9000.0)), hdd_policy="skip")
    hdd = skipped["disks"][1]
    assert (hdd["thresholds_class"], hdd["verdict"], hdd["approved"], hdd["gated"]) == ("hdd", "skipped", True, False)
    probed = record(candidates, finished_ok(result("/dev/sdb", "suitable", 9000.0),
                                            result("/dev/sdd", "suitable", 120.0)))
    assert probed["approved"] == ["/dev/sdb", "/dev/sdd"] and probed["disks"][1]["gated"] is True


def test_check_mode_plan_is_pending_not_approved():
    found = record([candidate("/dev/sdb")], finished_ok(result("/dev/sdb", None)))
    assert (found["pending"], found["approved"], found["blocked"], found["passed"]) == (["/dev/sdb"], [], [], False)


def test_check_mode_plan_comes_from_the_start_task_run_without_async():
    started = {"changed": False, "results": [result("/dev/sdb", None)]}
    found = gate_decision.host_record("osd1", [candidate("/dev/sdb")], started, {"skipped": True}, SETTINGS)
    assert (found["pending"], found["approved"], found["blocked"]) == (["/dev/sdb"], [], [])


def test_a_slow_raw_wal_of_lvm_volumes_blocks_and_its_entry_is_not_handed_over():
    candidates = [candidate("/dev/sdb", sources=["lvm_volumes"]),
                  candidate("/dev/nvme0n1", sources=["lvm_volumes"], roles=["wal"]),
                  candidate("/dev/sdc", sources=["lvm_volumes"], index=1),
                  candidate("vg/db", sources=["lvm_volumes"], roles=["db"], index=1, probe=False,
                            reasons=["an LV (vg/db), not a disk the probe may write: not probed"])]
    found = record(candidates, finished_ok(result("/dev/sdb", "suitable", 9000.0),
                                           result("/dev/nvme0n1", "unsuitable", 46.0),
                                           result("/dev/sdc", "suitable", 9000.0)))
    assert (found["blocked"], found["passed"]) == (["/dev/nvme0n1"], False)
    lv = found["disks"][3]
    assert (lv["verdict"], lv["decision"], lv["gated"]) == ("not_probed", "approved", False)
    assert found["handover"] == {"lvm_volumes": [1]}
    assert found["dropped"] == ["lvm_volumes entry 0: wal /dev/nvme0n1 not approved"]


def test_absent_disks_are_skipped_unless_absence_blocks():
    candidates = [candidate("/dev/sdb"), candidate("/dev/sdz", index=1, probe=False, presence="absent",
                                                   reasons=["no disk of the host has this name (not present)"])]
    probe = finished_ok(result("/dev/sdb", "suitable", 9000.0))
    skipped = record(candidates, probe)
    assert (skipped["absent"], skipped["blocked"], skipped["passed"], skipped["handover"]) == (
        ["/dev/sdz"], [], True, {"devices": ["/dev/sdb"], "crush_device_class": "ssd"})
    assert skipped["disks"][1]["verdict"] == "absent" and skipped["disks"][1]["approved"] is None
    blocked = record(candidates, probe, absent_policy="block")
    assert (blocked["absent"], blocked["blocked"], blocked["passed"]) == ([], ["/dev/sdz"], False)


def test_fail_closed_blocks_every_name_the_gate_could_not_judge():
    """Where an operator qualifies disks, an absent name, a partition and an LV are blocked, not
    skipped or passed ungated; under skip they stay as ceph-ansible treats them."""
    candidates = [candidate("/dev/sdb"),
                  candidate("/dev/sdz", index=1, probe=False, presence="absent",
                            reasons=["no disk of the host has this name (not present)"]),
                  candidate("/dev/sdc1", index=2, probe=False,
                            reasons=["a partition of /dev/sdc; the probe writes only whole disks: not probed"]),
                  candidate("vg/lv", index=3, probe=False, reasons=["an LV (vg/lv), not a disk the probe may write"])]
    probe = finished_ok(result("/dev/sdb", "suitable", 9000.0))
    closed = record(candidates, probe, fail_closed=True)
    assert (closed["approved"], closed["blocked"], closed["absent"], closed["passed"]) == (
        ["/dev/sdb"], ["/dev/sdz", "/dev/sdc1", "vg/lv"], [], False)
    assert [d["reasons"] for d in closed["disks"][1:]] == [c["reasons"] for c in candidates[1:]]
    open_ = record(candidates, probe)
    assert (open_["approved"], open_["blocked"], open_["absent"], open_["passed"]) == (
        ["/dev/sdb", "/dev/sdc1", "vg/lv"], [], ["/dev/sdz"], True)


def batch(db_verdicts, data_verdicts=("suitable", "suitable")):
    """A batch host: devices sdb, sdc and dedicated_devices nvme0n1... with these verdicts."""
    data = ["/dev/sd" + "bc"[i] for i in range(len(data_verdicts))]
    dbs = ["/dev/nvme%dn1" % i for i in range(len(db_verdicts))]
    candidates = ([candidate(d, index=i) for i, d in enumerate(data)]
                  + [candidate(d, sources=["dedicated_devices"], roles=["db"], index=i) for i, d in enumerate(dbs)])
    verdicts = list(data_verdicts) + list(db_verdicts)
    return record(candidates, finished_ok(*[result(d, v, 9000.0) for d, v in zip(data + dbs, verdicts)]))


def test_exclude_drops_a_data_disk_with_the_db_disk_it_pairs_with():
    found = batch(["suitable", "unsuitable"])
    assert found["handover"] == {"devices": ["/dev/sdb"], "dedicated_devices": ["/dev/nvme0n1"], "crush_device_class": "ssd"}
    assert found["dropped"] == ["/dev/sdc: its DB disk /dev/nvme1n1 is not approved"]
    found = batch(["suitable", "suitable"], ["unsuitable", "suitable"])
    assert found["handover"] == {"devices": ["/dev/sdc"], "dedicated_devices": ["/dev/nvme1n1"], "crush_device_class": "ssd"}
    assert found["dropped"] == ["/dev/nvme0n1: the data disk it pairs with, /dev/sdb, is not handed over"]


def test_exclude_drops_every_data_disk_of_a_shared_db_disk_not_approved():
    found = batch(["unsuitable"])
    assert found["handover"] == {"devices": [], "dedicated_devices": []}
    assert found["dropped"] == ["/dev/sdb: DB disk /dev/nvme0n1, shared by every data disk, is not approved",
                                "/dev/sdc: DB disk /dev/nvme0n1, shared by every data disk, is not approved"]
    kept = batch(["suitable"], ["suitable", "unsuitable"])
    assert kept["handover"] == {"devices": ["/dev/sdb"], "dedicated_devices": ["/dev/nvme0n1"], "crush_device_class": "ssd"}


def test_a_db_disk_keeps_its_class_and_the_verdict_its_thresholds_gave():
    candidates = [candidate("/dev/sdb"), candidate("/dev/nvme0n1", sources=["dedicated_devices"], roles=["db"],
                                                   thresholds_class="db")]
    found = record(candidates, finished_ok(result("/dev/sdb", "suitable", 9000.0),
                                           result("/dev/nvme0n1", "unsuitable", 9000.0)))
    assert [(d["thresholds_class"], d["verdict"]) for d in found["disks"]] == [("flash", "suitable"), ("db", "unsuitable")]


def test_host_without_record_is_listed_as_not_passed():
    document = fleet()
    lost = document["hosts"][1]
    assert (lost["host"], lost["status"], lost["passed"]) == ("osd<2>", "no_result", False)
    assert lost["errors"] == [gate_decision.NO_RESULT]
    assert document["summary"] == {"hosts": 2, "hosts_passed": 0, "hosts_without_result": 1, "disks": 3,
                                   "approved": 2, "blocked": 1, "pending": 0, "absent": 0, "cached": 1,
                                   "unhealthy": 0}


def test_the_record_says_which_rule_chose_the_disks():
    chosen = record([candidate("/dev/sdb", sources=("devices",)), candidate("/dev/sdc", sources=("devices",)),
                     candidate("/dev/nvme0n1", sources=("dedicated_devices",), roles=("db",))],
                    finished_ok(result("/dev/sdb", "suitable", 9000)))
    assert chosen["chosen_by"] == ["devices", "dedicated_devices"]
