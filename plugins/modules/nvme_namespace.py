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

import json
import os
import re

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.cephops.osd_tuning.plugins.module_utils import blockdev, overprovision
from ansible_collections.cephops.osd_tuning.plugins.module_utils.overprovision import Failed, MIB, Plan, Refused, reserved_size
from ansible_collections.cephops.osd_tuning.plugins.module_utils.blockdev import blocking_reasons, read_value


# Over-provisioning by NVMe namespace: nvme-cli's JSON, the plan, and the replacement of a
# namespace by a smaller one with its way back.
#
# nvme-cli is always called with ``--output-format=json`` where it has one (id-ctrl, id-ns,
# list-ns, list-ctrl) and its prose is never parsed: create-ns prints the new namespace id only
# as text, so the new id is the one ``list-ns --all`` gains. delete-ns, attach-ns and ns-rescan
# tell success by their exit status; their messages are passed on as they are.
SYS_BLOCK = "/sys/block"
# id-ctrl OACS bit 3: the controller supports the Namespace Management and Attachment commands.
OACS_NS_MANAGEMENT = 0x08
# id-ns NMIC bit 0: the namespace may be attached to two or more controllers.
NMIC_SHARED = 0x01
RESERVE_RANGE = (1, 50)
_CONTROLLER = re.compile(r"nvme\d+$")


class NvmeError(Exception):
    """nvme-cli or sysfs gave no usable answer, or a command failed; ``changed`` says
    whether the namespace was touched before the failure."""

    def __init__(self, message, changed=False):
        super(NvmeError, self).__init__(message)
        self.changed = changed


# --------------------------------------------------------------------------- reading


def controller_of(name):
    """Kernel name of the one controller (``nvme0``) a namespace block device is reached
    through. With native NVMe multipath the block device belongs to the subsystem, which
    lists its controllers; a namespace reached through several is not managed here."""
    device = os.path.realpath(os.path.join(SYS_BLOCK, name, "device"))
    base = os.path.basename(device)
    if _CONTROLLER.match(base):
        return base
    if base.startswith("nvme-subsys"):
        try:
            controllers = sorted(c for c in os.listdir(device) if _CONTROLLER.match(c))
        except OSError:
            controllers = []
        if len(controllers) == 1:
            return controllers[0]
        raise NvmeError("the namespace is reached through %s controllers of %s (%s); only a namespace of one "
                        "controller is changed" % (len(controllers) or "no", base, ", ".join(controllers)))
    raise NvmeError("no NVMe controller found for %s (its device is %s)" % (name, device))


def namespace_id(name):
    """The namespace id of a namespace block device, from sysfs."""
    value = read_value(os.path.join(SYS_BLOCK, name, "nsid"))
    if not value or not value.isdigit():
        raise NvmeError("no namespace id in %s" % os.path.join(SYS_BLOCK, name, "nsid"))
    return int(value)


def block_device(controller, nsid, names):
    """The kernel name among ``names`` of namespace ``nsid`` of ``controller``, or None."""
    for name in names:
        if not name.startswith("nvme"):
            continue
        try:
            if controller_of(name) == controller and namespace_id(name) == nsid:
                return name
        except NvmeError:
            continue
    return None


def parse(text, command):
    """The JSON object nvme-cli printed for ``command``."""
    try:
        found = json.loads(text)
    except ValueError:
        raise NvmeError("nvme %s printed no JSON: %s" % (command, (text or "nothing").strip()[:200]))
    if not isinstance(found, dict):
        raise NvmeError("nvme %s printed no JSON object" % command)
    return found


def controller_info(id_ctrl):
    """What namespace management needs from ``nvme id-ctrl --output-format=json``."""
    return dict(cntlid=int(id_ctrl["cntlid"]), manageable=bool(int(id_ctrl["oacs"]) & OACS_NS_MANAGEMENT),
                serial=(id_ctrl.get("sn") or "").strip(), model=(id_ctrl.get("mn") or "").strip())


def format_index(flbas):
    """The LBA format in use: FLBAS bits 3:0, and bits 6:5 above them (NVMe 2.0, more than
    16 formats); bit 4 says where metadata goes and is no part of the index."""
    return (flbas & 0x0F) | ((flbas & 0x60) >> 1)


