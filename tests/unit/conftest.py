import json
import os
import sys

import pytest

from ansible.module_utils.testing import patch_module_args

# The test helpers both suites import (tests/helpers).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "helpers"))

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")


@pytest.fixture
def snapshot():
    """Load a snapshot captured on a real host with tests/unit/capture_snapshot.py."""
    def load(name):
        with open(os.path.join(FIXTURES, "snapshots", name + ".json")) as handle:
            return json.load(handle)
    return load


@pytest.fixture
def fixture_text():
    def load(name):
        with open(os.path.join(FIXTURES, name)) as handle:
            return handle.read()
    return load


@pytest.fixture
def run_module(capsys):
    """Run a module's main() with the given args in-process; return its JSON result."""
    def run(main, args):
        with patch_module_args(args):
            with pytest.raises(SystemExit):
                main()
        return json.loads(capsys.readouterr().out)
    return run


@pytest.fixture
def disk_file(tmp_path):
    """A sparse 16 MiB file that stands in for a disk: O_DIRECT reads and writes it alike."""
    path = tmp_path / "disk.img"
    with open(str(path), "wb") as handle:
        handle.truncate(16 * 1024 ** 2)
    return str(path)
