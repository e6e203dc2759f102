# -*- coding: utf-8 -*-
# Copyright: cephops.osd_tuning contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kernel arguments in /etc/default/grub and grub.d/*.cfg: parse and edit in place.

Only the ``GRUB_CMDLINE_LINUX`` and ``GRUB_CMDLINE_LINUX_DEFAULT`` assignments change, and
only their arguments; comments, other lines and the quoting style stay as written. Values
that need a shell to understand (command substitution, expansions other than the variable's
own previous value) are refused rather than guessed at.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

CMDLINE_VARIABLES = ("GRUB_CMDLINE_LINUX", "GRUB_CMDLINE_LINUX_DEFAULT")
ASSIGNMENT = re.compile(r'^(?P<head>\s*(?:export\s+)?(?P<name>GRUB_CMDLINE_LINUX(?:_DEFAULT)?)=)'
                        r'(?P<value>"[^"]*"|\'[^\']*\'|[^\s#"\']*)(?P<trailer>\s*(?:#.*)?)$')
SELF_REFERENCE = re.compile(r"^\$(\{)?(GRUB_CMDLINE_LINUX(?:_DEFAULT)?)(?(1)\})$")


def arg_name(arg):
    return arg.split("=", 1)[0]


def edit_args(args, remove=(), set_args=None):
    """Arguments with every ``remove`` name dropped and ``set_args`` (name -> value) in place."""
    set_args = dict(set_args or {})
    result, seen = [], set()
    for arg in args:
        name = arg_name(arg)
        if name in remove or (name in set_args and name in seen):
            continue
        if name in set_args:
            seen.add(name)
            arg = "%s=%s" % (name, set_args[name])
        result.append(arg)
    result.extend("%s=%s" % (n, v) for n, v in sorted(set_args.items()) if n not in seen)
    return result


def _tokens(name, value):
    quote = value[:1] if value[:1] in "\"'" else ""
    inner = value[1:-1] if quote else value
    tokens = inner.split()
    for token in tokens:
        if quote != "'" and ("$" in token or "`" in token) and not SELF_REFERENCE.match(token):
            raise ValueError("%s=%s needs a shell to evaluate; edit it by hand" % (name, value))
        if "\\" in token:
            raise ValueError("%s=%s holds an escape; edit it by hand" % (name, value))
    return quote, tokens


def assigns(text, name):
    """Whether the text assigns the variable ``name``."""
    return any(m and m.group("name") == name for m in (ASSIGNMENT.match(l) for l in text.splitlines()))


def edit_text(text, remove=(), set_args=None, target=None):
    """New text, and the arguments of its command-line assignments before and after.

    ``remove`` applies to every assignment. ``set_args`` go into the last assignment of
    ``target`` (the one in effect), appended as a new line when the text has none, and are
    dropped from every other assignment, so an argument never appears twice. Self
    references such as ``$GRUB_CMDLINE_LINUX`` stay where they are.
    """
    set_args = dict(set_args or {})
    lines = text.splitlines(True)
    parsed = []
    for index, line in enumerate(lines):
        body = line.rstrip("\n")
        match = ASSIGNMENT.match(body)
        if match:
            parsed.append((index, match))
        elif re.match(r"^\s*(?:export\s+)?GRUB_CMDLINE_LINUX(?:_DEFAULT)?=", body):
            raise ValueError("cannot parse %r; edit it by hand" % body.strip())
    target_lines = [index for index, match in parsed if match.group("name") == target]
    last_target = target_lines[-1] if target_lines else None
    all_before, all_after = [], []
    for index, match in parsed:
        name = match.group("name")
        quote, before = _tokens(name, match.group("value"))
        if index == last_target:
            after = edit_args(before, remove=remove, set_args=set_args)
        else:
            after = edit_args(before, remove=tuple(remove) + tuple(set_args))
        all_before += before
        all_after += after
        if after != before:
            quote = quote or '"'
            body = lines[index].rstrip("\n")
            lines[index] = "%s%s%s%s%s%s" % (match.group("head"), quote, " ".join(after), quote,
                                             match.group("trailer"), lines[index][len(body):])
    new_text = "".join(lines)
    if last_target is None and set_args:
        added = edit_args([], set_args=set_args)
        all_after += added
        new_text += ("" if not new_text or new_text.endswith("\n") else "\n") + '%s="%s"\n' % (target, " ".join(added))
    return new_text, all_before, all_after


def parse_grubby_info(text):
    """``grubby --info=ALL`` output -> list of (kernel, args) per boot entry."""
    entries, kernel = [], None
    for line in text.splitlines():
        key, _sep, value = line.partition("=")
        value = value.strip().strip('"')
        if key == "kernel":
            kernel = value
        elif key == "args":
            entries.append((kernel, value.split()))
    return entries


def args_satisfy(args, absent=(), present=None):
    """Whether a list of kernel arguments already is what the caller wants."""
    names = [arg_name(a) for a in args]
    if any(name in names for name in absent):
        return False
    return all("%s=%s" % (n, v) in args for n, v in (present or {}).items())


# --------------------------------------------------------------------------- record for rollback

# What a restore puts back: the arguments removed, and per argument set, the ones it replaced.
RECORD_SECTIONS = {"removed": [], "replaced": {}}


def remember(record, absent, present, arg_lists):
    """Add what this change removes or replaces, keeping what an earlier change recorded."""
    before = [arg for args in arg_lists for arg in args]
    known = set(arg_name(arg) for arg in record["removed"]) | set(record["replaced"])
    for arg in before:
        if arg_name(arg) in absent and arg_name(arg) not in known:
            record["removed"].append(arg)
    for name in present:
        if name not in record["replaced"] and not any(arg_name(a) == name for a in record["removed"]):
            record["replaced"][name] = [arg for arg in before if arg_name(arg) == name]
    return record


def restore_request(record):
    """(absent, present) that undo a record: drop what was set, put back what was removed or replaced."""
    previous = list(record["removed"]) + [arg for args in record["replaced"].values() for arg in args]
    present = dict(arg.split("=", 1) for arg in previous if "=" in arg)
    absent = [name for name in record["replaced"] if name not in present]
    return absent, present
