"""Passes kept by what they were proven on: a pytest file that passed on these very inputs is
not run again.

scripts/test.sh runs each integration and cores pytest run through it:

    proven.py select RUN SELECTION FILE...   prints the FILEs to run, one a line, and says
                                             on stderr which passed before on the same inputs
    proven.py record RUN JUNIT RC            keeps the passes of the files the run ran

A file's key is a hash of
- every file of the checkout (tracked or new) that the integration tests can read: all but the
  docs, changelogs, README.md, bench/, lab/, molecule/, tests/unit/ and .ci/, and all but the
  other test files;
- the test files it imports (``from test_disk_gate import ...``), with theirs;
- where the file uses REPO_ROOT (it reads the checkout itself): every file of the checkout and
  of the peer snapshots; where it uses REPO_ROOT only as os.path.dirname(REPO_ROOT) (the
  directory beside the checkout, where the peers are), the peer snapshots;
- the run: RUN (the stage and ansible-core), SELECTION (its pytest marker), the pytest
  environment variables that change what a test does, the interpreters' versions, the kernel and
  every installed Debian package with its version.
The venvs and collections need no entry of their own: their names are hashes of lock files
under scripts/, which the key covers.

Passes are kept under $CEPHOPS_CACHE/proven, one file a key holding the commit and date they
were proven at. CEPHOPS_REUSE=0 runs every file (and still keeps what passes).
"""

import ast
import datetime
import hashlib
import json
import os
import platform
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PEERS = os.path.join(os.path.dirname(REPO_ROOT), "shared", "peers")
# Read by the tests only through REPO_ROOT (test_collection_build builds the tarball of them).
NOT_READ = ("docs/", "changelogs/", "README.md", "bench/", "lab/", "molecule/", "tests/unit/", ".ci/")
# Environment that changes what an integration test does or where it looks.
ENVIRONMENT = ("CI", "CEPHOPS_DIRECT_MODULES", "CEPHOPS_TEST_PYTHON", "CEPH_ANSIBLE_DIR", "CEPH_ANSIBLE_9_DIR",
               "CONFIG_TEMPLATE_DIR", "CONFIG_TEMPLATE_3_DIR")
TEST_FILE = re.compile(r"^tests/integration/test_\w+\.py$")


def state_file(run):
    os.makedirs(os.path.join(REPO_ROOT, ".build"), exist_ok=True)
    return os.path.join(REPO_ROOT, ".build", "proven-%s.json" % run)


def store():
    # scripts/env.sh chooses the cache, as for the venvs and the lab.
    return os.path.join(os.environ["CEPHOPS_CACHE"], "proven")


def reuse():
    return os.environ.get("CEPHOPS_REUSE", "1") != "0"


def kept(name):
    """[commit, date] of the pass kept under NAME, or None."""
    path = os.path.join(store(), name)
    if not (reuse() and os.path.isfile(path)):
        return None
    with open(path) as handle:
        return handle.read().split()


def keep(name):
    os.makedirs(store(), exist_ok=True)
    with open(os.path.join(store(), name), "w") as handle:
        handle.write("%s %s\n" % (head(), datetime.date.today().isoformat()))


def digest(path):
    with open(path, "rb") as handle:
        return hashlib.sha256(handle.read()).hexdigest()


def checkout_files():
    listed = subprocess.run(["git", "-C", REPO_ROOT, "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            check=True, capture_output=True).stdout.decode()
    # A tracked file deleted in the working tree is not an input.
    return sorted(name for name in set(listed.split("\0")) if name and os.path.isfile(os.path.join(REPO_ROOT, name)))


def head():
    done = subprocess.run(["git", "-C", REPO_ROOT, "rev-parse", "--verify", "-q", "HEAD"], capture_output=True, text=True, check=False)
    return done.stdout.strip() if done.returncode == 0 else "no-commit"


def tree_lines(root, names):
    return ["%s %s" % (digest(os.path.join(root, name)), name) for name in names]


def peer_lines():
    names = []
    for top, dirs, files in os.walk(PEERS, followlinks=True):
        dirs[:] = [d for d in dirs if d != ".git"]
        names += [os.path.relpath(os.path.join(top, name), PEERS) for name in files]
    return tree_lines(PEERS, sorted(names))


def output(argv):
    try:
        return subprocess.run(argv, capture_output=True, text=True, env=dict(os.environ, LC_ALL="C"), check=False).stdout
    except OSError as error:
        return str(error)


def run_lines(run, selection):
    """What the run is, beside the files: the same on any clone of the same machine."""
    lines = ["run=%s selection=%s" % (run, selection), "python=%s" % platform.python_version(),
             "kernel=%s" % " ".join(platform.uname()[2:4])]
    lines += ["%s=%s" % (name, os.environ.get(name, "")) for name in ENVIRONMENT]
    if os.environ.get("CEPHOPS_TEST_PYTHON"):
        lines.append(output([os.environ["CEPHOPS_TEST_PYTHON"], "--version"]).strip())
    lines += output(["dpkg-query", "-W", "-f", "${Package} ${Version}\n"]).splitlines()
    return lines


def imported_tests(name, sources):
    """The test files NAME imports, with theirs."""
    seen, todo = set(), [name]
    while todo:
        tree = ast.parse(sources[todo.pop()])
        for node in ast.walk(tree):
            modules = [alias.name for alias in node.names] if isinstance(node, ast.Import) else (
                [node.module] if isinstance(node, ast.ImportFrom) and node.module else [])
            for module in modules:
                path = "tests/integration/%s.py" % module
                if path in sources and path not in seen:
                    seen.add(path)
                    todo.append(path)
    seen.discard(name)
    return sorted(seen)


def reads_beside(source):
    """(whether the test reads the checkout through REPO_ROOT, whether it reads beside it)."""
    names, beside = 0, 0
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Name) and node.id == "REPO_ROOT":
            names += 1
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "dirname"
              and len(node.args) == 1 and isinstance(node.args[0], ast.Name) and node.args[0].id == "REPO_ROOT"):
            beside += 1
    return names > beside, beside > 0


