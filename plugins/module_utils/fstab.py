# -*- coding: utf-8 -*-
# Copyright: cephops.osd_tuning contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""fstab and mount option logic shared by the mount modules; pure functions only.

An fstab is edited line by line: only the options field of a chosen line is rewritten,
so sources (UUID=, LABEL=, PARTUUID=, paths), whitespace, comments and every other line
stay byte for byte as written.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.cephops.osd_tuning.plugins.module_utils.mountinfo import split_options, unescape

# Options that only mount(8) or systemd read; the kernel never sees them.
USERSPACE_OPTIONS = frozenset((
    "defaults", "auto", "noauto", "user", "nouser", "users", "owner", "group", "nofail",
    "_netdev", "bind", "rbind",
))
USERSPACE_PREFIXES = ("x-", "comment=", "loop=", "offset=", "sizelimit=", "encryption=", "helper=")

# Per-mount (VFS) flags: mountinfo field 6 shows them and a remount replaces all of them.
VFS_OPTIONS = frozenset((
    "ro", "rw", "suid", "nosuid", "dev", "nodev", "exec", "noexec", "atime", "noatime",
    "relatime", "norelatime", "strictatime", "nostrictatime", "diratime", "nodiratime",
    "nosymfollow", "symfollow",
))

# Exactly one access time mode applies; `atime`/`norelatime`/`nostrictatime` undo the others.
ATIME_MODES = ("noatime", "relatime", "strictatime")
ATIME_OPTIONS = frozenset(ATIME_MODES + ("atime", "norelatime", "nostrictatime"))
DIRATIME_OPTIONS = frozenset(("diratime", "nodiratime"))

# Pairs where one option undoes the other and the names do not follow the no<opt> rule.
OPPOSITES = {
    "ro": "rw", "rw": "ro", "sync": "async", "async": "sync",
    "inode32": "inode64", "inode64": "inode32", "user": "nouser", "nouser": "user",
    "users": "nouser",
}

# Filesystems on disks; `local` selects these, and only these are worth noatime.
DISK_FSTYPES = frozenset(("xfs", "ext2", "ext3", "ext4", "btrfs", "f2fs", "jfs", "reiserfs", "nilfs2", "bcachefs"))

# XFS dropped these in Linux 4.19 (commit "xfs: remove deprecated barrier/nobarrier"): a mount
# with either fails, and an fstab line with one leaves the host in emergency mode at boot.
XFS_REMOVED = {"barrier": (4, 19), "nobarrier": (4, 19)}


class OptionError(Exception):
    """Requested options conflict or would break a mount; the message says which and why."""


# --------------------------------------------------------------------------- options

def option_key(option):
    return option.split("=", 1)[0]


def is_userspace(option):
    return option in USERSPACE_OPTIONS or option.startswith(USERSPACE_PREFIXES)


def _opposite(key):
    if key in OPPOSITES:
        return OPPOSITES[key]
    return key[2:] if key.startswith("no") else "no" + key


def _displaced_by(option):
    """Keys an option replaces when it is ensured: its own key (other values), its opposite,
    and for access time modes every other mode."""
    key = option_key(option)
    keys = {key, _opposite(key)}
    if key in ATIME_OPTIONS:
        keys |= ATIME_OPTIONS
        if key == "noatime":
            keys |= DIRATIME_OPTIONS  # noatime implies nodiratime
    return keys


def _conflict(first, second):
    return option_key(first) in _displaced_by(second) or option_key(second) in _displaced_by(first)


def normalize_request(options, absent_options=()):
    """Check what the caller asked for; return (options, absent_options) to apply.

    ``nodiratime`` next to ``noatime`` is dropped (implied) and so is ``defaults`` (every
    mount starts from the defaults). Two atime modes, an option and its opposite, two
    values of one option, or an option both wanted and absent raise OptionError.
    """
    wanted = []
    for option in options:
        if option in wanted or option == "defaults" or (option == "nodiratime" and "noatime" in options):
            continue
        for other in wanted:
            if _conflict(other, option):
                raise OptionError("options %s and %s contradict each other" % (other, option))
        wanted.append(option)
    absent = []
    for option in absent_options:
        if any(_matches_absent(w, [option]) for w in wanted):
            raise OptionError("option %s is both wanted and absent" % option)
        if option not in absent:
            absent.append(option)
    return wanted, absent


def _matches_absent(option, absent):
    # An absent entry with a value removes only that value; without one, every value of the key.
    return any(option == a or ("=" not in a and option_key(option) == a) for a in absent)


