# -*- coding: utf-8 -*-
# Copyright: cephops.osd_tuning contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.cephops.osd_tuning.plugins.module_utils.blockdev import resolve_in_inventory
from ansible_collections.cephops.osd_tuning.plugins.plugin_utils import ceph_ansible, gate_decision

# The disk gate's filters of one host: before the probe its plan (gate_plan: the candidates and
# the one probe job; gate_candidates: the candidates alone), after it the host's record
# (gate_host). The fleet's report of every host's record is gate_report. Each is documented in
# the YAML file of its name beside this one: ansible-doc reads a filter's documentation there
# when its Python file holds several filters.


def gate_candidates(disks, variables, explicit=None, part_classes=None):
    return ceph_ansible.candidates(disks, variables, explicit, part_classes or ())


def gate_plan(disks, variables, explicit=None, part_classes=None, hdd_policy="probe", overwrite=None):
    candidates = ceph_ansible.candidates(disks, variables, explicit, part_classes or ())
    present = [candidate for candidate in candidates if candidate["probe"]]
    written = [candidate for candidate in present if hdd_policy == "probe" or candidate["thresholds_class"] != "hdd"]
    devices = [candidate["device"] for candidate in written]
    health_devices = [candidate["device"] for candidate in present]
    overwrite = resolve_in_inventory(disks, overwrite or [])
    return {
        "candidates": candidates,
        "devices": devices,
        "device_classes": dict((candidate["device"], candidate["thresholds_class"]) for candidate in written),
        "overwrite_data": [device for device in overwrite if device in devices],
        "health_devices": health_devices,
        "not_candidates": [device for device in overwrite if device not in health_devices],
    }


def gate_host(gathered, host, settings):
    return gate_decision.host_record(host, gathered["candidates"], gathered.get("started") or {},
                                     gathered.get("finished") or {}, settings, gathered.get("health"),
                                     gathered.get("controllers"))


class FilterModule(object):
    def filters(self):
        return {
            "gate_candidates": gate_candidates,
            "gate_plan": gate_plan,
            "gate_host": gate_host,
        }
