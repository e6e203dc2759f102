# -*- coding: utf-8 -*-
# Copyright: cephops.osd_tuning contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
name: gate_host
short_description: One host's disk gate decision from its candidates and probe job
version_added: 0.1.0
description:
  - Joins the candidates of P(cephops.osd_tuning.gate_candidates#filter) with the results of the
    host's asynchronous M(cephops.osd_tuning.sync_write_probe) job (one for all its disks, each
    judged by the thresholds of its class) and decides which disks are approved.
  - V(suitable) always passes, V(marginal) only with C(allow_marginal), a rotational disk under
    C(hdd_policy=skip) is V(skipped) and passes ungated. Fails closed; V(unsuitable), V(unhealthy),
    V(refused), V(error), every disk of a job that failed, timed out or lost its host, and a disk without a
    result are never approved. An LV or partition is V(not_probed) and passes ungated; a
    name not on the host is V(absent), skipped unless C(absent_policy) is V(block). With
    C(fail_closed) both are blocked.
  - Computes what ceph-osd receives under the exclude policy (C(handover)), an OSD whole or
    not at all.
author:
  - cephops maintainers (@cephops)
positional: host, settings
options:
  _input:
    description:
      - What the gate gathered on the host, by name - C(candidates) (the list of
        P(cephops.osd_tuning.gate_candidates#filter)), C(started) (the registered result of the
        async start task of the probe job, its C(results) in check mode, which runs the module
        without async; skipped when no disk was to be probed), C(finished) (the registered result
        of the async_status task that waited for the job, V({}) or skipped when there was none),
        C(health) and C(controllers).
      - C(health) is the registered result of M(cephops.osd_tuning.disk_health) for the host's
        disks. A disk whose health V(failed) is V(unhealthy) and never approved; one whose health
        is V(unknown) is V(unhealthy) only with C(health_required).
      - C(controllers) is the registered result of M(cephops.osd_tuning.controller_cache); its
        C(summary) goes into the record.
    type: dict
    required: true
  host:
    description: The host's inventory name.
    type: str
    required: true
  settings:
    description: C(allow_marginal), C(hdd_policy), C(absent_policy), C(fail_closed), C(health_required) and C(cephadm_host).
    type: dict
    required: true
"""

EXAMPLES = r"""
- name: Decide
  ansible.builtin.set_fact:
    record: >-
      {{ {'candidates': candidates, 'started': job, 'finished': done}
         | cephops.osd_tuning.gate_host(inventory_hostname, {'allow_marginal': false, 'hdd_policy': 'probe'}) }}
"""

RETURN = r"""
_value:
  description: C(host), C(status) (V(ok) or V(error)), C(errors), C(disks) (each candidate
    with its thresholds_class, verdict, reasons, IOPS, p99, cached, C(health) (C(status), C(reasons), C(notes), C(values)), C(decision) V(approved), V(blocked),
    V(pending) or V(absent), and C(approved) true, false or null), the device lists
    C(approved), C(blocked), C(pending), C(absent), C(handover) (the ceph-ansible variables
    ceph-osd receives under the exclude policy, C(lvm_volumes) as indexes of the entries that
    stay), C(dropped) (why approved disks or entries were dropped with others), C(devices)
    (C(handover.devices)), C(controllers) (the RAID controllers' write cache, one line) and C(passed).
  type: dict
"""

from ansible_collections.cephops.osd_tuning.plugins.plugin_utils import gate_decision


def gate_host(gathered, host, settings):
    return gate_decision.host_record(host, gathered["candidates"], gathered.get("started") or {},
                                     gathered.get("finished") or {}, settings, gathered.get("health"),
                                     gathered.get("controllers"))


class FilterModule(object):
    def filters(self):
        return {"gate_host": gate_host}
