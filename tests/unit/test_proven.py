"""scripts/proven.py: which test files and lab verifies a run skips as passed on the same inputs,
and which passes it keeps, in a git checkout of its own with the script, its audit and the lab's
image code in it."""

import datetime
import os
import shutil
import subprocess
import sys

import pytest

REPO = os.path.join(os.path.dirname(__file__), "..", "..")
TESTS = ("test_plain.py", "test_importer.py", "test_checkout.py", "test_peers.py", "test_helper.py", "test_builder.py")
SOURCES = {
    "plugins/modules/disk_facts.py": "runtime\n",
    "docs/disk_facts.md": "docs\n",
    "scripts/demo.sh": "echo demo\n",
    "scripts/requirements.txt": "ansible-core==2.21.5\n",
    "molecule/default/converge.yml": "---\n",
    "molecule/default/tests/test_lab.py": "def test_lab():\n    pass\n",
    "tests/integration/conftest.py": "REPO_ROOT = None  # the fixtures\n",
    "tests/unit/plugins/plugin_utils/ceph_spec.py": "def validate():\n    pass\n",
    "tests/unit/fixtures/grub/debian12_default_grub": "GRUB_CMDLINE_LINUX=\"\"\n",
    "tests/unit/plugins/test_other.py": "def test_unit():\n    pass\n",
    ".gitignore": ".build/\n",
    "tests/integration/test_plain.py": "def test_one():\n    pass\n",
    "tests/integration/test_importer.py": "from test_plain import test_one\n",
    "tests/integration/test_checkout.py": "from conftest import REPO_ROOT\nDOC = REPO_ROOT + '/docs'\n",
    # Beside the checkout only: the peers.
    "tests/integration/test_peers.py": "import os\nfrom conftest import REPO_ROOT\nPEERS = os.path.dirname(REPO_ROOT)\n",
    # A helper of the unit tests, imported by module name after a sys.path change.
    "tests/integration/test_helper.py": "import ceph_spec\n",
    # Reads the checkout through what it imports.
    "tests/integration/test_builder.py": "from test_checkout import DOC\n",
}


class Checkout:
    def __init__(self, root):
        self.root, self.path, self.cache = root, root / "repo", root / "cache"
        (root / "shared" / "peers" / "ceph-ansible").mkdir(parents=True)
        shutil.copytree(os.path.join(REPO, "scripts", "audit"), str(self.path / "scripts" / "audit"))
        shutil.copy(os.path.join(REPO, "scripts", "proven.py"), str(self.path / "scripts" / "proven.py"))
        shutil.copytree(os.path.join(REPO, "lab", "image"), str(self.path / "lab" / "image"))
        shutil.copy(os.path.join(REPO, "lab", "labimage.py"), str(self.path / "lab" / "labimage.py"))
        (root / "venv" / "bin").mkdir(parents=True)
        (root / "venv" / "lib.py").write_text("installed\n")
        for name, text in SOURCES.items():
            self.write(name, text)
        subprocess.run(["git", "init", "-q"], cwd=str(self.path), check=True)

    def write(self, name, text="# a change\n"):
        path = self.path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(str(path), "a") as handle:
            handle.write(text)

    def environment(self, **environment):
        # Only what the test names: the run's own settings would change every key alike.
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("ANSIBLE_", "PYTEST_", "CEPHOPS_", "LAB_", "MOLECULE_", "CEPH_ANSIBLE", "CONFIG_"))
               and k not in ("CI", "PYTHONPATH", "VIRTUAL_ENV")}
        env.update(environment, CEPHOPS_CACHE=str(self.cache), VIRTUAL_ENV=str(self.root / "venv"),
                   HOME=str(self.root))
        return env

    def proven(self, *argv, expect=0, **environment):
        done = subprocess.run([sys.executable, "scripts/proven.py", *argv], cwd=str(self.path), check=False,
                              env=self.environment(**environment), capture_output=True, text=True)
        assert done.returncode == expect, done.stderr
        return done

    def to_run(self, run="integration", marker="", **environment):
        done = self.proven("select", run, marker, *("tests/integration/" + t for t in TESTS), **environment)
        return set(os.path.basename(line) for line in done.stdout.split()), done.stderr

    def junit(self, outcomes):
        """A JUnit file with one case a test file: {test file: passed, or the skip's reason}."""
        cases = "".join('<testcase classname="tests.integration.%s" name="test_one">%s</testcase>' % (
            test[:-3], "" if outcome is True else '<failure message="no"/>' if outcome is False
            else '<skipped message="%s"/>' % outcome) for test, outcome in outcomes.items())
        path = self.root / "junit.xml"
        path.write_text('<testsuites><testsuite name="pytest">%s</testsuite></testsuites>' % cases)
        return str(path)

    def passes(self, rc=0, run="integration", marker="", **environment):
        """Selects, then records every file selected as passed."""
        selected = self.to_run(run, marker, **environment)[0]
        self.proven("record", run, self.junit({t: True for t in selected}), str(rc), **environment)
        return selected


