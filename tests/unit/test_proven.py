"""scripts/proven.py: which integration test files a run skips as passed on the same inputs, in a
git checkout of its own with the script in it."""

import os
import shutil
import subprocess

import pytest

SCRIPT = os.path.join(os.path.dirname(__file__), "..", "..", "scripts", "proven.py")
TESTS = ("test_plain.py", "test_importer.py", "test_checkout.py", "test_peers.py")
SOURCES = {
    "plugins/modules/disk_facts.py": "runtime\n",
    "docs/disk_facts.md": "docs\n",
    "tests/integration/conftest.py": "fixtures\n",
    ".gitignore": ".build/\n",
    "tests/integration/test_plain.py": "def test_one():\n    pass\n",
    "tests/integration/test_importer.py": "from test_plain import test_one\n",
    "tests/integration/test_checkout.py": "from conftest import REPO_ROOT\nDOC = REPO_ROOT + '/docs'\n",
    # Beside the checkout only: the peers.
    "tests/integration/test_peers.py": "import os\nfrom conftest import REPO_ROOT\nPEERS = os.path.dirname(REPO_ROOT)\n",
}


class Checkout:
    def __init__(self, root):
        self.root, self.path, self.cache = root, root / "repo", root / "cache"
        (self.path / "scripts").mkdir(parents=True)
        (root / "shared" / "peers" / "ceph-ansible").mkdir(parents=True)
        shutil.copy(SCRIPT, str(self.path / "scripts" / "proven.py"))
        for name, text in SOURCES.items():
            self.write(name, text)
        subprocess.run(["git", "init", "-q"], cwd=str(self.path), check=True)

    def write(self, name, text="# a change\n"):
        path = self.path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(str(path), "a") as handle:
            handle.write(text)

    def proven(self, *argv, **environment):
        # Only what the test names: the run's own settings would change every key alike.
        env = {k: v for k, v in os.environ.items() if k not in ("CEPHOPS_REUSE", "CEPHOPS_DIRECT_MODULES", "CI")}
        env.update(environment, CEPHOPS_CACHE=str(self.cache))
        done = subprocess.run(["python3", "scripts/proven.py", *argv], cwd=str(self.path), env=env, check=False,
                              capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        return done

    def to_run(self, run="integration", marker="", **environment):
        done = self.proven("select", run, marker, *("tests/integration/" + t for t in TESTS), **environment)
        return set(os.path.basename(line) for line in done.stdout.split()), done.stderr

    def junit(self, outcomes):
        """A JUnit file with one case a test file: {test file: passed}."""
        cases = "".join('<testcase classname="tests.integration.%s" name="test_one">%s</testcase>'
                        % (test[:-3], "" if passed else '<failure message="no"/>') for test, passed in outcomes.items())
        path = self.root / "junit.xml"
        path.write_text('<testsuites><testsuite name="pytest">%s</testsuite></testsuites>' % cases)
        return str(path)

    def passes(self, rc=0, run="integration", marker=""):
        """Selects, then records every file selected as passed."""
        selected = self.to_run(run, marker)[0]
        self.proven("record", run, self.junit({t: True for t in selected}), str(rc))
        return selected


@pytest.fixture
def checkout(tmp_path):
    return Checkout(tmp_path)


def test_a_file_runs_again_only_while_it_has_no_pass_on_its_inputs(checkout):
    assert checkout.to_run()[0] == set(TESTS)
    checkout.proven("record", "integration", checkout.junit({"test_plain.py": True, "test_importer.py": False}), "1")
    # Failed, and without a case in a run that did not pass: no pass kept.
    selected, said = checkout.to_run()
    assert selected == {"test_importer.py", "test_checkout.py", "test_peers.py"}
    assert "1 of 4 test files passed before on these same inputs" in said and "test_plain.py" in said
    assert checkout.to_run(CEPHOPS_REUSE="0")[0] == set(TESTS)


def test_a_run_that_passes_keeps_the_files_it_selected_that_had_no_case(checkout):
    checkout.to_run()
    checkout.proven("record", "integration", checkout.junit({"test_plain.py": True}), "0")
    assert checkout.to_run()[0] == set()


def test_what_a_file_reads_decides_whether_it_runs_again(checkout):
    checkout.passes()
    checkout.write("docs/disk_facts.md")
    assert checkout.to_run()[0] == {"test_checkout.py"}, "only the file that reads the checkout reads the docs"
    checkout.passes()
    checkout.write("tests/integration/test_plain.py")
    assert checkout.to_run()[0] == {"test_plain.py", "test_importer.py"}, "a test file's importers run with it"
    checkout.passes()
    checkout.write("../shared/peers/ceph-ansible/site.yml")
    assert checkout.to_run()[0] == {"test_checkout.py", "test_peers.py"}, "the peers are read beside the checkout"
    checkout.passes()
    for shared in ("plugins/modules/disk_facts.py", "tests/integration/conftest.py"):
        checkout.write(shared)
        assert checkout.to_run()[0] == set(TESTS), shared
        checkout.passes()


def test_another_run_or_marker_or_environment_is_another_proof(checkout):
    checkout.passes()
    assert checkout.to_run("cores-2.16", "cores")[0] == set(TESTS)
    assert checkout.to_run("integration", "cores")[0] == set(TESTS)
    assert checkout.to_run(CEPHOPS_DIRECT_MODULES="1")[0] == set(TESTS)
    assert checkout.to_run()[0] == set()
