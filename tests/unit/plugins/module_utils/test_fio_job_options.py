"""fio_options: the allow-list of the probe's fio options, checked against the option names and
aliases the real fio 3.33 printed for ``fio --cmdhelp`` (fixtures/fio/cmdhelp.json)."""

import json

import pytest

from captured_fio import CapturedFio, captured_cmdhelp

from ansible_collections.cephops.osd_tuning.plugins.module_utils import fio_job

CAPTURED = captured_cmdhelp()
# Every name and alias fio knows, with the option it stands for.
KNOWN = {}
for _name in CAPTURED["names"]:
    _found = CAPTURED["keys"][_name]
    _canonical, _aliases = fio_job.parse_cmdhelp(_found["stdout"], _found["stderr"])
    for _key in [_canonical] + _aliases:
        KNOWN[_key] = _canonical
REFUSED = sorted(key for key, canonical in KNOWN.items() if canonical not in fio_job.ALLOWED_OPTIONS)
ACCEPTED = sorted(key for key, canonical in KNOWN.items() if canonical in fio_job.ALLOWED_OPTIONS)

# What the probe must never let through: where and how much it writes, and everything that
# touches more than its region.
DANGEROUS = [
    "filename", "offset", "fileoffset", "size", "io_size", "io_limit", "filesize", "runtime", "timeout",
    "time_based", "numjobs", "loops", "offset_increment", "offset_align", "number_ios", "fill_device", "fill_fs",
    "file_append", "zonemode", "zonesize", "zonerange", "zoneskip", "exec_prerun", "exec_postrun", "unlink",
    "unlink_each_loop", "ioscheduler", "read_iolog", "replay_redirect", "replay_scale", "replay_align",
    "write_iolog", "write_bw_log", "write_lat_log", "write_iops_log", "write_hist_log", "allow_mounted_write",
    "allow_file_create", "directory", "filename_format", "opendir", "lockfile", "nrfiles", "nr_files",
    "create_only", "verify", "trim_percentage", "cgroup", "uid", "gid", "group_reporting", "stonewall",
    "wait_for_previous", "bs_unaligned", "blocksize_unaligned", "rw_sequencer", "ramp_time",
]


def good_value(canonical):
    if canonical in fio_job.VALUE_CHOICES:
        return fio_job.VALUE_CHOICES[canonical][0]
    return "0xdeadbeef" if canonical == "buffer_pattern" else "1"


def refusal(overrides, run_command=None):
    with pytest.raises(ValueError) as exc:
        fio_job.allowed_overrides(overrides, "fio", run_command or CapturedFio())
    message = str(exc.value)
    assert message.startswith("fio_options refused, nothing was run. ")
    assert message.endswith(fio_job.WHERE_TO_LOOK)
    return message


# --------------------------------------------------------------------------- the captured fio

def test_fixture_holds_every_option_of_fio_3_33():
    assert CAPTURED["fio_version"] == "fio-3.33"
    assert len(CAPTURED["names"]) == 217 and len(KNOWN) == 237


def test_every_allowed_option_is_a_canonical_fio_name():
    assert fio_job.ALLOWED_OPTIONS <= set(CAPTURED["names"])
    assert set(fio_job.VALUE_CHOICES) | set(fio_job.FORBIDDEN_IN_VALUE) <= fio_job.ALLOWED_OPTIONS


@pytest.mark.parametrize("key,expected", [
    ("offset", ("offset", ["fileoffset"])),
    ("bs", ("bs", ["blocksize"])),
    ("iodepth", ("iodepth", [])),
    ("log_alternate_epoch_clock_id", ("log_alternate_epoch_clock_id", [])),
    # An alias answers with the option it stands for.
    ("fileoffset", ("offset", ["fileoffset"])),
])
def test_cmdhelp_gives_the_option_and_its_aliases(key, expected):
    found = CAPTURED["keys"][key]
    assert fio_job.parse_cmdhelp(found["stdout"], found["stderr"]) == expected


