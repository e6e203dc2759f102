"""The built collection tarball holds what runs from it, installs offline next to its
dependencies, and its modules and playbooks resolve by FQCN from there."""

import glob
import json
import os
import shutil
import subprocess
import sys
import tarfile

import pytest
import yaml

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
    """A collections path with only the collections galaxy.yml names as dependencies and theirs."""
    with open(os.path.join(REPO_ROOT, "galaxy.yml")) as handle:
        todo = list(yaml.safe_load(handle)["dependencies"])
    done = []
    while todo:
        name = todo.pop(0)
        if name in done:
            continue
        found = [os.path.join(path, "ansible_collections", *name.split("."))
                 for path in os.environ["ANSIBLE_COLLECTIONS_PATH"].split(os.pathsep)
                 if os.path.isdir(os.path.join(path, "ansible_collections", *name.split(".")))]
        assert found, "%s is not on ANSIBLE_COLLECTIONS_PATH" % name
        link = os.path.join(dest, "ansible_collections", *name.split("."))
        os.makedirs(os.path.dirname(link), exist_ok=True)
        os.symlink(os.path.realpath(found[0]), link)
        with open(os.path.join(found[0], "MANIFEST.json")) as handle:
            todo.extend(json.load(handle)["collection_info"]["dependencies"])
        done.append(name)
    return dest


def galaxy_env(*paths):
    """Only ``paths`` on the collections path, not this checkout."""
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=os.pathsep.join(str(p) for p in paths), LC_ALL="C.UTF-8")
    env.pop("PYTHONPATH", None)
    return env


def build(tmp_path):
    """The tarball `ansible-galaxy collection build` makes of a copy of the checkout."""
    source = tmp_path / "source"
    checkout_copy(str(source))
    subprocess.run(["ansible-galaxy", "collection", "build", "--output-path", str(tmp_path), str(source)],
                   capture_output=True, text=True, check=True)
    tarball, = glob.glob(str(tmp_path / "cephops-osd_tuning-*.tar.gz"))
    return tarball


def install(tarball, tmp_path):
    """The environment of a user who installed ``tarball`` with `ansible-galaxy collection install`
    into a fresh collections path, next to its dependencies; fails on any warning it prints."""
    installed, deps = tmp_path / "installed", dependencies(str(tmp_path / "deps"))
    env = galaxy_env(installed, deps)
    done = subprocess.run(["ansible-galaxy", "collection", "install", "--offline", "-p", str(installed), tarball],
                          capture_output=True, text=True, env=env, check=False)
    assert done.returncode == 0 and "WARNING" not in done.stdout + done.stderr, done.stdout + done.stderr
    return env, installed / "ansible_collections" / "cephops" / "osd_tuning"


def user_environment(tmp_path_factory):
    """The environment of a user who installed the built tarball: only the install and its
    dependencies on the collections path (the playbook tests' module fixture)."""
    tmp = tmp_path_factory.mktemp("user")
    env, _root = install(build(tmp), tmp)
    return env


@pytest.fixture(scope="module")
def tarball(tmp_path_factory):
    return build(tmp_path_factory.mktemp("build"))


# The cores stage runs it on every older release too: ansible-galaxy, ansible-doc and
# ansible-playbook are the first on PATH, its release's, and the dependencies come from its
# `ansible` release's collections (ANSIBLE_COLLECTIONS_PATH).
@pytest.mark.cores
def test_build_holds_what_runs_and_installs_offline_next_to_its_dependencies(tarball, tmp_path):
    assert os.path.basename(tarball) == "cephops-osd_tuning-0.1.0.tar.gz"
    with tarfile.open(tarball) as archive:
        members = archive.getnames()
    assert set(name.split("/")[0] for name in members) == TOP_LEVEL
    assert not [name for name in members if "__pycache__" in name or name.endswith(".pyc")]
    assert "roles/disk_gate/tasks/main.yml" in members and "playbooks/site.yml" in members

    # Offline, ansible-galaxy cannot fetch the dependencies: they must be installed first.
    alone = subprocess.run(["ansible-galaxy", "collection", "install", "--offline", "-p", str(tmp_path / "alone"),
                            tarball], capture_output=True, text=True, env=galaxy_env(tmp_path / "alone"), check=False)
    assert alone.returncode != 0 and "community.general" in alone.stdout + alone.stderr
    # The ansible-core running the tests is among those requires_ansible admits: no mismatch warning.
    env, root = install(tarball, tmp_path)
    assert sorted(os.listdir(str(root))) == sorted(TOP_LEVEL)

    doc = subprocess.run(["ansible-doc", "--json", "cephops.osd_tuning.disk_facts"], capture_output=True,
                         text=True, env=env, cwd=str(tmp_path), check=True)
    assert "WARNING" not in doc.stderr, doc.stderr
    entry = json.loads(doc.stdout)["cephops.osd_tuning.disk_facts"]
    assert entry["doc"]["filename"].startswith(str(root))
    assert "reject_reasons" in entry["return"]["disks"]["contains"]
    # The playbooks' roles and the modules they call, community.general's included, resolve.
    for playbook in ("site", "qualify", "rollback", "validate_hardware"):
        subprocess.run(["ansible-playbook", "--syntax-check", "cephops.osd_tuning." + playbook], capture_output=True,
                       text=True, env=env, cwd=str(tmp_path), check=True)


# Galaxy's importer as Galaxy runs it, less its ansible-test and ansible-lint runs: the sanity and
# lint stages run both on the same files (ansible-lint on its production profile).
IMPORTER_CONFIG = """[galaxy-importer]
RUN_ANSIBLE_TEST = False
RUN_ANSIBLE_LINT = False
"""


def test_galaxy_importer_accepts_the_tarball(tarball, tmp_path):
    config = tmp_path / "galaxy-importer.cfg"
    config.write_text(IMPORTER_CONFIG)
    done = subprocess.run([sys.executable, "-m", "galaxy_importer.main", tarball], capture_output=True, text=True,
                          env=dict(os.environ, GALAXY_IMPORTER_CONFIG=str(config)), cwd=str(tmp_path), check=False)
    output = done.stdout + done.stderr
    assert done.returncode == 0 and "Importer processing completed successfully" in output, output
    # Every module's and plugin's documentation loaded (ansible-doc found), and nothing warned.
    assert "WARNING" not in output and "Loading module disk_facts" in output, output
