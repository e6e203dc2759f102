# -*- coding: utf-8 -*-
# Copyright: cephops.osd_tuning contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The records modules keep of what they changed, so that ``restore: true`` can undo it.

One convention for every module that changes persistent state: ``record: PATH`` names a
JSON file (the roles keep theirs in ``/var/lib/cephops-osd-tuning/``, one per module and
role), which holds sections of originals keyed by what they belong to (a disk's identity, a
mount point, a file). The first original of a key is kept, whatever later runs change; a
restore puts the originals back and drops them; the file goes once every section is empty.

A configuration file a module owns outright (a udev rules file, a modules-load.d file) is
recorded in section ``files``, with its header, an atomic write with a backup and what a
restore puts back; the modules that own one import this file as ``managed_file``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import re
import shutil
import tempfile
import time


class RecordError(Exception):
    """The file is not a record of the module that reads it; the message says why."""


def load(path, sections):
    """The record at ``path``, with every section of ``sections`` (name: empty value, which
    also gives the section's type) present. No file, or an empty one, is an empty record."""
    try:
        with open(path) as handle:
            text = handle.read()
    except (IOError, OSError):
        text = ""
    try:
        record = json.loads(text) if text.strip() else {}
    except ValueError as exc:
        raise RecordError("%s: not JSON (%s)" % (path, exc))
    if not isinstance(record, dict):
        raise RecordError("%s: not a record (a JSON object)" % path)
    for name, empty in sections.items():
        record.setdefault(name, type(empty)())
        if not isinstance(record[name], type(empty)):
            raise RecordError("%s: not a record of this module (%s is not a %s)"
                              % (path, name, "list" if isinstance(empty, list) else "mapping"))
    return record


def keep_first(section, key, original):
    """Keep ``original`` as what ``key`` had before its first change; an original kept by an
    earlier run stays. Returns the original kept."""
    return section.setdefault(key, original)


def save(module, path, record):
    """Write ``record`` atomically, or remove the file once every section is empty (nothing
    left to undo)."""
    if not any(record.values()):
        if os.path.exists(path):
            os.unlink(path)
        return
    directory = os.path.dirname(path) or "."
    if not os.path.isdir(directory):
        os.makedirs(directory, 0o755)
    fd, staged = tempfile.mkstemp(prefix=".cephops-", dir=directory)
    with os.fdopen(fd, "w") as handle:
        handle.write(json.dumps(record, indent=1, sort_keys=True) + "\n")
    module.atomic_move(staged, path)


def backup_of(module, path):
    """A timestamped copy of ``path`` before it is replaced or removed: in ``backups/`` beside
    the module's record, so that nothing the collection made stays in /etc (a backup in
    rules.d or beside fstab outlives every undo); beside the file, as Ansible keeps them, for a
    module run without a record."""
    if not module.params.get("record"):
        return module.backup_local(path)
    directory = os.path.join(os.path.dirname(module.params["record"]) or ".", "backups")
    if not os.path.isdir(directory):
        os.makedirs(directory, 0o700)
    copy = os.path.join(directory, "%s.%d.%s~" % (
        path.strip("/").replace("/", "_"), os.getpid(), time.strftime("%Y-%m-%d@%H:%M:%S")))
    shutil.copy2(path, copy)
    return copy


# --------------------------------------------------------------------------- a file a module owns

HEADER = "Managed by %s. Local changes are overwritten."
MANAGED = re.compile(r"# Managed by .*\. Local changes are overwritten\.\n")
# Per file, its content before the module first changed it; None: there was none.
FILE_SECTIONS = {"files": {}}
# The options of doc fragment cephops.osd_tuning.managed_file, for AnsibleModule.
ARGUMENT_SPEC = dict(
    owner=dict(type="str", default="cephops.osd_tuning"),
    state=dict(type="str", choices=["present", "absent"], default="present"),
    backup=dict(type="bool", default=True),
    record=dict(type="path"),
    restore=dict(type="bool", default=False),
)
REQUIRED_IF = [("restore", True, ("record",))]


def load_record(module):
    """The module's record (None without O(record)); a file that is not one fails the module."""
    if not module.params["record"]:
        return None
    try:
        return load(module.params["record"], FILE_SECTIONS)
    except RecordError as exc:
        module.fail_json(msg=str(exc))


def original(current):
    """What was there before the module: a file carrying its header is its own."""
    return None if current is None or MANAGED.match(current) else current


def restored(record, path, current):
    """What a restore puts at ``path``: the recorded original; without one, nothing when the
    file carries the header, else the file as it is."""
    return record["files"][path] if path in record["files"] else original(current)


def remember(module, record_path, record, path, current):
    """Keep what ``path`` held before the first change, saved before the file changes so that an
    interrupted run still knows what to put back."""
    keep_first(record["files"], path, original(current))
    save(module, record_path, record)


def forget(module, record_path, record, path):
    """Drop ``path`` from the record after a restore; the record file goes once empty."""
    if path in record["files"]:
        record["files"].pop(path)
        save(module, record_path, record)


def _backed_up(module, path):
    """A backup of ``path`` where the module's ``backup`` says so and the file is not the
    collection's own (its header): what the collection wrote, it can write again, and a copy
    of it would outlive the undo."""
    if not module.params["backup"] or not os.path.exists(path):
        return None
    with open(path) as handle:
        own = MANAGED.match(handle.read(256)) is not None
    return None if own else backup_of(module, path)


def install(module, path, content, suffix="", check=None):
    """Write ``content`` next to ``path``, let ``check(candidate)`` refuse it (fail_json) or name
    how it was checked, back the old file up (``_backed_up``) and move the new one into place.
    Returns (what check returned, backup path or None)."""
    directory = os.path.dirname(path) or "."
    fd, candidate = tempfile.mkstemp(prefix=".cephops-", suffix=suffix, dir=directory)
    try:
        with os.fdopen(fd, "w") as handle:
            handle.write(content)
        os.chmod(candidate, 0o644)
        checked = check(candidate) if check else None
        backup = _backed_up(module, path)
        module.atomic_move(candidate, path)
    finally:
        if os.path.exists(candidate):
            os.unlink(candidate)
    return checked, backup


def remove(module, path):
    """Remove ``path``, after a backup (``_backed_up``); returns the backup."""
    found = _backed_up(module, path)
    os.unlink(path)
    return found
