# -*- coding: utf-8 -*-
# Copyright: cephops.osd_tuning contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Names of disks, mapped to the disks of a disk_facts inventory.

disk_facts resolved every name a disk has on the host (its device node and its
/dev/disk/by-* links, ``links``), so a name given by a user is looked up there, as
ceph-ansible resolves devices with ``readlink -f``, without another look at the host.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


def dev_path(spec):
    """/dev path of a kernel name, a path unchanged."""
    return spec if spec.startswith("/") else "/dev/" + spec


def by_name(disks):
    """{every name of every disk: the disk}."""
    return dict((link, disk) for disk in disks for link in disk["links"])


def resolve(disks, names):
    """The device node of the disk each name (kernel name, path or link) is a name of; a name
    no disk has stays as given, as a /dev path, so that the module it reaches reports it."""
    index = by_name(disks)
    return [index[dev_path(name)]["path"] if dev_path(name) in index else dev_path(name) for name in names]


BY_ID = "/dev/disk/by-id/"


def stable_path(given, links, device):
    """The name a disk keeps across reboots and controller changes: the by-id link the user
    gave, else its WWN link, else another by-id link, else its device node."""
    for names, prefix in ((given, BY_ID), (links, BY_ID + "wwn-"), (links, BY_ID)):
        found = [name for name in names if name.startswith(prefix)]
        if found:
            return found[0]
    return device
