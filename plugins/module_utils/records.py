# -*- coding: utf-8 -*-
# Copyright: cephops.osd_tuning contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The records modules keep of what they changed, so that ``restore: true`` can undo it.

One convention for every module that changes persistent state: ``record: PATH`` names a
JSON file (the roles keep theirs in ``/var/lib/cephops-osd-tuning/``, one per module and
role), which holds sections of originals keyed by what they belong to (a disk's identity, a
mount point, a file). The first original of a key is kept, whatever later runs change; a
restore puts the originals back and drops them; the file goes once every section is empty.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import tempfile


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
