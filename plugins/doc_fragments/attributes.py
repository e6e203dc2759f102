# -*- coding: utf-8 -*-
# Copyright: cephops.osd_tuning contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):
    """What every module of the collection supports, beside ansible.builtin.action_common_attributes
    (which describes the attributes); a module adds its own C(details) where it has some."""

    # Modules that change the host: full check mode and diff.
    DOCUMENTATION = r"""
options: {}
attributes:
  check_mode:
    support: full
  diff_mode:
    support: full
  platform:
    platforms: linux
"""

    # Modules whose result is a report, not a change to a file: full check mode, no diff.
    NO_DIFF = r"""
options: {}
attributes:
  check_mode:
    support: full
  diff_mode:
    support: none
  platform:
    platforms: linux
"""
