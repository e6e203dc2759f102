#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: cephops.osd_tuning contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: udev_queue_rules
short_description: Keep block queue settings across reboots with a validated udev rules file
version_added: 0.1.0
description:
  - Owns one udev rules file whose rules set block queue attributes
    (C(ATTR{queue/scheduler}), C(ATTR{queue/max_sectors_kb}), C(ATTR{queue/iosched/fifo_batch}), ...)
    or run a program (C(RUN), for example a drive's write cache tool) on whole disks, when they
    appear at boot and on every later change event.
  - Rules are given as data (match keys and attributes), never as text, and are checked before
    anything is written. A value holding a quote, backslash or line break, a match key other
    than C(KERNEL), C(ENV{X}), C(ATTR{x}), C(ATTRS{x}), or a rule without any match is refused,
    so a disk model or serial can never end a rule early or add one.
  - The new file is written next to the old one, checked with C(udevadm verify) where udev has
    it (systemd 254 and later), backed up, and moved into place atomically. Only a real change
    is written; then udev reloads its rules and replays a change event for the named disks.
  - ansible.builtin.template cannot check a udev rules file on udev without C(udevadm verify),
    nor reload udev and replay events for chosen disks only when the file changed.
author:
  - cephops maintainers (@cephops)
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - cephops.osd_tuning.attributes
  - cephops.osd_tuning.managed_file
options:
  path:
    description:
      - The rules file, usually under C(/etc/udev/rules.d/).
      - udev runs rules files in the order of their names, and sets a disk's C(ENV{ID_SERIAL_SHORT})
        and C(ENV{ID_WWN}) in C(60-persistent-storage.rules); rules that match them are refused
        in a file whose name does not sort after that one, where they would never match.
    type: path
    required: true
  rules:
    description: The rules of the file, in order. Later rules win where several set one attribute.
    type: list
    elements: dict
    default: []
    suboptions:
      match:
        description:
          - Keys a disk must match, as udev key to value, for example C(KERNEL) to C(sd*) and
            C(ATTR{queue/rotational}) to C(0), or C(ENV{ID_SERIAL_SHORT}) to a serial number.
            Values may use udev globs.
          - Every rule also matches C(ACTION=="add|change"), C(SUBSYSTEM=="block") and
            C(ENV{DEVTYPE}=="disk").
        type: dict
        required: true
      attributes:
        description:
          - Queue attribute to value, for example C(scheduler) to V(none) and C(iosched/fifo_batch) to V(1).
          - A rule needs attributes, O(rules[].run), or both.
        type: dict
        default: {}
      action:
        description:
          - The events the rule acts on. V(add|change) when the disk appears (at boot too) and at
            every later change event; V(add) when it appears only, for a rule whose program must
            not run again at each change event (or would cause one itself, as a rescan does).
        type: str
        choices: ["add|change", add]
        default: "add|change"
      run:
        description:
          - Programs udev runs for the disk, each as an argument list, after every rule of the
            event, in order; C($devnode) and C($devpath) are udev's substitutions.
          - A program given by name is looked up on the host (as C(hdparm) becomes
            C(/usr/sbin/hdparm)), since udev finds a bare name only in its own directory; a
            program that is not installed is refused. A word holding a quote, backslash or line
            break is refused.
        type: list
        elements: list
        default: []
      comment:
        description: One line written above the rule.
        type: str
      skip:
        description:
          - Leave the disks this rule matches alone. No later rule of the file acts on them (the
            rule jumps to the file's end); it sets nothing and runs nothing itself.
          - For a disk a class or model rule would match but the operator left out, such as the
            disk that holds C(/), put first.
        type: bool
        default: false
  reload:
    description:
      - After a change, run C(udevadm control --reload), replay a change event for O(trigger)
        and wait for udev to settle, where udev's daemon answers (C(udevadm control --ping), not
        the mere presence of its socket file, which a container, chroot or image build keeps
        without a daemon behind it).
      - Where no daemon answers, the file is written all the same and takes effect at the next
        boot; RV(udev) says so, and the module fails only with O(require_udev). Check mode asks
        the daemon too, so it predicts the same.
    type: bool
    default: true
  require_udev:
    description:
      - With O(reload), fail before anything is written where no udev daemon answers.
    type: bool
    default: false
  trigger:
    description: Kernel names of the disks to replay an event for after a change.
    type: list
    elements: str
    default: []
  trigger_action:
    description:
      - The event replayed for O(trigger). V(change) reaches rules on V(add|change); V(add), as
        at boot, reaches every rule, V(add) ones too.
    type: str
    choices: [change, add]
    default: change
  trigger_open_check:
    description:
      - Right before the event is replayed, leave out each disk of O(trigger) that another
        process holds open, the disk or one of its partitions (the open check of
        M(cephops.osd_tuning.disk_facts)), with a warning naming the process, so that a rule
        that switches a drive's write cache does not act under a running virtual machine or
        database. The rule still acts when the disk next appears, as at boot.
    type: bool
    default: false
seealso:
  - module: cephops.osd_tuning.block_queue
"""

EXAMPLES = r"""
- name: SSDs and NVMe without scheduler, HDDs on mq-deadline, at every boot
  cephops.osd_tuning.udev_queue_rules:
    path: /etc/udev/rules.d/61-cephops-io-scheduler.rules
    owner: role cephops.osd_tuning.io_scheduler
    rules:
      - comment: SATA/SAS SSD
        match: {KERNEL: "sd*", "ATTR{queue/rotational}": "0"}
        attributes: {scheduler: none}
      - comment: HDD
        match: {KERNEL: "sd*", "ATTR{queue/rotational}": "1"}
        attributes: {scheduler: mq-deadline, "iosched/fifo_batch": 1}
    trigger: [sda, sdb]
    record: /var/lib/cephops-osd-tuning/udev_queue_rules.json

- name: A SATA SSD's write cache off whenever it appears (hdparm by name, found on the host)
  cephops.osd_tuning.udev_queue_rules:
    path: /etc/udev/rules.d/62-cephops-write-cache.rules
    rules:
      - match: {"ENV{ID_SERIAL_SHORT}": S3Z8NB0K123456}
        action: add
        run: [[hdparm, -W0, $devnode]]
    trigger: [sdb]
    trigger_action: add
    record: /var/lib/cephops-osd-tuning/write_cache.json

- name: Put back what was there before
  cephops.osd_tuning.udev_queue_rules:
    path: /etc/udev/rules.d/61-cephops-io-scheduler.rules
    restore: true
    record: /var/lib/cephops-osd-tuning/udev_queue_rules.json
"""

RETURN = r"""
path:
  description: The rules file.
  returned: always
  type: str
content:
  description: The file's content as the module wants it (empty for O(state=absent)).
  returned: always
  type: str
backup_file:
  description: The copy of the previous file.
  returned: when a file without the module's header was replaced or removed and O(backup=true)
  type: str
validated_with:
  description: How the new file was checked, V(udevadm verify) or V(structure) where udev cannot verify files.
  returned: when a file was written
  type: str
udev:
  description:
    - V(reloaded) where the daemon reloaded the rules (and replayed O(trigger)), V(not asked)
      with O(reload=false) or nothing changed, or why no daemon answered and that the rules
      take effect at the next boot.
  returned: success
  type: str
  sample: "not answering (udevadm control --ping: Failed to send a ping message: Connection refused): the rules take effect at the next boot"
triggered:
  description: Disks a change event was replayed for.
  returned: always
  type: list
  elements: str
held:
  description: The disks of O(trigger) left out by O(trigger_open_check), each with the reason.
  returned: always
  type: dict
  sample: {sdb: "open by another process: qemu-system-x86 (pid 4242)"}
"""

import re

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.cephops.osd_tuning.plugins.module_utils import blockdev, records


# udev rules that set block queue attributes, or run a program, rendered from structured input.
#
# Rules are built from data, never pasted from text, so that a disk model or serial holding a
# quote or a newline can never end a rule early or add one. ``render`` is pure; ``check``
# lists everything wrong with the input before anything is written.
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
        if rule.get("skip") and (rule.get("attributes") or rule.get("run")):
            errors.append("%s: a skip rule sets nothing and runs nothing" % where)
        elif not rule.get("skip") and not rule.get("attributes") and not rule.get("run"):
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


# Where a skip rule jumps: the file's last line. udev resolves a GOTO within its own file.
SKIP_LABEL = "cephops_end"


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
        if rule.get("skip"):
            parts.append('GOTO="%s"' % SKIP_LABEL)
        lines.append(", ".join(parts))
    if any(rule.get("skip") for rule in rules):
        lines.extend(["", 'LABEL="%s"' % SKIP_LABEL])
    return "\n".join(lines) + "\n"


def udev_silence(module):
    """Why no udev daemon answers, None where one does: its socket file can outlive it."""
    udevadm = module.get_bin_path("udevadm")
    if not udevadm:
        return "udevadm is not installed"
    rc, out, err = module.run_command([udevadm, "control", "--ping", "--timeout=5"])
    if rc != 0:
        return "udevadm control --ping: %s" % (" ".join((err or out).split()) or "exit %d" % rc)
    return None


def _verify(module, candidate):
    """Run udevadm verify where it exists; structure was checked before rendering anyway."""
    udevadm = module.get_bin_path("udevadm")
    if not udevadm:
        return "structure"
    rc, out, err = module.run_command([udevadm, "verify", "--resolve-names=never", candidate])
    if rc == 0:
        return "udevadm verify"
    if "Unknown command" in err or "Unknown operation" in err or "unrecognized" in err:
        return "structure"
    module.fail_json(msg="udevadm verify rejected the new rules, nothing installed: %s" % (err or out).strip())


def _apply(module, names):
    """Reload udev and replay the event for ``names``, less the disks the open check holds
    back when asked; returns (names triggered, {name: reason} held back)."""
    udevadm = module.get_bin_path("udevadm", required=True)
    held = blockdev.held_now(names) if names and module.params["trigger_open_check"] else {}
    for name in sorted(held):
        module.warn("%s: the event was not replayed, refused by the open check: %s; the rules act when the disk "
                    "next appears" % (name, held[name]))
    names = [name for name in names if name not in held]
    commands = [[udevadm, "control", "--reload"]]
    if names:
        trigger = [udevadm, "trigger", "--action=%s" % module.params["trigger_action"], "--subsystem-match=block"]
        for name in names:
            trigger.append("--sysname-match=%s" % name)
        commands.append(trigger)
        commands.append([udevadm, "settle", "--timeout=60"])
    for argv in commands:
        rc, out, err = module.run_command(argv)
        if rc != 0:
            module.fail_json(msg="%s failed: %s" % (" ".join(argv[1:3]), (err or out).strip()), changed=True)
    return names, held


def _resolve_programs(module, rules):
    """Each program given by name, as its absolute path on this host."""
    for rule in rules:
        for argv in rule["run"]:
            if argv and not str(argv[0]).startswith("/"):
                program = module.get_bin_path(str(argv[0]))
                if not program:
                    module.fail_json(msg="rules refused, nothing written: %s is not installed on this host, so "
                                         "udev could not run it" % argv[0])
                argv[0] = program
    return rules


def main():
    module = AnsibleModule(
        argument_spec=dict(
            path=dict(type="path", required=True),
            rules=dict(type="list", elements="dict", default=[], options=dict(
                match=dict(type="dict", required=True),
                attributes=dict(type="dict", default={}),
                action=dict(type="str", choices=["add|change", "add"], default="add|change"),
                run=dict(type="list", elements="list", default=[]),
                comment=dict(type="str"),
                skip=dict(type="bool", default=False),
            )),
            reload=dict(type="bool", default=True),
            require_udev=dict(type="bool", default=False),
            trigger=dict(type="list", elements="str", default=[]),
            trigger_action=dict(type="str", choices=["change", "add"], default="change"),
            trigger_open_check=dict(type="bool", default=False),
            **records.ARGUMENT_SPEC
        ),
        required_if=records.REQUIRED_IF,
        supports_check_mode=True,
    )
    module.run_command_environ_update = {"LC_ALL": "C"}  # output is parsed
    path, params = module.params["path"], module.params
    record = records.load_record(module)
    current = blockdev.read_file(path)
    if params["restore"]:
        wanted = records.restored(record, path, current)
        present, content = wanted is not None, wanted or ""
    elif params["state"] == "present":
        _resolve_programs(module, params["rules"])
        errors = check(params["rules"]) + check_order(path, params["rules"])
        if errors:
            module.fail_json(msg="rules refused, nothing written: " + "; ".join(errors), errors=errors)
        present, content = True, render(params["rules"], records.HEADER % params["owner"])
    else:
        present, content = False, ""
    changed = (current != content) if present else current is not None
    silence = udev_silence(module) if changed and params["reload"] else None
    if silence and params["require_udev"]:
        module.fail_json(msg="no udev daemon answers on this host (%s), so the rules could not take effect now; "
                             "nothing written (require_udev)" % silence)
    udev = "not answering (%s): the rules take effect at the next boot" % silence if silence else (
        "reloaded" if changed and params["reload"] else "not asked")
    if silence:
        module.warn("%s: %s" % (path, udev))
    result = dict(changed=changed, path=path, content=content, triggered=[], held={}, udev=udev,
                  diff=dict(before=current or "", after=content, before_header=path, after_header=path))
    if changed and not module.check_mode and record is not None and not params["restore"]:
        records.remember(module, params["record"], record, path, current)
    if changed and not module.check_mode:
        if present:
            result["validated_with"], backup = records.install(module, path, content, ".rules",
                                                               lambda candidate: _verify(module, candidate))
        else:
            backup = records.remove(module, path)
        if backup:
            result["backup_file"] = backup
        if params["reload"] and not silence:
            result["triggered"], result["held"] = _apply(module, params["trigger"])
    if params["restore"] and not module.check_mode:
        records.forget(module, params["record"], record, path)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
