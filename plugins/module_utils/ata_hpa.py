# -*- coding: utf-8 -*-
# Copyright: cephops.osd_tuning contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Host Protected Area (ATA SET MAX ADDRESS) through hdparm: parsing and arithmetic.

Pure functions only; the ata_hpa module runs the commands. hdparm 9.65 prints the state as
`` max sectors   = VISIBLE/NATIVE, HPA is enabled|disabled``; drives with the ACCESSIBLE
MAX ADDRESS feature (ACS-3) print ``ACCESSIBLE MAX ADDRESS enabled|disabled`` instead, and
a visible count above the native one is ``HPA setting seems invalid``, optionally with the
DCO maximum as ``(N?)`` after the native count.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.cephops.osd_tuning.plugins.module_utils.blockdev import blocking_reasons
from ansible_collections.cephops.osd_tuning.plugins.module_utils.overprovision import MIB, reserved_size

_MAX_SECTORS = re.compile(
    r"^\s*max sectors\s*=\s*(?P<visible>\d+)/(?P<native>\d+)(?:\((?P<dco>\d+)\?\))?,\s*(?P<rest>.*)$", re.M)
_STATES = (
    ("HPA is enabled", "enabled", False),
    ("HPA is disabled", "disabled", False),
    ("ACCESSIBLE MAX ADDRESS enabled", "enabled", True),
    ("ACCESSIBLE MAX ADDRESS disabled", "disabled", True),
    ("HPA setting seems invalid", "invalid", False),
)
# hdparm's perror() lines when an ATA command fails (stderr), e.g.
# " SET_MAX_ADDRESS(_EXT) failed: Input/output error".
_FAILED = re.compile(r"^\s*(\S+ failed: .*)$", re.M)


class HpaError(Exception):
    """The drive's answer cannot be used; the message says why."""


def parse_state(stdout, stderr=""):
    """State from ``hdparm -N DEVICE`` output.

    Returns a dict with ``visible_sectors``, ``native_sectors``, ``hpa`` (V(enabled),
    V(disabled) or V(invalid)), ``accessible_max_address`` (the drive uses the ACS-3
    feature, whose changes need a power cycle) and ``dco_max_sectors`` (or None).
    Raises HpaError when there is no ``max sectors`` line: the drive did not answer,
    which is what hdparm prints (nothing, exit 0) for a disk that is not ATA.
    """
    match = _MAX_SECTORS.search(stdout or "")
    if not match:
        failures = _FAILED.findall(stderr or "")
        detail = "; ".join(f.strip() for f in failures) or (stderr or "").strip() or "no output"
        raise HpaError("the drive did not answer hdparm -N (%s)" % detail)
    rest = match.group("rest")
    for text, hpa, amax in _STATES:
        if rest.startswith(text):
            break
    else:
        raise HpaError("unknown hdparm -N state: %s" % match.group(0).strip())
    return {
        "visible_sectors": int(match.group("visible")),
        "native_sectors": int(match.group("native")),
        "dco_max_sectors": int(match.group("dco")) if match.group("dco") else None,
        "hpa": hpa,
        "accessible_max_address": amax,
    }


def command_failures(stderr):
    """The ATA command failures hdparm reported, e.g. ``SET_MAX_ADDRESS(_EXT) failed: ...``."""
    return [f.strip() for f in _FAILED.findall(stderr or "")]


def check_request(reserve_percent=None, visible_sectors=None):
    """Why no disk could satisfy a request (empty when one could), before anything looks at
    a disk."""
    if visible_sectors is not None:
        return ["visible_sectors %d must be at least 1" % visible_sectors] if visible_sectors < 1 else []
    if not 0 <= reserve_percent <= 90:
        return ["reserve_percent %s is outside 0-90" % reserve_percent]
    return []


def target_sectors(native_sectors, logical_sector_size, reserve_percent=None, visible_sectors=None):
    """Visible sector count to set: ``visible_sectors`` as given, or the native maximum less
    ``reserve_percent``, rounded down to a whole MiB so partitions can end on a MiB boundary.

    Raises HpaError for a count that is not below or equal to the native maximum, or a
    reserve outside 0-90 %.
    """
    refused = check_request(reserve_percent, visible_sectors)
    if refused:
        raise HpaError(refused[0])
    if visible_sectors is None:
        visible_sectors = reserved_size(native_sectors, reserve_percent, max(1, MIB // logical_sector_size))
    if visible_sectors < 1:  # a reserve that leaves less than a MiB
        raise HpaError("visible_sectors %d must be at least 1" % visible_sectors)
    if visible_sectors > native_sectors:
        raise HpaError("visible_sectors %d is above the native maximum %d" % (visible_sectors, native_sectors))
    return visible_sectors


def check_valid(before):
    """Raise HpaError when hdparm calls the HPA setting invalid: nothing is acted on then."""
    if before["hpa"] == "invalid":
        raise HpaError("hdparm reports the HPA setting as invalid (%d visible above %d native): the controller "
                       "or driver does not pass ATA commands through faithfully"
                       % (before["visible_sectors"], before["native_sectors"]))


def plan(disk, before, target, erase=False, restoring=False, ignore_hpa=False, changed_since_boot=None,
         overwrite_data=False):
    """What to do with ``disk`` (a disk_facts record) whose ``hdparm -N`` state is ``before``
    to make ``target`` sectors visible (``restoring``: the size a record kept).

    Returns a dict with ``target``, ``change`` (the drive must be changed), ``discard``
    (discard the whole disk first) and ``checks``: every safety check that refuses the
    change, in words an operator can act on; the change may only run when it is empty.
    ``changed_since_boot`` describes a permanent change already made this boot;
    ``overwrite_data`` lifts the reasons of the content checks alone.
    """
    check_valid(before)
    shrink = target < before["visible_sectors"]
    result = dict(target=target, change=target != before["visible_sectors"], discard=shrink, checks=[])
    if not result["change"]:
        return result  # nothing is written, so nothing needs to be refused
    checks = result["checks"]
    refusing = blocking_reasons(disk, overwrite_data)
    if refusing:
        checks.append("not blank: " + ", ".join(refusing))
    if not restoring and ignore_hpa:
        checks.append("libata.ignore_hpa=1 unlocks the HPA at every boot")
    if changed_since_boot:
        checks.append("a permanent change was already made to this drive since boot (%s); "
                      "power-cycle it before the next one" % changed_since_boot)
    if shrink and not erase:
        checks.append("erase=true is required: the whole disk is discarded before sectors are hidden")
    if shrink and not disk["discard"]:
        checks.append("the disk cannot discard, so the hidden area would keep stale data; erase it "
                      "otherwise (ATA secure erase) first")
    return result


def set_argv(hdparm, device, sectors):
    """Permanent SET MAX (``p`` prefix); the flag is needed because a shrink aborts without it."""
    return [hdparm, "--yes-i-know-what-i-am-doing", "-N", "p%d" % sectors, device]


def read_argv(hdparm, device):
    return [hdparm, "-N", device]