def keys(run, selection, tests):
    """{test file: key}."""
    names = checkout_files()
    sources = {}
    for name in names:
        if TEST_FILE.match(name):
            with open(os.path.join(REPO_ROOT, name)) as handle:
                sources[name] = handle.read()
    shared = tree_lines(REPO_ROOT, [n for n in names if not n.startswith(NOT_READ) and n not in sources])
    checkout, peers = None, None
    common = run_lines(run, selection)
    result = {}
    for test in tests:
        lines = common + shared + tree_lines(REPO_ROOT, [test] + imported_tests(test, sources))
        reads_checkout, reads_peers = reads_beside(sources[test])
        if reads_checkout:
            if checkout is None:
                checkout = tree_lines(REPO_ROOT, [n for n in names if n not in sources])
            lines += checkout
        if reads_checkout or reads_peers:
            if peers is None:
                peers = peer_lines()
            lines += peers
        result[test] = hashlib.sha256("\n".join(lines).encode()).hexdigest()[:32]
    return result


def select(run, selection, tests):
    tests = [os.path.relpath(os.path.abspath(t), REPO_ROOT) for t in tests]
    found = keys(run, selection, tests)
    passes = {}
    for test, key in found.items():
        entry = kept(key)
        if entry:
            passes[test] = entry
    to_run = [test for test in found if test not in passes]
    with open(state_file(run), "w") as handle:
        json.dump(dict(keys=found, run=to_run), handle)
    for test in to_run:
        print(test)
    if passes:
        when = sorted(passes.values(), key=lambda entry: entry[1])
        sys.stderr.write("%s: %d of %d test files passed before on these same inputs, not run again (commits %s, "
                         "%s to %s; CEPHOPS_REUSE=0 runs them): %s\n" % (
                             run, len(passes), len(found), " ".join(sorted(set(e[0][:12] for e in when))), when[0][1],
                             when[-1][1], " ".join(os.path.basename(t) for t in sorted(passes))))
    sys.stderr.write("%s: %d test files to run%s\n" % (run, len(to_run), "" if reuse() else " (CEPHOPS_REUSE=0)"))


def passed_files(junit, tests, complete):
    """The files of TESTS whose every test case in JUNIT passed (or was skipped); with COMPLETE
    (pytest exited 0 or found nothing to run), also those with no selected test."""
    outcome = {}
    if os.path.isfile(junit):
        for case in ET.parse(junit).getroot().iter("testcase"):
            module = case.get("classname", "")
            failed = any(child.tag in ("failure", "error") for child in case)
            for test in tests:
                dotted = test[:-3].replace("/", ".")
                if module == dotted or module.startswith(dotted + "."):
                    outcome[test] = outcome.get(test, True) and not failed
    return [t for t in tests if outcome.get(t, complete)]


def record(run, junit, rc):
    with open(state_file(run)) as handle:
        state = json.load(handle)
    found, ran = state["keys"], state["run"]
    passed = passed_files(junit, ran, rc in (0, 5))
    for test in passed:
        keep(found[test])
    sys.stderr.write("%s: %d of %d test files run passed and are kept as proven\n" % (run, len(passed), len(ran)))


def main(argv):
    if len(argv) >= 3 and argv[0] == "select":
        select(argv[1], argv[2], argv[3:])
    elif len(argv) == 4 and argv[0] == "record":
        record(argv[1], argv[2], int(argv[3]))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
