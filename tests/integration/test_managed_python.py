"""The modules run under the interpreter CEPHOPS_TEST_PYTHON names (ansible_python_interpreter),
so a run of the tests marked `pythons` with it proves them on that Python (docs/platforms.md)."""

import json
import os
import subprocess
import tempfile

import pytest

from modulerun import json_env


@pytest.mark.pythons
def test_modules_run_under_the_interpreter_asked_for():
    asked = os.environ.get("CEPHOPS_TEST_PYTHON", "/usr/bin/python3")
    executable, version = subprocess.run(
        [asked, "-c", "import sys; print(sys.executable); print('%d.%d' % sys.version_info[:2])"],
        capture_output=True, text=True, check=True).stdout.split()
    proc = subprocess.run(["ansible", "localhost", "--inventory", "localhost,", "--connection", "local",
                           "--module-name", "ansible.builtin.setup", "--args", "gather_subset=!all filter=ansible_python"],
                          capture_output=True, text=True, env=json_env(), cwd=tempfile.gettempdir(), check=False)
    python = json.loads(proc.stdout)["plays"][0]["tasks"][0]["hosts"]["localhost"]["ansible_facts"]["ansible_python"]
    assert (os.path.realpath(python["executable"]), "%(major)d.%(minor)d" % python["version"]) == \
        (os.path.realpath(executable), version)
