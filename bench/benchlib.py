"""What the benchmarks share: the machine line, medians, tables, loop disks, module runs.

The benchmarks measure; they are not tests. Each prints a table with medians over repeated
runs and the machine it ran on. Run them through bench/run.sh, which prepares the same
environment as the test suite.
"""

import contextlib
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO_ROOT, "tests", "integration"))

import loopdisk  # noqa: E402  (shared with the integration tests)


def machine():
    cpu = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as handle:
            for line in handle:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    fio = subprocess.run(["fio", "--version"], capture_output=True, text=True, check=False).stdout.strip()
    return "%s, %d CPUs, Linux %s, Python %s, %s" % (cpu, os.cpu_count(), platform.release(),
                                                     platform.python_version(), fio or "no fio")


def median(values):
    return statistics.median(values) if values else float("nan")


def table(title, header, rows, notes=()):
    """Print a Markdown table, so the output can go into docs/benchmarks.md as it is."""
    print("### " + title)
    print()
    print("machine: " + machine())
    print()
    print("| " + " | ".join(header) + " |")
    print("|" + " --- |" * len(header))
    for row in rows:
        print("| " + " | ".join(str(cell) for cell in row) + " |")
    for note in notes:
        print()
        print(note)
    print()


@contextlib.contextmanager
def loop_disks(count, size_gib=8):
    """``count`` blank sparse loop disks, always detached afterwards."""
    work = tempfile.mkdtemp(prefix="cephops-bench.")
    disks = []
    try:
        for index in range(count):
            disks.append(loopdisk.attach(os.path.join(work, "disk%d.img" % index), size_gib))
        yield disks
    finally:
        for disk in disks:
            loopdisk.detach(disk)
        shutil.rmtree(work)


def module(name, args, inventory="localhost,", host="localhost", extra=()):
    """Run one collection module through ansible; its result dict."""
    env = dict(os.environ, ANSIBLE_STDOUT_CALLBACK="ansible.builtin.json", ANSIBLE_LOAD_CALLBACK_PLUGINS="1",
               ANSIBLE_PYTHON_INTERPRETER="/usr/bin/python3", LC_ALL="C.UTF-8")
    argv = ["ansible", host, "--inventory", inventory, "--module-name", "cephops.osd_tuning." + name,
            "--args", json.dumps(args)] + list(extra)
    if inventory == "localhost,":
        argv += ["--connection", "local"]
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, check=False)
    try:
        return json.loads(proc.stdout)["plays"][0]["tasks"][0]["hosts"][host]
    except (ValueError, KeyError, IndexError):
        sys.exit("ansible gave no result (rc=%s): %s %s" % (proc.returncode, proc.stdout[-2000:], proc.stderr[-2000:]))


def seed_fio(path, runtime):
    """Seed 001's probe exactly as its article runs it by hand; its write IOPS."""
    argv = ["fio", "--ioengine=libaio", "--name=test", "--filename=" + path, "--fsync=1", "--direct=1",
            "--bs=4k", "--iodepth=1", "--rw=randwrite", "--runtime=%d" % runtime, "--output-format=json"]
    out = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
    return json.loads(out[out.index("{"):])["jobs"][0]["write"]["iops"]
