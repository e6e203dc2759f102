#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: cephops.osd_tuning contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: ata_hpa
short_description: Over-provision blank direct-attached SATA SSDs with a Host Protected Area
version_added: 0.1.0
description:
  - Reads the visible and native maximum sector counts of each ATA disk with C(hdparm -N) and
    parses every form hdparm prints (C(HPA is enabled/disabled), C(ACCESSIBLE MAX ADDRESS
    enabled/disabled), C(HPA setting seems invalid)).
  - Hides a share of each listed disk from the host permanently (ATA SET MAX ADDRESS,
    C(hdparm -N pCOUNT --yes-i-know-what-i-am-doing)), so the SSD has more spare area; with
    O(restore=true), sets each disk back to the size O(record) kept.
  - Takes every disk of the host for this method in one call. Refuses, naming every check
    that failed, unless each disk is a direct-attached ATA disk (transport C(sata) or C(ata),
    not behind USB, SAS or RAID) and blank by the checks of M(cephops.osd_tuning.disk_facts)
    (no partitions, signatures, holders, mounts, LVM, md, BlueStore label, and no data,
    partition entries or signatures its content checks find, unless
    O(disks[].overwrite_data=true)). A disk already at its target is left alone without
    these checks, because nothing is written. One refused disk changes nothing on any disk.
  - Before hiding sectors it discards the whole disk (C(blkdiscard)), which needs
    O(erase=true), because the spare area only helps when it holds no data. A disk that
    cannot discard is refused.
  - Waits for udev to settle before hdparm sends READ NATIVE MAX and SET MAX back to back
    (an open by udev in between makes the pair fail), then reads the state back. When the
    drive rejects the command the module fails and says that the HPA is unchanged.
  - Drives accept one permanent change per power cycle. The module notes each change in
    C(/run/cephops/ata_hpa) and refuses a second one on the same drive until the next boot.
    The kernel keeps the old size until the drive is power-cycled, hence
    RV(disks[].power_cycle_required).
author:
  - cephops maintainers (@cephops)
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - cephops.osd_tuning.attributes
  - cephops.osd_tuning.overprovision
  - cephops.osd_tuning.content_check
  - cephops.osd_tuning.overprovision.hpa
options:
  erase:
    description:
      - Discard the whole of each disk before hiding sectors. Required to shrink the visible
        size; the module never discards without it. Restoring a larger size needs no consent.
    type: bool
    default: false
  record:
    description:
      - JSON file that keeps, per disk (by WWN, else serial, else kernel name), the visible
        size the disk had before the module first changed it, so O(restore) can set it back.
        Required for O(restore).
    type: path
notes:
  - Must run as root. Needs C(hdparm), C(blkdiscard) and (when present) C(udevadm).
  - O(disks[].reserve_percent) may be 0-90; the visible size is rounded down to a whole MiB.
  - The kernel parameter C(libata.ignore_hpa=1) unlocks every HPA at boot; the module
    refuses to hide sectors while it is set.
  - SAS disks (C(sg_format --resize)), NVMe (M(cephops.osd_tuning.nvme_namespace)) and disks
    behind RAID controllers (M(cephops.osd_tuning.overprovision_partition)) need other
    methods; the role cephops.osd_tuning.overprovision chooses per disk.
seealso:
  - module: cephops.osd_tuning.disk_facts
  - module: cephops.osd_tuning.overprovision_partition
  - module: cephops.osd_tuning.nvme_namespace
  - name: hdparm(8)
    description: The C(-N) option and its C(p) prefix.
    link: https://man7.org/linux/man-pages/man8/hdparm.8.html
"""

EXAMPLES = r"""
- name: Hide 20 % of two blank SATA SSDs from the host
  cephops.osd_tuning.ata_hpa:
    disks:
      - device: /dev/disk/by-id/ata-CEPHOPS_SATA_SSD_870_PRO_3840GB_WITH_PLP_CEPHOPS-SSD-0001
      - serial: S4EWNX0R123456
        reserve_percent: 28
    erase: true
    record: /var/lib/cephops-osd-tuning/ata_hpa.json
  register: hpa

- name: Tell the operator to power-cycle the host
  ansible.builtin.debug:
    msg: "{{ item.device }} shows {{ item.visible_sectors }} sectors after a power cycle"
  loop: "{{ hpa.disks | selectattr('power_cycle_required') }}"

