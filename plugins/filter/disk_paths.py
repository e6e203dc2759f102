# -*- coding: utf-8 -*-
# Copyright: cephops.osd_tuning contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
name: disk_paths
short_description: The device node of each disk named by kernel name, path or /dev/disk/by-* link
version_added: 0.1.0
description:
  - Maps each name to the C(path) of the disk of M(cephops.osd_tuning.disk_facts) whose C(links)
    hold it, as ceph-ansible resolves devices with C(readlink -f), without another look at the
    host.
  - A name no disk of the inventory has comes back as given (a kernel name as its C(/dev) path),
    so that the module it is passed to reports it missing.
author:
  - cephops maintainers (@cephops)
positional: disks
options:
  _input:
    description: Names of disks.
    type: list
    elements: str
    required: true
  disks:
    description: The C(disks) list of M(cephops.osd_tuning.disk_facts).
    type: list
    elements: dict
    required: true
"""

EXAMPLES = r"""
- name: The disks named in overwrite_data, by device node
  ansible.builtin.set_fact:
    overwrite: "{{ ['/dev/disk/by-id/wwn-0x5002538e40a1b2c3', 'sdc'] | cephops.osd_tuning.disk_paths(inventory.disks) }}"
"""

RETURN = r"""
_value:
  description: One device node (or name as given) per name, in order.
  type: list
  elements: str
"""

from ansible_collections.cephops.osd_tuning.plugins.plugin_utils import disk_paths as paths_util


def disk_paths(names, disks):
    return paths_util.resolve(disks, names)


class FilterModule(object):
    def filters(self):
        return {"disk_paths": disk_paths}