@pytest.fixture
def checkout(tmp_path):
    return Checkout(tmp_path)


def test_a_file_runs_again_only_while_it_has_no_pass_on_its_inputs(checkout):
    assert checkout.to_run()[0] == set(TESTS)
    checkout.proven("record", "integration", checkout.junit({t: True for t in TESTS}), "0")
    selected, said = checkout.to_run()
    assert selected == set()
    assert "6 of 6 test files passed before on these same inputs" in said
    assert checkout.to_run(CEPHOPS_REUSE="0")[0] == set(TESTS)


def test_only_a_complete_clean_run_keeps_its_files(checkout):
    checkout.to_run()
    # pytest's 5 with an empty JUnit file: no test case, nothing kept.
    checkout.proven("record", "integration", checkout.junit({}), "5")
    assert checkout.to_run()[0] == set(TESTS)
    # A failure anywhere: nothing kept, the files that passed included.
    checkout.proven("record", "integration", checkout.junit({"test_plain.py": True, "test_peers.py": False}), "1")
    assert checkout.to_run()[0] == set(TESTS)
    # A clean run keeps the files that ran a case, and a skip only for an allowed reason.
    checkout.proven("record", "integration", checkout.junit({
        "test_plain.py": True, "test_importer.py": "this kernel (6.18) offers no bfq, built in or as a module",
        "test_checkout.py": "no ceph-ansible snapshot"}), "0")
    assert checkout.to_run()[0] == {"test_checkout.py", "test_peers.py", "test_helper.py", "test_builder.py"}


@pytest.mark.parametrize("narrowing", [dict(PYTEST_ADDOPTS="-k one"), dict(CEPHOPS_PYTEST_ARGS="-n 2 -k one"),
                                       dict(CEPHOPS_PYTEST_ARGS="--deselect tests/integration/test_plain.py::t"),
                                       dict(CEPHOPS_PYTEST_ARGS="-m cores")])
def test_a_narrowed_run_keeps_nothing(checkout, narrowing):
    checkout.passes(**narrowing)
    assert checkout.to_run()[0] == set(TESTS)


def test_a_pass_expires_after_seven_days(checkout):
    checkout.passes()
    for name in os.listdir(str(checkout.cache / "proven")):
        path = checkout.cache / "proven" / name
        commit = path.read_text().split()[0]
        old = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(days=7, minutes=1)
        path.write_text("%s %s\n" % (commit, old.isoformat()))
    assert checkout.to_run()[0] == set(TESTS)


def test_what_a_file_reads_decides_whether_it_runs_again(checkout):
    checkout.passes()
    checkout.write("docs/disk_facts.md")
    assert checkout.to_run()[0] == {"test_checkout.py", "test_builder.py"}, \
        "only the files that read the checkout, themselves or through a helper, read the docs"
    checkout.passes()
    checkout.write("tests/integration/test_plain.py")
    assert checkout.to_run()[0] == {"test_plain.py", "test_importer.py", "test_checkout.py", "test_builder.py"}, \
        "a test file's importers run with it, and a file that reads the whole checkout"
    checkout.passes()
    checkout.write("tests/unit/plugins/plugin_utils/ceph_spec.py")
    assert checkout.to_run()[0] == {"test_helper.py", "test_checkout.py", "test_builder.py"}, \
        "a helper under tests/unit counts"
    checkout.passes()
    checkout.write("../shared/peers/ceph-ansible/site.yml")
    assert checkout.to_run()[0] == {"test_checkout.py", "test_peers.py", "test_builder.py"}, \
        "the peers are read beside the checkout"
    checkout.passes()
    checkout.write("tests/unit/plugins/test_other.py")
    assert checkout.to_run()[0] == {"test_checkout.py", "test_builder.py"}, \
        "a unit test file is read by the checkout's readers only"
    checkout.passes()
    for shared in ("plugins/modules/disk_facts.py", "tests/integration/conftest.py", "scripts/demo.sh",
                   "tests/unit/fixtures/grub/debian12_default_grub"):
        checkout.write(shared)
        assert checkout.to_run()[0] == set(TESTS), shared
        checkout.passes()
    os.chmod(str(checkout.path / "plugins/modules/disk_facts.py"), 0o755)
    assert checkout.to_run()[0] == set(TESTS), "a file's mode is an input"


