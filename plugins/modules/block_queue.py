#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: cephops.osd_tuning contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: block_queue
short_description: Set block queue attributes (scheduler, max_sectors_kb, ...) of many disks at runtime
version_added: 0.1.0
description:
  - Sets C(/sys/block/<disk>/queue/*) attributes of many disks in one call. It manages the I/O
    scheduler, C(max_sectors_kb), C(read_ahead_kb), C(nr_requests), C(rq_affinity), C(nomerges),
    C(add_random), C(wbt_lat_usec), and the active scheduler's tunables under C(iosched/)
    (for example mq-deadline C(fifo_batch), C(read_expire), C(write_expire), C(front_merges)).
  - Plans every disk before it writes to any. Bad input (a scheduler the disk does not offer,
    a queue whose scheduler cannot change, C(max_sectors_kb) outside the page size and
    C(max_hw_sectors_kb), a tunable of a scheduler that is not or will not be active, a
    non-integer value) fails with every reason and writes nothing.
  - Writes only what differs, the scheduler first (its tunables exist only once it is
    active). If the kernel refuses a write, the module stops and reports which writes were
    made and which were not.
  - Changes the kernel's runtime state only; the C(io_scheduler) and C(max_sectors_kb) roles
    keep it across reboots with udev rules.
  - No module of ansible.builtin, ansible.posix or community.general writes sysfs queue
    attributes with validation against what the disk offers.
author:
  - cephops maintainers (@cephops)
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - cephops.osd_tuning.attributes
options:
  devices:
    description:
      - Disks to set O(attributes) on, as kernel names, C(/dev) paths or C(/dev/disk/by-id) links
        (resolved once). Partitions are refused.
      - Mutually exclusive with O(queues).
    type: list
    elements: str
  attributes:
    description:
      - "Queue attribute to value, for example C({scheduler: none, max_sectors_kb: 64, iosched/fifo_batch: 1})."
      - Required with O(devices).
    type: dict
  queues:
    description:
      - Several groups of disks with their own attributes, applied in one call. A disk named in
        more than one group gets the attributes of all of them; a later group wins.
      - Mutually exclusive with O(devices).
    type: list
    elements: dict
    suboptions:
      devices:
        description: Disks of this group.
        type: list
        elements: str
        required: true
      attributes:
        description: Attributes of this group.
        type: dict
        required: true
  clamp:
    description:
      - When C(max_sectors_kb) lies outside [page size, C(max_hw_sectors_kb)] of a disk, use the
        nearest bound and warn instead of failing.
    type: bool
    default: false
  record:
    description:
      - A JSON file that keeps the value each attribute had before this collection first
        changed it, per disk (by WWN, else serial, else kernel name), so O(restore) can set it
        back. Later changes never overwrite an original already kept.
    type: path
  restore:
    description:
      - Set every disk in O(record) that is present back to its original values, then drop it
        from the record (the file goes once empty). Disks not present stay in the record.
      - Requires O(record); O(devices), O(attributes) and O(queues) are not used.
    type: bool
    default: false
attributes:
  check_mode:
    details: Reads and plans; writes nothing and returns the planned changes.
notes:
  - Must run as root.
seealso:
  - module: cephops.osd_tuning.disk_facts
"""

EXAMPLES = r"""
- name: SSDs without scheduler, 64 KiB requests
  cephops.osd_tuning.block_queue:
    devices: [sdb, /dev/disk/by-id/nvme-CEPHOPS_NVME_0001]
    attributes:
      scheduler: none
      max_sectors_kb: 64

- name: Set the schedulers, keeping the originals for a rollback
  cephops.osd_tuning.block_queue:
    devices: [sdb, sdc]
    attributes: {scheduler: none}
    record: /var/lib/cephops-osd-tuning/block_queue.json

- name: Roll back to the originals
  cephops.osd_tuning.block_queue:
    restore: true
    record: /var/lib/cephops-osd-tuning/block_queue.json

- name: Different settings per disk class, one call
  cephops.osd_tuning.block_queue:
    queues:
      - devices: [sdb, sdc]
        attributes: {scheduler: none}
      - devices: [sdd]
        attributes: {scheduler: mq-deadline, "iosched/fifo_batch": 1}
    clamp: true
"""

RETURN = r"""
disks:
  description: Per disk, the attributes the call manages with their values before and after.
  returned: always
  type: dict
  sample: {sdb: {scheduler: {before: mq-deadline, after: none}}}
actions:
  description: The writes made (or, in check mode, planned), one line each.
  returned: always
  type: list
  elements: str
  sample: ["sdb: scheduler mq-deadline -> none"]
missing:
  description: Disks in the record that are not present on the host (O(restore) only).
  returned: when restore=true
  type: list
  elements: str
applied:
  description: Writes made before a write failed (only on failure).
  returned: failure
  type: list
  elements: str
not_applied:
  description: Writes not made because an earlier write failed, the failed one first (only on failure).
  returned: failure
  type: list
  elements: str
"""

import os

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.cephops.osd_tuning.plugins.module_utils import blockdev, block_queue as queue_utils, records


def _groups(params):
    if params["queues"] is not None:
        return [(q["devices"], q["attributes"]) for q in params["queues"]]
    return [(params["devices"], params["attributes"])]


def _action(name, attr, before, after):
    return "%s: %s %s -> %s" % (name, attr, before if before is not None else "(new scheduler)", after)


def main():
    module = AnsibleModule(
        argument_spec=dict(
            devices=dict(type="list", elements="str"),
            attributes=dict(type="dict"),
            queues=dict(type="list", elements="dict", options=dict(
                devices=dict(type="list", elements="str", required=True),
                attributes=dict(type="dict", required=True),
            )),
            clamp=dict(type="bool", default=False),
            record=dict(type="path"),
            restore=dict(type="bool", default=False),
        ),
        mutually_exclusive=[("devices", "queues"), ("attributes", "queues"), ("restore", "devices"),
                            ("restore", "queues")],
        required_one_of=[("devices", "queues", "restore")],
        required_together=[("devices", "attributes")],
        required_if=[("restore", True, ("record",))],
        supports_check_mode=True,
    )
    record_path = module.params["record"]
    try:
        record = records.load(record_path, queue_utils.RECORD_SECTIONS) if record_path else None
    except records.RecordError as exc:
        module.fail_json(msg=str(exc))

    wanted, keys, missing = {}, {}, []
    if module.params["restore"]:
        present = dict((blockdev.identity_key(name), name) for name in sorted(os.listdir(queue_utils.SYS_BLOCK)))
        for key, entry in sorted(record["disks"].items()):
            if key in present:
                wanted[present[key]] = entry["attributes"]
                keys[present[key]] = key
            else:
                missing.append("%s (%s)" % (entry["name"], key))
    else:
        try:
            for specs, attributes in _groups(module.params):
                for name in blockdev.resolve_disks(specs):
                    wanted.setdefault(name, {}).update(attributes)
        except blockdev.DeviceError as exc:
            module.fail_json(msg=str(exc))

    page_kb = queue_utils.page_size_kb()
    plans, errors = {}, []
    for name in sorted(wanted):
        changes, warnings, disk_errors = queue_utils.plan_disk(
            name, queue_utils.read_queue(name), wanted[name], module.params["clamp"], page_kb)
        plans[name] = changes
        errors.extend(disk_errors)
        for warning in warnings:
            module.warn(warning)
    if errors:
        module.fail_json(msg="nothing written: " + "; ".join(errors), errors=errors)

    pending = [(name, attr, before, after) for name in sorted(plans) for attr, before, after in plans[name]]
    result = dict(changed=bool(pending), actions=[_action(*write) for write in pending])
    if module.params["restore"]:
        result["missing"] = missing
    if not module.check_mode:
        applied = []
        try:
            for index, (name, attr, before, after) in enumerate(pending):
                try:
                    queue_utils.write_attribute(name, attr, after)
                except (IOError, OSError) as exc:
                    module.fail_json(
                        msg="%s: writing %s=%s failed: %s" % (name, attr, after, exc.strerror or exc),
                        applied=[_action(*write) for write in applied],
                        not_applied=[_action(*write) for write in pending[index:]], changed=bool(applied))
                applied.append((name, attr, before, after))
        finally:
            if record is not None:
                _update_record(module, record_path, record, pending, applied, keys)
        for name in plans:
            _warn_on_kernel_rounding(module, name, plans[name])

    result["disks"] = dict(
        (name, dict((attr, dict(before=before, after=after)) for attr, before, after in plans[name]))
        for name in sorted(plans))
    result["diff"] = dict(
        before="".join("%s %s: %s\n" % (name, attr, before) for name, attr, before, after in pending),
        after="".join("%s %s: %s\n" % (name, attr, after) for name, attr, before, after in pending),
    )
    module.exit_json(**result)


def _update_record(module, path, record, pending, applied, restored_keys):
    """Keep the originals of what was written, or drop the disks a restore fully put back."""
    if module.params["restore"]:
        for name, key in restored_keys.items():
            if all(write in applied for write in pending if write[0] == name):
                record["disks"].pop(key)
    else:
        for name in sorted(set(write[0] for write in applied)):
            queue_utils.remember(record, blockdev.identity_key(name), name,
                                 [(attr, before, after) for n, attr, before, after in applied if n == name])
    records.save(module, path, record)


def _warn_on_kernel_rounding(module, name, changes):
    """The kernel may store another value (read_ahead_kb rounds to pages): say so, or the next run would not be idempotent."""
    if not changes:
        return
    state = queue_utils.read_queue(name)
    for attr, _before, after in changes:
        if attr == "scheduler":
            stored = blockdev.parse_scheduler(state.get("scheduler"))[0]
        elif attr.startswith(queue_utils.IOSCHED):
            stored = state["iosched"].get(attr[len(queue_utils.IOSCHED):])
        else:
            stored = state.get(attr)
        if stored != after:
            module.warn("%s: wrote %s=%s but the kernel holds %s" % (name, attr, after, stored))


if __name__ == "__main__":
    main()
