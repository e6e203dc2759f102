"""Ceph's own spec code as the judge of the cephadm specs the gate writes.

Ceph's python-common (Debian's python3-ceph-common, installed by scripts/env.sh) lives in the
system Python, not the test venv, so each document is validated there, as
`ceph orch apply -i` does: ServiceSpec.from_json(doc).validate().
"""

import json
import subprocess

import pytest
import yaml

SYSTEM_PYTHON = "/usr/bin/python3"
VALIDATE = """
import json, sys
from ceph.deployment.service_spec import ServiceSpec
for doc in json.load(sys.stdin):
    spec = ServiceSpec.from_json(doc)
    spec.validate()
    print(type(spec).__name__, spec.service_name())
"""


def ceph_available():
    try:
        probe = subprocess.run([SYSTEM_PYTHON, "-c", "import ceph.deployment.service_spec"], capture_output=True,
                               check=False)
    except OSError:
        return False
    return probe.returncode == 0


def validate(text):
    """[(spec class, service name)] of every YAML document of ``text``, as Ceph reads them;
    fails the test on any document Ceph refuses; skips it, saying why, without Ceph's code."""
    if not ceph_available():
        pytest.skip("Ceph's spec code is missing: install Debian's python3-ceph-common (scripts/env.sh does)")
    docs = [doc for doc in yaml.safe_load_all(text) if doc is not None]
    proc = subprocess.run([SYSTEM_PYTHON, "-c", VALIDATE], input=json.dumps(docs), capture_output=True, text=True,
                          check=False, env={"LC_ALL": "C", "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, "Ceph refused the spec:\n%s\n%s" % (text, proc.stderr)
    return [tuple(line.split(" ", 1)) for line in proc.stdout.splitlines()]