def test_the_settings_and_the_installed_contents_are_inputs(checkout):
    checkout.passes()
    for setting in (dict(ANSIBLE_FORKS="1"), dict(PYTEST_TIMEOUT="5"), dict(CEPHOPS_DIRECT_MODULES="1"),
                    dict(LAB_MEMORY="2048"), dict(CI="true")):
        assert checkout.to_run(**setting)[0] == set(TESTS), setting
    config = checkout.root / "ansible.cfg"
    config.write_text("[defaults]\nforks = 1\n")
    checkout.passes(ANSIBLE_CONFIG=str(config))
    config.write_text("[defaults]\nforks = 2\n")
    assert checkout.to_run(ANSIBLE_CONFIG=str(config))[0] == set(TESTS), "what ansible.cfg says, not its name"
    (checkout.root / ".ansible.cfg").write_text("[defaults]\nforks = 3\n")
    assert checkout.to_run(ANSIBLE_CONFIG=str(config))[0] == set(TESTS), "the home's ansible.cfg"
    checkout.passes()
    (checkout.root / "venv" / "lib.py").write_text("installed again\n")
    assert checkout.to_run()[0] == set(TESTS), "a venv's content, under the same name"
    collection = checkout.root / "collections" / "ansible_collections" / "community" / "general"
    collection.mkdir(parents=True)
    (collection / "plugin.py").write_text("a filter\n")
    checkout.passes(ANSIBLE_COLLECTIONS_PATH=str(checkout.root / "collections"))
    (collection / "plugin.py").write_text("the same collection, another filter\n")
    assert checkout.to_run(ANSIBLE_COLLECTIONS_PATH=str(checkout.root / "collections"))[0] == set(TESTS), \
        "a collection's content, under the same name"


def test_another_run_or_marker_is_another_proof(checkout):
    checkout.passes()
    assert checkout.to_run("cores-2.16", "")[0] == set(TESTS)
    assert checkout.to_run("integration", "pythons")[0] == set(), "no file names the marker"
    checkout.write("tests/integration/test_plain.py", "import pytest\n@pytest.mark.pythons\ndef test_two():\n    pass\n")
    assert checkout.to_run("integration", "pythons")[0] == {"test_plain.py"}


def run_audited(checkout, test_source):
    """A real pytest run of one test file with the audit on, then its record."""
    checkout.write("tests/integration/test_reader.py", test_source)
    checkout.proven("select", "integration", "", "tests/integration/test_reader.py")
    audit = checkout.path / ".build" / "audit-integration"
    audit.mkdir(parents=True)
    env = checkout.environment(CEPHOPS_AUDIT_DIR=str(audit),
                               CEPHOPS_AUDIT_ROOTS="%s:%s" % (checkout.path, checkout.root / "shared" / "peers"),
                               PYTHONPATH=str(checkout.path / "scripts" / "audit"))
    junit = str(checkout.root / "run.xml")
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "sitecustomize",
                           "--junitxml", junit, "tests/integration/test_reader.py"], cwd=str(checkout.path), env=env,
                          check=False, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    return junit


def test_the_audit_fails_a_run_whose_test_read_a_file_outside_its_key(checkout):
    junit = run_audited(checkout, "import os, subprocess, sys\n"
                                  "def test_reads():\n"
                                  "    here = os.path.dirname(os.path.abspath(__file__))\n"
                                  "    open(os.path.join(here, '..', '..', 'plugins/modules/disk_facts.py')).read()\n"
                                  "    subprocess.run([sys.executable, '-c', 'open(%r).read()'\n"
                                  "                    % os.path.join(here, '..', '..', 'docs/disk_facts.md')], check=True)\n")
    done = checkout.proven("record", "integration", junit, "0", expect=1)
    assert "AUDIT: tests/integration/test_reader.py read docs/disk_facts.md" in done.stderr, done.stderr
    assert "disk_facts.py" not in done.stderr.replace("docs/disk_facts.md", ""), "the collection is in every key"
    assert checkout.to_run("integration")[0] >= {"test_plain.py"}


def test_the_audit_passes_a_test_that_reads_only_its_key(checkout):
    junit = run_audited(checkout, "import sys, os\n"
                                  "sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..', 'unit', 'plugins',"
                                  " 'plugin_utils'))\n"
                                  "import ceph_spec\n"
                                  "def test_reads():\n"
                                  "    open(os.path.join(os.path.dirname(__file__), 'conftest.py')).read()\n")
    assert "kept as proven" in checkout.proven("record", "integration", junit, "0").stderr


