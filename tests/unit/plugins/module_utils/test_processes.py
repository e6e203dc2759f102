"""processes: probes side by side, stopped with SIGINT, killed on timeout or on an exception,
and tied to the life of the module."""

import os
import signal
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
