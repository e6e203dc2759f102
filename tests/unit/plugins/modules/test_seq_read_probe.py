"""seq_read_probe (module_utils): candidate values, fio read JSON (captured from fio 3.33), per-model choice."""

import fnmatch
import json

from ansible_collections.cephops.osd_tuning.plugins.modules import seq_read_probe as read_utils


def test_candidate_values_resolve_current_and_hw_and_clamp():
    assert read_utils.candidate_values([64, "current", 128, "hw", 9999, 1], current=128, hw_max=512) == [64, 128, 512, 4]


def test_read_command_is_read_only_and_one_job_per_disk():
    argv = read_utils.read_command("fio", [("sdb", "/dev/sdb"), ("sdc", "/dev/sdc")], 5, "4M", 1024)
    assert "--readonly" in argv and "--rw=read" in argv and "--direct=1" in argv
    assert argv[-4:] == ["--name=sdb", "--filename=/dev/sdb", "--name=sdc", "--filename=/dev/sdc"]
    assert not any(arg.startswith(("--rw=write", "--rw=randwrite", "--fsync")) for arg in argv)


def test_random_read_command_is_read_only_4k_at_queue_depth_32():
    argv = read_utils.random_read_command("fio", [("sdb", "/dev/sdb")], 5, 1024)
    assert {"--readonly", "--rw=randread", "--direct=1", "--bs=4k", "--iodepth=32"} <= set(argv)
    assert argv[-2:] == ["--name=sdb", "--filename=/dev/sdb"]


def test_random_figures_from_captured_fio(fixture_text):
    figures = read_utils.random_figures(json.loads(fixture_text("fio_read/two_disks_random.json")))
    assert figures == {"sdb": (96583.4, 0.331, None), "sdc": (85415.6, 0.374, None)}


def test_read_throughput_from_captured_fio(fixture_text):
    speeds = read_utils.read_throughput(json.loads(fixture_text("fio_read/two_disks.json")))
    assert sorted(speeds) == ["sdb", "sdc"]
    for mib_s, error in speeds.values():
        assert mib_s > 0 and error is None


def test_read_throughput_names_a_job_error():
    document = {"jobs": [{"jobname": "sdb", "error": 5, "read": {"bw_bytes": 0}}]}
    assert read_utils.read_throughput(document) == {"sdb": (0.0, "fio job error 5 (Input/output error)")}


def row(kb, mib_s, interrupts=None):
    return {"max_sectors_kb": kb, "read_mib_s": mib_s, "interrupts_per_s": interrupts}


def test_by_model_takes_medians_and_chooses_against_the_value_before():
    results = [
        {"model": "MX100 512", "original_max_sectors_kb": 512,
         "table": [row(64, 534.0, 900.0), row(512, 436.0, 150.0)]},
        {"model": "MX100 512", "original_max_sectors_kb": 512,
         "table": [row(64, 530.0, 1100.0), row(512, 440.0, 170.0)]},
        {"model": "MX100 256", "original_max_sectors_kb": 512, "table": [row(64, 480.0), row(512, 536.0)]},
    ]
    models = read_utils.by_model(results, 5)
    assert models["MX100 512"]["table"] == [
        {"max_sectors_kb": 64, "read_mib_s": 532.0, "interrupts_per_s": 1000.0, "disks": 2},
        {"max_sectors_kb": 512, "read_mib_s": 438.0, "interrupts_per_s": 160.0, "disks": 2}]
    assert models["MX100 512"]["baseline"] == 512 and models["MX100 512"]["best"] == 64
    assert models["MX100 512"]["chosen"] == 64 and models["MX100 512"]["gain_percent"] == 21.5
    assert models["MX100 256"]["best"] == 512 and models["MX100 256"]["chosen"] == 512
    assert models["MX100 256"]["table"][0]["interrupts_per_s"] is None


def test_the_value_before_of_a_model_is_the_most_common_one():
    results = [{"model": "A", "original_max_sectors_kb": kb, "table": [row(kb, 100.0)]} for kb in (128, 512, 512)]
    assert read_utils.by_model(results, 5)["A"]["baseline"] == 512


def test_choose_takes_the_fastest_only_by_the_minimum_gain():
    table = [row(64, 105.0), row(128, 104.0), row(512, 100.0)]
    chosen = read_utils.choose(table, 512, 5)
    assert (chosen["chosen"], chosen["best"], chosen["gain_percent"]) == (64, 64, 5.0)
    assert "64 reads 5.0% faster than 512" in chosen["reason"]
    kept = read_utils.choose(table, 512, 5.1)
    assert (kept["chosen"], kept["best"]) == (512, 64) and kept["reason"].startswith("512 kept")


