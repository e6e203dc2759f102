#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: cephops.osd_tuning contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: nvme_namespace
short_description: Over-provision blank NVMe drives by making their namespace smaller
version_added: 0.1.0
description:
  - Deletes the namespace of each listed NVMe drive and creates it smaller, with the same LBA
    format, protection and sharing settings, attached to the same controller
    (C(nvme delete-ns), C(create-ns), C(attach-ns), C(ns-rescan)). The capacity given up stays
    unallocated in the controller, which then has more spare flash.
  - Takes every namespace of the host for this method in one call. Refuses, naming every
    check that failed, unless each disk is an NVMe namespace, blank by the checks of
    M(cephops.osd_tuning.disk_facts) (unless O(disks[].overwrite_data=true) lifts the
    reasons of its content checks), reached through one controller that supports namespace
    management (C(nvme id-ctrl) OACS bit 3) and attached to that controller alone, and
    O(erase=true) is set. One refused disk changes nothing on any disk.
  - The reserve is taken from the size the namespace had before the module first changed it,
    which O(record) keeps, so a second run changes nothing; a run with another reserve for a
    namespace the module made is refused.
  - A controller that advertises namespace management and then rejects C(nvme delete-ns)
    (QEMU's emulated controller does) leaves the namespace as it was, and the module says
    so. If the delete works but the smaller namespace cannot be created or attached, the
    module creates the namespace again at the size it had, so the drive is never left
    without one, and fails saying so.
  - nvme-cli is called with C(--output-format=json) and its prose is never parsed; the id of
    a new namespace is the one C(nvme list-ns --all) gains. After C(ns-rescan) and udev, the
    new namespace is read back (C(nvme id-ns)).
  - With O(restore=true), gives each recorded namespace that is blank its original size back
    the same way.
author:
  - cephops maintainers (@cephops)
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - cephops.osd_tuning.attributes
  - cephops.osd_tuning.overprovision
  - cephops.osd_tuning.content_check
  - cephops.osd_tuning.overprovision.nvme_namespace
options:
  erase:
    description:
      - Consent to delete each listed blank namespace and create it smaller, which erases it.
        Without it the module refuses every namespace it would change. A restore needs no
        consent.
    type: bool
    default: false
  record:
    description:
      - JSON file that keeps, per namespace (by WWN, else serial, else kernel name), the size
        it had before the module first changed it and the size it made, so a second run
        changes nothing and O(restore) can put the original size back.
    type: path
    required: true
notes:
  - Must run as root. Needs C(nvme) (nvme-cli) and, when present, C(udevadm).
  - O(disks[].reserve_percent) may be 1-50; the new size is rounded down to a whole MiB.
  - The namespace gets a new identity (EUI-64, NGUID) and may get a new kernel name; the
    record follows it. Select NVMe disks by serial or by-id link rather than kernel name.
  - The success path has not run against a controller that carries namespace management
    out; try it on one drive first. M(cephops.osd_tuning.overprovision_partition) works on
    any NVMe drive.
seealso:
  - module: cephops.osd_tuning.disk_facts
  - module: cephops.osd_tuning.overprovision_partition
  - module: cephops.osd_tuning.ata_hpa
  - name: nvme-create-ns(1)
    description: Creating a namespace; see also nvme-delete-ns(1) and nvme-attach-ns(1).
    link: https://github.com/linux-nvme/nvme-cli/blob/master/Documentation/nvme-create-ns.txt
"""

EXAMPLES = r"""
- name: Leave 20 % of a blank NVMe drive to its controller
  cephops.osd_tuning.nvme_namespace:
    disks:
      - serial: S64FNE0R123456
    erase: true
    record: /var/lib/cephops-osd-tuning/nvme_namespace.json

- name: Give every recorded namespace its size back (each must be blank)
  cephops.osd_tuning.nvme_namespace:
    restore: true
    record: /var/lib/cephops-osd-tuning/nvme_namespace.json
"""

RETURN = r"""
actions:
  description:
    - Commands run, or planned in check mode, for every disk. In check mode the new
      namespace's id is not known yet and shows as V(NEW).
  returned: always
  type: list
  elements: str
  sample: ["nvme delete-ns /dev/nvme0 --namespace-id=1",
           "nvme create-ns /dev/nvme0 --nsze=1500289024 --ncap=1500289024 --flbas=0 --dps=0 --nmic=0",
           "nvme attach-ns /dev/nvme0 --namespace-id=NEW --controllers=6", "nvme ns-rescan /dev/nvme0",
           "udevadm settle --timeout=60"]
disks:
  description: One result per disk, in the order of O(disks) (of the record with O(restore)).
  returned: always
  type: list
  elements: dict
  contains:
    device:
      description: The namespace's device node before the module ran.
      type: str
      sample: /dev/nvme0n1
    serial:
      description: Serial number of the drive.
      type: str
    wwn:
      description: World wide name of the namespace, or null.
      type: str
    changed:
      description: The namespace was replaced, or would be in check mode.
      type: bool
    checks:
      description: Every safety check that refused the disk; empty when none did.
      type: list
      elements: str
      sample: ["not an NVMe namespace (transport loop)"]
    actions:
      description: Commands run on this disk, or planned in check mode.
      type: list
      elements: str
    controller:
      description: The controller the namespace is reached through.
      type: str
      sample: /dev/nvme0
    nsid:
      description: The namespace id, of the new namespace once it was made.
      type: int
      sample: 1
    block_size:
      description: The namespace's block size (its formatted LBA size), in bytes.
      type: int
      sample: 512
    nsze_before:
      description: Size of the namespace before the module ran, in blocks.
      type: int
      sample: 1875385008
    nsze:
      description: Size of the namespace after the module ran (read back), or planned in check mode, in blocks.
      type: int
      sample: 1500289024
    namespace:
      description: The new namespace's device node, once it was made.
      type: str
      sample: /dev/nvme0n1
not_recorded:
  description: Disks of O(disks) the record does not hold, so O(restore) left them alone.
  returned: when restore=true and disks were listed
  type: list
  elements: str
missing:
  description: Disks in the record that are not present on the host (O(restore) only); they stay in the record.
  returned: when restore=true and no disks were listed
  type: list
  elements: str
"""

import os

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.cephops.osd_tuning.plugins.module_utils import blockdev, overprovision
from ansible_collections.cephops.osd_tuning.plugins.module_utils import nvme_namespace as nvme_utils
from ansible_collections.cephops.osd_tuning.plugins.module_utils.overprovision import Failed, Plan, Refused


class NvmeNamespace:
    """The nvme_namespace method of module_utils/overprovision.py."""

    name = "nvme_namespace"
    defaults = {}

    def __init__(self, module):
        self.module = module
        self.nvme = self.settle = None

    def run(self, argv):
        return self.module.run_command(argv)

    def check_entries(self, entries):
        return overprovision.check_reserve(entries, *nvme_utils.RESERVE_RANGE)

    def prepare(self):
        self.nvme = self.module.get_bin_path("nvme", required=True)
        udevadm = self.module.get_bin_path("udevadm")
        self.settle = [udevadm, "settle", "--timeout=60"] if udevadm else None

    def read(self, argv):
        rc, out, err = self.run(argv)
        if rc != 0:
            raise nvme_utils.NvmeError("nvme %s failed (%s)" % (argv[1], (err or out).strip() or "exit status %d" % rc))
        return nvme_utils.parse(out, argv[1])

    def inspect(self, disk, block, entry):
        path = disk["path"]
        if disk["transport"] != "nvme":
            checks = ["not an NVMe namespace (transport %s)" % disk["transport"]]
            refusing = blockdev.blocking_reasons(disk, bool(entry and entry["overwrite_data"]))
            if refusing:
                checks.append("the namespace is not blank: " + ", ".join(refusing))
            raise Refused("%s: %s; refused, nvme was not run" % (path, "; ".join(checks)), checks)
        try:
            controller = "/dev/" + nvme_utils.controller_of(disk["name"])
            nsid = nvme_utils.namespace_id(disk["name"])
            argvs = nvme_utils.read_argvs(self.nvme, controller, path, nsid)
            found = dict(controller_path=controller, nsid=nsid,
                         controller=nvme_utils.controller_info(self.read(argvs["id_ctrl"])),
                         namespace=nvme_utils.namespace_info(self.read(argvs["id_ns"])))
            # A private namespace (NMIC bit 0 clear) is attached to this controller alone; only a
            # shared one needs the controller list, which controllers outside a subsystem reject.
            found["attached"] = nvme_utils.controller_list(self.read(argvs["list_ctrl"])) \
                if found["namespace"]["nmic"] & nvme_utils.NMIC_SHARED else [found["controller"]["cntlid"]]
            return found
        except (nvme_utils.NvmeError, KeyError, IndexError, TypeError, ValueError) as exc:
            message = str(exc) if isinstance(exc, nvme_utils.NvmeError) else "nvme-cli's JSON lacks %s" % exc
            raise Refused("%s: %s; refused, nothing was changed" % (path, message), [message])

    def _plan(self, disk, state, planned, reserve_percent, overwrite_data):
        namespace, controller = state["namespace"], state["controller_path"]
        target = planned["target"]
        steps = nvme_utils.replace_argvs(self.nvme, controller, state["nsid"], state["controller"]["cntlid"],
                                         namespace, target) + [self.settle]
        return Plan(
            change=planned["change"], checks=planned["checks"],
            actions=[s for s in steps if s] if planned["change"] else [],
            before="%s: namespace %d of %s, %d blocks" % (disk["path"], state["nsid"], controller, namespace["nsze"]),
            after="%s: namespace of %s, %d blocks" % (disk["path"], controller, target),
            work=dict(overwrite_data=overwrite_data, target=target),
            controller=controller, nsid=state["nsid"], block_size=namespace["block_size"],
            nsze_before=namespace["nsze"], nsze=target if planned["change"] else namespace["nsze"],
            reserve_percent=reserve_percent)

    def plan(self, disk, state, entry, recorded):
        planned = nvme_utils.plan(disk, state, entry["reserve_percent"], self.module.params["erase"],
                                  entry["overwrite_data"], recorded)
        return self._plan(disk, state, planned, entry["reserve_percent"], entry["overwrite_data"])

    def plan_restore(self, disk, state, recorded):
        return self._plan(disk, state, nvme_utils.plan_restore(disk, state, recorded), None, False)

    def refusal(self, disk, checks, restoring):
        return "%s: %s; refused, nothing was changed" % (disk["path"], "; ".join(checks))

    def apply(self, disk, state, plan):
        work, controller = plan["work"], state["controller_path"]
        if disk["data_reasons"] and work["overwrite_data"]:
            self.module.warn("%s: overwrite_data is set, deleting the namespace destroys what the content checks "
                             "found: %s" % (disk["path"], ", ".join(disk["data_reasons"])))
        try:
            nsid = nvme_utils.replace(self.run, self.nvme, controller, state["nsid"], state["controller"]["cntlid"],
                                      state["namespace"], work["target"], disk["path"])
        except nvme_utils.NvmeError as exc:
            raise Failed(str(exc), changed=exc.changed)
        if self.settle:
            self.run(self.settle)
        made = "%s: namespace %d was made with %d blocks" % (controller, nsid, work["target"])
        try:
            nsze = nvme_utils.namespace_info(self.read([self.nvme, "id-ns", controller, "--namespace-id=%d" % nsid,
                                                        "--output-format=json"]))["nsze"]
        except (nvme_utils.NvmeError, KeyError, IndexError, TypeError, ValueError) as exc:
            raise Failed("%s, but reading it back failed (%s)" % (made, exc), changed=True)
        if nsze != work["target"]:
            raise Failed("%s, but it reads back with %d blocks" % (made, nsze), changed=True)
        name = nvme_utils.block_device(controller[len("/dev/"):], nsid, sorted(os.listdir(nvme_utils.SYS_BLOCK)))
        if name is None:
            raise Failed("%s, but the kernel shows no block device for it after ns-rescan" % made, changed=True)
        return dict(name=name, namespace="/dev/" + name, nsid=nsid, nsze=nsze)

    def record_entry(self, disk, plan, applied, recorded):
        fields = plan["fields"]
        # The new namespace has a new identity (EUI-64, NGUID) and maybe a new kernel name.
        namespace = dict(disk, path=applied["namespace"], **blockdev.identity(os.path.basename(applied["namespace"])))
        return overprovision.record_entry(
            self.name, namespace, controller=fields["controller"],
            reserve_percent=fields["reserve_percent"], block_size=fields["block_size"],
            # The first original stays: the size the namespace had before the module ever changed it.
            nsze_before=(recorded or fields)["nsze_before"], nsze=applied["nsze"])


def main():
    module = AnsibleModule(
        argument_spec=overprovision.argument_spec(record_required=True),
        supports_check_mode=True,
    )
    overprovision.run(module, NvmeNamespace(module))


if __name__ == "__main__":
    main()
