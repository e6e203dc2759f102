# -*- coding: utf-8 -*-
# Copyright: cephops.osd_tuning contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A disk's volatile write cache: which tool reads and switches it for each transport, its
commands and their parsers, and the kernel's own view (queue/write_cache).

Switching never saves the setting to the drive: it lasts until the next power cycle.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import re


def tool_for(transport):
    """Which tool reads and switches the drive's own cache for a transport; sysfs otherwise
    (loop, virtio: only the kernel's view exists)."""
    if transport in ("sata", "ata"):
        return "hdparm"
    if transport == "nvme":
        return "nvme"
    if transport in ("sas", "scsi", "fc", "iscsi", "usb"):
        return "sdparm"
    return "sysfs"


NVME_ALL_NAMESPACES = 0xFFFFFFFF


def read_command(tool, path):
    return {
        "hdparm": ["hdparm", "-W", path],
        "nvme": ["nvme", "get-feature", path, "--feature-id=6"],
        "sdparm": ["sdparm", "--get=WCE", "--quiet", path],
    }[tool]


def set_command(tool, path, enabled):
    return {
        "hdparm": ["hdparm", "-W%d" % int(enabled), path],
        # Without --save the change lasts until the next power cycle. The cache belongs to the
        # controller: given a namespace's id (nvme-cli's default for /dev/nvmeXnY), a controller
        # may refuse with "Feature Not Namespace Specific" (QEMU's does); all namespaces it takes.
        "nvme": ["nvme", "set-feature", path, "--namespace-id=%d" % NVME_ALL_NAMESPACES, "--feature-id=6",
                 "--value=%d" % int(enabled)],
        "sdparm": ["sdparm", "--%s=WCE" % ("set" if enabled else "clear"), "--quiet", path],
    }[tool]


def parse_hdparm(text):
    """``hdparm -W``: ' write-caching =  1 (on)'; None when the drive does not say."""
    match = re.search(r"write-caching\s*=\s*(\d+)", text or "")
    return None if not match else match.group(1) != "0"


def parse_nvme(text):
    """``nvme get-feature --feature-id=6``: '... Current value:0x00000001' (bit 0 = enabled).
    nvme-cli prints the value in hex with printf's "%#x", which leaves out the 0x for zero:
    'Current value:00000000'."""
    match = re.search(r"[Cc]urrent value:\s*(?:0x)?([0-9a-fA-F]+)", text or "")
    return None if not match else bool(int(match.group(1), 16) & 1)


def parse_nvme_vwc(text):
    """``nvme id-ctrl -o json``: field vwc bit 0 = a volatile write cache is present."""
    try:
        return bool(int(json.loads(text)["vwc"]) & 1)
    except (ValueError, KeyError, TypeError):
        return None


def parse_sdparm(text):
    """``sdparm --get=WCE --quiet``: 'WCE  1  [cha: y, def:  1, sav:  1]'."""
    match = re.search(r"^\s*WCE\s+(\d+)", text or "", re.M)
    return None if not match else match.group(1) != "0"


PARSERS = {
    "hdparm": parse_hdparm,
    "nvme": parse_nvme,
    "sdparm": parse_sdparm,
}


def sysfs_state(value):
    """Kernel view from queue/write_cache: True for 'write back', False for 'write through'."""
    return {"write back": True, "write through": False}.get((value or "").strip())


STATES = {True: "on", False: "off"}
ABSENT = "absent"
NO_CACHE = "the drive reports no volatile write cache (NVMe vwc 0)"


def state(cache):
    """"on", "off", "absent" (nothing to switch, see read()) or "unknown": a cache record of
    read() in one word."""
    if cache.get("present") is False:
        return ABSENT
    return STATES.get(cache["enabled"], "unknown")


def kernel_view(name):
    """queue/write_cache as the kernel shows it now, None when it cannot be read."""
    try:
        with open("/sys/block/%s/queue/write_cache" % name) as handle:
            return handle.read().strip()
    except (IOError, OSError):
        return None


def read_back(run_command, disk):
    """read() after a switch: the disk record holds the kernel's view from before, which the
    switch may have changed (sd revalidates the cache after a mode page or ATA feature change)."""
    return read(run_command, dict(disk, write_cache=kernel_view(disk["name"])))


