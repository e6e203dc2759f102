# -*- coding: utf-8 -*-
# Copyright: cephops.osd_tuning contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The kernel's mount table (/proc/self/mountinfo), and the field encoding fstab shares with it:
octal escapes for whitespace and backslashes, options separated by commas."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re


def unescape(field):
    """fstab and mountinfo write space, tab, newline and backslash as octal (``\\040``)."""
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field)


def split_options(text):
    """``'rw,context="a,b",noatime'`` -> ['rw', 'context="a,b"', 'noatime'] (quotes keep commas)."""
    options, current, quoted = [], "", False
    for char in text or "":
        if char == '"':
            quoted = not quoted
        if char == "," and not quoted:
            if current:
                options.append(current)
            current = ""
        else:
            current += char
    if current:
        options.append(current)
    return options


def parse_mountinfo(text):
    """/proc/self/mountinfo -> dicts with target, root, vfs_options, fstype, source,
    super_options and devnum; a later entry for a target hides an earlier one."""
    entries = []
    for line in (text or "").splitlines():
        fields = line.split(" ")
        if "-" not in fields or len(fields) < 10:
            continue
        sep = fields.index("-")
        entries.append({
            "devnum": fields[2],
            "root": unescape(fields[3]),
            "target": unescape(fields[4]),
            "vfs_options": split_options(fields[5]),
            "fstype": fields[sep + 1],
            "source": unescape(fields[sep + 2]),
            "super_options": split_options(fields[sep + 3]) if len(fields) > sep + 3 else [],
        })
    return entries


def live_index(mountinfo_text):
    """target -> mountinfo entry; the last one wins because it hides the ones below it."""
    return dict((entry["target"], entry) for entry in parse_mountinfo(mountinfo_text))
