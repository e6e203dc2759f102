"""fleet_models: disks judged against the disks of their model and firmware across the fleet."""

import random

from ansible_collections.cephops.osd_tuning.plugins.plugin_utils import gate_decision
from gate_samples import MODEL, OTHER, fleet_of, same_model


def flagged(document):
    return [(o["host"], o["figure"], o["direction"]) for g in document["models"]["groups"] for o in g["outliers"]]


def test_a_disk_far_below_its_siblings_is_flagged_though_it_passes_the_thresholds():
    iops = [9100, 8900, 9050, 8800, 9200, 9000, 8950, 6000]
    document = fleet_of(same_model(iops))
    assert [d["decision"] for entry in document["hosts"] for d in entry["disks"]] == ["approved"] * 8
    (group,) = document["models"]["groups"]
    assert (group["model"], group["firmware"], group["disks"], group["hosts"], group["judged"]) == (
        MODEL, "XCV10132", 8, 8, True)
    assert group["figures"]["write_iops"]["median"] == 8975
    assert flagged(document) == [("osd-07", "write_iops", "below")]
    outlier = group["outliers"][0]
    assert (outlier["device"], outlier["value"], outlier["serial"]) == ("/dev/sdb", 6000, "osd-07-b")
    assert outlier["value"] < outlier["median"] - outlier["allowed"]
    assert document["models"]["outliers"] == 1


def test_a_p99_latency_far_above_its_siblings_is_flagged():
    p99 = [0.31, 0.29, 0.30, 0.32, 0.30, 0.95]
    document = fleet_of(same_model([9000] * 6, p99))
    assert flagged(document) == [("osd-05", "p99_sync_latency_ms", "above")]


def test_identical_disks_flag_no_noise_but_a_real_drop():
    # MAD 0: only the floor (a share of the median) stands between noise and a flag.
    iops = [9000] * 7 + [9000 * (1 + gate_decision.FLOOR * 0.9), 9000 * (1 - gate_decision.FLOOR * 1.1)]
    document = fleet_of(same_model(iops))
    group = document["models"]["groups"][0]
    assert group["figures"]["write_iops"]["mad"] == 0
    assert flagged(document) == [("osd-08", "write_iops", "below")]


def test_a_homogeneous_fleet_has_no_outliers():
    draw = random.Random(17)
    # 200 disks of one model whose figures scatter by 5 % around their mean, and 60 of another by 15 %.
    disks = [("osd-%03d" % (i % 50), MODEL, "XCV10132", draw.gauss(9000, 450), draw.gauss(0.3, 0.015))
             for i in range(200)]
    disks += [("osd-%03d" % (i % 50), OTHER, "HXT7404Q", draw.gauss(20000, 3000), draw.gauss(0.2, 0.03))
              for i in range(60)]
    document = fleet_of(disks)
    assert [(g["model"], g["disks"], g["judged"]) for g in document["models"]["groups"]] == [
        (MODEL, 200, True), (OTHER, 60, True)]
    assert flagged(document) == []


def test_two_outliers_do_not_hide_each_other():
    # Mean and standard deviation would flag neither: the two drag the mean and widen the spread.
    document = fleet_of(same_model([9000, 9000, 9100, 8900, 9000, 2000, 2100]))
    assert sorted(flagged(document)) == [("osd-05", "write_iops", "below"), ("osd-06", "write_iops", "below")]


def test_groups_too_small_are_not_judged():
    document = fleet_of(same_model([9000] * (gate_decision.MIN_GROUP - 2) + [600]))
    (group,) = document["models"]["groups"]
    assert (group["measured"], group["judged"], group["figures"]) == (
        gate_decision.MIN_GROUP - 1, False, {"write_iops": None, "p99_sync_latency_ms": None})
    assert flagged(document) == []


def test_disks_are_grouped_by_model_and_firmware_and_mixed_firmware_is_listed():
    disks = same_model([9000] * 6) + same_model([9000] * 2, firmware="XCV10120")
    disks += [("osd-09", OTHER, "HXT7404Q", 20000, 0.2), ("osd-09", None, None, 700, 2.0)]
    document = fleet_of(disks)
    models = document["models"]
    assert [(g["model"], g["firmware"], g["disks"], g["judged"]) for g in models["groups"]] == [
        (MODEL, "XCV10120", 2, False), (MODEL, "XCV10132", 6, True), (OTHER, "HXT7404Q", 1, False)]
    assert models["mixed_firmware"] == [{"model": MODEL, "firmware": [
        {"firmware": "XCV10120", "disks": 2, "hosts": ["osd-00", "osd-01"]},
        {"firmware": "XCV10132", "disks": 6, "hosts": ["osd-%02d" % i for i in range(6)]}]}]
    assert models["measured_without_model"] == 1


def test_disks_without_figures_are_members_but_not_measured():
    disks = same_model([9000] * 5)
    document = fleet_of(disks + [("osd-09", MODEL, "XCV10132", None, None)])
    group = document["models"]["groups"][0]
    assert (group["disks"], group["measured"], group["judged"]) == (6, 5, True)
    assert flagged(document) == []


def test_spread_is_the_documented_rule():
    found = gate_decision.spread([10.0, 12.0, 14.0, 20.0, 100.0])
    assert (found["median"], found["mad"]) == (14.0, 4.0)
    assert found["allowed"] == round(max(3.5 * 1.4826 * 4.0, 0.25 * 14.0), 3)