def read(run_command, disk):
    """{"tool", "present", "enabled", "volatile", "kernel_view"} of one disk; reading never writes.
    ``run_command(argv)`` returns (rc, stdout, stderr).

    ``present`` is whether the drive has a volatile write cache: an NVMe drive says so in
    id-ctrl (vwc bit 0), other drives do not (None). ``volatile`` is whether a volatile cache
    is present and on."""
    tool = tool_for(disk["transport"])
    kernel_view = disk.get("write_cache")
    cache = {"tool": tool, "kernel_view": kernel_view, "enabled": sysfs_state(kernel_view), "present": None,
             "volatile": None}
    if tool == "sysfs":
        cache["volatile"] = cache["enabled"]
        return cache
    if tool == "nvme":
        rc, out, err = run_command(["nvme", "id-ctrl", disk["path"], "--output-format=json"])
        cache["present"] = parse_nvme_vwc(out) if rc == 0 else None
        if cache["present"] is False:
            # The controller aborts Get and Set Features for the volatile write cache when it
            # has none (Invalid Field in Command): nothing to read or switch, and every write
            # is durable when it completes.
            cache.update(enabled=False, volatile=False)
            return cache
    rc, out, err = run_command(read_command(tool, disk["path"]))
    # sdparm prints the current value, then exits 5 when the drive keeps no saved values
    # (QEMU's scsi-hd does not); the parser finds no value where it printed none.
    cache["enabled"] = PARSERS[tool](out) if rc == 0 or tool == "sdparm" else None
    # A cache that is on counts as volatile: NVMe declares it so (vwc 1), and ATA and SCSI
    # drives report only whether it is on, not whether power-loss protection backs it.
    cache["volatile"] = cache["enabled"]
    return cache


def switch(run_command, disk, tool, enabled):
    """Turn the cache of one disk on or off with ``tool``; None on success, else the error text."""
    if tool == "sysfs":
        try:
            with open("/sys/block/%s/queue/write_cache" % disk["name"], "w") as handle:
                handle.write("write back" if enabled else "write through")
        except (IOError, OSError) as exc:
            return "cannot set queue/write_cache: %s" % exc
        return None
    rc, out, err = run_command(set_command(tool, disk["path"], enabled))
    if rc != 0:
        return "%s failed (rc=%s): %s" % (tool, rc, (err or out).strip())
    return refresh_kernel_view(disk["name"]) if tool == "sdparm" else None


def refresh_kernel_view(name):
    """sd learns of a mode page change only at the drive's next command; until then it may send
    no flushes to a cache that is on again. A rescan revalidates the disk now. None on success."""
    try:
        with open("/sys/block/%s/device/rescan" % name, "w") as handle:
            handle.write("1")
    except (IOError, OSError) as exc:
        return "switched, but the kernel's view was not refreshed (device/rescan): %s" % exc
    return None


class Switcher:
    """Switches drives' write caches for a probe and back, reading each drive back after each
    switch; remembers the caches it switched off for the whole probe."""

    def __init__(self, run_command):
        self.run_command = run_command
        self.switched_off = []

    def switch_checked(self, disk, tool, enabled, how):
        """(error, state): the drive's cache switched on or off and read back; an error also
        when the drive reports another state than asked ("... after switching it <how>")."""
        error = switch(self.run_command, disk, tool, enabled)
        found = state(read_back(self.run_command, disk))
        if error is None and found != STATES[enabled]:
            error = "the drive reports its write cache %s after switching it %s" % (found, how)
        return error, found

    def switch_back(self, disk, cache):
        """{"after", "restored", "restore_error"}: the drive's cache switched back to ``cache``
        and read back; restored only when the drive reports the original state."""
        error, after = self.switch_checked(disk, cache["tool"], cache["enabled"], "back " + state(cache))
        return {"after": after, "restored": error is None, "restore_error": error}

    def disable(self, disks, results):
        """Switch off the write cache of each disk that has it on and read the drive back:
        ([disks that report it off, which alone are probed], {name: the cache read back}).
        Each result gets ``write_cache_disabled``; a disk that cannot be seen with its cache
        off gets an error and is not written."""
        probe, during = [], {}
        for disk in disks:
            name, cache = disk["name"], results[disk["name"]]["write_cache"]
            record = {"original": state(cache), "during": None, "after": None, "restored": None,
                      "restore_error": None, "error": None}
            results[name]["write_cache_disabled"] = record
            if cache["enabled"] is None:
                record["error"] = "write cache state unknown (%s): cannot measure with it disabled" % cache["tool"]
            else:
                if cache["enabled"]:
                    self.switched_off.append(disk)
                    record["error"] = switch(self.run_command, disk, cache["tool"], False)
                during[name] = read_back(self.run_command, disk)
                record["during"] = state(during[name])
                if not cache["enabled"]:
                    # Nothing to switch back: the drive stays as it was found. Without a volatile
                    # cache ("absent") its writes are durable already, as the switch would make them.
                    record.update(after=record["during"], restored=record["during"] == record["original"])
                if record["error"] is None and record["during"] not in ("off", ABSENT):
                    record["error"] = "the drive reports its write cache %s after switching it off" % record["during"]
            if record["error"]:
                results[name].update(error="write_cache disabled: %s" % record["error"], written=False)
            else:
                probe.append(disk)
        return probe, during

    def restore(self, results):
        """Switch back on every write cache this run switched off, and read the drives back."""
        for disk in self.switched_off:
            results[disk["name"]]["write_cache_disabled"].update(
                self.switch_back(disk, results[disk["name"]]["write_cache"]))
        self.switched_off = []