def test_choose_keeps_the_value_before_on_a_tie_even_without_a_minimum():
    table = [row(64, 100.0), row(512, 100.0)]
    assert read_utils.choose(table, 512, 0)["chosen"] == 512
    assert read_utils.choose([row(64, 100.0), row(512, 101.0)], 512, 0)["chosen"] == 512
    assert read_utils.choose([row(64, 101.0), row(512, 100.0)], 512, 0)["chosen"] == 64


def test_choose_keeps_the_value_before_when_it_reads_fastest():
    chosen = read_utils.choose([row(64, 90.0), row(512, 100.0)], 512, 5)
    assert chosen == {"chosen": 512, "best": 512, "gain_percent": 0.0, "reason": "512 kept: it reads fastest"}


def test_choose_makes_no_choice_without_the_value_before():
    chosen = read_utils.choose([row(64, 90.0)], 512, 5)
    assert chosen["chosen"] is None and "512" in chosen["reason"]
    assert read_utils.choose([], 512, 5)["chosen"] is None


def test_summarise_takes_the_median_of_the_repeats_and_their_spread():
    runs = [row(64, 100.0, 10.0), row(512, 90.0, 5.0), row(64, 130.0, 30.0), row(512, 91.0, 7.0),
            row(64, 101.0, 20.0), row(512, 200.0, 6.0)]
    for entry in runs:
        entry["error"] = None
    first, second = read_utils.summarise(runs)
    assert first == {"max_sectors_kb": 64, "runs": [100.0, 130.0, 101.0], "error": None, "read_mib_s": 101.0,
                     "min_mib_s": 100.0, "max_mib_s": 130.0, "interrupts_per_s": 20.0}
    # One fast outlier does not move the median: 512 stays slower although its best run is fastest.
    assert second["read_mib_s"] == 91.0 and second["max_mib_s"] == 200.0


def test_summarise_gives_a_value_with_a_failed_run_no_speed():
    runs = [dict(row(64, 100.0), error=None), dict(row(64, None), error="timed out"), dict(row(64, 99.0), error=None)]
    only, = read_utils.summarise(runs)
    assert only["read_mib_s"] is None and only["error"] == "timed out" and only["runs"] == [100.0, None, 99.0]


def test_model_choices_skip_unknown_models_and_unmeasured_and_match_exactly():
    models = {"A": {"chosen": 64}, "(unknown)": {"chosen": 128}, "B": {"chosen": None}, "C*[1]?": {"chosen": 512}}
    assert read_utils.model_choices(models) == [{"model": "A", "max_sectors_kb": 64},
                                                {"model": "C[*][[]1][?]", "max_sectors_kb": 512}]
    assert fnmatch.fnmatchcase("C*[1]?", "C[*][[]1][?]") and not fnmatch.fnmatchcase("CX[1]?", "C[*][[]1][?]")


class Host:
    """max_sectors_kb writes and one fio run, as measure_round sees them."""

    def __init__(self, monkeypatch, stdout, rc=0, stderr="", timed_out=False):
        self.written, self.runs = [], []
        monkeypatch.setattr(read_utils.queue_utils, "write_attribute",
                            lambda name, attribute, value: self.written.append((name, attribute, value)))

        def run_processes(argvs, timeout):
            self.runs.append((argvs, timeout))
            return [(rc, stdout, stderr, timed_out)]

        monkeypatch.setattr(read_utils.processes, "run_processes", run_processes)
        # 100 interrupts of IRQ 30 and 1000 of the host per round.
        snapshots = iter([({30: 5}, 1000), ({30: 105}, 2000)] * 4)
        monkeypatch.setattr(read_utils, "snapshot", lambda: next(snapshots))
        clock = iter([10.0, 12.0] * 4)
        monkeypatch.setattr(read_utils.time, "time", lambda: next(clock))


DISKS = [{"name": "sdb", "max_sectors_kb": 512}, {"name": "sdc", "max_sectors_kb": 128}]


def test_a_round_sets_each_disk_and_rows_only_disks_with_a_value_left(monkeypatch, fixture_text):
    host = Host(monkeypatch, fixture_text("fio_read/two_disks.json"))
    rows = read_utils.measure_round([["fio"]], DISKS, {"sdb": [64, 128], "sdc": [64]}, 1, 65, {"sdb": ("device", [30])})
    assert host.written == [("sdb", "max_sectors_kb", "128"), ("sdc", "max_sectors_kb", "64")]
    assert host.runs == [([["fio"]], 65)]
    assert list(rows) == ["sdb"] and rows["sdb"]["max_sectors_kb"] == 128 and rows["sdb"]["error"] is None
    assert rows["sdb"]["read_mib_s"] == round(1106190065 / float(1024 ** 2), 1)
    assert rows["sdb"]["interrupts_per_s"] == 50.0


