# -*- coding: utf-8 -*-
# Copyright: cephops.osd_tuning contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""RAID controllers' write cache policy, read with their vendors' read-only show commands.

storcli and perccli (the same CLI, Broadcom's and Dell's builds) print JSON with a trailing
``J``: each virtual drive's ``Cache`` code (``RWBD``: read ahead, write back, direct) and its
properties (``Write Cache(initial setting)``, ``OS Drive Name``). ssacli has no JSON and no
output this code was tested on: it is detected and reported as not parsed.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

# (family, executables in the order looked up, the read-only command's arguments)
TOOLS = (
    ("storcli", ("storcli64", "storcli"), ["/call/vall", "show", "all", "J"]),
    ("perccli", ("perccli64", "perccli"), ["/call/vall", "show", "all", "J"]),
    ("ssacli", ("ssacli",), ["ctrl", "all", "show", "config", "detail"]),
)
PARSED = ("storcli", "perccli")
NO_TOOL = "no RAID controller tool found (storcli, perccli, ssacli)"

# The write policy in storcli's cache code: AWB always write back (even without a healthy
# battery or capacitor), WB write back, WT write through.
_WRITE_POLICY = re.compile(r"(AWB|WB|WT)")
WRITE_POLICIES = {"AWB": "always write back", "WB": "write back", "WT": "write through"}


def write_policy(code):
    match = _WRITE_POLICY.search(code or "")
    return WRITE_POLICIES[match.group(1)] if match else None


def parse_storcli(doc):
    """One entry per virtual drive of ``/call/vall show all J``."""
    drives = []
    for controller in doc.get("Controllers") or []:
        status = controller.get("Command Status") or {}
        data = controller.get("Response Data") or {}
        for key, rows in data.items():
            match = re.match(r"^/c(\d+)/v(\d+)$", key)
            if not match or not isinstance(rows, list):
                continue
            props = data.get("VD%s Properties" % match.group(2)) or {}
            for row in rows:
                drives.append({
                    "controller": int(match.group(1)), "virtual_drive": int(match.group(2)),
                    "raid": row.get("TYPE"), "state": row.get("State"), "cache": row.get("Cache"),
                    "write_policy": write_policy(row.get("Cache")),
                    "initial_write_cache": props.get("Write Cache(initial setting)"),
                    "disk_cache_policy": props.get("Disk Cache Policy"),
                    "os_drive": props.get("OS Drive Name"),
                })
        if status.get("Status") not in (None, "Success") and not drives:
            raise ValueError("%s: %s" % (status.get("Status"), status.get("Description")))
    return drives


def summary(tools):
    """One line for reports: each tool found and what it says."""
    if not tools:
        return NO_TOOL
    parts = []
    for tool in tools:
        if tool.get("error"):
            parts.append("%s: %s" % (tool["name"], tool["error"]))
        elif not tool.get("parsed"):
            parts.append("%s: tool present, output not parsed" % tool["name"])
        elif not tool["virtual_drives"]:
            parts.append("%s: no virtual drives" % tool["name"])
        else:
            parts.append("%s: %s" % (tool["name"], ", ".join(
                "c%d/v%d %s%s" % (vd["controller"], vd["virtual_drive"], vd["write_policy"] or vd["cache"] or "?",
                                  " (%s)" % vd["os_drive"] if vd["os_drive"] else "")
                for vd in tool["virtual_drives"])))
    return "; ".join(parts)
