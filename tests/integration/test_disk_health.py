"""disk_health and controller_cache run through ansible on this host."""

import os
import stat
import tempfile

import pytest

from modulerun import ansible_module

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "unit", "fixtures")


@pytest.mark.pythons
def test_a_disk_without_smart_is_unknown_with_smartctls_reason_and_unchanged(loop_disks):
    disk = loop_disks(size_gib=1)
    before = disk.checksum()
    for check in (False, True):
        result = ansible_module("disk_health", dict(devices=[disk.path]), check=check)
        assert result["changed"] is False, result
        health = result["health"][disk.path]
        assert health["status"] == "unknown", health
        assert health["reasons"][0].startswith("no SMART data: "), health
        assert health["exit_status"] & 0x03, health
        assert result["smartctl"].endswith("/smartctl")
    assert disk.checksum() == before


def test_no_controller_tool_is_said():
    result = ansible_module("controller_cache")
    assert (result["changed"], result["tools"]) == (False, []), result
    assert result["summary"] == "no RAID controller tool found (storcli, perccli, ssacli)"


def controller_cache_with(tools):
    """controller_cache with stand-ins for vendor tools first on the PATH (no controller here):
    each prints a captured output and records its arguments."""
    with tempfile.TemporaryDirectory() as bin_dir:
        for name, output in tools.items():
            path = os.path.join(bin_dir, name)
            with open(path, "w") as handle:
                handle.write('#!/bin/sh\necho "$@" > "%s.args"\ncat "%s"\n' % (path, output))
            os.chmod(path, stat.S_IRWXU)
        result = ansible_module("controller_cache", env={"PATH": bin_dir + os.pathsep + os.environ["PATH"]})
        args = dict((name, open(os.path.join(bin_dir, name + ".args")).read().split())
                    for name in tools if os.path.exists(os.path.join(bin_dir, name + ".args")))
    return result, args


@pytest.mark.pythons
def test_tools_found_on_the_path_are_run_read_only_and_parsed():
    result, args = controller_cache_with({
        "storcli64": os.path.join(FIXTURES, "controller_cache", "storcli_vall_show_all.json"),
        "ssacli": os.path.join(FIXTURES, "controller_cache", "ssacli_two_logical_drives.txt")})
    assert args == {"storcli64": ["/call/vall", "show", "all", "J"],
                    "ssacli": ["ctrl", "all", "show", "config", "detail"]}, args
    assert [tool["name"] for tool in result["tools"]] == ["storcli", "ssacli"]
    assert result["summary"].startswith("storcli: c0/v0 write back (/dev/sda), c0/v1 write back (/dev/sdb), "
                                        "c0/v2 write through (/dev/sdc)")
    assert result["summary"].endswith("; ssacli: Smart Array P822 in Slot 2, logical drive 1 write back (/dev/sda), "
                                      "Smart Array P822 in Slot 2, logical drive 2 write back (/dev/sdb)")


def test_perccli_is_run_and_read_like_storcli():
    result, args = controller_cache_with({
        "perccli64": os.path.join(FIXTURES, "controller_cache", "perccli_vall_show_all.json")})
    assert args == {"perccli64": ["/call/vall", "show", "all", "J"]}, args
    assert [(tool["name"], tool["error"]) for tool in result["tools"]] == [("perccli", None)]
    assert result["summary"] == "perccli: " + ", ".join(
        "c0/v%d write back (/dev/sd%s)" % (index, letter) for index, letter in enumerate("abcdef"))