def merge_options(current, options, absent_options=()):
    """Options of a line after ensuring ``options`` and removing ``absent_options``.

    Returns ``current`` itself when nothing changes. Otherwise kept options stay in order,
    new ones are appended, an option replaces its opposite and other values of its key,
    an atime mode replaces the others, and ``defaults`` is dropped unless nothing is left.
    """
    result = [o for o in current if not _matches_absent(o, absent_options)]
    for option in options:
        if option in result or (option == "nodiratime" and "noatime" in result):
            continue
        displaced = _displaced_by(option)
        result = [o for o in result if option_key(o) not in displaced]
        result.append(option)
    if result == list(current):
        return current
    return [o for o in result if o != "defaults"] or ["defaults"]


def atime_mode(vfs_options):
    """The access time mode a mountinfo per-mount option list shows (strictatime when none)."""
    for mode in ATIME_MODES:
        if mode in vfs_options:
            return mode
    return "strictatime"


# Options that undo an atime mode: satisfied as long as that mode is not active.
ATIME_UNDO = {"atime": "noatime", "norelatime": "relatime", "nostrictatime": "strictatime"}


def live_satisfies(vfs_options, options, absent_options=()):
    """Whether the live per-mount flags already match the requested VFS options.

    Only VFS flags can be read back for every filesystem; filesystem options are judged
    from the fstab line alone.
    """
    mode = atime_mode(vfs_options)
    for option in options:
        if option not in VFS_OPTIONS:
            continue
        if option in ATIME_MODES:
            satisfied = mode == option
        elif option in ATIME_UNDO:
            satisfied = mode != ATIME_UNDO[option]
        elif option == "nodiratime":
            satisfied = mode == "noatime" or option in vfs_options
        elif option in ("suid", "dev", "exec", "diratime", "symfollow", "rw"):
            satisfied = _opposite(option) not in vfs_options
        else:
            satisfied = option in vfs_options
        if not satisfied:
            return False
    return not any(o in vfs_options for o in absent_options if o in VFS_OPTIONS)


def remount_options(vfs_options, options, absent_options=(), fs_options=()):
    """Options for ``mount -o remount,...``: the live per-mount flags with the requested
    changes, plus the filesystem options newly written to fstab.

    A classic remount replaces every per-mount flag, so the live ones are passed back;
    without an atime flag the kernel would keep the old mode, so one is always given.
    """
    kernel_options = [o for o in options if o in VFS_OPTIONS]
    result = merge_options(list(vfs_options), kernel_options, absent_options)
    result = [o for o in result if o != "defaults"]
    if not ATIME_OPTIONS & set(result):
        result.append("relatime")
    for option in fs_options:
        if option not in result:
            result.append(option)
    return result


def removed_option_refusals(fstype, options, kernel_release):
    """Reasons the running kernel refuses some of ``options`` for ``fstype`` outright."""
    refusals = []
    version = kernel_version(kernel_release)
    if fstype == "xfs":
        for option in options:
            since = XFS_REMOVED.get(option_key(option))
            if since and version >= since:
                refusals.append(
                    "%s: XFS removed this option in Linux %d.%d and this kernel is %s: a mount "
                    "with it fails, and in fstab it stops the host from booting" % (
                        option, since[0], since[1], kernel_release))
    return refusals


def kernel_version(release):
    """'6.1.0-18-amd64' -> (6, 1)."""
    match = re.match(r"(\d+)\.(\d+)", release or "")
    return (int(match.group(1)), int(match.group(2))) if match else (0, 0)


# --------------------------------------------------------------------------- fstab lines

def normalize_path(path):
    path = re.sub(r"/+", "/", path)
    return path.rstrip("/") or "/"


def parse_fstab(text):
    """One dict per line: ``lineno``, ``text`` (without its newline) and ``entry`` (None for
    comments, blank and unparseable lines; else source, target, fstype, options)."""
    lines = []
    for number, line in enumerate((text or "").splitlines(), 1):
        fields = line.split()
        entry = None
        if fields and not fields[0].startswith("#") and len(fields) >= 2:
            entry = {
                "source": fields[0],
                "target": normalize_path(unescape(fields[1])) if fields[1].startswith("/") else fields[1],
                "fstype": fields[2] if len(fields) > 2 else "auto",
                "options": split_options(fields[3]) if len(fields) > 3 else ["defaults"],
            }
        lines.append({"lineno": number, "text": line, "entry": entry})
    return lines