@pytest.mark.parametrize("key", ["offest", "bss", "iodept", "fileoff", "hipri", "output", "all"])
def test_cmdhelp_of_an_unknown_key_is_no_option_even_with_a_closest_match(key):
    found = CAPTURED["keys"][key]
    assert fio_job.parse_cmdhelp(found["stdout"], found["stderr"]) is None


# --------------------------------------------------------------------------- refused

@pytest.mark.parametrize("key", REFUSED)
def test_every_option_outside_the_allow_list_and_each_alias_is_refused_naming_it(key):
    canonical = KNOWN[key]
    expected = "%s: not allowed" % key if key == canonical else \
        "%s: alias of %s, which is not allowed" % (key, canonical)
    assert expected in refusal({key: "1"})


def test_all_refused_options_at_once_are_named_in_one_message_after_one_lookup_each():
    fio = CapturedFio()
    message = refusal(dict((key, "1") for key in REFUSED), fio)
    items = message[len("fio_options refused, nothing was run. "):-len(fio_job.WHERE_TO_LOOK) - 2].split("; ")
    assert [item.split(":")[0] for item in items] == REFUSED
    assert [argv for argv, _kwargs in fio.calls] == [["fio", "--cmdhelp=" + key] for key in REFUSED]


@pytest.mark.parametrize("key", DANGEROUS)
def test_options_that_move_enlarge_or_escape_the_writes_are_refused(key):
    assert KNOWN[key] not in fio_job.ALLOWED_OPTIONS
    assert key + ": " in refusal({key: "0"})


@pytest.mark.parametrize("key", ["fileoff", "fileofs", "offs"])
def test_abbreviations_fio_would_take_are_refused(key):
    assert "%s: fio has no option or alias of exactly this name (abbreviations are refused: give the full name)" \
        % key in refusal({key: "0"})


@pytest.mark.parametrize("key", ["offest", "bss", "iodept", "hipri", "output", "all"])
def test_names_fio_does_not_know_are_refused_even_with_a_closest_match(key):
    assert key + ": fio has no option or alias of exactly this name" in refusal({key: "1"})


@pytest.mark.parametrize("key", ["Bs", "b s", "bs=4k", "", "--", "bs;reboot", "offset\n", "b\u00e9"])
def test_malformed_names_are_refused_without_asking_fio(key):
    fio = CapturedFio()
    assert "%s: not an option name (only a-z, 0-9, _ and -)" % json.dumps(key, ensure_ascii=False) in refusal(
        {key: "1"}, fio)
    assert fio.calls == []


@pytest.mark.parametrize("key,value,problem", [
    ("bs", "4k 8k", "the value holds whitespace or a control character"),
    ("bs", "4k\n--offset=0", "the value holds whitespace or a control character"),
    ("rate", "1m\t", "the value holds whitespace or a control character"),
    ("buffer_pattern", "0x00\x00", "the value holds whitespace or a control character"),
    ("iodepth", "1\u00a0", "the value holds whitespace or a control character"),
    ("ioengine", "sg", "value sg is not allowed (one of libaio, io_uring, psync, sync, pvsync, pvsync2, posixaio)"),
    ("ioengine", "filedelete", "value filedelete is not allowed"),
    ("ioengine", "exec", "value exec is not allowed"),
    ("ioengine", "external:/tmp/engine.so", "value external:/tmp/engine.so is not allowed"),
    ("ioengine", "LIBAIO", "value LIBAIO is not allowed"),
    ("rw", "randtrim", "value randtrim is not allowed"),
    ("rw", "trimwrite", "value trimwrite is not allowed"),
    ("rw", "write:1g", "value write:1g is not allowed"),
    ("readwrite", "randwrite:8", "value randwrite:8 is not allowed"),
    ("mem", "mmap:/etc/passwd", "value mmap:/etc/passwd is not allowed"),
    ("iomem", "mmaphuge:/hugepages/file", "value mmaphuge:/hugepages/file is not allowed"),
    ("buffer_pattern", "'/etc/shadow'", "the value holds ', which makes fio read a file"),
])
def test_bad_values_of_allowed_options_are_refused_naming_the_option(key, value, problem):
    assert "%s: %s" % (key, problem) in refusal({key: value})


