"""tuning_report: per host and disk the queue roles' changes with their read figures."""

from ansible_collections.cephops.osd_tuning.plugins.filter import read_figures, tuning_report


def probe(device, runs):
    ordered = sorted(runs)
    return {"device": device, "table": [{"runs": runs, "error": None, "read_mib_s": ordered[len(ordered) // 2],
                                         "min_mib_s": ordered[0], "max_mib_s": ordered[-1]}]}


def test_every_change_per_disk_with_its_figures_and_hosts_without_results():
    chosen = {"sdb": {"value": "mq-deadline", "source": "class hdd"}, "sdc": {"value": "none", "source": "class ssd"}}
    figures = read_figures.compare([probe("sdb", [100.0, 98.0, 101.0, 99.0, 100.0])],
                                   [probe("sdb", [110.0, 111.0, 108.0, 110.0, 109.0])], chosen, "scheduler")
    hostvars = {
        "osd1": {"io_scheduler_result": {"chosen": chosen, "changing": ["sdb"], "read_figures": figures},
                 "max_sectors_kb_result": {"chosen": {"sdb": {"value": 64, "source": "model ST4000*"}},
                                           "changing": ["sdb"], "read_figures": []},
                 "io_scheduler_reboot_required": True},
        "osd2": {},
    }
    report = tuning_report.build(hostvars, ["osd1", "osd2", "gone"], "2026-01-01T00:00:00Z")
    tuned, failed, unreachable = report["hosts"]
    assert (tuned["status"], tuned["roles"], tuned["reboot_required"]) == ("tuned", ["max_sectors_kb", "scheduler"], True)
    disk, = tuned["disks"]  # sdc is chosen but already set: no change
    assert disk["device"] == "sdb"
    scheduler, max_sectors = disk["changes"]
    assert (scheduler["setting"], scheduler["value"], scheduler["source"]) == ("scheduler", "mq-deadline", "class hdd")
    assert scheduler["read"]["before"]["read_mib_s"] == 100.0 and scheduler["read"]["after"]["min_mib_s"] == 108.0
    assert (scheduler["read"]["change_percent"], scheduler["read"]["verdict"], scheduler["undone"]) == (10.0, "better", False)
    assert (max_sectors["setting"], max_sectors["value"], max_sectors["read"]) == ("max_sectors_kb", 64, None)
    assert [(h["host"], h["status"], h["disks"]) for h in (failed, unreachable)] == [("osd2", "no_result", []),
                                                                                     ("gone", "no_result", [])]
    assert report["summary"] == {"hosts": 3, "hosts_tuned": 1, "changes": 2, "undone": 0, "kept_off": 0}
    assert report["generated_at"] == "2026-01-01T00:00:00Z"


def test_a_change_measured_worse_and_put_back_is_listed_as_undone():
    chosen = {"sdb": {"value": 64, "source": "class hdd"}}
    figures = read_figures.compare([probe("sdb", [50.0, 51.0, 49.0, 50.0, 52.0])],
                                   [probe("sdb", [6.0, 6.5, 6.2, 6.1, 6.3])], chosen, "max_sectors_kb")
    hostvars = {"osd1": {"max_sectors_kb_result": {"chosen": chosen, "changing": ["sdb"], "read_figures": figures,
                                                   "undone": ["sdb"]}}}
    report = tuning_report.build(hostvars, ["osd1"])
    change, = report["hosts"][0]["disks"][0]["changes"]
    assert (change["value"], change["read"]["verdict"], change["undone"]) == (64, "worse", True)
    assert report["summary"] == {"hosts": 1, "hosts_tuned": 1, "changes": 1, "undone": 1, "kept_off": 0}


def test_a_change_kept_off_by_an_earlier_verdict_is_listed_per_host():
    hostvars = {"osd1": {"max_sectors_kb_result": {"chosen": {"sdb": {"value": 512, "source": "kept: w"}}, "changing": [],
                                                   "read_figures": [], "undone": [], "kept_off": {"sdb": "w"}}}}
    report = tuning_report.build(hostvars, ["osd1"])
    assert report["hosts"][0]["kept_off"] == [{"device": "sdb", "setting": "max_sectors_kb", "why": "w"}]
    assert report["hosts"][0]["disks"] == [] and report["summary"]["kept_off"] == 1