- name: Set every recorded disk back to its size before
  cephops.osd_tuning.ata_hpa:
    restore: true
    record: /var/lib/cephops-osd-tuning/ata_hpa.json
"""

RETURN = r"""
actions:
  description: Commands run, or planned in check mode, for every disk.
  returned: always
  type: list
  elements: str
  sample: ["blkdiscard /dev/sdb", "udevadm settle --timeout=60", "hdparm --yes-i-know-what-i-am-doing -N p1562820608 /dev/sdb"]
disks:
  description: One result per disk, in the order of O(disks) (of the record with O(restore)).
  returned: always
  type: list
  elements: dict
  contains:
    device:
      description: The disk's device node.
      type: str
      sample: /dev/sdb
    serial:
      description: Serial number of the disk.
      type: str
      sample: CEPHOPS-SSD-0001
    wwn:
      description: World wide name of the disk, or null.
      type: str
      sample: "0x5002538e40a1b2c3"
    changed:
      description: The disk was changed, or would be in check mode.
      type: bool
    checks:
      description: Every safety check that refused the disk; empty when none did.
      type: list
      elements: str
      sample: ["not a direct-attached ATA disk (transport loop)", "not blank: Has GPT headers"]
    actions:
      description: Commands run on this disk, or planned in check mode.
      type: list
      elements: str
    native_sectors:
      description: Native maximum (the whole disk), in logical sectors.
      returned: when the drive answered
      type: int
      sample: 1953525168
    visible_sectors_before:
      description: Visible sectors before the module ran.
      returned: when the drive answered
      type: int
      sample: 1953525168
    visible_sectors:
      description: Visible sectors after the module ran (read back from the drive), or planned in check mode.
      returned: when the drive answered
      type: int
      sample: 1562820608
    target_sectors:
      description: The visible sector count asked for.
      returned: when the drive answered
      type: int
      sample: 1562820608
    reserved_percent:
      description: Share of the native maximum hidden at the target, rounded to 0.01.
      returned: when the drive answered
      type: float
      sample: 20.0
    hpa:
      description: State as hdparm reports it at the end, V(enabled), V(disabled) or V(invalid).
      returned: when the drive answered
      type: str
      sample: enabled
    accessible_max_address:
      description: The drive uses the ACS-3 ACCESSIBLE MAX ADDRESS feature.
      returned: when the drive answered
      type: bool
    erased:
      description: The whole disk was discarded by this run.
      returned: always
      type: bool
    power_cycle_required:
      description:
        - A permanent change was made since boot; the kernel and the next change wait for a
          power cycle of the drive (a full power-off, not a warm reboot).
      returned: always
      type: bool
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
import re
import time

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.cephops.osd_tuning.plugins.module_utils import blockdev, overprovision
from ansible_collections.cephops.osd_tuning.plugins.module_utils.overprovision import Failed, MIB, Plan, Refused, reserved_size
from ansible_collections.cephops.osd_tuning.plugins.module_utils.blockdev import blocking_reasons


# Host Protected Area (ATA SET MAX ADDRESS) through hdparm: parsing and arithmetic.
#
# Pure functions only; the ata_hpa module runs the commands. hdparm 9.65 prints the state as
# `` max sectors   = VISIBLE/NATIVE, HPA is enabled|disabled``; drives with the ACCESSIBLE
# MAX ADDRESS feature (ACS-3) print ``ACCESSIBLE MAX ADDRESS enabled|disabled`` instead, and
# a visible count above the native one is ``HPA setting seems invalid``, optionally with the
# DCO maximum as ``(N?)`` after the native count.
_MAX_SECTORS = re.compile(
    r"^\s*max sectors\s*=\s*(?P<visible>\d+)/(?P<native>\d+)(?:\((?P<dco>\d+)\?\))?,\s*(?P<rest>.*)$", re.M)
_STATES = (
    ("HPA is enabled", "enabled", False),
    ("HPA is disabled", "disabled", False),
    ("ACCESSIBLE MAX ADDRESS enabled", "enabled", True),
    ("ACCESSIBLE MAX ADDRESS disabled", "disabled", True),
    ("HPA setting seems invalid", "invalid", False),
)
# hdparm's perror() lines when an ATA command fails (stderr), e.g.
# " SET_MAX_ADDRESS(_EXT) failed: Input/output error".
_FAILED = re.compile(r"^\s*(\S+ failed: .*)$", re.M)


