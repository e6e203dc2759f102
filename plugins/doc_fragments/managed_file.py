# -*- coding: utf-8 -*-
# Copyright: cephops.osd_tuning contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):

    # The options of a module that owns one configuration file (module_utils/records.py).
    DOCUMENTATION = r"""
options:
  owner:
    description: Who owns the file; written into its header.
    type: str
    default: cephops.osd_tuning
  state:
    description: V(present) writes the file, V(absent) removes it (after a backup, see O(backup)).
    type: str
    choices: [present, absent]
    default: present
  record:
    description:
      - JSON file that keeps, per file, what was at O(path) before the module first changed it
        (no file, or the other content it replaced), so O(restore) can put it back. A file that
        carries the module's header is the module's own, from before it kept a record, and no
        file was there before it.
    type: path
  restore:
    description:
      - Put back what O(record) holds for O(path) (remove the file when there was none), then
        drop it from the record; the record file goes once empty. A file the record does not
        hold is removed when it carries the module's header, and left alone otherwise.
      - Requires O(record); O(state) and the options that say what the file holds are not used.
    type: bool
    default: false
  backup:
    description:
      - Keep a timestamped copy of a file that is replaced or removed, in C(backups/) beside O(record), so that nothing the collection
        made stays in C(/etc); beside the file without O(record).
      - Not of a file that carries the module's header, since the module can write its own file
        again, and a copy of it would outlive the undo.
    type: bool
    default: true
"""
