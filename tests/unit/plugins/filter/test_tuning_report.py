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
    # The whole change: the one measured change's figures.
    assert (disk["whole"]["found"], disk["whole"]["left"]) == (scheduler["read"]["before"], scheduler["read"]["after"])
    assert (disk["whole"]["verdict"], disk["whole"]["change_percent"]) == ("better", 10.0)
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


def test_the_whole_change_runs_from_the_disk_as_found_to_the_disk_as_left():
    found, scheduled, sectored = [100.0, 98.0, 101.0, 99.0, 100.0], [90.0, 91.0, 89.0, 90.0, 92.0], [40.0] * 5

    def hostvars(undone):
        scheduler = {"sdb": {"value": "mq-deadline", "source": "class hdd"}}
        sectors = {"sdb": {"value": 64, "source": "class hdd"}}
        return {"osd1": {
            "io_scheduler_result": {"chosen": scheduler, "changing": ["sdb"], "read_figures": read_figures.compare(
                [probe("sdb", found)], [probe("sdb", scheduled)], scheduler, "scheduler")},
            "max_sectors_kb_result": {"chosen": sectors, "changing": ["sdb"], "undone": undone,
                                      "read_figures": read_figures.compare(
                                          [probe("sdb", scheduled)], [probe("sdb", sectored)], sectors, "max_sectors_kb")}}}

    # Each change alone 10 % and 56 % slower: the disk as it leaves the play, 60 % slower.
    whole = tuning_report.build(hostvars([]), ["osd1"])["hosts"][0]["disks"][0]["whole"]
    assert (whole["found"]["read_mib_s"], whole["left"]["read_mib_s"]) == (100.0, 40.0)
    assert (whole["change_percent"], whole["verdict"]) == (-60.0, "worse")
    assert whole["line"].startswith("sdb: as found -> as left, sequential read 100.0 MiB/s (98.0-101.0) -> "
                                    "40.0 MiB/s (40.0-40.0), -60.0%, after scheduler mq-deadline, max_sectors_kb 64: worse, ")
    # The second change put back: the disk leaves as the second change found it.
    whole = tuning_report.build(hostvars(["sdb"]), ["osd1"], min_change_percent=15)["hosts"][0]["disks"][0]["whole"]
    assert (whole["left"]["read_mib_s"], whole["change_percent"]) == (90.0, -10.0)
    assert whole["verdict"] == "same" and "not more than 15" in whole["why"]
    assert "max_sectors_kb 64 (undone)" in whole["line"]


def test_a_disk_without_a_measured_change_has_no_whole_figure():
    hostvars = {"osd1": {"max_sectors_kb_result": {"chosen": {"sdb": {"value": 64, "source": "class hdd"}},
                                                   "changing": ["sdb"], "read_figures": []}}}
    assert tuning_report.build(hostvars, ["osd1"])["hosts"][0]["disks"][0]["whole"] is None
