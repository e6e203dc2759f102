#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: cephops.osd_tuning contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: modules_load
short_description: Load kernel modules now and at every boot through one modules-load.d file, recorded for rollback
version_added: 0.1.0
description:
  - Owns one file under C(/etc/modules-load.d/) that lists kernel modules for
    systemd-modules-load to load at every boot, and loads those modules now with C(modprobe).
  - The file is written only on a real change, atomically, after a backup; a record keeps what
    it replaced (no file, as a rule) so O(restore) can put that back.
  - community.general.modprobe's C(persistent) writes C(<module>.conf) with no record of what
    was there before, so a rollback cannot tell its own file from the administrator's.
author:
  - cephops maintainers (@cephops)
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - cephops.osd_tuning.attributes
  - cephops.osd_tuning.managed_file
options:
  path:
    description: The file, usually C(/etc/modules-load.d/<name>.conf).
    type: path
    required: true
  modules:
    description: Kernel module names (letters, digits, C(_) and C(-)), one line each in the file.
    type: list
    elements: str
    default: []
  load:
    description:
      - With O(state=present), load each module of O(modules) now that C(/proc/modules) does
        not list. A kernel without loadable module support (no C(/proc/modules)) has everything
        it offers built in, so nothing is loaded there.
      - Modules are never unloaded, also not by O(restore) or O(state=absent).
    type: bool
    default: true
seealso:
  - module: community.general.modprobe
"""

EXAMPLES = r"""
- name: Load bfq now and at every boot
  cephops.osd_tuning.modules_load:
    path: /etc/modules-load.d/cephops-io-scheduler.conf
    modules: [bfq]
    owner: role cephops.osd_tuning.io_scheduler
    record: /var/lib/cephops-osd-tuning/io_scheduler-modules.json

- name: Put back what was there before
  cephops.osd_tuning.modules_load:
    path: /etc/modules-load.d/cephops-io-scheduler.conf
    restore: true
    record: /var/lib/cephops-osd-tuning/io_scheduler-modules.json
"""

RETURN = r"""
path:
  description: The file.
  returned: always
  type: str
content:
  description: The file's content as the module wants it (empty when it wants no file).
  returned: always
  type: str
backup_file:
  description: The copy of the previous file.
  returned: when a file without the module's header was replaced or removed and O(backup=true)
  type: str
loaded:
  description: Modules loaded now (in check mode, those that would be).
  returned: always
  type: list
  elements: str
"""

import re

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.cephops.osd_tuning.plugins.module_utils import blockdev, records

PROC_MODULES = "/proc/modules"
MODULE_NAME = re.compile(r"^[A-Za-z0-9_-]+$")


def _missing(names):
    """Modules of ``names`` the kernel has not loaded; none on a kernel without loadable modules."""
    text = blockdev.read_file(PROC_MODULES)
    if text is None:
        return []
    loaded = set(line.split(" ", 1)[0] for line in text.splitlines())
    return [name for name in names if name.replace("-", "_") not in loaded]


def _load(module, names):
    modprobe = module.get_bin_path("modprobe", required=True)
    for name in names:
        rc, out, err = module.run_command([modprobe, "--", name])
        if rc != 0:
            module.fail_json(msg="modprobe %s failed: %s" % (name, (err or out).strip()))
    # A built-in module on a modular kernel loads nothing: only what appeared is a change.
    return [name for name in names if name not in _missing(names)]


def main():
    module = AnsibleModule(
        argument_spec=dict(
            path=dict(type="path", required=True),
            modules=dict(type="list", elements="str", default=[]),
            load=dict(type="bool", default=True),
            **records.ARGUMENT_SPEC
        ),
        required_if=records.REQUIRED_IF,
        supports_check_mode=True,
    )
    module.run_command_environ_update = {"LC_ALL": "C"}
    path, params = module.params["path"], module.params
    refused = [name for name in params["modules"] if not MODULE_NAME.match(name)]
    if refused:
        module.fail_json(msg="not kernel module names, nothing written: %s" % ", ".join(refused))
    record = records.load_record(module)
    current = blockdev.read_file(path)
    if params["restore"]:
        wanted = records.restored(record, path, current)
    elif params["state"] == "present":
        header = "# " + records.HEADER % params["owner"] + "\n"
        wanted = header + "".join(name + "\n" for name in params["modules"])
    else:
        wanted = None
    changed = current != wanted
    result = dict(path=path, content=wanted or "", loaded=[],
                  diff=dict(before=current or "", after=wanted or "", before_header=path, after_header=path))
    if changed and not module.check_mode:
        if record is not None and not params["restore"]:
            records.remember(module, params["record"], record, path, current)
        backup = records.install(module, path, wanted, ".conf")[1] if wanted is not None \
            else records.remove(module, path)
        if backup:
            result["backup_file"] = backup
    if params["restore"] and not module.check_mode:
        records.forget(module, params["record"], record, path)
    if params["state"] == "present" and params["load"] and not params["restore"]:
        missing = _missing(params["modules"])
        result["loaded"] = missing if module.check_mode else (_load(module, missing) if missing else [])
        changed = changed or bool(result["loaded"])
    result["changed"] = changed
    module.exit_json(**result)


if __name__ == "__main__":
    main()
