"""processes: probes side by side, stopped with SIGINT, killed on timeout or on an exception,
tied to the life of the module; and the processes that hold a disk open."""

import os
import signal
import subprocess
import sys
import time

import pytest

from ansible_collections.cephops.osd_tuning.plugins.module_utils import processes


def python(code):
    return [sys.executable, "-c", code]


def test_results_come_back_in_order_with_c_locale():
    runs = processes.run_processes([python("import os; print(os.environ['LC_ALL'])"),
                                    python("import sys; sys.stderr.write('no'); sys.exit(3)")], timeout=30)
    assert runs == [(0, "C\n", "", False), (3, "", "no", False)]


@pytest.mark.parametrize("inherited", [signal.SIG_DFL, signal.SIG_IGN], ids=["default", "ignored"])
def test_stop_after_ends_a_run_with_sigint_which_it_may_answer(inherited):
    # dd prints its statistics on SIGINT; this stand-in says it was stopped. A module started
    # from a background job inherits SIGINT ignored, and its probes must still answer it.
    code = "import time\ntry:\n    time.sleep(30)\nexcept KeyboardInterrupt:\n    print('stopped')\n"
    before = signal.signal(signal.SIGINT, inherited)
    try:
        (run,) = processes.run_processes([python(code)], timeout=30, stop_after=1)
    finally:
        signal.signal(signal.SIGINT, before)
    assert run == (0, "stopped\n", "", False)


def test_a_run_past_the_timeout_is_terminated_and_marked():
    (run,) = processes.run_processes([["sleep", "30"]], timeout=0.2, grace=5)
    assert run[0] == -15 and run[3] is True


def test_children_die_with_the_module():
    # PR_GET_PDEATHSIG (2): the signal the kernel sends the child when its parent dies.
    code = ("import ctypes\nvalue = ctypes.c_int()\n"
            "ctypes.CDLL(None).prctl(2, ctypes.byref(value), 0, 0, 0)\nprint(value.value)")
    (run,) = processes.run_processes([python(code)], timeout=30)
    assert run == (0, "9\n", "", False)


def test_an_exception_while_waiting_kills_the_probes(tmp_path, monkeypatch):
    pid_file = tmp_path / "pid"
    code = "import os, time\nopen(%r, 'w').write(str(os.getpid()))\ntime.sleep(30)" % str(pid_file)

    class Clock:
        """The module's clock, whose sleep is interrupted once the probe runs."""
        monotonic = staticmethod(time.monotonic)

        @staticmethod
        def sleep(seconds):
            if pid_file.exists() and pid_file.read_text():
                raise KeyboardInterrupt()
            time.sleep(seconds)

    monkeypatch.setattr(processes, "time", Clock)
    with pytest.raises(KeyboardInterrupt):
        processes.run_processes([python(code)], timeout=30)
    with pytest.raises(OSError):
        os.kill(int(pid_file.read_text()), 0)


def test_a_termination_signal_becomes_an_exception_and_later_ones_are_ignored():
    saved = dict((signum, signal.getsignal(signum)) for signum in processes.TERMINATION_SIGNALS)
    try:
        processes.trap_termination()
        with pytest.raises(processes.Interrupted) as caught:
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)
        # The cleanup that follows runs to its end: a second signal would otherwise cut it short.
        assert [signal.getsignal(s) for s in processes.TERMINATION_SIGNALS] == [signal.SIG_IGN] * len(processes.TERMINATION_SIGNALS)
    finally:
        for signum, handler in saved.items():
            signal.signal(signum, handler)
    assert caught.value.signum == signal.SIGTERM and str(caught.value) == "interrupted by signal 15"


def test_holders_leave_out_this_process_its_children_and_udev_workers(monkeypatch):
    me = os.getpid()
    table = {me: (1, "python3"), 9001: (me, "fio"), 9002: (9001, "blkid"), 9003: (1, "(udev-worker)"),
             9004: (1, "systemd-udevd"), 9005: (1, "qemu-system-x86"), 9006: (9005, "qemu-helper")}
    monkeypatch.setattr(processes, "_process_table", lambda: table)
    monkeypatch.setattr(processes, "_devices_open", lambda pid, wanted: {"8:16"} & wanted)
    assert processes.holding(["8:16", "8:32"], settle=0) == {
        "8:16": [(9005, "qemu-system-x86"), (9006, "qemu-helper")], "8:32": []}


def test_a_process_that_let_go_within_the_settle_time_does_not_hold(monkeypatch):
    looks = iter([{1: (0, "init"), 9005: (1, "qemu-system-x86"), 9007: (1, "smartctl")},
                  {1: (0, "init"), 9005: (1, "qemu-system-x86")}])
    monkeypatch.setattr(processes, "_process_table", lambda: next(looks))
    monkeypatch.setattr(processes, "_devices_open", lambda pid, wanted: {"8:16"} if pid != 1 else set())
    assert processes.holding(["8:16"], settle=0.01) == {"8:16": [(9005, "qemu-system-x86")]}
    assert processes.describe_holders([(9005, "qemu-system-x86")]) == "qemu-system-x86 (pid 9005)"


def test_the_process_table_reads_names_with_spaces_and_parentheses():
    child = subprocess.Popen(python("import ctypes, time; ctypes.CDLL(None).prctl(15, b'a (b) c', 0, 0, 0); "
                                    "print(1, flush=True); time.sleep(30)"), stdout=subprocess.PIPE)
    try:
        child.stdout.readline()
        assert processes._process_table()[child.pid] == (os.getpid(), "a (b) c")
    finally:
        child.kill()
        child.wait()
