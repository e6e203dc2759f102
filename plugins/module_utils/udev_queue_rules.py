# -*- coding: utf-8 -*-
# Copyright: cephops.osd_tuning contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""udev rules that set block queue attributes, or run a program, rendered from structured input.

Rules are built from data, never pasted from text, so that a disk model or serial holding a
quote or a newline can never end a rule early or add one. ``render`` is pure; ``check``
lists everything wrong with the input before anything is written.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

# Every rule acts on whole block disks only, as they appear and, unless it says "add" alone,
# whenever udev re-runs. A rule that runs a program which itself can cause a change event (a
# rescan) must say "add", or the two would chase each other.
RULE_PREFIX = 'ACTION=="%s", SUBSYSTEM=="block", ENV{DEVTYPE}=="disk"'
ACTIONS = ("add|change", "add")
MATCH_KEY = re.compile(r"^(KERNEL|ENV\{[A-Z0-9_]+\}|ATTR\{[a-z0-9_/]+\}|ATTRS\{[a-z0-9_]+\})$")
QUEUE_ATTRIBUTE = re.compile(r"^[a-z0-9_]+(/[a-z0-9_]+)?$")
# udev values are double-quoted; a quote, backslash or line break would change the rule.
UNSAFE_VALUE = re.compile(r'["\\\n\r]')


def check(rules):
    """Everything wrong with ``rules``, one message each; empty when they can be rendered."""
    errors = []
    for index, rule in enumerate(rules):
        where = "rule %d" % (index + 1)
        if not rule.get("match"):
            errors.append("%s: needs at least one match key (a rule for every disk is never meant)" % where)
        if not rule.get("attributes") and not rule.get("run"):
            errors.append("%s: sets no attribute and runs nothing" % where)
        for key, value in (rule.get("match") or {}).items():
            if not MATCH_KEY.match(str(key)):
                errors.append("%s: match key %r is not one of KERNEL, ENV{X}, ATTR{x}, ATTRS{x}" % (where, key))
            if UNSAFE_VALUE.search(str(value)) or str(value) == "":
                errors.append("%s: match value %r is empty or holds a quote, backslash or line break"
                              % (where, value))
        for attr, value in (rule.get("attributes") or {}).items():
            if not QUEUE_ATTRIBUTE.match(str(attr)):
                errors.append("%s: %r is not a queue attribute name" % (where, attr))
            if UNSAFE_VALUE.search(str(value)) or str(value) == "":
                errors.append("%s: value %r of %s is empty or holds a quote, backslash or line break"
                              % (where, value, attr))
        if rule.get("action", ACTIONS[0]) not in ACTIONS:
            errors.append("%s: action %r is not one of %s" % (where, rule.get("action"), ", ".join(ACTIONS)))
        errors.extend(check_run(where, rule.get("run") or []))
        if re.search(r"[\n\r]", str(rule.get("comment") or "")):
            errors.append("%s: comment must be one line" % where)
    return errors


def check_run(where, commands):
    """What is wrong with a rule's programs: each an argv list whose program is an absolute path
    (udev looks for a bare name in its own directory only) and whose words hold no quote,
    backslash or line break (udev splits RUN on spaces; a word with a space is single-quoted)."""
    errors = []
    for argv in commands:
        if not argv or not str(argv[0]).startswith("/"):
            errors.append("%s: runs %r, not a program by its absolute path" % (where, argv))
            continue
        for word in argv:
            if str(word) == "" or UNSAFE_VALUE.search(str(word)) or "'" in str(word):
                errors.append("%s: program word %r is empty or holds a quote, backslash or line break"
                              % (where, word))
    return errors


def run_value(argv):
    """A RUN value from an argv list: words joined by spaces, a word with whitespace single-quoted."""
    return " ".join("'%s'" % word if re.search(r"\s", str(word)) else str(word) for word in argv)


# udev runs rules files in the lexical order of their names, and a disk's ID_SERIAL_SHORT and
# ID_WWN are set by this one (ata_id, NVMe attributes), in the same event: a rule matching them
# must live in a file that sorts after it, or it never matches.
IDENTITY_RULES_FILE = "60-persistent-storage.rules"


def check_order(path, rules):
    """Why ``rules`` could never match from a file named ``path``; empty when they can."""
    name = path.rstrip("/").rsplit("/", 1)[-1]
    keys = sorted(set(key for rule in rules for key in (rule.get("match") or {})
                      if key.startswith("ENV{ID_")))
    if keys and name <= IDENTITY_RULES_FILE:
        return ["%s matches %s, which udev sets in %s: name the file so that it sorts after that one "
                "(for example 61-%s)" % (name, ", ".join(keys), IDENTITY_RULES_FILE, name.split("-", 1)[-1])]
    return []


def _ordered_attributes(attributes):
    """The scheduler first: its tunables under iosched/ exist only once it is active."""
    return sorted(attributes.items(), key=lambda item: (item[0] != "scheduler", item[0].startswith("iosched/"),
                                                        item[0]))


def render(rules, header):
    lines = ["# %s" % line for line in header.splitlines()]
    for rule in rules:
        lines.append("")
        if rule.get("comment"):
            lines.append("# %s" % rule["comment"])
        parts = [RULE_PREFIX % (rule.get("action") or ACTIONS[0])]
        parts.extend('%s=="%s"' % (key, value) for key, value in sorted(rule["match"].items()))
        parts.extend('ATTR{queue/%s}="%s"' % (attr, value)
                     for attr, value in _ordered_attributes(rule.get("attributes") or {}))
        # udev runs programs after every rule of the event, in the order they were added.
        parts.extend('RUN+="%s"' % run_value(argv) for argv in rule.get("run") or [])
        lines.append(", ".join(parts))
    return "\n".join(lines) + "\n"