def namespace_info(id_ns):
    """What a namespace is made of, from ``nvme id-ns --output-format=json``: its size in
    blocks (``nsze``), its formatted LBA size (``flbas``, passed to create-ns as it is, so
    the new namespace has the same format and metadata setting), the block size it means,
    and its sharing (``nmic``) and protection (``dps``) settings."""
    flbas = int(id_ns["flbas"])
    lbaf = id_ns["lbafs"][format_index(flbas)]
    return dict(nsze=int(id_ns["nsze"]), flbas=flbas, block_size=2 ** int(lbaf["ds"]),
                nmic=int(id_ns.get("nmic", 0)), dps=int(id_ns.get("dps", 0)))


def nsid_list(list_ns):
    """Namespace ids from ``nvme list-ns --all --output-format=json``."""
    return sorted(int(entry["nsid"]) for entry in list_ns.get("nsid_list", []))


def controller_list(list_ctrl):
    """Controller ids from ``nvme list-ctrl --namespace-id=N --output-format=json``."""
    return sorted(int(entry["ctrl_id"]) for entry in list_ctrl.get("ctrl_list", []))


# --------------------------------------------------------------------------- planning

def target_blocks(nsze, reserve_percent, block_size):
    """Blocks of the smaller namespace: ``nsze`` less the reserve, in whole MiB."""
    return reserved_size(nsze, reserve_percent, max(1, MIB // block_size))


def _checks(disk, state, overwrite_data, erase):
    checks = []
    refusing = blocking_reasons(disk, overwrite_data)
    if refusing:
        checks.append("the namespace is not blank: " + ", ".join(refusing))
    if not state["controller"]["manageable"]:
        checks.append("the controller does not support namespace management (nvme id-ctrl OACS bit 3, Namespace "
                      "Management and Attachment, is clear); use the partition method for %s" % disk["path"])
    others = [c for c in state["attached"] if c != state["controller"]["cntlid"]]
    if others:
        checks.append("the namespace is attached to other controllers too (%s); only a namespace of this "
                      "controller alone is changed" % ", ".join("cntlid %d" % c for c in others))
    if erase is False:
        checks.append("erase=true is required: the namespace is deleted and created smaller, which erases it")
    return checks


def plan(disk, state, reserve_percent, erase, overwrite_data, recorded):
    """What to do with the namespace ``disk`` (a disk_facts record) whose nvme-cli ``state``
    is a dict of ``namespace`` (namespace_info), ``controller`` (controller_info) and
    ``attached`` (controller ids).

    The reserve is taken from the size the namespace had before the module first changed it
    (the record), so a second run does not shrink it again. Returns a dict with ``target``
    (blocks), ``change`` and ``checks``.
    """
    nsze = state["namespace"]["nsze"]
    base = recorded["nsze_before"] if recorded else nsze
    target = target_blocks(base, reserve_percent, state["namespace"]["block_size"])
    if recorded and nsze == recorded["nsze"]:
        checks = []
        if target != nsze:
            checks.append("the namespace was made for a reserve of %s %%, not %s %%; restore it first, while the "
                          "namespace is empty" % (recorded["reserve_percent"], reserve_percent))
        return dict(target=target, change=False, checks=checks)
    if recorded:
        return dict(target=target, change=False, checks=[
            "the namespace has %d blocks, neither the %d the record holds nor its original %d: it was changed "
            "by other means" % (nsze, recorded["nsze"], recorded["nsze_before"])])
    return dict(target=target, change=target != nsze, checks=_checks(disk, state, overwrite_data, erase)
                if target != nsze else [])


def plan_restore(disk, state, recorded):
    """Whether the namespace can get its original size back: only when it has the size the
    module made and is blank; one of the original size needs nothing."""
    nsze = state["namespace"]["nsze"]
    if nsze == recorded["nsze_before"]:
        return dict(target=nsze, change=False, checks=[])
    if nsze != recorded["nsze"]:
        return dict(target=recorded["nsze_before"], change=True, checks=[
            "the namespace has %d blocks, neither the %d the record holds nor its original %d: it was changed "
            "by other means" % (nsze, recorded["nsze"], recorded["nsze_before"])])
    return dict(target=recorded["nsze_before"], change=True, checks=_checks(disk, state, False, None))


# --------------------------------------------------------------------------- commands

def read_argvs(nvme, controller, namespace, nsid):
    """id-ctrl, id-ns and (for a shared namespace) list-ctrl: what ``state`` is read from."""
    return dict(
        id_ctrl=[nvme, "id-ctrl", controller, "--output-format=json"],
        id_ns=[nvme, "id-ns", namespace, "--output-format=json"],
        list_ctrl=[nvme, "list-ctrl", controller, "--namespace-id=%d" % nsid, "--output-format=json"],
    )


def replace_argvs(nvme, controller, nsid, cntlid, namespace, target):
    """The commands that replace namespace ``nsid`` by one of ``target`` blocks, as planned
    (``NEW`` stands for the id the controller gives the new namespace)."""
    return [[nvme, "delete-ns", controller, "--namespace-id=%d" % nsid]] + \
        _create_argvs(nvme, controller, target, namespace, "NEW", cntlid) + [[nvme, "ns-rescan", controller]]


def _create_argvs(nvme, controller, blocks, namespace, nsid, cntlid):
    """create-ns with the format, protection and sharing of the namespace it replaces, and
    attach-ns to this controller."""
    create = [nvme, "create-ns", controller, "--nsze=%d" % blocks, "--ncap=%d" % blocks,
              "--flbas=%d" % namespace["flbas"], "--dps=%d" % namespace["dps"], "--nmic=%d" % namespace["nmic"]]
    attach = [nvme, "attach-ns", controller, "--namespace-id=%s" % nsid, "--controllers=%d" % cntlid]
    return [create, attach]


def _failure(rc, out, err):
    return (err or out or "").strip() or "exit status %d" % rc


def _create(run, nvme, controller, blocks, namespace, cntlid):
    """Create a namespace of ``blocks`` and attach it to this controller; returns its id.
    One that was created but could not be attached is deleted again, so it does not hold the
    capacity a put-back needs."""
    listed = [nvme, "list-ns", controller, "--all", "--output-format=json"]
    rc, out, err = run(listed)
    if rc != 0:
        raise NvmeError("nvme list-ns failed (%s)" % _failure(rc, out, err))
    before = nsid_list(parse(out, "list-ns"))
    create = _create_argvs(nvme, controller, blocks, namespace, 0, cntlid)[0]
    rc, out, err = run(create)
    if rc != 0:
        raise NvmeError("nvme create-ns failed (%s)" % _failure(rc, out, err))
    rc, out, err = run(listed)
    new = [n for n in nsid_list(parse(out, "list-ns")) if n not in before] if rc == 0 else []
    if len(new) != 1:
        raise NvmeError("nvme create-ns succeeded but list-ns shows %s new namespace ids (%s)"
                        % (len(new) or "no", ", ".join(str(n) for n in new) or _failure(rc, out, err)))
    attach = _create_argvs(nvme, controller, blocks, namespace, new[0], cntlid)[1]
    rc, out, err = run(attach)
    if rc != 0:
        run([nvme, "delete-ns", controller, "--namespace-id=%d" % new[0]])
        raise NvmeError("nvme attach-ns failed (%s)" % _failure(rc, out, err))
    return new[0]


def replace(run, nvme, controller, nsid, cntlid, namespace, target, path):
    """Replace namespace ``nsid`` (``namespace``: namespace_info) of ``controller`` by one of
    ``target`` blocks attached to controller ``cntlid``; returns the new namespace id.

    ``run(argv)`` returns (rc, stdout, stderr). A controller can advertise namespace
    management and still reject it, as QEMU's does: a refused delete changed nothing and says
    so. A failure after the delete puts the namespace back at the size it had, so the drive
    is never left without one; NvmeError says what happened, with ``changed`` set once the
    delete went through.
    """
    rc, out, err = run([nvme, "delete-ns", controller, "--namespace-id=%d" % nsid])
    if rc != 0:
        raise NvmeError("%s: the controller refused to delete namespace %d (%s), so nothing changed on %s. It "
                        "advertises namespace management (OACS bit 3) but does not carry it out; use the partition "
                        "method for this disk." % (controller, nsid, _failure(rc, out, err), path))
    try:
        new = _create(run, nvme, controller, target, namespace, cntlid)
    except NvmeError as exc:
        try:
            _create(run, nvme, controller, namespace["nsze"], namespace, cntlid)
        except NvmeError as again:
            raise NvmeError(
                "%s: creating the namespace with %d blocks failed (%s), and putting it back with its earlier %d "
                "blocks failed too (%s): the controller has no namespace in place of %s. Create it by hand: %s, then "
                "nvme attach-ns %s --namespace-id=ID --controllers=%d" % (
                    controller, target, exc, namespace["nsze"], again, path,
                    " ".join(_create_argvs(nvme, controller, namespace["nsze"], namespace, 0, cntlid)[0]),
                    controller, cntlid), changed=True)
        run([nvme, "ns-rescan", controller])
        raise NvmeError("%s: creating the namespace with %d blocks failed (%s); the namespace was put back with its "
                        "earlier %d blocks, blank." % (controller, target, exc, namespace["nsze"]), changed=True)
    rc, out, err = run([nvme, "ns-rescan", controller])
    if rc != 0:
        raise NvmeError("%s: namespace %d of %d blocks was made, but nvme ns-rescan failed (%s)"
                        % (controller, new, target, _failure(rc, out, err)), changed=True)
    return new


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
        return overprovision.check_reserve(entries, *RESERVE_RANGE)

    def prepare(self):
        self.nvme = self.module.get_bin_path("nvme", required=True)
        udevadm = self.module.get_bin_path("udevadm")
        self.settle = [udevadm, "settle", "--timeout=60"] if udevadm else None

    def read(self, argv):
        rc, out, err = self.run(argv)
        if rc != 0:
            raise NvmeError("nvme %s failed (%s)" % (argv[1], (err or out).strip() or "exit status %d" % rc))
        return parse(out, argv[1])

    def inspect(self, disk, block, entry):
        path = disk["path"]
        if disk["transport"] != "nvme":
            checks = ["not an NVMe namespace (transport %s)" % disk["transport"]]
            refusing = blockdev.blocking_reasons(disk, bool(entry and entry["overwrite_data"]))
            if refusing:
                checks.append("the namespace is not blank: " + ", ".join(refusing))
            raise Refused("%s: %s; refused, nvme was not run" % (path, "; ".join(checks)), checks)
        try:
            controller = "/dev/" + controller_of(disk["name"])
            nsid = namespace_id(disk["name"])
            argvs = read_argvs(self.nvme, controller, path, nsid)
            found = dict(controller_path=controller, nsid=nsid,
                         controller=controller_info(self.read(argvs["id_ctrl"])),
                         namespace=namespace_info(self.read(argvs["id_ns"])))
            # A private namespace (NMIC bit 0 clear) is attached to this controller alone; only a
            # shared one needs the controller list, which controllers outside a subsystem reject.
            found["attached"] = controller_list(self.read(argvs["list_ctrl"])) \
                if found["namespace"]["nmic"] & NMIC_SHARED else [found["controller"]["cntlid"]]
            return found
        except (NvmeError, KeyError, IndexError, TypeError, ValueError) as exc:
            message = str(exc) if isinstance(exc, NvmeError) else "nvme-cli's JSON lacks %s" % exc
            raise Refused("%s: %s; refused, nothing was changed" % (path, message), [message])

    def _plan(self, disk, state, planned, reserve_percent, overwrite_data):
        namespace, controller = state["namespace"], state["controller_path"]
        target = planned["target"]
        steps = replace_argvs(self.nvme, controller, state["nsid"], state["controller"]["cntlid"],
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
        planned = plan(disk, state, entry["reserve_percent"], self.module.params["erase"],
                       entry["overwrite_data"], recorded)
        return self._plan(disk, state, planned, entry["reserve_percent"], entry["overwrite_data"])

    def plan_restore(self, disk, state, recorded):
        return self._plan(disk, state, plan_restore(disk, state, recorded), None, False)

    def refusal(self, disk, checks, restoring):
        return "%s: %s; refused, nothing was changed" % (disk["path"], "; ".join(checks))

    def apply(self, disk, state, plan):
        work, controller = plan["work"], state["controller_path"]
        if disk["data_reasons"] and work["overwrite_data"]:
            self.module.warn("%s: overwrite_data is set, deleting the namespace destroys what the content checks "
                             "found: %s" % (disk["path"], ", ".join(disk["data_reasons"])))
        try:
            nsid = replace(self.run, self.nvme, controller, state["nsid"], state["controller"]["cntlid"],
                           state["namespace"], work["target"], disk["path"])
        except NvmeError as exc:
            raise Failed(str(exc), changed=exc.changed)
        if self.settle:
            self.run(self.settle)
        made = "%s: namespace %d was made with %d blocks" % (controller, nsid, work["target"])
        try:
            nsze = namespace_info(self.read([self.nvme, "id-ns", controller, "--namespace-id=%d" % nsid,
                                                        "--output-format=json"]))["nsze"]
        except (NvmeError, KeyError, IndexError, TypeError, ValueError) as exc:
            raise Failed("%s, but reading it back failed (%s)" % (made, exc), changed=True)
        if nsze != work["target"]:
            raise Failed("%s, but it reads back with %d blocks" % (made, nsze), changed=True)
        name = block_device(controller[len("/dev/"):], nsid, sorted(os.listdir(SYS_BLOCK)))
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
