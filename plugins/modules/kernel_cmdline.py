#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: cephops.osd_tuning contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: kernel_cmdline
short_description: Add or remove kernel command-line arguments in the grub configuration, safely
version_added: 0.1.0
description:
  - Removes the arguments named in O(absent) and sets those in O(present) in the kernel
    command line that grub boots with, then regenerates the grub configuration. Used by the
    C(io_scheduler) role to drop C(elevator=), which blk-mq kernels ignore, and to set it on the
    old single-queue kernels that still honour it.
  - Debian family - edits C(GRUB_CMDLINE_LINUX) and C(GRUB_CMDLINE_LINUX_DEFAULT) in
    C(/etc/default/grub) and C(/etc/default/grub.d/*.cfg) in place (comments, other lines and
    quoting stay as written), then runs C(update-grub) or C(grub-mkconfig). Arguments to set go
    into the last of these files that assigns O(variable), the assignment grub keeps (on
    Ubuntu's cloud images, C(GRUB_CMDLINE_LINUX_DEFAULT) in C(grub.d/50-cloudimg-settings.cfg)).
  - EL family - additionally updates every boot entry with C(grubby) when C(grubby) is present.
  - Where it runs (the collection's C(docs/platforms.md)) - the Debian path runs in the
    collection's lab on Debian 11, 12 and 13. On Ubuntu it is tested only on the
    C(/etc/default/grub) of Ubuntu 24.04 and the drop-in of Ubuntu's cloud images; the EL path
    only against the C(grubby --info=ALL) output of a RHEL 8.6 and a Rocky Linux 9.1 host, and
    C(grub2-mkconfig) not at all.
  - Before anything is written, the edited files are sourced by C(sh) in the order grub reads
    them, and the resulting command line must be what was asked for. Every file is backed up
    and replaced atomically; if regenerating the grub configuration fails, the files are put
    back and the module fails.
  - Values that only a shell could evaluate (command substitution, expansions other than the
    variable's own previous value) are refused, not guessed at.
  - Reports C(reboot_required) when the running kernel's C(/proc/cmdline) differs from what
    was asked for; it never reboots.
  - No module of ansible.builtin, ansible.posix or community.general edits kernel arguments
    inside the grub defaults file; lineinfile would rewrite whole lines and cannot check the
    result the way grub reads it.
author:
  - cephops maintainers (@cephops)
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - cephops.osd_tuning.attributes
options:
  absent:
    description: Names of arguments to remove wherever they appear, for example V(elevator).
    type: list
    elements: str
    default: []
  present:
    description: Arguments to set, name to value, for example C(elevator) to V(deadline).
    type: dict
    default: {}
  variable:
    description: The variable O(present) arguments go into.
    type: str
    choices: [GRUB_CMDLINE_LINUX, GRUB_CMDLINE_LINUX_DEFAULT]
    default: GRUB_CMDLINE_LINUX
  defaults_file:
    description:
      - The grub defaults file; C(*.cfg) in the C(.d) folder next to it are read after it.
      - When it does not exist (a host without grub), removing arguments has nothing to do and
        setting them fails.
    type: path
    default: /etc/default/grub
  update:
    description: Regenerate the grub configuration after a change.
    type: bool
    default: true
  backup:
    description:
      - Keep a timestamped copy of each file changed, in C(backups/) beside O(record), so that nothing the collection
        made stays in C(/etc); beside the file without O(record).
    type: bool
    default: true
  record:
    description:
      - A JSON file that keeps, the first time this collection changes them, the arguments it
        removed and the values it replaced, so O(restore) can put them back.
    type: path
  restore:
    description:
      - Put back what O(record) kept (remove the arguments set, restore the ones removed or
        replaced), then delete the record. Requires O(record); O(absent) and O(present) are not used.
    type: bool
    default: false
"""

EXAMPLES = r"""
- name: Drop elevator=, which blk-mq kernels ignore
  cephops.osd_tuning.kernel_cmdline:
    absent: [elevator]
  register: cmdline

- name: Roll back what the collection changed
  cephops.osd_tuning.kernel_cmdline:
    restore: true
    record: /var/lib/cephops-osd-tuning/kernel_cmdline.json

- name: Tell when a reboot is due
  ansible.builtin.debug:
    msg: "reboot required: {{ cmdline.reboot_required }}"
"""

RETURN = r"""
files:
  description: Files changed (or to change, in check mode), each with its arguments before and after.
  returned: always
  type: dict
  sample: {/etc/default/grub: {before: [quiet, elevator=noop], after: [quiet]}}
backups:
  description: Backup copies made.
  returned: always
  type: list
  elements: str
effective:
  description: GRUB_CMDLINE_LINUX and GRUB_CMDLINE_LINUX_DEFAULT as grub will read them.
  returned: always
  type: dict
running:
  description: Arguments of the running kernel (C(/proc/cmdline)).
  returned: always
  type: list
  elements: str
reboot_required:
  description: The running kernel's arguments differ from what was asked for.
  returned: always
  type: bool
grubby_entries_updated:
  description: Whether grubby updated boot entries (EL family).
  returned: always
  type: bool
"""

import glob
import os
import re
import shutil
import tempfile

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.cephops.osd_tuning.plugins.module_utils import records


# Kernel arguments in /etc/default/grub and grub.d/*.cfg: parse and edit in place.
#
# Only the ``GRUB_CMDLINE_LINUX`` and ``GRUB_CMDLINE_LINUX_DEFAULT`` assignments change, and
# only their arguments; comments, other lines and the quoting style stay as written. Values
# that need a shell to understand (command substitution, expansions other than the variable's
# own previous value) are refused rather than guessed at.
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


# Prints the two variables after sourcing the given files in order, as grub-mkconfig does.
EFFECTIVE_SCRIPT = 'for f in "$@"; do . "$f" || exit 3; done; printf "%s\\n%s\\n" "$GRUB_CMDLINE_LINUX" "$GRUB_CMDLINE_LINUX_DEFAULT"'


def _read(path):
    with open(path) as handle:
        return handle.read()


def _effective(module, files):
    rc, out, err = module.run_command(["sh", "-c", EFFECTIVE_SCRIPT, "sh"] + files)
    if rc != 0:
        return None, (err or out).strip() or "rc=%s" % rc
    linux, _sep, default = out.partition("\n")
    return {"GRUB_CMDLINE_LINUX": linux.split(), "GRUB_CMDLINE_LINUX_DEFAULT": default.split()}, None


def _load_record(module, path):
    try:
        return records.load(path, RECORD_SECTIONS)
    except records.RecordError as exc:
        module.fail_json(msg=str(exc))


def _save_record(module, path, record):
    """Write the record, or drop it (None: a restore put everything back)."""
    records.save(module, path, record or {})


def _update_command(module):
    for argv in (["update-grub"], ["grub-mkconfig", "-o", "/boot/grub/grub.cfg"],
                 ["grub2-mkconfig", "-o", "/boot/grub2/grub.cfg"]):
        path = module.get_bin_path(argv[0])
        if path:
            return [path] + argv[1:]
    module.fail_json(msg="no update-grub, grub-mkconfig or grub2-mkconfig found; nothing written")


def main():
    module = AnsibleModule(
        argument_spec=dict(
            absent=dict(type="list", elements="str", default=[]),
            present=dict(type="dict", default={}),
            variable=dict(type="str", choices=list(CMDLINE_VARIABLES), default="GRUB_CMDLINE_LINUX"),
            defaults_file=dict(type="path", default="/etc/default/grub"),
            update=dict(type="bool", default=True),
            backup=dict(type="bool", default=True),
            record=dict(type="path"),
            restore=dict(type="bool", default=False),
        ),
        mutually_exclusive=[("restore", "absent"), ("restore", "present")],
        required_if=[("restore", True, ("record",))],
        supports_check_mode=True,
    )
    module.run_command_environ_update = {"LC_ALL": "C"}  # output is parsed
    p = module.params
    record = _load_record(module, p["record"]) if p["record"] else None
    if p["restore"]:
        p["absent"], p["present"] = restore_request(record)
    present = dict((str(k), str(v)) for k, v in p["present"].items())
    bad = [n for n in list(p["absent"]) + list(present) if not n or "=" in n or " " in n]
    bad += ["%s=%s" % (n, v) for n, v in present.items() if not v or " " in v or '"' in v or "'" in v]
    if bad:
        module.fail_json(msg="not a kernel argument name or value: %s" % ", ".join(bad))
    if not os.path.exists(p["defaults_file"]):
        # Nothing configured there, so nothing to remove; setting needs the file.
        if present:
            module.fail_json(msg="%s does not exist; cannot set %s" % (p["defaults_file"], ", ".join(sorted(present))))
        running = _read("/proc/cmdline").split()
        module.exit_json(changed=False, files={}, backups=[], effective={}, running=running,
                         reboot_required=not args_satisfy(running, p["absent"]), grubby_entries_updated=False)

    files = [p["defaults_file"]] + sorted(glob.glob(p["defaults_file"] + ".d/*.cfg"))
    texts = dict((path, _read(path)) for path in files)
    # present arguments go into the last file that sets the variable, or the defaults file.
    setting = [path for path in files if assigns(texts[path], p["variable"])]
    target_file = setting[-1] if setting else p["defaults_file"]
    new_texts, changes = {}, {}
    try:
        for path in files:
            if path == target_file:
                new_text, before, after = edit_text(texts[path], p["absent"], present, p["variable"])
            else:
                new_text, before, after = edit_text(texts[path], tuple(p["absent"]) + tuple(present))
            if new_text != texts[path]:
                new_texts[path] = new_text
                changes[path] = dict(before=before, after=after)
    except ValueError as exc:
        module.fail_json(msg="nothing written: %s" % exc)

    scratch = tempfile.mkdtemp(prefix="cephops-grub-")
    try:
        candidates = []
        for path in files:
            candidate = os.path.join(scratch, "%02d" % len(candidates))
            with open(candidate, "w") as handle:
                handle.write(new_texts.get(path, texts[path]))
            candidates.append(candidate)
        effective, error = _effective(module, candidates)
    finally:
        shutil.rmtree(scratch)
    if error:
        module.fail_json(msg="the edited grub defaults do not source cleanly, nothing written: %s" % error)
    all_args = effective["GRUB_CMDLINE_LINUX"] + effective["GRUB_CMDLINE_LINUX_DEFAULT"]
    if not args_satisfy(all_args, p["absent"], present):
        module.fail_json(msg="the edited grub defaults would boot with %s, not what was asked; nothing written"
                         % " ".join(all_args), effective=effective)

    grubby = module.get_bin_path("grubby")
    grubby_argv = None
    if grubby:
        rc, out, err = module.run_command([grubby, "--info=ALL"])
        if rc != 0:
            module.fail_json(msg="grubby --info=ALL failed: %s" % (err or out).strip())
        if not all(args_satisfy(args, p["absent"], present) for _kernel, args in parse_grubby_info(out)):
            grubby_argv = [grubby, "--update-kernel=ALL"]
            if p["absent"]:
                grubby_argv.append("--remove-args=%s" % " ".join(p["absent"]))
            if present:
                grubby_argv.append("--args=%s" % " ".join("%s=%s" % item for item in sorted(present.items())))

    running = _read("/proc/cmdline").split()
    result = dict(
        changed=bool(new_texts or grubby_argv), files=changes, backups=[], effective=effective, running=running,
        reboot_required=not args_satisfy(running, p["absent"], present),
        grubby_entries_updated=False,
        diff=[dict(before_header=path, after_header=path, before=texts[path], after=new_texts[path])
              for path in sorted(new_texts)],
    )
    if module.check_mode or not result["changed"]:
        if p["restore"] and not result["changed"] and not module.check_mode:
            _save_record(module, p["record"], None)
        module.exit_json(**result)

    update_argv = _update_command(module) if new_texts and p["update"] else None
    if record is not None:
        # Saved before the files change, so an interrupted run still knows what to undo.
        _save_record(module, p["record"], None if p["restore"] else remember(
            record, p["absent"], present, [change["before"] for change in changes.values()]))
    for path in sorted(new_texts):
        if p["backup"]:
            result["backups"].append(records.backup_of(module, path))
        fd, staged = tempfile.mkstemp(prefix=".cephops-", dir=os.path.dirname(path))
        with os.fdopen(fd, "w") as handle:
            handle.write(new_texts[path])
        shutil.copymode(path, staged)
        module.atomic_move(staged, path)
    if update_argv:
        rc, out, err = module.run_command(update_argv)
        if rc != 0:
            for path in sorted(new_texts):
                with open(path, "w") as handle:
                    handle.write(texts[path])
            module.fail_json(msg="%s failed, grub defaults put back as they were: %s"
                             % (os.path.basename(update_argv[0]), (err or out).strip()), changed=False)
    if grubby_argv:
        rc, out, err = module.run_command(grubby_argv)
        if rc != 0:
            module.fail_json(msg="grubby failed: %s" % (err or out).strip(), **result)
        result["grubby_entries_updated"] = True
    module.exit_json(**result)


if __name__ == "__main__":
    main()
