# -*- coding: utf-8 -*-
# Copyright: cephops.osd_tuning contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Processes around the disks: the probes' programs (fio, dd) run side by side, stopped on
time and never outliving the module that started them; the module's own end by a signal
turned into an exception, so that what it changed for the time of a probe is restored in
``finally`` blocks; and the other processes that hold a disk open.

Ansible ends an async task or an interrupted run with SIGTERM/SIGINT/SIGHUP; Python's
default handling would skip that cleanup.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ctypes
import os
import signal
import stat
import subprocess
import tempfile
import time

PR_SET_PDEATHSIG = 1
# udev's workers open a disk for a moment after every change to run blkid on it (systemd's
# `systemd-udevd` forks them; since systemd 248 they call themselves `(udev-worker)`).
UDEV_WORKERS = ("systemd-udevd", "(udev-worker)")
# A process holds a disk when it still does this many seconds later: a passing read by another
# inventory (a content check, ceph-volume, smartctl) is over by then; a virtual machine or a
# database that keeps the disk is not.
SETTLE_SECONDS = 1.0
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
            # run_command runs one process to its end: it can neither run the probes side by
            # side nor stop them with SIGINT after stop_after seconds.
            procs.append(subprocess.Popen(argv, stdout=out, stderr=err, env=env,  # pylint: disable=ansible-bad-function
                                          close_fds=True, preexec_fn=_prepare_child))
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


def holding(devnums, settle=SETTLE_SECONDS):
    """{"major:minor": [(pid, command name)]} of the processes that hold one of the block
    devices ``devnums`` open, through a file descriptor (/proc/PID/fd) or a mapping
    (/proc/PID/maps), read or write, exclusive or not, and still do ``settle`` seconds later
    (looked at again only when the first look finds any). Not counted: this process and its
    children (a module's own fio or blkid) and udev's workers, which open a disk briefly
    after each change."""
    found = _holding(set(devnums))
    if settle and any(found.values()):
        time.sleep(settle)
        again = _holding(set(devnums))
        found = dict((devnum, [h for h in holders if h in again[devnum]]) for devnum, holders in found.items())
    return found


def _holding(wanted):
    found = dict((devnum, []) for devnum in wanted)
    if not wanted:
        return found
    table = _process_table()
    ours = _descendants(table, os.getpid())
    for pid, (_ppid, comm) in sorted(table.items()):
        if pid in ours or comm in UDEV_WORKERS:
            continue
        for devnum in _devices_open(pid, wanted):
            found[devnum].append((pid, comm))
    return found


def describe_holders(holders):
    """"fio (pid 12), qemu-system-x86 (pid 34)" for [(pid, command name)]."""
    return ", ".join("%s (pid %d)" % (comm, pid) for pid, comm in holders)


def read_stat(pid):
    """(command name, [the fields after it]) of /proc/PID/stat, from its state on (field 3);
    None when the process is gone."""
    try:
        with open("/proc/%d/stat" % pid) as handle:
            text = handle.read()
    except (IOError, OSError):
        return None
    # The command name is in parentheses and may itself hold spaces and parentheses.
    return text[text.index("(") + 1:text.rindex(")")], text[text.rindex(")") + 1:].split()


def _process_table():
    """{pid: (parent pid, command name)} of the processes running now."""
    table = {}
    for entry in os.listdir("/proc"):
        found = read_stat(int(entry)) if entry.isdigit() else None
        if found:
            table[int(entry)] = (int(found[1][1]), found[0])
    return table


def _descendants(table, root):
    """``root`` and every process below it in ``table``."""
    children = {}
    for pid, (ppid, _comm) in table.items():
        children.setdefault(ppid, []).append(pid)
    found, pending = set(), [root]
    while pending:
        pid = pending.pop()
        if pid not in found:
            found.add(pid)
            pending.extend(children.get(pid, []))
    return found


def _devices_open(pid, wanted):
    """The devnums of ``wanted`` that process ``pid`` holds open or mapped."""
    found = set()
    fd_dir = "/proc/%d/fd" % pid
    try:
        fds = os.listdir(fd_dir)
    except OSError:
        fds = []
    for fd in fds:
        try:
            target = os.readlink(os.path.join(fd_dir, fd))
        except OSError:
            continue
        # Sockets, pipes and anonymous inodes read as "type:[inode]"; only paths can be devices.
        if target.startswith("/"):
            found.update(_devnum_of(os.path.join(fd_dir, fd), wanted))
    try:
        with open("/proc/%d/maps" % pid) as handle:
            for line in handle:
                fields = line.split(None, 5)
                if len(fields) == 6 and fields[5].startswith("/dev/"):
                    found.update(_devnum_of(fields[5].rstrip("\n"), wanted))
    except (IOError, OSError):
        pass
    return found


def _devnum_of(path, wanted):
    """[devnum] when ``path`` is one of the block devices ``wanted``, else []."""
    try:
        st = os.stat(path)
    except OSError:
        return []
    devnum = "%d:%d" % (os.major(st.st_rdev), os.minor(st.st_rdev))
    return [devnum] if stat.S_ISBLK(st.st_mode) and devnum in wanted else []