class HpaError(Exception):
    """The drive's answer cannot be used; the message says why."""


def parse_state(stdout, stderr=""):
    """State from ``hdparm -N DEVICE`` output.

    Returns a dict with ``visible_sectors``, ``native_sectors``, ``hpa`` (V(enabled),
    V(disabled) or V(invalid)), ``accessible_max_address`` (the drive uses the ACS-3
    feature, whose changes need a power cycle) and ``dco_max_sectors`` (or None).
    Raises HpaError when there is no ``max sectors`` line: the drive did not answer,
    which is what hdparm prints (nothing, exit 0) for a disk that is not ATA.
    """
    match = _MAX_SECTORS.search(stdout or "")
    if not match:
        failures = _FAILED.findall(stderr or "")
        detail = "; ".join(f.strip() for f in failures) or (stderr or "").strip() or "no output"
        raise HpaError("the drive did not answer hdparm -N (%s)" % detail)
    rest = match.group("rest")
    for text, hpa, amax in _STATES:
        if rest.startswith(text):
            break
    else:
        raise HpaError("unknown hdparm -N state: %s" % match.group(0).strip())
    return {
        "visible_sectors": int(match.group("visible")),
        "native_sectors": int(match.group("native")),
        "dco_max_sectors": int(match.group("dco")) if match.group("dco") else None,
        "hpa": hpa,
        "accessible_max_address": amax,
    }


def command_failures(stderr):
    """The ATA command failures hdparm reported, e.g. ``SET_MAX_ADDRESS(_EXT) failed: ...``."""
    return [f.strip() for f in _FAILED.findall(stderr or "")]


def check_request(reserve_percent=None, visible_sectors=None):
    """Why no disk could satisfy a request (empty when one could), before anything looks at
    a disk."""
    if visible_sectors is not None:
        return ["visible_sectors %d must be at least 1" % visible_sectors] if visible_sectors < 1 else []
    if not 0 <= reserve_percent <= 90:
        return ["reserve_percent %s is outside 0-90" % reserve_percent]
    return []


