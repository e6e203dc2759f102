"""seq_read_probe (module_utils): candidate values, fio read JSON (captured from fio 3.33), per-model choice."""

import json

from ansible_collections.cephops.osd_tuning.plugins.module_utils import seq_read_probe as read_utils


def test_candidate_values_resolve_current_and_hw_and_clamp():
    assert read_utils.candidate_values([64, "current", 128, "hw", 9999, 1], current=128, hw_max=512) == [64, 128, 512, 4]


def test_read_command_is_read_only_and_one_job_per_disk():
    argv = read_utils.read_command("fio", [("sdb", "/dev/sdb"), ("sdc", "/dev/sdc")], 5, "4M", 1024)
    assert "--readonly" in argv and "--rw=read" in argv and "--direct=1" in argv
    assert argv[-4:] == ["--name=sdb", "--filename=/dev/sdb", "--name=sdc", "--filename=/dev/sdc"]
    assert not any(arg.startswith(("--rw=write", "--rw=randwrite", "--fsync")) for arg in argv)


def test_read_throughput_from_captured_fio(fixture_text):
    speeds = read_utils.read_throughput(json.loads(fixture_text("fio_read/two_disks.json")))
    assert sorted(speeds) == ["sdb", "sdc"]
    for mib_s, error in speeds.values():
        assert mib_s > 0 and error is None


def test_read_throughput_names_a_job_error():
    document = {"jobs": [{"jobname": "sdb", "error": 5, "read": {"bw_bytes": 0}}]}
    assert read_utils.read_throughput(document) == {"sdb": (0.0, "fio job error 5 (Input/output error)")}


def test_by_model_takes_medians_and_the_fastest_value():
    results = [
        {"model": "MX100 512", "table": [{"max_sectors_kb": 64, "read_mib_s": 534.0}, {"max_sectors_kb": 512, "read_mib_s": 436.0}]},
        {"model": "MX100 512", "table": [{"max_sectors_kb": 64, "read_mib_s": 530.0}, {"max_sectors_kb": 512, "read_mib_s": 440.0}]},
        {"model": "MX100 256", "table": [{"max_sectors_kb": 64, "read_mib_s": 480.0}, {"max_sectors_kb": 512, "read_mib_s": 536.0}]},
    ]
    models = read_utils.by_model(results)
    assert models["MX100 512"] == {"best": 64, "table": [
        {"max_sectors_kb": 64, "read_mib_s": 532.0, "disks": 2},
        {"max_sectors_kb": 512, "read_mib_s": 438.0, "disks": 2}]}
    assert models["MX100 256"]["best"] == 512


def test_model_choices_skip_unknown_models_and_unmeasured():
    models = {"A": {"best": 64, "table": []}, "(unknown)": {"best": 128, "table": []}, "B": {"best": None, "table": []}}
    assert read_utils.model_choices(models) == [{"model": "A", "max_sectors_kb": 64}]


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


DISKS = [{"name": "sdb", "max_sectors_kb": 512}, {"name": "sdc", "max_sectors_kb": 128}]


def test_a_round_sets_each_disk_and_rows_only_disks_with_a_value_left(monkeypatch, fixture_text):
    host = Host(monkeypatch, fixture_text("fio_read/two_disks.json"))
    rows = read_utils.measure_round(["fio"], DISKS, {"sdb": [64, 128], "sdc": [64]}, 1, 65)
    assert host.written == [("sdb", "max_sectors_kb", "128"), ("sdc", "max_sectors_kb", "64")]
    assert host.runs == [([["fio"]], 65)]
    assert list(rows) == ["sdb"] and rows["sdb"]["max_sectors_kb"] == 128 and rows["sdb"]["error"] is None
    assert rows["sdb"]["read_mib_s"] == round(1106190065 / float(1024 ** 2), 1)


def test_a_round_without_fio_json_is_an_error_for_every_disk(monkeypatch):
    Host(monkeypatch, "", rc=1, stderr="fio: engine libaio not loadable\n")
    rows = read_utils.measure_round(["fio"], DISKS, {"sdb": [64], "sdc": [64]}, 0, 65)
    assert rows["sdc"] == {"max_sectors_kb": 64, "read_mib_s": None,
                           "error": "fio printed no JSON (rc=1): fio: engine libaio not loadable"}
    Host(monkeypatch, "", rc=-15, timed_out=True)
    assert read_utils.measure_round(["fio"], DISKS, {"sdb": [64], "sdc": [64]}, 0, 65)["sdb"]["error"] == "timed out"


def test_set_back_restores_every_disk_and_names_those_that_failed(monkeypatch):
    written = []

    def write_attribute(name, attribute, value):
        if name == "sdc":
            raise IOError(22, "Invalid argument")
        written.append((name, attribute, value))

    monkeypatch.setattr(read_utils.queue_utils, "write_attribute", write_attribute)
    assert read_utils.set_back(DISKS) == ["sdc: [Errno 22] Invalid argument"]
    assert written == [("sdb", "max_sectors_kb", "512")]
