# -*- coding: utf-8 -*-
# Copyright: cephops.osd_tuning contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):
    """The option of the modules that write a whole disk: how far their content check reads."""

    DOCUMENTATION = r"""
options:
  accept_sampled_content_check:
    description:
      - Accept the content checks' sample for a large rotational disk (over 256 GiB), which
        they do not read in full; such a disk is refused with C(content not fully checked)
        otherwise. Between its first and last 64 MiB, which are always read whole, the sample
        reads 56 MiB spread over the disk, so data that lies wholly between two sampled MiB
        is not seen. Naming the disk in its C(overwrite_data) accepts the loss of any data
        instead.
      - Every other disk gets the full check, which reads the first and last 64 MiB whole and
        one MiB in every 16 MiB between (more apart on disks over 256 GiB, so it reads at most
        about 16 GiB); docs/safety.md gives the largest run of data it can miss per disk size.
    type: bool
    default: false
"""
