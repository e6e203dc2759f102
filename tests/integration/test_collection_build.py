"""The built collection tarball holds what runs from it, installs offline next to its
dependencies, and its modules and playbooks resolve by FQCN from there."""

import glob
import json
import os
import shutil
import subprocess
import tarfile

from conftest import REPO_ROOT

# Everything else stays out of the tarball: the test suite, lab and benchmarks cannot run
# without lab/, scripts/ and the Makefile.
TOP_LEVEL = {"COPYING", "FILES.json", "MANIFEST.json", "README.md", "changelogs", "docs", "meta", "playbooks",
             "plugins", "roles"}
# What a test or lint run leaves in a checkout.
LEFTOVERS = (".pytest_cache/v/cache/lastfailed", "plugins/modules/__pycache__/disk_facts.cpython-311.pyc",
             ".ansible/collections/.keep", "tests/output/junit.xml")


def checkout_copy(dest):
    """The files git tracks or would track, plus the leftovers of a test run."""
    listed = subprocess.run(["git", "-C", REPO_ROOT, "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            capture_output=True, text=True, check=True).stdout
    for name in filter(None, listed.split("\0")):
        if os.path.isfile(os.path.join(REPO_ROOT, name)):
            os.makedirs(os.path.join(dest, os.path.dirname(name)), exist_ok=True)
            shutil.copy2(os.path.join(REPO_ROOT, name), os.path.join(dest, name))
    for name in LEFTOVERS:
        os.makedirs(os.path.join(dest, os.path.dirname(name)), exist_ok=True)
        open(os.path.join(dest, name), "w").close()


def dependencies(dest):
    """A collections path with only community.general and ansible.posix, the ones the tests use."""
    for name in ("community/general", "ansible/posix"):
        found = [os.path.join(path, "ansible_collections", name)
                 for path in os.environ["ANSIBLE_COLLECTIONS_PATH"].split(os.pathsep)
                 if os.path.isdir(os.path.join(path, "ansible_collections", name))]
        assert found, "%s is not on ANSIBLE_COLLECTIONS_PATH" % name
        os.makedirs(os.path.join(dest, "ansible_collections", os.path.dirname(name)), exist_ok=True)
        os.symlink(os.path.realpath(found[0]), os.path.join(dest, "ansible_collections", name))
    return dest


def galaxy_env(*paths):
    """Only ``paths`` on the collections path, not this checkout."""
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=os.pathsep.join(str(p) for p in paths), LC_ALL="C.UTF-8")
    env.pop("PYTHONPATH", None)
    return env


def test_build_holds_what_runs_and_installs_offline_next_to_its_dependencies(tmp_path):
    source = tmp_path / "source"
    checkout_copy(str(source))
    subprocess.run(["ansible-galaxy", "collection", "build", "--output-path", str(tmp_path), str(source)],
                   capture_output=True, text=True, check=True)
    tarball, = glob.glob(str(tmp_path / "cephops-osd_tuning-*.tar.gz"))
    assert os.path.basename(tarball) == "cephops-osd_tuning-0.1.0.tar.gz"
    with tarfile.open(tarball) as archive:
        members = archive.getnames()
    assert set(name.split("/")[0] for name in members) == TOP_LEVEL
    assert not [name for name in members if "__pycache__" in name or name.endswith(".pyc")]
    assert "roles/disk_gate/tasks/probe.yml" in members and "playbooks/site.yml" in members

    installed, deps = tmp_path / "installed", dependencies(str(tmp_path / "deps"))
    install = ["ansible-galaxy", "collection", "install", "--offline", "-p", str(installed), tarball]
    # Offline, ansible-galaxy cannot fetch the dependencies: they must be installed first.
    alone = subprocess.run(install, capture_output=True, text=True, env=galaxy_env(installed), check=False)
    assert alone.returncode != 0 and "community.general" in alone.stdout + alone.stderr
    env = galaxy_env(installed, deps)
    subprocess.run(install, capture_output=True, text=True, env=env, check=True)
    root = installed / "ansible_collections" / "cephops" / "osd_tuning"
    assert sorted(os.listdir(str(root))) == sorted(TOP_LEVEL)

    doc = subprocess.run(["ansible-doc", "--json", "cephops.osd_tuning.disk_facts"], capture_output=True,
                         text=True, env=env, cwd=str(tmp_path), check=True)
    entry = json.loads(doc.stdout)["cephops.osd_tuning.disk_facts"]
    assert entry["doc"]["filename"].startswith(str(root))
    assert "reject_reasons" in entry["return"]["disks"]["contains"]
    # The playbooks' roles and the modules they call, community.general's included, resolve.
    for playbook in ("site", "qualify", "rollback", "validate_hardware"):
        subprocess.run(["ansible-playbook", "--syntax-check", "cephops.osd_tuning." + playbook], capture_output=True,
                       text=True, env=env, cwd=str(tmp_path), check=True)
