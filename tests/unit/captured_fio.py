"""fio as the unit tests see it: what the real fio printed for ``fio --cmdhelp=KEY``
(fixtures/fio/cmdhelp.json, written by capture_fio_cmdhelp.py)."""

import functools
import json
import os

CMDHELP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "fio", "cmdhelp.json")


@functools.lru_cache(maxsize=None)
def captured_cmdhelp():
    """Every option name and alias fio knows, and a few keys it does not, with fio's answers."""
    with open(CMDHELP) as handle:
        return json.load(handle)


class CapturedFio:
    """``run_command`` answering ``fio --cmdhelp=KEY`` from captured_cmdhelp(); it records every
    argv with its keyword arguments, and a key that was not captured fails the test rather than
    being made up."""

    def __init__(self):
        self.captured = captured_cmdhelp()
        self.calls = []

    def __call__(self, argv, **kwargs):
        self.calls.append((list(argv), kwargs))
        assert len(argv) == 2 and argv[0].endswith("fio") and argv[1].startswith("--cmdhelp="), argv
        found = self.captured["keys"][argv[1][len("--cmdhelp="):]]
        return found["rc"], found["stdout"], found["stderr"]
