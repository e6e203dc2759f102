# -*- coding: utf-8 -*-
# Copyright: cephops.osd_tuning contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
name: gate_report
short_description: Render the disk gate's fleet report as JSON, JUnit, Markdown, HTML, cephadm spec or text
version_added: 0.1.0
description:
  - Takes every host's record from P(cephops.osd_tuning.gate_host#filter), in the order of
    O(hosts); a host without a record (unreachable, or failed before the gate finished) is
    listed as not passed.
  - V(json) is the whole document; V(junit) has one test suite per host and one test case per
    disk, blocked disks failing; V(markdown) one table; V(html) a page with an inline SVG chart
    per host (sync IOPS against the thresholds and reference drives from the published articles
    behind the defaults);
    V(cephadm_spec) OSD service specs of the hosts that passed (under the exclude policy, of
    the disks handed to ceph-osd), laid out as gated (C(data_devices), C(db_devices),
    C(wal_devices) paths, by-id or WWN links); V(table) the plain-text tables.
  - Every format also shows the fleet per model and firmware (C(models) in V(json)) - each
    group's median and median absolute deviation of sync IOPS and p99 latency, the disks far
    from them (flagged, not blocked) and models that run more than one firmware; in V(junit)
    on the test cases of the disks concerned, in V(cephadm_spec) as comments.
  - Everything taken from hardware (models, serials, device names) is escaped for the format.
author:
  - cephops maintainers (@cephops)
positional: output_format, hosts, settings, generated_at
options:
  _input:
    description: Host records, one per host in O(hosts) (null for a host without one).
    type: list
    elements: dict
    required: true
  output_format:
    description: The document to build.
    type: str
    choices: [json, junit, markdown, html, cephadm_spec, table]
    required: true
  hosts:
    description: Every host of the play, in order.
    type: list
    elements: str
    required: true
  settings:
    description: Shown in the report; C(thresholds) per disk class (C(flash), C(hdd)) draw the
      chart's limits, C(cephadm_service_id) prefixes the service ids.
    type: dict
    default: {}
  generated_at:
    description: Time stamp printed in the report.
    type: str
"""

EXAMPLES = r"""
- name: Write the JUnit report
  ansible.builtin.copy:
    dest: /srv/reports/disk_gate.xml
    content: >-
      {{ ansible_play_hosts_all | map('extract', hostvars) | map(attribute='disk_gate_result', default=none)
         | cephops.osd_tuning.gate_report('junit', ansible_play_hosts_all) }}
    mode: "0644"
  delegate_to: localhost
  run_once: true
"""

RETURN = r"""
_value:
  description: The document as text.
  type: str
"""

from ansible.errors import AnsibleFilterError
from ansible_collections.cephops.osd_tuning.plugins.plugin_utils import gate_decision
from ansible_collections.cephops.osd_tuning.plugins.plugin_utils import gate_report as report


def gate_report(records, output_format, hosts, settings=None, generated_at=None):
    if output_format not in report.BUILDERS:
        raise AnsibleFilterError("gate_report: unknown format %s (one of %s)"
                                 % (output_format, ", ".join(sorted(report.BUILDERS))))
    document = gate_decision.fleet_document(hosts, records, settings or {}, generated_at)
    return report.BUILDERS[output_format](document)


class FilterModule(object):
    def filters(self):
        return {"gate_report": gate_report}
