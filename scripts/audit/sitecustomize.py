"""The audit of scripts/proven.py: which files of the checkout and of the peer snapshots each test
file read, so that a pass is kept only where its key covers them.

scripts/test.sh puts this folder first on PYTHONPATH for the runs whose passes it keeps, so every
Python process of such a run imports this file at start: pytest and its workers, ansible-playbook,
the modules, molecule's verify. Where CEPHOPS_AUDIT_DIR is set, an audit hook notes each file
under CEPHOPS_AUDIT_ROOTS opened for reading, charged to the test file that CEPHOPS_AUDIT_TEST
names at that moment (a process a test starts inherits it), and writes them at exit to
CEPHOPS_AUDIT_DIR/PID.reads, a line each: TEST<tab>PATH. Loaded into pytest as a plugin as well
(``-p sitecustomize``), its hooks set CEPHOPS_AUDIT_TEST to the test file being collected or run.

It runs on every managed-host Python the collection claims (3.6 and later); before 3.8, which has
no audit hooks, it notes nothing.
"""

import atexit
import os
import sys

AUDIT_DIR = os.environ.get("CEPHOPS_AUDIT_DIR")
ROOTS = tuple(os.path.realpath(p) + os.sep for p in os.environ.get("CEPHOPS_AUDIT_ROOTS", "").split(os.pathsep) if p)
READS = set()
ROOTDIR = []


def _for_reading(mode, flags):
    if isinstance(mode, str):
        return not any(c in mode for c in "wax+")
    return (isinstance(flags, int) and flags & os.O_ACCMODE == os.O_RDONLY
            and not flags & (os.O_CREAT | getattr(os, "O_DIRECTORY", 0)))


def _note(event, args):
    if event != "open" or len(args) < 3 or not _for_reading(args[1], args[2]):
        return
    path = args[0]
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    if not isinstance(path, str):
        return
    # A file's content only: not a folder, nor a name relative to a folder's descriptor (rmtree's),
    # which the audit event does not carry and which would resolve against the wrong folder.
    real = os.path.realpath(path)
    if real.startswith(ROOTS) and os.path.isfile(real):
        folder, name = os.path.split(real)
        if os.path.basename(folder) == "__pycache__":
            # An import served from bytecode reads its source's content.
            real = os.path.join(os.path.dirname(folder), name.split(".")[0] + ".py")
        READS.add((os.environ.get("CEPHOPS_AUDIT_TEST", ""), real))


def _write():
    if READS:
        with open(os.path.join(AUDIT_DIR, "%d.reads" % os.getpid()), "a") as handle:
            handle.writelines("%s\t%s\n" % read for read in sorted(READS))


if AUDIT_DIR and ROOTS and hasattr(sys, "addaudithook"):
    sys.addaudithook(_note)
    atexit.register(_write)


def _charge(path):
    if path:
        os.environ["CEPHOPS_AUDIT_TEST"] = str(path)
    else:
        os.environ.pop("CEPHOPS_AUDIT_TEST", None)


def pytest_configure(config):
    ROOTDIR.append(str(config.rootpath))


def pytest_collectstart(collector):
    if str(getattr(collector, "path", "")).endswith(".py"):
        _charge(collector.path)


def pytest_collectreport(report):  # pylint: disable=unused-argument
    _charge(None)


def pytest_runtest_logstart(nodeid, location):  # pylint: disable=unused-argument
    _charge(os.path.join(ROOTDIR[0], nodeid.split("::")[0]))


def pytest_runtest_logfinish(nodeid, location):  # pylint: disable=unused-argument
    _charge(None)