def test_every_problem_is_listed_not_only_the_first():
    message = refusal({"fileoffset": "0", "--fileoff": "0", "exec_prerun": "x", "ioengine": "sg",
                       "Bs": "4k", "rate": "1 m", "bs": "4k", "blocksize": "8k"})
    assert message == (
        'fio_options refused, nothing was run. "Bs": not an option name (only a-z, 0-9, _ and -); '
        "exec_prerun: not allowed; "
        "--fileoff: fio has no option or alias of exactly this name (abbreviations are refused: give the full name); "
        "fileoffset: alias of offset, which is not allowed; "
        "ioengine: value sg is not allowed (one of libaio, io_uring, psync, sync, pvsync, pvsync2, posixaio); "
        "rate: the value holds whitespace or a control character; "
        "blocksize and bs: each sets bs, give it once. " + fio_job.WHERE_TO_LOOK)


def test_an_option_and_its_dashed_spelling_are_given_once():
    assert "--bs and bs: each sets bs, give it once" in refusal({"--bs": "4k", "bs": "8k"})


def test_a_null_value_does_not_let_a_refused_option_through():
    assert "offset: not allowed" in refusal({"offset": None})


def test_a_failing_cmdhelp_refuses_the_option():
    def broken(argv, **kwargs):
        return 1, "", "fio: something went wrong\n"
    assert "bs: fio --cmdhelp failed (rc=1): fio: something went wrong" in refusal({"bs": "4k"}, broken)


def test_without_fio_every_fio_option_is_refused_unasked():
    fio = CapturedFio()
    with pytest.raises(ValueError) as exc:
        fio_job.allowed_overrides({"iodepth": "2", "bs": "8k"}, None, fio)
    assert str(exc.value) == ("fio_options refused: fio is not installed, so the probe writes with dd, "
                              "which takes no fio options (bs, iodepth)")
    assert fio.calls == []
    assert fio_job.allowed_overrides({}, None, fio) == {}


# --------------------------------------------------------------------------- accepted

@pytest.mark.parametrize("key", ACCEPTED)
def test_every_allowed_option_and_alias_is_accepted_under_its_canonical_name(key):
    canonical = KNOWN[key]
    assert fio_job.allowed_overrides({key: good_value(canonical)}, "fio", CapturedFio()) == {
        canonical: good_value(canonical)}


def test_the_whole_allow_list_at_once():
    overrides = dict((name, good_value(name)) for name in fio_job.ALLOWED_OPTIONS)
    assert fio_job.allowed_overrides(overrides, "fio", CapturedFio()) == overrides


@pytest.mark.parametrize("key,value", [("ioengine", choice) for choice in fio_job.VALUE_CHOICES["ioengine"]]
                         + [("rw", choice) for choice in fio_job.VALUE_CHOICES["rw"]]
                         + [("mem", choice) for choice in fio_job.VALUE_CHOICES["mem"]]
                         + [("buffer_pattern", '"cephops"'), ("buffer_pattern", "0xdeadbeef"),
                            ("bssplit", "4k/50:64k/50"), ("random_distribution", "zoned_abs:60/1g:40/2g"),
                            ("cpus_allowed", "0-1"), ("percentile_list", "99:99.9"), ("iodepth", 32)])
def test_allowed_values_pass_unchanged(key, value):
    assert fio_job.allowed_overrides({key: value}, "fio", CapturedFio()) == {key: value}


def test_dashes_and_aliases_become_the_canonical_name_and_null_removes_an_option():
    fio = CapturedFio()
    overrides = {"--blocksize": "16k", "iodepth_batch_submit": "4", "readwrite": "write", "fsync": None}
    assert fio_job.allowed_overrides(overrides, "/usr/bin/fio", fio) == {
        "bs": "16k", "iodepth_batch": "4", "rw": "write", "fsync": None}
    # One lookup per distinct key, as an argv list; the module's run_command adds LC_ALL=C.
    assert [argv for argv, _kwargs in fio.calls] == [
        ["/usr/bin/fio", "--cmdhelp=" + key] for key in ("blocksize", "fsync", "iodepth_batch_submit", "readwrite")]