def test_a_disk_without_irqs_of_its_own_gets_the_host_rate(monkeypatch, fixture_text):
    Host(monkeypatch, fixture_text("fio_read/two_disks.json"))
    rows = read_utils.measure_round([["fio"]], DISKS, {"sdb": [64], "sdc": [64]}, 0, 65, {"sdb": ("device", [30])})
    assert rows["sdc"]["interrupts_per_s"] == 500.0


def test_a_round_without_fio_json_is_an_error_for_every_disk(monkeypatch):
    Host(monkeypatch, "", rc=1, stderr="fio: engine libaio not loadable\n")
    rows = read_utils.measure_round([["fio"]], DISKS, {"sdb": [64], "sdc": [64]}, 0, 65)
    assert rows["sdc"] == {"max_sectors_kb": 64, "read_mib_s": None,
                           "error": "fio printed no JSON (rc=1): fio: engine libaio not loadable",
                           "interrupts_per_s": 500.0}
    Host(monkeypatch, "", rc=-15, timed_out=True)
    assert read_utils.measure_round([["fio"]], DISKS, {"sdb": [64], "sdc": [64]}, 0, 65)["sdb"]["error"] == "timed out"


def test_a_round_with_random_reads_runs_both_and_rows_both_figures(monkeypatch, fixture_text):
    outputs = iter([fixture_text("fio_read/two_disks.json"), fixture_text("fio_read/two_disks_random.json")])
    host = Host(monkeypatch, None)
    monkeypatch.setattr(read_utils.processes, "run_processes",
                        lambda argvs, timeout: host.runs.append(argvs) or [(0, next(outputs), "", False)])
    rows = read_utils.measure_round([["fio", "seq"], ["fio", "rand"]], DISKS, {"sdb": [64], "sdc": [64]}, 0, 65)
    assert host.runs == [[["fio", "seq"]], [["fio", "rand"]]]
    assert (rows["sdb"]["random_iops"], rows["sdb"]["random_lat_ms"], rows["sdb"]["random_error"]) == (96583.4, 0.331, None)
    assert rows["sdb"]["read_mib_s"] == round(1106190065 / float(1024 ** 2), 1)


def test_a_failed_random_run_is_an_error_of_the_random_figure_only(monkeypatch, fixture_text):
    outputs = iter([(0, fixture_text("fio_read/two_disks.json")), (1, "")])
    Host(monkeypatch, None)
    monkeypatch.setattr(read_utils.processes, "run_processes",
                        lambda argvs, timeout: [next(outputs) + ("fio: io_submit: Invalid argument\n", False)])
    row = read_utils.measure_round([["fio"], ["fio"]], DISKS, {"sdb": [64], "sdc": [64]}, 0, 65)["sdc"]
    assert row["read_mib_s"] is not None and row["error"] is None
    assert (row["random_iops"], row["random_lat_ms"]) == (None, None)
    assert row["random_error"] == "fio printed no JSON (rc=1): fio: io_submit: Invalid argument"


def test_summarise_gives_the_random_figure_its_median_spread_and_latency():
    runs = [dict(row(64, 100.0), error=None, random_iops=iops, random_lat_ms=lat, random_error=None)
            for iops, lat in ((900.0, 35.0), (1000.0, 32.0), (1200.0, 26.0))]
    only, = read_utils.summarise(runs)
    assert (only["random_iops"], only["random_min_iops"], only["random_max_iops"], only["random_lat_ms"]) == (
        1000.0, 900.0, 1200.0, 32.0)
    runs[1].update(random_iops=None, random_lat_ms=None, random_error="timed out")
    only, = read_utils.summarise(runs)
    assert (only["random_iops"], only["random_error"], only["random_runs"]) == (None, "timed out", [900.0, None, 1200.0])


def test_set_back_restores_every_disk_and_names_those_that_failed(monkeypatch):
    written = []

    def write_attribute(name, attribute, value):
        if name == "sdc":
            raise IOError(22, "Invalid argument")
        written.append((name, attribute, value))

    monkeypatch.setattr(read_utils.queue_utils, "write_attribute", write_attribute)
    assert read_utils.set_back(DISKS) == ["sdc: [Errno 22] Invalid argument"]
    assert written == [("sdb", "max_sectors_kb", "512")]
