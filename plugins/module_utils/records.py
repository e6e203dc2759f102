# -*- coding: utf-8 -*-
# Copyright: cephops.osd_tuning contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The JSON records modules keep of what they changed, so a rollback can undo it."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import tempfile


def save(module, path, record, empty):
    """Write ``record`` atomically, or remove the file when ``empty`` (nothing left to undo)."""
    if empty:
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