def set_line_options(line, options):
    """The same line with its options field (the 4th) replaced; whitespace kept as written.

    A line with only three fields gets the options appended after one space.
    """
    fields = list(re.finditer(r"\S+", line))
    text = ",".join(options)
    if len(fields) > 3:
        return line[:fields[3].start()] + text + line[fields[3].end():]
    end = fields[-1].end()
    return line[:end] + " " + text + line[end:]


def replace_lines(text, replacements, appended=()):
    """``text`` with lines (by number) replaced and lines appended; line endings kept."""
    raw = (text or "").splitlines(True)
    for number, new in replacements.items():
        old = raw[number - 1]
        ending = old[len(old.rstrip("\r\n")):]
        raw[number - 1] = new + ending
    out = "".join(raw)
    if appended:
        if out and not out.endswith("\n"):
            out += "\n"
        out += "".join(line + "\n" for line in appended)
    return out


def escape(field):
    return "".join("\\%03o" % ord(c) if c in " \t\n\\" else c for c in field)


def verify_messages(stdout, stderr):
    """Problems ``findmnt --verify`` reports, as a set of 'target: [E] text' strings plus the
    parse errors it prints on stderr; the OK lines of --verbose are not kept."""
    found, target = set(), None
    for line in (stdout or "").splitlines():
        if line and not line[0].isspace():
            target = line.strip()
        elif re.match(r"\s+\[[EW]\]", line):
            found.add("%s: %s" % (target, line.strip()))
    for line in (stderr or "").splitlines():
        match = re.search(r"parse error at line .*", line)
        if match:
            found.add(match.group(0))
    return found


def systemd_unit_name(target):
    """The name of the .mount unit systemd uses for a mount point (systemd-escape --path)."""
    path = normalize_path(target).strip("/")
    if not path:
        return "-.mount"
    out = []
    for index, char in enumerate(path):
        if char == "/":
            out.append("-")
        elif char.isalnum() and ord(char) < 128 or char in ":_" or (char == "." and index > 0):
            out.append(char)
        else:
            out.extend("\\x%02x" % byte for byte in char.encode("utf-8"))
    return "".join(out) + ".mount"


def is_below(target, directory):
    directory = normalize_path(directory)
    return target == directory or target.startswith(directory.rstrip("/") + "/")


# --------------------------------------------------------------------------- planning

SELECTORS = ("ceph", "local")


def select_targets(selectors, fstab_entries, live, ceph_dir):
    """Expand ``mounts`` into (targets, skipped); selectors pick disk filesystems only.

    ``fstab_entries`` and ``live`` map a target to its fstab entry / mountinfo entry.
    A path that is neither in fstab nor mounted raises OptionError.
    """
    known = sorted(set(fstab_entries) | set(live))
    targets, skipped = [], []

    def add(target):
        if target not in targets:
            targets.append(target)

    for selector in selectors:
        if selector.startswith("/"):
            target = normalize_path(selector)
            if target not in known:
                raise OptionError("%s: not mounted and not in fstab" % target)
            add(target)
            continue
        if selector not in SELECTORS:
            raise OptionError("%s: not a mount point (absolute path) nor a selector (%s)"
                              % (selector, ", ".join(SELECTORS)))
        for target in known:
            if selector == "ceph" and not is_below(target, ceph_dir):
                continue
            entry, mount = fstab_entries.get(target), live.get(target)
            fstype = mount["fstype"] if mount else entry["fstype"]
            if fstype in DISK_FSTYPES:
                add(target)
            elif selector == "ceph" and not any(s["mountpoint"] == target for s in skipped):
                skipped.append({"mountpoint": target, "reason": "%s is not a disk filesystem" % fstype})
    return targets, skipped


def fstab_index(lines):
    """target -> fstab entry (with its line number); a target on two lines raises OptionError."""
    index, seen = {}, {}
    for line in lines:
        entry = line["entry"]
        if entry is None or not entry["target"].startswith("/") or entry["fstype"] == "swap":
            continue
        seen.setdefault(entry["target"], []).append(line["lineno"])
        index[entry["target"]] = dict(entry, lineno=line["lineno"], text=line["text"])
    for target, numbers in seen.items():
        if len(numbers) > 1:
            raise OptionError("%s is on fstab lines %s: which one applies is unclear, fix fstab first"
                              % (target, " and ".join(str(n) for n in numbers)))
    return index


