# -*- coding: utf-8 -*-
# Copyright: cephops.osd_tuning contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One configuration file a module owns outright (a udev rules file, a modules-load.d file):
its header, the record of what it replaced (records.py, section ``files``), an atomic write with
a backup, and what a restore puts back."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re
import tempfile

from ansible_collections.cephops.osd_tuning.plugins.module_utils import records

HEADER = "Managed by %s. Local changes are overwritten."
MANAGED = re.compile(r"# Managed by .*\. Local changes are overwritten\.\n")
# Per file, its content before the module first changed it; None: there was none.
RECORD_SECTIONS = {"files": {}}
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
        return records.load(module.params["record"], RECORD_SECTIONS)
    except records.RecordError as exc:
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
    records.keep_first(record["files"], path, original(current))
    records.save(module, record_path, record)


def forget(module, record_path, record, path):
    """Drop ``path`` from the record after a restore; the record file goes once empty."""
    if path in record["files"]:
        record["files"].pop(path)
        records.save(module, record_path, record)


def install(module, path, content, suffix="", check=None):
    """Write ``content`` next to ``path``, let ``check(candidate)`` refuse it (fail_json) or name
    how it was checked, back the old file up when the module's ``backup`` says so and move the
    new one into place. Returns (what check returned, backup path or None)."""
    directory = os.path.dirname(path) or "."
    fd, candidate = tempfile.mkstemp(prefix=".cephops-", suffix=suffix, dir=directory)
    try:
        with os.fdopen(fd, "w") as handle:
            handle.write(content)
        os.chmod(candidate, 0o644)
        checked = check(candidate) if check else None
        backup = module.backup_local(path) if module.params["backup"] and os.path.exists(path) else None
        module.atomic_move(candidate, path)
    finally:
        if os.path.exists(candidate):
            os.unlink(candidate)
    return checked, backup


def remove(module, path):
    """Remove ``path``, after a backup when the module's ``backup`` says so; returns the backup."""
    backup = module.backup_local(path) if module.params["backup"] else None
    os.unlink(path)
    return backup
