# -*- coding: utf-8 -*-
# Copyright: cephops.osd_tuning contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
name: tuning_report
short_description: The tuning report of every host of the play, with the read figures before and after
version_added: 0.1.0
description:
  - Per host of O(hosts), per disk, each change the C(io_scheduler) and C(max_sectors_kb) roles
    made now (setting, value, where the value came from) with its read figures before and after
    (median of the runs with the slowest and fastest, from P(cephops.osd_tuning.read_figures#filter)).
  - A host without either role's result (unreachable, failed before them, or a run that left
    them out) is listed with status C(no_result).
author:
  - cephops maintainers (@cephops)
positional: hosts, generated_at
options:
  _input:
    description: C(hostvars).
    type: dict
    required: true
  hosts:
    description: Every host of the play, in order.
    type: list
    elements: str
    required: true
  generated_at:
    description: Time stamp written into the report.
    type: str
"""

EXAMPLES = r"""
- name: Write the tuning report
  ansible.builtin.copy:
    dest: /srv/reports/tuning.json
    content: "{{ hostvars | cephops.osd_tuning.tuning_report(ansible_play_hosts_all) | ansible.builtin.to_nice_json }}"
    mode: "0644"
  delegate_to: localhost
  run_once: true
"""

RETURN = r"""
_value:
  description:
    - C(generated_at), C(read_figures) (what the figures are), C(summary) (C(hosts),
      C(hosts_tuned), C(changes)) and C(hosts), per host C(host), C(status) (V(tuned) or
      V(no_result)), C(roles), C(reboot_required) and C(disks), per disk C(device) and
      C(changes), each with C(setting), C(value), C(source) and C(read) (C(before), C(after),
      C(change_percent), C(line); null when the read speed was not measured).
  type: dict
"""

from ansible_collections.cephops.osd_tuning.plugins.plugin_utils import tuning_report as report


def tuning_report(hostvars, hosts, generated_at=None):
    return report.build(hostvars, hosts, generated_at)


class FilterModule(object):
    def filters(self):
        return {"tuning_report": tuning_report}
