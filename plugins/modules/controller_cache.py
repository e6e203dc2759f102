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

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.cephops.osd_tuning.plugins.module_utils import controller_cache


def read(module, name, path, args):
    tool = {"name": name, "path": path, "error": None, "virtual_drives": []}
    rc, out, err = module.run_command([path] + args)
    try:
        if name == "ssacli":
            if rc != 0:
                raise ValueError(err.strip() or out.strip())
            tool["virtual_drives"] = controller_cache.parse_ssacli(out)
        else:
            tool["virtual_drives"] = controller_cache.parse_storcli(json.loads(out))
    except ValueError as exc:
        tool["error"] = "exit status %d: %s" % (rc, (str(exc) if out.strip() else err.strip())[-200:])
    return tool


def main():
    module = AnsibleModule(argument_spec=dict(), supports_check_mode=True)
    module.run_command_environ_update = {"LC_ALL": "C"}  # output is parsed
    tools = []
    for name, executables, args in controller_cache.TOOLS:
        path = next((p for p in (module.get_bin_path(e) for e in executables) if p), None)
        if path:
            tools.append(read(module, name, path, args))
    module.exit_json(changed=False, tools=tools, summary=controller_cache.summary(tools))


if __name__ == "__main__":
    main()