def lab_junit(checkout, outcome="", count=1):
    path = checkout.root / "lab.xml"
    cases = ('<testcase classname="test_lab" name="t">%s</testcase>' % outcome) * count
    path.write_text('<testsuites><testsuite>%s</testsuite></testsuites>' % cases)
    return str(path)


def lab_images(checkout):
    """Stand-ins for the lab's images where the lab looks for them: a key hashes their content."""
    sys.path.insert(0, str(checkout.path / "lab"))
    saved = os.environ.get("CEPHOPS_CACHE")
    os.environ["CEPHOPS_CACHE"] = str(checkout.cache)
    try:
        import labimage  # pylint: disable=import-outside-toplevel
        paths = [labimage.os_image_path(labimage.DEFAULT_SUITE)]
        paths += [labimage.base_image_path(kind) for kind in labimage.BASE_KINDS]
    finally:
        sys.path.pop(0)
        sys.modules.pop("labimage", None)
        os.environ.pop("CEPHOPS_CACHE") if saved is None else os.environ.update(CEPHOPS_CACHE=saved)
    paths[0].parent.mkdir(parents=True, exist_ok=True)
    for path in paths:
        path.write_bytes(b"an image")
    return paths


def test_a_lab_verify_is_kept_by_every_input_of_its_converge_and_its_tests(checkout):
    lab_images(checkout)
    assert checkout.proven("lab-select", "default", expect=1)
    checkout.proven("lab-record", "default", lab_junit(checkout, count=0), "0")
    checkout.proven("lab-select", "default", expect=1)  # no test case: nothing kept
    checkout.proven("lab-record", "default", lab_junit(checkout, '<failure message="no"/>'), "1")
    checkout.proven("lab-select", "default", expect=1)
    checkout.proven("lab-record", "default", lab_junit(checkout), "0")
    checkout.proven("lab-select", "default")
    assert checkout.proven("lab-select", "default", CEPHOPS_REUSE="0", expect=1)
    key = checkout.proven("lab-key", "default").stdout
    checkout.write("molecule/default/tests/test_lab.py")
    checkout.proven("lab-select", "default", expect=1)
    checkout.proven("lab-record", "default", lab_junit(checkout), "0")
    checkout.write("tests/integration/conftest.py")
    checkout.proven("lab-select", "default", expect=1)  # a helper the lab tests import
    checkout.proven("lab-record", "default", lab_junit(checkout), "0")
    checkout.write("tests/integration/test_plain.py")
    checkout.proven("lab-select", "default")  # an integration test is no input of the lab's
    assert checkout.proven("lab-key", "default").stdout == key, "a lab test is no input of the converge"
    for change in ("scripts/demo.sh", "scripts/requirements.txt", "molecule/default/converge.yml"):
        checkout.write(change)
        assert checkout.proven("lab-key", "default").stdout != key, change
        key = checkout.proven("lab-key", "default").stdout
    assert checkout.proven("lab-key", "default", LAB_MEMORY="2048").stdout != key
    assert checkout.proven("lab-key", "default", CEPHOPS_LAB_SIBLINGS="4").stdout != key


def test_the_lab_images_are_keyed_by_their_content(checkout):
    image = lab_images(checkout)[0]
    key = checkout.proven("lab-key", "default").stdout
    image.write_bytes(b"the same name, a mirror's newer packages")
    assert checkout.proven("lab-key", "default").stdout != key


def test_a_kept_converged_state_is_used_while_young_and_reuse_is_on(checkout):
    state = checkout.cache / "lab" / "converged-default-key"
    checkout.proven("fresh", str(state), expect=1)
    state.mkdir(parents=True)
    checkout.proven("fresh", str(state))
    checkout.proven("fresh", str(state), CEPHOPS_REUSE="0", expect=1)
    old = (datetime.datetime.now() - datetime.timedelta(days=8)).timestamp()
    os.utime(str(state), (old, old))
    checkout.proven("fresh", str(state), expect=1)


def test_make_test_full_reuses_nothing_and_runs_every_scenario():
    with open(os.path.join(REPO, "Makefile")) as handle:
        recipe = handle.read().split("\ntest-full:\n", 1)[1].split("\n")[0]
    assert "CEPHOPS_REUSE=0" in recipe and "CEPHOPS_ROTATION=all" in recipe and "scripts/test.sh" in recipe
