"""scripts/lab_rotation.sh: which lab scenario a `make test` run adds, in a git checkout of its own."""

import os
import subprocess

import pytest

SCRIPT = os.path.join(os.path.dirname(__file__), "..", "..", "scripts", "lab_rotation.sh")
SCENARIOS = ("fleet", "ceph", "releases")


class Checkout:
    def __init__(self, path, cache):
        self.path, self.cache = path, cache
        self.git("init", "-q")
        for name in ("molecule/fleet/molecule.yml", "molecule/ceph/molecule.yml", "lab/labimage.py", "README.md"):
            self.write(name)
        self.commit("the start")

    def git(self, *argv):
        return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *argv], cwd=str(self.path),
                              check=True, capture_output=True, text=True).stdout.strip()

    def write(self, name):
        path = self.path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(str(path), "a") as handle:
            handle.write("a change\n")

    def commit(self, message, *names):
        for name in names:
            self.write(name)
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", message)

    def bash(self, command):
        env = dict(os.environ, CEPHOPS_CACHE=str(self.cache))
        env.pop("CEPHOPS_ROTATION", None)  # a run that names its scenario runs these tests too
        return subprocess.run(["bash", "-c", "source %s && %s" % (os.path.abspath(SCRIPT), command)],
                              cwd=str(self.path), env=env, check=True, capture_output=True, text=True).stdout.strip()

    def pick(self):
        return tuple(self.bash('pick_rotation && echo "$ROTATION_PICK|$ROTATION_WHY"').split("|"))

    def passes(self):
        """Picks, records the pick as passed, and returns it."""
        name = self.pick()[0]
        self.bash("record_rotation %s" % name)
        return name


@pytest.fixture
def checkout(tmp_path):
    (tmp_path / "repo").mkdir()
    return Checkout(tmp_path / "repo", tmp_path / "cache")


def test_without_a_record_the_commit_count_decides(checkout):
    name, why = checkout.pick()
    assert name == SCENARIOS[1 % 3] and why.startswith("no scenario has passed a rotation run on this machine: commit 1")
    checkout.commit("two")
    assert checkout.pick()[0] == SCENARIOS[2]


def test_each_scenario_runs_every_third_passing_run(checkout):
    picks = []
    for _run in range(9):
        picks.append(checkout.passes())
        checkout.commit("next")
    assert sorted(picks[:3]) == sorted(SCENARIOS)
    assert picks[3:6] == picks[:3] and picks[6:] == picks[:3]


PATHS = {"fleet": "molecule/fleet/molecule.yml", "ceph": "molecule/ceph/molecule.yml", "releases": "lab/labimage.py"}


def test_a_scenario_whose_files_changed_goes_first_where_none_is_due(checkout):
    first = checkout.passes()
    since = checkout.git("rev-parse", "HEAD")
    checkout.commit("a change to the one that passed", PATHS[first])
    checkout.commit("and another commit")
    name, why = checkout.pick()
    assert (name, why) == (first, "its own files changed since %s: %s" % (since[:12], dict(
        fleet="molecule/fleet playbooks/qualify.yml playbooks/rollback.yml", ceph="molecule/ceph",
        releases="lab/labimage.py")[first]))
    checkout.bash("record_rotation %s" % first)
    # Now one has missed two runs: it goes first, whatever changed.
    checkout.commit("a change again", PATHS[first])
    assert checkout.pick()[1] == "it has missed the last 2 passing runs"


def test_a_change_elsewhere_keeps_the_round(checkout):
    first = checkout.passes()
    checkout.commit("docs", "README.md")
    name, why = checkout.pick()
    assert name == next(n for n in SCENARIOS if n != first) and why == "its last passing run is the oldest (run 0 of 1)"


def test_a_scenario_that_missed_two_runs_goes_before_a_changed_one(checkout):
    first = checkout.passes()
    others = [name for name in SCENARIOS if name != first]
    # The second scenario passes twice, as if its files changed before each run.
    for _run in range(2):
        checkout.bash("record_rotation %s" % others[0])
    checkout.commit("a change to the second", PATHS[others[0]])
    name, why = checkout.pick()
    assert (name, why) == (others[1], "it has missed the last 3 passing runs")


def test_cephops_rotation_names_the_scenario(checkout):
    checkout.passes()
    assert checkout.bash('CEPHOPS_ROTATION=releases; pick_rotation && echo "$ROTATION_PICK|$ROTATION_WHY"') == \
        "releases|CEPHOPS_ROTATION names it"
    assert checkout.bash("CEPHOPS_ROTATION=drives; pick_rotation 2>&1 || echo refused") == \
        "CEPHOPS_ROTATION=drives names no scenario of the rotation (fleet ceph releases)\nrefused"


def test_all_names_every_scenario_in_turn(checkout):
    env = dict(os.environ, CEPHOPS_CACHE=str(checkout.cache), CEPHOPS_ROTATION="all")
    picked = subprocess.run(["bash", "-c", 'source %s && pick_rotation && echo "$ROTATION_PICK"' % os.path.abspath(SCRIPT)],
                            cwd=str(checkout.path), env=env, check=True, capture_output=True, text=True).stdout.split()
    assert picked == list(SCENARIOS)


def test_a_run_of_the_same_commit_again_picks_what_passed_on_it(checkout):
    first = checkout.passes()
    assert checkout.pick() == (first, "it passed a rotation run of this very commit")
    checkout.commit("next")
    assert checkout.pick()[0] != first