def target_sectors(native_sectors, logical_sector_size, reserve_percent=None, visible_sectors=None):
    """Visible sector count to set: ``visible_sectors`` as given, or the native maximum less
    ``reserve_percent``, rounded down to a whole MiB so partitions can end on a MiB boundary.

    Raises HpaError for a count that is not below or equal to the native maximum, or a
    reserve outside 0-90 %.
    """
    refused = check_request(reserve_percent, visible_sectors)
    if refused:
        raise HpaError(refused[0])
    if visible_sectors is None:
        visible_sectors = reserved_size(native_sectors, reserve_percent, max(1, MIB // logical_sector_size))
    if visible_sectors < 1:  # a reserve that leaves less than a MiB
        raise HpaError("visible_sectors %d must be at least 1" % visible_sectors)
    if visible_sectors > native_sectors:
        raise HpaError("visible_sectors %d is above the native maximum %d" % (visible_sectors, native_sectors))
    return visible_sectors


def check_valid(before):
    """Raise HpaError when hdparm calls the HPA setting invalid: nothing is acted on then."""
    if before["hpa"] == "invalid":
        raise HpaError("hdparm reports the HPA setting as invalid (%d visible above %d native): the controller "
                       "or driver does not pass ATA commands through faithfully"
                       % (before["visible_sectors"], before["native_sectors"]))


def plan(disk, before, target, erase=False, restoring=False, ignore_hpa=False, changed_since_boot=None,
         overwrite_data=False):
    """What to do with ``disk`` (a disk_facts record) whose ``hdparm -N`` state is ``before``
    to make ``target`` sectors visible (``restoring``: the size a record kept).

    Returns a dict with ``target``, ``change`` (the drive must be changed), ``discard``
    (discard the whole disk first) and ``checks``: every safety check that refuses the
    change, in words an operator can act on; the change may only run when it is empty.
    ``changed_since_boot`` describes a permanent change already made this boot;
    ``overwrite_data`` lifts the reasons of the content checks alone.
    """
    check_valid(before)
    shrink = target < before["visible_sectors"]
    result = dict(target=target, change=target != before["visible_sectors"], discard=shrink, checks=[])
    if not result["change"]:
        return result  # nothing is written, so nothing needs to be refused
    checks = result["checks"]
    refusing = blocking_reasons(disk, overwrite_data)
    if refusing:
        checks.append("not blank: " + ", ".join(refusing))
    if not restoring and ignore_hpa:
        checks.append("libata.ignore_hpa=1 unlocks the HPA at every boot")
    if changed_since_boot:
        checks.append("a permanent change was already made to this drive since boot (%s); "
                      "power-cycle it before the next one" % changed_since_boot)
    if shrink and not erase:
        checks.append("erase=true is required: the whole disk is discarded before sectors are hidden")
    if shrink and not disk["discard"]:
        checks.append("the disk cannot discard, so the hidden area would keep stale data; erase it "
                      "otherwise (ATA secure erase) first")
    return result


def set_argv(hdparm, device, sectors):
    """Permanent SET MAX (``p`` prefix); the flag is needed because a shrink aborts without it."""
    return [hdparm, "--yes-i-know-what-i-am-doing", "-N", "p%d" % sectors, device]


def read_argv(hdparm, device):
    return [hdparm, "-N", device]


ATA_TRANSPORTS = ("sata", "ata")
IGNORE_HPA_PARAM = "/sys/module/libata/parameters/ignore_hpa"
# tmpfs: the note of a permanent change lives exactly as long as this boot.
MARKER_DIR = "/run/cephops/ata_hpa"


class AtaHpa:
    """The hpa method of module_utils/overprovision.py."""

    name = "hpa"
    defaults = dict(erased=False, power_cycle_required=False)

    def __init__(self, module):
        self.module = module
        self.hdparm = self.blkdiscard = self.settle = None

    def run(self, argv):
        return self.module.run_command(argv)

    def check_entries(self, entries):
        return ["%s: %s" % (overprovision.describe(e), message) for e in entries
                for message in check_request(e["reserve_percent"], e["visible_sectors"])]

    def prepare(self):
        self.hdparm = self.module.get_bin_path("hdparm", required=True)

    def marker_path(self, disk):
        key = disk["serial"] or disk["wwn"] or disk["name"]
        return os.path.join(MARKER_DIR, "".join(c if c.isalnum() or c in "-_." else "_" for c in key))

    def read_state(self, disk):
        rc, out, err = self.run(read_argv(self.hdparm, disk["path"]))
        return parse_state(out, err)

    def inspect(self, disk, block, entry):
        if disk["transport"] not in ATA_TRANSPORTS:
            checks = ["not a direct-attached ATA disk (transport %s)" % disk["transport"]]
            refusing = blockdev.blocking_reasons(disk, bool(entry and entry["overwrite_data"]))
            if refusing:
                checks.append("not blank: " + ", ".join(refusing))
            raise Refused("%s: %s; refused, hdparm was not run" % (disk["path"], "; ".join(checks)), checks)
        try:
            return self.read_state(disk)
        except HpaError as exc:
            raise Refused("%s: %s" % (disk["path"], exc), [str(exc)])

    def _plan(self, disk, before, target, overwrite_data, restoring):
        marker = self.marker_path(disk)
        try:
            planned = plan(disk, before, target, self.module.params["erase"], restoring=restoring,
                           ignore_hpa=blockdev.read_value(IGNORE_HPA_PARAM) in ("1", "Y"),
                           changed_since_boot=blockdev.read_value(marker), overwrite_data=overwrite_data)
        except HpaError as exc:
            return Plan(checks=[str(exc)])
        native = before["native_sectors"]
        udevadm = self.module.get_bin_path("udevadm")
        work = dict(
            discard=[self.module.get_bin_path("blkdiscard", required=True), disk["path"]] if planned["discard"] else None,
            settle=[udevadm, "settle", "--timeout=60"] if udevadm else None,
            set=set_argv(self.hdparm, disk["path"], target), overwrite_data=overwrite_data)
        actions = [work[step] for step in ("discard", "settle", "set") if work[step]] if planned["change"] else []
        return Plan(
            change=planned["change"], checks=planned["checks"], actions=actions, work=work,
            before="%s: %d of %d sectors visible" % (disk["path"], before["visible_sectors"], native),
            after="%s: %d of %d sectors visible" % (disk["path"], target, native),
            native_sectors=native, visible_sectors_before=before["visible_sectors"],
            visible_sectors=target if planned["change"] else before["visible_sectors"], target_sectors=target,
            reserved_percent=round(100.0 * (native - target) / native, 2), hpa=before["hpa"],
            accessible_max_address=before["accessible_max_address"], erased=False,
            power_cycle_required=os.path.exists(marker))

    def plan(self, disk, before, entry, recorded):
        try:
            target = target_sectors(before["native_sectors"], disk["logical_sector_size"] or 512,
                                    entry["reserve_percent"] if entry["visible_sectors"] is None else None,
                                    entry["visible_sectors"])
        except HpaError as exc:
            return Plan(checks=[str(exc)])
        return self._plan(disk, before, target, entry["overwrite_data"], restoring=False)

    def plan_restore(self, disk, before, recorded):
        try:
            target = target_sectors(before["native_sectors"], disk["logical_sector_size"] or 512,
                                    visible_sectors=recorded["visible_sectors_before"])
        except HpaError as exc:
            return Plan(checks=[str(exc)])
        return self._plan(disk, before, target, False, restoring=True)

    def refusal(self, disk, checks, restoring):
        return "%s: %s; refused, nothing was changed" % (disk["path"], "; ".join(checks))

    def apply(self, disk, before, plan):
        fields, work = plan["fields"], plan["work"]
        target = fields["target_sectors"]
        erased = False
        if work["discard"]:
            if disk["data_reasons"] and work["overwrite_data"]:
                self.module.warn("%s: overwrite_data is set, the discard destroys what the content checks found: %s"
                                 % (disk["path"], ", ".join(disk["data_reasons"])))
            rc, out, err = self.run(work["discard"])
            if rc != 0:
                raise Failed("%s: blkdiscard failed (%s), the HPA was not touched" % (disk["path"], (err or out).strip()))
            erased = True
        if work["settle"]:
            # A failed settle is not fatal: the read-back below tells whether SET MAX took.
            self.run(work["settle"])
        # Noted before the command: even a half-finished run blocks a second attempt.
        marker = self.marker_path(disk)
        if not os.path.isdir(MARKER_DIR):
            os.makedirs(MARKER_DIR)
        with open(marker, "w") as handle:
            handle.write("%s set to %d sectors at %s\n" % (disk["path"], target, time.strftime("%Y-%m-%dT%H:%M:%S%z")))
        rc, out, err = self.run(work["set"])
        after = self.read_state(disk)
        if after["visible_sectors"] != target:
            os.unlink(marker)
            failures = "; ".join(command_failures(err)) or "hdparm exit status %d, no error printed" % rc
            raise Failed("%s: the drive rejected SET MAX ADDRESS (%s): the HPA is unchanged, %d of %d sectors "
                         "visible%s" % (disk["path"], failures, after["visible_sectors"], fields["native_sectors"],
                                        "; the blank disk was discarded" if erased else ""),
                         changed=erased, fields=dict(visible_sectors=after["visible_sectors"], hpa=after["hpa"],
                                                     erased=erased))
        self.module.warn("%s: %d of %d sectors visible after the next power cycle (a full power-off, not a warm "
                         "reboot); the kernel shows the old size until then"
                         % (disk["path"], target, fields["native_sectors"]))
        return dict(visible_sectors=after["visible_sectors"], hpa=after["hpa"], erased=erased,
                    power_cycle_required=True)

    def record_entry(self, disk, plan, applied, recorded):
        fields = plan["fields"]
        return overprovision.record_entry(
            self.name, disk, native_sectors=fields["native_sectors"],
            # The first original stays: a second change does not make the first one permanent.
            visible_sectors_before=(recorded or fields)["visible_sectors_before"],
            visible_sectors=applied["visible_sectors"])


def main():
    module = AnsibleModule(
        argument_spec=overprovision.argument_spec(dict(visible_sectors=dict(type="int")),
                                                  entry_exclusive=[("reserve_percent", "visible_sectors")]),
        required_if=[("restore", True, ("record",))],
        supports_check_mode=True,
    )
    overprovision.run(module, AtaHpa(module))


if __name__ == "__main__":
    main()
