"""fio_job: command lines, fio JSON captured from real fio 3.33 runs on loop devices, and dd's
closing statistics."""

from ansible_collections.cephops.osd_tuning.plugins.module_utils import fio_job

REGION = (1024 * 1024 ** 2, 512 * 1024 ** 2)


def outcome(fixture_text, name, names, rc=0, stderr="", runtime=2):
    return fio_job.fio_outcome(rc, fixture_text("fio/" + name), stderr, names, runtime)


# --------------------------------------------------------------------------- commands

def test_default_command_is_the_articles_probe_inside_the_region():
    argv = fio_job.fio_command("fio", [("sdb", "/dev/sdb")], fio_job.job_options("randwrite"), 15, REGION)
    assert argv == ["fio", "--output-format=json", "--allow_file_create=0", "--thread", "--time_based", "--runtime=15",
                    "--offset=1073741824", "--size=536870912", "--ioengine=libaio", "--direct=1",
                    "--fsync=1", "--bs=4k", "--iodepth=1", "--rw=randwrite",
                    "--name=sdb", "--filename=/dev/sdb"]


def test_parallel_command_has_one_job_section_per_disk_and_no_group_reporting():
    argv = fio_job.fio_command("fio", [("sdb", "/dev/sdb"), ("sdc", "/dev/sdc")],
                               fio_job.job_options("randwrite"), 2, REGION)
    assert argv[-4:] == ["--name=sdb", "--filename=/dev/sdb", "--name=sdc", "--filename=/dev/sdc"]
    assert not [a for a in argv if "group_reporting" in a]


def test_journal_clones_split_the_region():
    argv = fio_job.fio_command("fio", [("sdb", "/dev/sdb")], fio_job.job_options("journal"), 60, REGION, numjobs=4)
    assert "--numjobs=4" in argv and "--size=134217728" in argv and "--offset_increment=134217728" in argv
    assert "--sync=1" in argv and "--rw=write" in argv and "--fsync=1" not in argv


def test_overrides_replace_add_and_remove_options():
    # Overrides arrive checked and under fio's own names (fio_options.allowed_overrides).
    options = fio_job.job_options("randwrite", {"bs": "16k", "ioengine": "psync", "iodepth": None,
                                                "randseed": 7})
    assert options == [("direct", "1"), ("fsync", "1"), ("rw", "randwrite"), ("bs", "16k"), ("ioengine", "psync"),
                       ("randseed", "7")]


def test_unsynced_variant_drops_fsync_and_sync():
    options = fio_job.unsynced(fio_job.job_options("journal"))
    assert ("sync", "1") not in options and ("fsync", "0") in options and ("sync", "0") in options


def test_dd_command_covers_exactly_the_region():
    assert fio_job.dd_command("/dev/sdb", REGION) == [
        "dd", "if=/dev/urandom", "of=/dev/sdb", "bs=4096", "seek=262144", "count=131072",
        "oflag=direct,dsync", "conv=notrunc,nocreat"]


# --------------------------------------------------------------------------- fio output

def test_normal_run_is_measured(fixture_text):
    found, version = outcome(fixture_text, "randwrite_fsync_loop.json", ["loop2"])
    m = found["loop2"]["measurement"]
    assert version == "fio-3.33"
    assert m["write_iops"] == 2516.2 and m["total_ios"] == 5035 and m["runtime_ms"] == 2000
    assert m["sync_ios"] == 5035  # one fsync per write
    assert m["latency_us"]["sync"] == {"mean": 382.482, "p50": 329.728, "p99": 1531.904, "p99_9": 3063.808}
    assert fio_job.p99_sync_latency_ms(m) == 1.532


def test_parallel_output_reports_each_disk(fixture_text):
    found, _version = outcome(fixture_text, "randwrite_fsync_two_disks.json", ["loop2", "loop3"])
    assert found["loop2"]["measurement"]["write_iops"] == 3038.0
    assert found["loop3"]["measurement"]["write_iops"] == 1971.0


def test_errored_job_is_an_error_and_the_healthy_job_still_counts(fixture_text):
    stderr = "fio: io_u error on file /dev/loop1: No space left on device: write offset=1302372352, buflen=4096"
    found, _version = outcome(fixture_text, "job_error_enospc.json", ["loop1", "loop3"], rc=1, stderr=stderr)
    assert found["loop1"]["error"].startswith("fio job failed with errno 28 (No space left on device)")
    assert "measurement" in found["loop3"]


def test_sync_mode_without_sync_section_judges_completion_latency(fixture_text):
    found, _version = outcome(fixture_text, "journal_sync_numjobs1.json", ["loop2"])
    m = found["loop2"]["measurement"]
    assert m["latency_us"]["sync"] is None and m["sync_ios"] == 0
    assert fio_job.p99_sync_latency_ms(m) == round(m["latency_us"]["completion"]["p99"] / 1000, 3)


def test_numjobs_clones_are_summed(fixture_text):
    found, _version = outcome(fixture_text, "journal_sync_numjobs2.json", ["loop2"])
    m = found["loop2"]["measurement"]
    assert m["write_iops"] == round(2100.949525 + 2093.953023, 1)
    assert m["latency_us"]["completion"]["p99"] == 2244.608  # the worse clone


def test_truncated_output_is_an_error_for_every_disk(fixture_text):
    found, version = outcome(fixture_text, "truncated.json", ["loop2", "loop3"], rc=0)
    assert version is None
    assert found["loop2"]["error"].startswith("fio exited with rc=0: fio output is not complete JSON")
    assert found["loop3"] == found["loop2"]


def test_no_json_at_all_is_an_error_with_stderr():
    found, _version = fio_job.fio_outcome(1, "", "fio: unrecognized option '--bogus'", ["sdb"], 15)
    assert found["sdb"]["error"] == "fio exited with rc=1: fio printed no JSON: fio: unrecognized option '--bogus'"


def test_terminated_run_is_an_error_despite_its_json(fixture_text):
    found, _version = outcome(fixture_text, "terminated_sigterm.json", ["loop2"], rc=128, runtime=10)
    assert found["loop2"]["error"].startswith("fio exited with rc=128")


def test_terminated_run_is_an_error_even_with_rc_zero(fixture_text):
    found, _version = outcome(fixture_text, "terminated_sigterm.json", ["loop2"], rc=0, runtime=10)
    assert found["loop2"] == {"error": "fio ran 2760 ms of 10 s"}


def test_missing_device_completes_no_write(fixture_text):
    found, _version = outcome(fixture_text, "missing_device.json", ["loop9"], rc=1,
                              stderr="fio: file creation disallowed by allow_file_create=0", runtime=1)
    assert found["loop9"]["error"] == "fio exited with rc=1: fio: file creation disallowed by allow_file_create=0"


def test_disk_missing_from_output_is_an_error(fixture_text):
    found, _version = outcome(fixture_text, "randwrite_fsync_loop.json", ["loop2", "sdz"])
    assert found["sdz"] == {"error": "fio reported no result for this disk"}


def test_dd_statistics():
    stderr = ("131072+0 records in\n131072+0 records out\n"
              "536870912 bytes (537 MB, 512 MiB) copied, 47.8912 s, 11.2 MB/s\n")
    m = fio_job.dd_outcome(0, stderr)["measurement"]
    assert m["write_iops"] == round(131072 / 47.8912, 1)
    assert m["latency_us"]["completion"]["p99"] is None
    assert fio_job.dd_outcome(1, "dd: failed to open '/dev/sdz': No such file or directory") == {
        "error": "dd exited with rc=1: dd: failed to open '/dev/sdz': No such file or directory"}
