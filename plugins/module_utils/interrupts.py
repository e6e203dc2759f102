# -*- coding: utf-8 -*-
# Copyright: cephops.osd_tuning contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Turn termination signals into an exception, so cleanup in ``finally`` blocks runs.

Ansible ends an async task or an interrupted run with SIGTERM/SIGINT/SIGHUP; Python's
default handling would skip restoring what a module changed for the time of a probe.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import signal

SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


class Interrupted(Exception):
    """The module received a termination signal."""

    def __init__(self, signum):
        super(Interrupted, self).__init__("interrupted by signal %d" % signum)
        self.signum = signum


def _raise(signum, frame):  # pylint: disable=unused-argument
    # Later signals must not cut the cleanup short.
    for other in SIGNALS:
        signal.signal(other, signal.SIG_IGN)
    raise Interrupted(signum)


def trap():
    for signum in SIGNALS:
        signal.signal(signum, _raise)
