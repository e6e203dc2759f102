# -*- coding: utf-8 -*-
# Copyright: cephops.osd_tuning contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which fio options a user may give the sync-write probe, checked against fio's own names.

fio takes an option by its name, by its alias (``fileoffset`` is ``offset``) and, on the
command line, by any unambiguous abbreviation (``--fileoff``). So a list of options to refuse
can never be complete; instead only an allow-list of options that cannot change where or how
much the probe writes, nor touch anything outside its region, is accepted. Each key is
looked up with ``fio --cmdhelp=KEY``, which names the option a key stands for, and the probe
then passes fio that canonical name.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import re

# Canonical fio names (as ``fio --cmdhelp`` prints them). fio keeps every I/O of a job inside
# [offset, offset + size), the range the probe sets, whatever these options say.
ALLOWED_OPTIONS = frozenset((
    # How writes are issued and made durable: engine, O_DIRECT or the page cache, fsync,
    # fdatasync, O_SYNC/O_DSYNC, a flush at the end.
    "ioengine", "direct", "buffered", "fsync", "fdatasync", "sync", "end_fsync", "fsync_on_close",
    # Block sizes and alignment: fio fits every block inside the range.
    "bs", "bsrange", "bssplit", "ba",
    # Writes in flight and how they are submitted and reaped: when they go, not where.
    "iodepth", "iodepth_batch", "iodepth_batch_complete_min", "iodepth_batch_complete_max", "iodepth_low",
    # Direction and read/write mix.
    "rw", "rwmixread", "rwmixwrite",
    # Which offsets inside the range random I/O picks.
    "randrepeat", "randseed", "allrandrepeat", "norandommap", "random_generator", "random_distribution",
    "percentage_random",
    # Pace: rate limits and idle time between writes.
    "rate", "rate_min", "rate_process", "rate_cycle", "rate_ignore_thinktime", "rate_iops", "rate_iops_min",
    "thinktime", "thinktime_spin", "thinktime_blocks", "thinktime_blocks_type", "thinktime_iotime",
    # Scheduling of fio itself: CPU and I/O priority, CPU affinity. (The probe always runs fio's
    # jobs as threads, so that they die with it.)
    "nice", "prio", "prioclass", "cpus_allowed", "cpumask", "cpus_allowed_policy",
    # Memory of the I/O buffers.
    "mem",
    # Content of the written buffers.
    "zero_buffers", "refill_buffers", "scramble_buffers", "buffer_pattern", "buffer_compress_percentage",
    "buffer_compress_chunk", "dedupe_percentage",
    # What fio measures and reports.
    "clat_percentiles", "lat_percentiles", "slat_percentiles", "percentile_list", "significant_figures",
    "gtod_reduce", "disable_lat", "disable_clat", "disable_slat",
    # Drops the disk's cached pages before the job, so reads are not served from memory.
    "invalidate",
))

# Allowed options with values that reach outside the region: other engines delete files
# (filedelete), run programs (exec), send SCSI commands (sg) or load code (external:);
# trims discard data and rw's ":N" suffix skips ahead; mem's "type:FILE" creates and
# truncates FILE.
VALUE_CHOICES = {
    "ioengine": ("libaio", "io_uring", "psync", "sync", "pvsync", "pvsync2", "posixaio"),
    "rw": ("read", "write", "randread", "randwrite", "rw", "readwrite", "randrw"),
    "mem": ("malloc", "shm", "shmhuge", "mmap", "mmapshared", "mmaphuge"),
}
# A buffer_pattern part in single quotes names a file fio reads.
FORBIDDEN_IN_VALUE = {"buffer_pattern": "'"}

NAME = re.compile(r"\A[a-z0-9_-]+\Z")
UNSAFE_VALUE = re.compile(r"[\s\x00-\x1f\x7f-\x9f]")

WHERE_TO_LOOK = ("The options the probe allows are listed under fio_options in "
                 "ansible-doc cephops.osd_tuning.sync_write_probe.")


def cmdhelp_command(fio, key):
    return [fio, "--cmdhelp=" + key]


def parse_cmdhelp(stdout, stderr):
    """(canonical name, [aliases]) from ``fio --cmdhelp=KEY``, None when fio has no option of
    exactly that name. fio then says 'No such command' (exit status 0) and may print the
    closest option, which must not count as a match."""
    if "No such command" in (stdout or "") + (stderr or ""):
        return None
    lines = [line for line in (stdout or "").splitlines() if line.strip()]
    match = re.match(r"^\s*([a-z0-9_-]+): ", lines[0]) if lines else None
    if not match:
        return None
    aliases = [m.group(1) for m in (re.match(r"^\s*alias: (\S+)\s*$", line) for line in lines[1:]) if m]
    return match.group(1), aliases


def allowed_overrides(overrides, fio, run_command):
    """The user's fio options as {canonical name: value}, or ValueError naming every option
    refused and why.

    ``fio`` is fio's path (None when it is not installed); ``run_command(argv)`` returns
    (rc, stdout, stderr) and runs ``fio --cmdhelp`` once per distinct key.
    """
    if not overrides:
        return {}
    if fio is None:
        raise ValueError("fio_options refused: fio is not installed, so the probe writes with dd, "
                         "which takes no fio options (%s)" % ", ".join(sorted(overrides)))
    refused, given = [], {}
    for key in sorted(overrides):
        name = key.lstrip("-")
        if not NAME.match(name):
            refused.append("%s: not an option name (only a-z, 0-9, _ and -)" % json.dumps(key, ensure_ascii=False))
        else:
            given.setdefault(name, []).append(key)
    accepted, set_by = {}, {}
    for name in sorted(given):
        rc, out, err = run_command(cmdhelp_command(fio, name))
        canonical, aliases = (parse_cmdhelp(out, err) if rc == 0 else None) or (None, [])
        for key in given[name]:
            if rc != 0:
                refused.append("%s: fio --cmdhelp failed (rc=%s): %s" % (key, rc, " ".join((err or out).split())))
            elif name != canonical and name not in aliases:
                refused.append("%s: fio has no option or alias of exactly this name "
                               "(abbreviations are refused: give the full name)" % key)
            elif canonical not in ALLOWED_OPTIONS and name == canonical:
                refused.append("%s: not allowed" % key)
            elif canonical not in ALLOWED_OPTIONS:
                refused.append("%s: alias of %s, which is not allowed" % (key, canonical))
            else:
                problem = value_problem(canonical, overrides[key])
                if problem:
                    refused.append("%s: %s" % (key, problem))
                set_by.setdefault(canonical, []).append(key)
                accepted[canonical] = overrides[key]
    for canonical, keys in sorted(set_by.items()):
        if len(keys) > 1:
            refused.append("%s: each sets %s, give it once" % (" and ".join(keys), canonical))
    if refused:
        raise ValueError("fio_options refused, nothing was run. %s. %s" % ("; ".join(refused), WHERE_TO_LOOK))
    return accepted


def value_problem(canonical, value):
    """Why the value of an allowed option is refused, or None."""
    if value is None:
        return None
    text = str(value)
    if UNSAFE_VALUE.search(text):
        return "the value holds whitespace or a control character"
    choices = VALUE_CHOICES.get(canonical)
    if choices and text not in choices:
        return "value %s is not allowed (one of %s)" % (text, ", ".join(choices))
    forbidden = FORBIDDEN_IN_VALUE.get(canonical)
    if forbidden and forbidden in text:
        return "the value holds %s, which makes fio read a file" % forbidden
    return None
