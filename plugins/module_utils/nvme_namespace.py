# -*- coding: utf-8 -*-
# Copyright: cephops.osd_tuning contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Over-provisioning by NVMe namespace: nvme-cli's JSON, the plan, and the replacement of a
namespace by a smaller one with its way back.

nvme-cli is always called with ``--output-format=json`` where it has one (id-ctrl, id-ns,
list-ns, list-ctrl) and its prose is never parsed: create-ns prints the new namespace id only
as text, so the new id is the one ``list-ns --all`` gains. delete-ns, attach-ns and ns-rescan
tell success by their exit status; their messages are passed on as they are.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import re

from ansible_collections.cephops.osd_tuning.plugins.module_utils.blockdev import blocking_reasons, read_value
from ansible_collections.cephops.osd_tuning.plugins.module_utils.overprovision import MIB, reserved_size

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
