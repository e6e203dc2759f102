"""sync_write_probe module entry point: argument checks and refusals that need no disk."""

import re

import pytest
import yaml

from ansible.module_utils.basic import AnsibleModule
from captured_fio import CapturedFio

from ansible_collections.cephops.osd_tuning.plugins.module_utils import fio_job
from ansible_collections.cephops.osd_tuning.plugins.modules import sync_write_probe


def test_unknown_devices_are_refused_not_fatal(run_module):
    result = run_module(sync_write_probe.main, {"devices": ["/dev/cephops-missing", "cephops-gone"]})
    assert result["changed"] is False
    assert [(r["device"], r["verdict"], r["reasons"]) for r in result["results"]] == [
        ("/dev/cephops-missing", "refused", ["/dev/cephops-missing: no such device"]),
        ("cephops-gone", "refused", ["cephops-gone: no such device"]),
    ]
    assert result["results"][0]["written"] is False


@pytest.fixture
def host_fio(monkeypatch):
    """fio at /usr/bin/fio (None: not installed) answering --cmdhelp as the real one did; no
    other program is found, so a module that got past the option check fails visibly."""
    fio = CapturedFio()
    state = {"path": "/usr/bin/fio"}

    def get_bin_path(module, name, required=False, opt_dirs=None):
        found = state["path"] if name == "fio" else None
        if required and not found:
            module.fail_json(msg="Failed to find required executable %s" % name)
        return found

    monkeypatch.setattr(AnsibleModule, "get_bin_path", get_bin_path)
    # As run_command does: the module's run_command_environ_update under each call's own.
    monkeypatch.setattr(AnsibleModule, "run_command", lambda module, argv, environ_update=None, **kwargs: fio(
        argv, environ_update=dict(module.run_command_environ_update, **(environ_update or {})), **kwargs))
    fio.state = state
    return fio


def test_option_that_places_the_writes_is_refused_with_its_alias_and_abbreviation(run_module, host_fio):
    result = run_module(sync_write_probe.main, {"devices": [], "fio_options": {
        "offset": "0", "fileoffset": "0", "fileoff": "0", "bs": "16k"}})
    assert result["failed"] is True
    assert result["msg"] == (
        "fio_options refused, nothing was run. "
        "fileoff: fio has no option or alias of exactly this name (abbreviations are refused: give the full name); "
        "fileoffset: alias of offset, which is not allowed; offset: not allowed. " + fio_job.WHERE_TO_LOOK)
    assert host_fio.calls == [
        (["/usr/bin/fio", "--cmdhelp=" + key], {"environ_update": {"LC_ALL": "C"}})
        for key in ("bs", "fileoff", "fileoffset", "offset")]


def test_fio_options_are_refused_when_the_probe_would_fall_back_to_dd(run_module, host_fio):
    host_fio.state["path"] = None
    result = run_module(sync_write_probe.main, {"devices": [], "fio_options": {"bs": "16k"}})
    assert result["failed"] is True
    assert result["msg"] == ("fio_options refused: fio is not installed, so the probe writes with dd, "
                             "which takes no fio options (bs)")
    assert host_fio.calls == []


def test_documentation_lists_the_allow_list_and_the_restricted_values():
    option = yaml.safe_load(sync_write_probe.DOCUMENTATION)["options"]["fio_options"]
    allowed = next(text for text in option["description"] if text.startswith("Only options"))
    restricted = next(text for text in option["description"] if text.startswith("Some values"))
    assert set(re.findall(r"C\(([a-z_]+)\)", allowed)) == fio_job.ALLOWED_OPTIONS
    for name, choices in fio_job.VALUE_CHOICES.items():
        sentence = re.search(r"C\(%s\) takes (.*?) \(" % name, restricted).group(1)
        assert re.findall(r"V\(([a-z_0-9]+)\)", sentence) == list(choices)


@pytest.mark.parametrize("args,msg", [
    ({"min_iops": 100, "marginal_min_iops": 200}, "marginal_min_iops must not exceed min_iops"),
    ({"max_p99_sync_latency_ms": 2.0, "marginal_max_p99_sync_latency_ms": 1.0},
     "marginal_max_p99_sync_latency_ms must not be below max_p99_sync_latency_ms"),
    ({"adaptive_margin": 1.0}, "adaptive_margin must exceed 1"),
    ({"runtime": 0}, "runtime must be at least 1"),
    ({"cache_max_age": -1}, "cache_max_age must not be negative"),
    ({"write_cache": "disabled", "compare_write_cache": True},
     "write_cache=disabled and compare_write_cache exclude each other: the comparison measures with the cache on "
     "and off itself"),
    ({"class_thresholds": {"db": {"min_iops": 100, "marginal_min_iops": 200}}},
     "class_thresholds.db: marginal_min_iops must not exceed min_iops"),
    ({"class_thresholds": {"db": {"iops": 5}}}, "class_thresholds.db takes only marginal_max_p99_sync_latency_ms, "
     "marginal_min_iops, max_p99_sync_latency_ms, min_iops"),
    ({"class_thresholds": {"db": {"min_iops": "fast"}}}, "class_thresholds.db: every threshold is a number"),
    ({"device_classes": {"/dev/sdx": "db"}}, "device_classes names /dev/sdx, which devices does not list"),
])
def test_inconsistent_settings_fail_before_any_probe(run_module, args, msg):
    result = run_module(sync_write_probe.main, dict(args, devices=[]))
    assert result["failed"] is True
    assert result["msg"] == msg


def test_a_device_class_needs_its_thresholds(run_module):
    result = run_module(sync_write_probe.main, {"devices": ["/dev/cephops-missing"], "class_thresholds": {"db": {}},
                                                "device_classes": {"/dev/cephops-missing": "wal"}})
    assert result["failed"] is True
    assert result["msg"] == "device_classes uses the class wal, which class_thresholds does not define"


def test_unknown_mode_is_refused(run_module):
    result = run_module(sync_write_probe.main, {"devices": [], "mode": "randread"})
    assert result["failed"] is True
    assert "mode" in result["msg"]