def new_mount_refusal(target, source, device, fstab_entries, live):
    """Why ``device`` (fstab ``source``, None when unknown) cannot be added at ``target``:
    the fstab mounts something else there, or something is mounted there without an fstab
    line. None when the target is free, or when the fstab already mounts ``source`` there."""
    entry = fstab_entries.get(target)
    if entry is not None:
        if entry["source"] == source:
            return None
        return "%s: fstab line %d mounts %s there, not %s" % (target, entry["lineno"], entry["source"], device)
    if target in live:
        return "%s: %s is mounted there" % (target, live[target]["source"])
    return None


def plan_mount(target, entry, mount, options, absent_options, kernel_release, unit=None):
    """What to do for one mount point; raises OptionError for options the kernel refuses.

    ``entry``/``mount`` are its fstab and mountinfo entries (None when absent); ``unit`` is
    the systemd .mount unit file that defines it, if any.
    """
    fstype = entry["fstype"] if entry and entry["fstype"] != "auto" else (mount or {}).get("fstype", "auto")
    refusals = removed_option_refusals(fstype, options, kernel_release)
    if refusals:
        raise OptionError("%s: %s" % (target, "; ".join(refusals)))
    plan = {
        "mountpoint": target,
        "fstype": fstype,
        "source": entry["source"] if entry else mount["source"],
        "in_fstab": entry is not None,
        "mounted": mount is not None,
        "lineno": entry["lineno"] if entry else None,
        "before": entry["text"] if entry else None,
        "after": entry["text"] if entry else None,
        "remount_options": None,
        "fs_options_added": [],
        "warnings": [],
    }
    if entry is None:
        plan["unmanaged"] = (
            "defined by systemd unit %s, not fstab: set Options= in that unit or a drop-in" % unit
            if unit else "mounted but not in fstab: nothing would keep the options after a reboot")
        return plan
    for option in entry["options"]:
        stale = removed_option_refusals(fstype, [option], kernel_release)
        if stale and not _matches_absent(option, absent_options):
            plan["warnings"].append("%s: fstab line %d has %s (add it to absent_options)"
                                    % (target, entry["lineno"], stale[0]))
    new_options = merge_options(entry["options"], options, absent_options)
    if new_options != entry["options"]:
        plan["after"] = set_line_options(entry["text"], new_options)
        plan["fs_options_added"] = [o for o in new_options if o not in entry["options"]
                                    and o not in VFS_OPTIONS and not is_userspace(o)]
    if mount and (plan["fs_options_added"] or not live_satisfies(mount["vfs_options"], options, absent_options)):
        remount = remount_options(mount["vfs_options"], options, absent_options, plan["fs_options_added"])
        if "bind" in entry["options"] or "rbind" in entry["options"]:
            remount.insert(0, "bind")  # change only this mount's flags, not the shared superblock's
        plan["remount_options"] = remount
    return plan


# --------------------------------------------------------------------------- record for rollback

# Per mount point: its fstab options and line before the first change, and the line written
# last, so that a restore puts the very line back where nobody changed it since. (A record of
# 0.1.0 holds the options alone: a restore then gives the options back, not the bytes.)
RECORD_SECTIONS = {"mounts": {}}


def remember(record, changed):
    """Keep each mount's options and line before its first change (a later change keeps them)
    and the line this change wrote; ``changed`` holds (mount point, options, line before, line after)."""
    for target, original, before, after in changed:
        kept = record["mounts"].get(target)
        if not isinstance(kept, dict):
            kept = record["mounts"][target] = {"options": list(original if kept is None else kept),
                                               "line": before if kept is None else None}
        kept["written"] = after
    return record


def forget(record, targets):
    for target in targets:
        record["mounts"].pop(target, None)
    return record


def original_options(kept):
    return kept["options"] if isinstance(kept, dict) else kept


def original_line(kept, current):
    """The line a restore puts back verbatim: the one before the first change, where the line is
    still the one written last; None otherwise (the options are restored instead)."""
    if isinstance(kept, dict) and kept.get("line") is not None and kept.get("written") == current:
        return kept["line"]
    return None


def restore_request(original, current):
    """(options, absent_options) that bring a line from ``current`` back to ``original``: the
    original options are ensured, and what it did not have is removed (access time modes
    included, so a line that had none returns to the kernel's relatime default)."""
    kept = [o for o in original if o != "defaults"]
    absent = [o for o in current if o not in original and o != "defaults"]
    # relatime is what the kernel gives a line without an access time mode: never remove it.
    absent += [mode for mode in ("noatime", "strictatime", "nodiratime") if mode not in kept and mode not in absent]
    return kept, absent
