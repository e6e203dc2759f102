"""The built collection tarball installs, and its modules resolve by FQCN from there."""

import glob
import json
import os
import subprocess

from conftest import REPO_ROOT


def test_build_install_and_resolve_by_fqcn(tmp_path):
    build = subprocess.run(["ansible-galaxy", "collection", "build", "--output-path", str(tmp_path), REPO_ROOT],
                           capture_output=True, text=True, check=True)
    tarball, = glob.glob(str(tmp_path / "cephops-osd_tuning-*.tar.gz"))
    assert os.path.basename(tarball) == "cephops-osd_tuning-0.1.0.tar.gz", build.stdout
    installed = tmp_path / "installed"
    # Only the fresh install on the collections path, not this checkout.
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(installed), LC_ALL="C.UTF-8")
    env.pop("PYTHONPATH", None)
    subprocess.run(["ansible-galaxy", "collection", "install", "--no-deps", "-p", str(installed), tarball],
                   capture_output=True, text=True, env=env, check=True)
    root = installed / "ansible_collections" / "cephops" / "osd_tuning"
    assert (root / "plugins" / "modules" / "disk_facts.py").is_file()
    for dev_only in ("scripts", "lab", ".build", ".lab"):
        assert not (root / dev_only).exists(), dev_only
    doc = subprocess.run(["ansible-doc", "--json", "cephops.osd_tuning.disk_facts"], capture_output=True,
                         text=True, env=env, cwd=str(tmp_path), check=True)
    entry = json.loads(doc.stdout)["cephops.osd_tuning.disk_facts"]
    assert entry["doc"]["filename"].startswith(str(root))
    assert "reject_reasons" in entry["return"]["disks"]["contains"]
    assert "include_loop" in entry["doc"]["options"]
