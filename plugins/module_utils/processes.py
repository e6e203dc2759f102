# -*- coding: utf-8 -*-
# Copyright: cephops.osd_tuning contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The lifetime of the probes' programs (fio, dd): run side by side, stopped on time, never
outliving the module that started them; and the module's own end by a signal turned into an
exception, so that what it changed for the time of a probe is restored in ``finally`` blocks.

Ansible ends an async task or an interrupted run with SIGTERM/SIGINT/SIGHUP; Python's
default handling would skip that cleanup.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ctypes
import os
import signal
import subprocess
import tempfile
import time

PR_SET_PDEATHSIG = 1
TERMINATION_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


class Interrupted(Exception):
    """The module received a termination signal."""

    def __init__(self, signum):
        super(Interrupted, self).__init__("interrupted by signal %d" % signum)
        self.signum = signum


def trap_termination():
    """From now on a termination signal raises Interrupted in the module."""
    for signum in TERMINATION_SIGNALS:
        signal.signal(signum, _raise_interrupted)


def _raise_interrupted(signum, frame):  # pylint: disable=unused-argument
    # Later signals must not cut the cleanup short.
    for other in TERMINATION_SIGNALS:
        signal.signal(other, signal.SIG_IGN)
    raise Interrupted(signum)


def run_processes(argvs, timeout, stop_after=None, grace=10):
    """Run probes side by side; return [(rc, stdout, stderr, timed_out)] in order.

    ``stop_after`` seconds ends a run normally with SIGINT (dd prints its statistics);
    ``timeout`` seconds ends it with SIGTERM, then SIGKILL after ``grace``. Any exception
    while waiting (Interrupted) kills the probes before it propagates, so no writer
    outlives the module. Output goes to temporary files: fio's JSON for many disks can
    exceed a pipe buffer.
    """
    env = dict(os.environ, LC_ALL="C")
    files, procs = [], []
    try:
        for argv in argvs:
            out, err = tempfile.TemporaryFile(), tempfile.TemporaryFile()
            files.append((out, err))
            procs.append(subprocess.Popen(argv, stdout=out, stderr=err, env=env, close_fds=True,
                                          preexec_fn=_prepare_child))
        start = time.monotonic()
        timed_out = [False] * len(procs)
        stopped = stop_after is None
        while any(p.poll() is None for p in procs):
            elapsed = time.monotonic() - start
            if not stopped and elapsed >= stop_after:
                _signal_all(procs, signal.SIGINT)
                stopped = True
            if elapsed >= timeout:
                for index, proc in enumerate(procs):
                    timed_out[index] = proc.poll() is None
                _signal_all(procs, signal.SIGTERM)
                _wait_all(procs, grace)
                _signal_all(procs, signal.SIGKILL)
                _wait_all(procs, grace)
                break
            time.sleep(0.05)
    except BaseException:
        _signal_all(procs, signal.SIGKILL)
        _wait_all(procs, grace)
        raise
    finally:
        results = []
        for proc, (out, err) in zip(procs, files):
            out.seek(0)
            err.seek(0)
            results.append((proc.returncode, out.read().decode("utf-8", "replace"),
                            err.read().decode("utf-8", "replace")))
            out.close()
            err.close()
    return [result + (flag,) for result, flag in zip(results, timed_out)]


def _prepare_child():
    """In the child before exec. SIGINT back to its default: a module started from a background
    job inherits it ignored, and a program that finds it ignored keeps it so (dd then neither
    stops on it nor prints its statistics). And the kernel kills the child when the module
    dies, even by SIGKILL, so no probe writes on after the module that would restore its region
    (Linux only)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    try:
        ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
    except (AttributeError, OSError):
        pass


def _signal_all(procs, signum):
    for proc in procs:
        if proc.poll() is None:
            try:
                proc.send_signal(signum)
            except OSError:
                pass


def _wait_all(procs, seconds):
    deadline = time.monotonic() + seconds
    for proc in procs:
        try:
            proc.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            pass
