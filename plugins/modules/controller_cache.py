#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: cephops.osd_tuning contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: controller_cache
short_description: Report the write cache policy of a host's RAID controllers
version_added: 0.1.0
description:
  - Looks up storcli, perccli and ssacli on the PATH and runs each one found with its
    read-only show command; reports, changes nothing and never fails for a controller.
  - storcli and perccli (C(/call/vall show all J)) give each virtual drive's cache code
    (C(RWBD), C(NRWTD), ...) and write policy (write back, always write back, write
    through) and the OS drive it is.
  - ssacli (C(ctrl all show config detail)) gives each logical drive's C(Caching) and disk
    name; its write policy is write back when it uses the controller's cache, the cache
    status is OK and the cache ratio gives writes a share, write through otherwise.
  - Without any of them RV(summary) says C(no RAID controller tool found).
author:
  - cephops maintainers (@cephops)
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - cephops.osd_tuning.attributes.no_diff
options: {}
notes:
  - Must run as root (C(become=true)) for the tools to reach the controllers.
attributes:
  check_mode:
    details: Reads only, in either mode.
"""

EXAMPLES = r"""
- name: Report the controllers' write cache
  cephops.osd_tuning.controller_cache:
  register: controllers
"""

RETURN = r"""
tools:
  description: One entry per tool found.
  returned: success
  type: list
  elements: dict
  contains:
    name:
      description: Its family, V(storcli), V(perccli) or V(ssacli).
      type: str
    path:
      description: The executable.
      type: str
    error:
      description: Why the tool gave no answer, or null.
      type: str
    virtual_drives:
      description: C(name), C(raid), C(state), C(cache) (storcli's code, or ssacli's
        C(Caching)), C(write_policy), C(initial_write_cache), C(disk_cache_policy) (the drives'
        own cache) and C(os_drive) of each.
      type: list
      elements: dict
summary:
  description: One line for reports.
  returned: success
  type: str
  sample: "storcli: c0/v0 write back (/dev/sda), c0/v2 write through (/dev/sdc)"
"""

import json
import re

from ansible.module_utils.basic import AnsibleModule


# RAID controllers' write cache policy, read with their vendors' read-only show commands.
#
# storcli and perccli (the same CLI, Broadcom's and Dell's builds) print JSON with a trailing
# ``J``: each virtual drive's ``Cache`` code (``RWBD``: read ahead, write back, direct) and its
# properties (``Write Cache(initial setting)``, ``OS Drive Name``). ssacli prints text: the
# controller's cache status and read/write ratio, and each logical drive's ``Caching`` and
# ``Disk Name``. Each gives one entry per virtual (logical) drive with its ``write_policy``.
# (family, executables in the order looked up, the read-only command's arguments)
TOOLS = (
    ("storcli", ("storcli64", "storcli"), ["/call/vall", "show", "all", "J"]),
    ("perccli", ("perccli64", "perccli"), ["/call/vall", "show", "all", "J"]),
    ("ssacli", ("ssacli",), ["ctrl", "all", "show", "config", "detail"]),
)
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
                    "name": key.lstrip("/"), "raid": row.get("TYPE"), "state": row.get("State"),
                    "cache": row.get("Cache"), "write_policy": write_policy(row.get("Cache")),
                    "initial_write_cache": props.get("Write Cache(initial setting)"),
                    "disk_cache_policy": props.get("Disk Cache Policy"), "os_drive": props.get("OS Drive Name"),
                })
        if status.get("Status") not in (None, "Success") and not drives:
            raise ValueError("%s: %s" % (status.get("Status"), status.get("Description")))
    return drives


_SSACLI_CONTROLLER_KEYS = ("Cache Status", "Cache Ratio", "Accelerator Ratio", "Drive Write Cache",
                           "No-Battery Write Cache")
_SSACLI_LINE = re.compile(r"^\s+([^:]+):\s*(.*?)\s*$")
_WRITE_SHARE = re.compile(r"(\d+)% Write")


def _ssacli_policy(controller, caching):
    """Write back when the logical drive uses the controller's cache, the cache is OK and part
    of it is given to writes; otherwise writes go through."""
    ratio = controller.get("Cache Ratio") or controller.get("Accelerator Ratio") or ""
    share = _WRITE_SHARE.search(ratio)
    if caching == "Enabled" and controller.get("Cache Status") == "OK" and share and int(share.group(1)) > 0:
        return "write back"
    return "write through"


def parse_ssacli(text):
    """One entry per logical drive of ``ctrl all show config detail``."""
    drives, controller, drive = [], None, None
    for line in text.splitlines():
        if line.strip() and not line[0].isspace():
            controller, drive = {"name": line.strip()}, None
            continue
        match = _SSACLI_LINE.match(line)
        if controller is None:
            continue
        if re.match(r"^\s+(Array|physicaldrive|unassigned)\b", line):
            drive = None
        elif match and match.group(1) == "Logical Drive":
            drive = {"name": "%s, logical drive %s" % (controller["name"], match.group(2)), "raid": None,
                     "state": None, "cache": None, "write_policy": None, "initial_write_cache": None,
                     "disk_cache_policy": controller.get("Drive Write Cache"), "os_drive": None,
                     "controller": controller}
            drives.append(drive)
        elif match and drive is not None:
            key, value = match.groups()
            field = {"Fault Tolerance": "raid", "Status": "state", "Caching": "cache", "Disk Name": "os_drive"}.get(key)
            if field:
                drive[field] = value
        elif match and match.group(1) in _SSACLI_CONTROLLER_KEYS:
            controller[match.group(1)] = match.group(2)
    for drive in drives:
        drive["write_policy"] = _ssacli_policy(drive.pop("controller"), drive["cache"])
    return drives


def summary(tools):
    """One line for reports: each tool found and what it says."""
    if not tools:
        return NO_TOOL
    parts = []
    for tool in tools:
        if tool.get("error"):
            parts.append("%s: %s" % (tool["name"], tool["error"]))
        elif not tool["virtual_drives"]:
            parts.append("%s: no virtual drives" % tool["name"])
        else:
            parts.append("%s: %s" % (tool["name"], ", ".join(
                "%s %s%s" % (vd["name"], vd["write_policy"] or vd["cache"] or "?",
                             " (%s)" % vd["os_drive"] if vd["os_drive"] else "")
                for vd in tool["virtual_drives"])))
    return "; ".join(parts)


def read(module, name, path, args):
    tool = {"name": name, "path": path, "error": None, "virtual_drives": []}
    rc, out, err = module.run_command([path] + args)
    try:
        if name == "ssacli":
            if rc != 0:
                raise ValueError(err.strip() or out.strip())
            tool["virtual_drives"] = parse_ssacli(out)
        else:
            tool["virtual_drives"] = parse_storcli(json.loads(out))
    except ValueError as exc:
        tool["error"] = "exit status %d: %s" % (rc, (str(exc) if out.strip() else err.strip())[-200:])
    return tool


def main():
    module = AnsibleModule(argument_spec=dict(), supports_check_mode=True)
    module.run_command_environ_update = {"LC_ALL": "C"}  # output is parsed
    tools = []
    for name, executables, args in TOOLS:
        path = next((p for p in (module.get_bin_path(e) for e in executables) if p), None)
        if path:
            tools.append(read(module, name, path, args))
    module.exit_json(changed=False, tools=tools, summary=summary(tools))


if __name__ == "__main__":
    main()
