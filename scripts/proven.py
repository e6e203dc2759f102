"""Passes kept by what they were proven on: a test file, or a lab scenario's verify, that passed
on these very inputs within the last MAX_AGE_DAYS is not run again.

scripts/test.sh calls it for every pytest run it keeps and for every lab scenario:

    proven.py select RUN SELECTION FILE...   prints the FILEs to run, one a line, and says
                                             on stderr which passed before on the same inputs
    proven.py record RUN JUNIT RC            keeps the passes of the files the run ran, if the
                                             run was complete and clean and its audit is clean
    proven.py lab-key SCENARIO               prints the key of what a scenario's steps before
                                             verify read (its converged state is kept by it)
    proven.py lab-select SCENARIO            exits 0 (and says so) where the scenario's verify
                                             passed on these inputs, 1 where it must run
    proven.py lab-record SCENARIO JUNIT RC   keeps the verify's pass on the same terms as record
    proven.py fresh PATH                     exits 0 where a kept converged state may be used

A test file's key hashes
- the run: RUN (the stage and ansible-core), SELECTION (its pytest marker), every setting that
  changes what a play or a test does (SETTINGS: the ANSIBLE_*, PYTEST_*, CEPHOPS_* and LAB_*
  variables and a few more, paths in them written relative to the checkout and the cache), the
  content of every ansible.cfg Ansible would read, the interpreters' versions, the kernel, every
  installed Debian package with its version, and the content of the venvs and collections the
  run uses (INSTALLED: their files, not their names);
- every file of the checkout (tracked or new) but the docs, changelogs, README.md, bench/, lab/,
  molecule/, .ci/ and tests/, with its mode;
- of tests/, the integration helpers (every file of tests/integration/ but the test files), the
  captured outputs of tests/unit/fixtures, and the test file itself with every Python file under
  tests/ it imports (by module name, wherever it lives: a helper of the unit tests counts too),
  with theirs;
- where the file or a Python file under tests/ it imports uses REPO_ROOT (it reads the checkout
  itself), every file of the checkout and of the peer snapshots; where they use REPO_ROOT only
  as os.path.dirname(REPO_ROOT), the peers.
A lab scenario's converge key hashes the same run settings and installed contents, every file
its steps before verify read (LAB_CONVERGE_INPUTS: the collection, every script, the lab, the
scenario's playbooks), the content of the lab images it boots and, for ceph, the peers; its
verify key adds every file of molecule/, the integration helpers the lab tests import and the peers.

Only complete, clean runs are kept: pytest's rc is 0, nothing narrowed the run (no -k, -m beyond
the run's own SELECTION, --deselect, -x or PYTEST_ADDOPTS from the caller), a file kept ran at
least one case and every case of it passed or was skipped for a reason ALLOWED_SKIPS names, and
the audit found no file read outside its key.

The audit: the runs kept put scripts/audit first on PYTHONPATH, whose sitecustomize records, in
every Python process of the run, which files of the checkout and of the peers each test file
opened for reading. A file read outside the reading test's key fails the run, naming both.

Passes are kept under $CEPHOPS_CACHE/proven, one file a key holding the commit and the time they
were proven at, and stand for MAX_AGE_DAYS. CEPHOPS_REUSE=0 runs everything, the lab's converged
states and verifies included (and still keeps what passes).
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
AUDIT = os.path.join(REPO_ROOT, "scripts", "audit")
MAX_AGE_DAYS = 7
# Read by the integration tests only through REPO_ROOT (test_collection_build builds the tarball of them).
NOT_READ = ("docs/", "changelogs/", "README.md", "bench/", "lab/", "molecule/", ".ci/", "tests/")
# Settings that change what a play or a test does, by prefix and by name; those that only steer
# this script and the order of scripts/test.sh are left out.
SETTING_PREFIXES = ("ANSIBLE_", "PYTEST_", "CEPHOPS_", "LAB_", "MOLECULE_")
SETTING_NAMES = ("CI", "PYTHONPATH", "CEPH_ANSIBLE_DIR", "CEPH_ANSIBLE_9_DIR", "CONFIG_TEMPLATE_DIR",
                 "CONFIG_TEMPLATE_3_DIR", "CEPH_ANSIBLE_VENV", "CEPH_ANSIBLE_COLLECTIONS", "VIRTUAL_ENV")
HARNESS_ONLY = ("CEPHOPS_REUSE", "CEPHOPS_CACHE", "CEPHOPS_ROTATION", "CEPHOPS_AUDIT_DIR", "CEPHOPS_AUDIT_ROOTS",
                "CEPHOPS_AUDIT_TEST", "CEPHOPS_LAB_SAVED", "MOLECULE_EPHEMERAL_DIRECTORY")
# Skips that say what this host lacks or has; the kernel and packages that decide them are in the key.
ALLOWED_SKIPS = ("offers no bfq", "udev runs on this host")
# Options by which a caller narrows a pytest run.
NARROWING = re.compile(r"^(-k|-m|--deselect|--ignore|--ignore-glob|-x|--exitfirst|--maxfail|--lf|--last-failed|"
                       r"--sw|--stepwise|--co|--collect-only)(=|$)")
# Of tests/, what every integration test file may read: its helpers, playbooks and stand-ins, and
# the captured outputs under tests/unit/fixtures (test_disk_health.py, test_kernel_cmdline.py).
SHARED_TESTS = ("tests/integration/", "tests/unit/fixtures/")
TEST_FILE = re.compile(r"^tests/(\w+/)*test_\w+\.py$")
# What a lab scenario's steps before verify read: the collection's runtime files, every script
# and lock, the lab and the scenario's playbooks (the default scenario's, which the others borrow,
# too). Its tests are not among them: a change to a lab test alone boots the state these converged.
LAB_CONVERGE_INPUTS = ("galaxy.yml", "meta/", "plugins/", "roles/", "playbooks/", "scripts/", "lab/",
                       "molecule/shared/", ".config/molecule/")
# The lab's verify reads its tests besides, and the integration helpers they import (modulerun.py);
# the converge's inputs are in its key through lab-key.
LAB_VERIFY_INPUTS = ("molecule/", "tests/integration/")
LAB_IMAGE = {"default": ("plain", None), "fleet": ("plain", None), "releases": ("plain", "CEPHOPS_LAB_SUITE"),
             "ceph": ("ceph", None)}


def cache_dir():
    # scripts/env.sh chooses the cache, as for the venvs and the lab.
    return os.environ["CEPHOPS_CACHE"]


def state_file(run):
    os.makedirs(os.path.join(REPO_ROOT, ".build"), exist_ok=True)
    return os.path.join(REPO_ROOT, ".build", "proven-%s.json" % run)


def audit_dir(run):
    return os.path.join(REPO_ROOT, ".build", "audit-%s" % run)


def reuse():
    return os.environ.get("CEPHOPS_REUSE", "1") != "0"


def fresh_enough(when):
    try:
        proven = datetime.datetime.fromisoformat(when)
    except ValueError:
        return False
    if proven.tzinfo is None:
        proven = proven.replace(tzinfo=datetime.timezone.utc)
    return datetime.datetime.now(datetime.timezone.utc) - proven <= datetime.timedelta(days=MAX_AGE_DAYS)


def kept(name):
    """[commit, time] of the pass kept under NAME, or None where there is none, it is too old or
    reuse is off."""
    path = os.path.join(cache_dir(), "proven", name)
    if not (reuse() and os.path.isfile(path)):
        return None
    with open(path) as handle:
        entry = handle.read().split()
    return entry if len(entry) == 2 and fresh_enough(entry[1]) else None


def keep(name):
    os.makedirs(os.path.join(cache_dir(), "proven"), exist_ok=True)
    now = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0).isoformat()
    with open(os.path.join(cache_dir(), "proven", name), "w") as handle:
        handle.write("%s %s\n" % (head(), now))


def digest(path):
    with open(path, "rb") as handle:
        return hashlib.sha256(handle.read()).hexdigest()


def text(name):
    with open(os.path.join(REPO_ROOT, name)) as handle:
        return handle.read()


def checkout_files():
    listed = subprocess.run(["git", "-C", REPO_ROOT, "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            check=True, capture_output=True).stdout.decode()
    # A tracked file deleted in the working tree is not an input.
    return sorted(name for name in set(listed.split("\0")) if name and os.path.isfile(os.path.join(REPO_ROOT, name)))


def head():
    done = subprocess.run(["git", "-C", REPO_ROOT, "rev-parse", "--verify", "-q", "HEAD"], capture_output=True, text=True, check=False)
    return done.stdout.strip() if done.returncode == 0 else "no-commit"


def tree_lines(root, names):
    """A line a file: its content, its mode and its name."""
    return ["%s %o %s" % (digest(os.path.join(root, name)), os.stat(os.path.join(root, name)).st_mode & 0o7777, name)
            for name in names]


def peer_names():
    names = []
    for top, dirs, files in os.walk(PEERS, followlinks=True):
        dirs[:] = [d for d in dirs if d != ".git"]
        names += [os.path.relpath(os.path.join(top, name), PEERS) for name in files]
    return sorted(names)


def peer_lines():
    return tree_lines(PEERS, peer_names())


def output(argv):
    try:
        return subprocess.run(argv, capture_output=True, text=True, env=dict(os.environ, LC_ALL="C"), check=False).stdout
    except OSError as error:
        return str(error)


def portable(value):
    """A setting's value as any clone on this machine has it: the checkout's and the cache's
    paths replaced by their names."""
    value = value.replace(REPO_ROOT, "$REPO_ROOT")
    return value.replace(os.environ.get("CEPHOPS_CACHE") or "\0", "$CEPHOPS_CACHE")


def settings():
    names = sorted(name for name in os.environ if (name.startswith(SETTING_PREFIXES) or name in SETTING_NAMES)
                   and name not in HARNESS_ONLY)
    return ["%s=%s" % (name, portable(os.environ[name])) for name in names]


def ansible_configs():
    """The content of every ansible.cfg Ansible would read (it takes the first that exists)."""
    candidates = [os.environ.get("ANSIBLE_CONFIG", ""), os.path.join(os.getcwd(), "ansible.cfg"),
                  os.path.expanduser("~/.ansible.cfg"), "/etc/ansible/ansible.cfg"]
    return ["ansible.cfg %s %s" % (portable(path), digest(path)) for path in candidates if path and os.path.isfile(path)]


def tree_digest(root):
    """A hash of the content, mode and name of every file under ROOT (links followed, compiled
    bytecode left out), reused while no file's size, times or inode changed."""
    signature, entries = hashlib.sha256(), []
    walk = [(os.path.dirname(root), [], [os.path.basename(root)])] if os.path.isfile(root) else os.walk(root, followlinks=True)
    for top, dirs, files in walk:
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            path = os.path.join(top, name)
            try:
                info = os.stat(path)
            except OSError:
                continue
            entries.append(path)
            signature.update(("%s %d %d %d %d %o\n" % (os.path.relpath(path, root), info.st_size, info.st_mtime_ns,
                                                       info.st_ctime_ns, info.st_ino, info.st_mode)).encode())
    memo = os.path.join(cache_dir(), "proven", "installed-" + hashlib.sha256(root.encode()).hexdigest()[:16])
    if os.path.isfile(memo):
        with open(memo) as handle:
            known = handle.read().split()
        if len(known) == 2 and known[0] == signature.hexdigest():
            return known[1]
    content = hashlib.sha256()
    for path in entries:
        content.update(("%s %o %s\n" % (os.path.relpath(path, root), os.stat(path).st_mode & 0o7777,
                                        digest(path))).encode())
    os.makedirs(os.path.dirname(memo), exist_ok=True)
    # Runs side by side hash the same trees: a reader sees the old memo or the new one, whole.
    with open("%s.%d" % (memo, os.getpid()), "w") as handle:
        handle.write("%s %s\n" % (signature.hexdigest(), content.hexdigest()))
    os.replace("%s.%d" % (memo, os.getpid()), memo)
    return content.hexdigest()


def installed():
    """The venvs and collections the run uses: {what: root}. A collection linked to this
    checkout is the checkout, which the files' lines cover."""
    roots = {}
    for name in ("VIRTUAL_ENV", "CEPH_ANSIBLE_VENV"):
        if os.environ.get(name):
            roots["venv %s" % name] = os.path.realpath(os.environ[name])
    # Peers named elsewhere than beside the checkout.
    for name in ("CEPH_ANSIBLE_DIR", "CEPH_ANSIBLE_9_DIR", "CONFIG_TEMPLATE_DIR", "CONFIG_TEMPLATE_3_DIR"):
        if os.path.isdir(os.environ.get(name, "")):
            roots["peer %s" % name] = os.path.realpath(os.environ[name])
    for entry in os.environ.get("PATH", "").split(os.pathsep):
        if os.path.isfile(os.path.join(entry, "ansible-playbook")) and os.path.isfile(os.path.join(entry, "..", "pyvenv.cfg")):
            roots["venv of ansible-playbook on PATH"] = os.path.realpath(os.path.join(entry, ".."))
            break
    for variable in ("ANSIBLE_COLLECTIONS_PATH", "CEPH_ANSIBLE_COLLECTIONS"):
        for path in os.environ.get(variable, "").split(os.pathsep):
            tree = os.path.join(path, "ansible_collections")
            for namespace in sorted(os.listdir(tree)) if os.path.isdir(tree) else ():
                for collection in sorted(os.listdir(os.path.join(tree, namespace))):
                    real = os.path.realpath(os.path.join(tree, namespace, collection))
                    if real != os.path.realpath(REPO_ROOT):
                        roots["collection %s.%s of %s" % (namespace, collection, variable)] = real
    return roots


def run_lines(run, selection):
    """What the run is, beside the files: the same on any clone of the same machine."""
    lines = ["run=%s selection=%s" % (run, selection), "python=%s" % platform.python_version(),
             "kernel=%s" % " ".join(platform.uname()[2:4])]
    lines += settings() + ansible_configs()
    if os.environ.get("CEPHOPS_TEST_PYTHON"):
        lines.append(output([os.environ["CEPHOPS_TEST_PYTHON"], "--version"]).strip())
    lines += ["%s %s" % (what, tree_digest(root)) for what, root in sorted(installed().items())]
    lines += output(["dpkg-query", "-W", "-f", "${Package} ${Version}\n"]).splitlines()
    return lines


def imported_helpers(name, sources):
    """The Python files under tests/ that NAME imports, by module name wherever they live, with theirs."""
    by_module = {}
    for path in sources:
        by_module.setdefault(os.path.basename(path)[:-3], []).append(path)
    seen, todo = set(), [name]
    while todo:
        tree = ast.parse(sources[todo.pop()])
        for node in ast.walk(tree):
            modules = [alias.name for alias in node.names] if isinstance(node, ast.Import) else (
                [node.module] if isinstance(node, ast.ImportFrom) and node.module else [])
            for module in modules:
                for path in by_module.get(module.split(".")[-1], ()):
                    if path not in seen:
                        seen.add(path)
                        todo.append(path)
    seen.discard(name)
    return sorted(seen)


def reads_beside(source):
    """(whether the test reads the checkout through REPO_ROOT, whether it reads beside it)."""
    names, beside = 0, 0
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Name) and node.id == "REPO_ROOT" and isinstance(node.ctx, ast.Load):
            names += 1
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "dirname"
              and len(node.args) == 1 and isinstance(node.args[0], ast.Name) and node.args[0].id == "REPO_ROOT"):
            beside += 1
    return names > beside, beside > 0


def shared_names(names):
    """The checkout's files every integration test file's key holds: the helpers and the fixtures
    (captured outputs the unit tests share) with the rest."""
    return [n for n in names if not n.startswith(NOT_READ) or n.startswith(SHARED_TESTS) and not TEST_FILE.match(n)]


def key_files(run, selection, tests):
    """({test: its key}, {test: (its own files, whether it reads the checkout, the peers)}, shared files)."""
    names = checkout_files()
    sources = {name: text(name) for name in names if name.startswith("tests/") and name.endswith(".py")}
    shared = shared_names(names)
    common = run_lines(run, selection) + tree_lines(REPO_ROOT, shared)
    checkout, peers, keys, reads = None, None, {}, {}
    for test in tests:
        helpers = imported_helpers(test, sources)
        own = sorted(set([test] + helpers) - set(shared))
        lines = common + tree_lines(REPO_ROOT, own)
        # What a helper it imports reads, it may read (test_operator_playbooks builds the tarball
        # with test_collection_build's code; test_disk_gate reads Rook's CRD with rook_crd's).
        found = [reads_beside(sources[name]) for name in [test] + helpers]
        reads_checkout, reads_peers = any(c for c, _p in found), any(p for _c, p in found)
        if reads_checkout:
            if checkout is None:
                # ansible-galaxy's build reads every file, the test files its build_ignore leaves out too.
                checkout = tree_lines(REPO_ROOT, names)
            lines += checkout
        if reads_checkout or reads_peers:
            if peers is None:
                peers = peer_lines()
            lines += peers
        keys[test] = hashlib.sha256("\n".join(lines).encode()).hexdigest()[:32]
        reads[test] = (own, reads_checkout, reads_checkout or reads_peers)
    return keys, reads, shared


def narrowed(argv):
    """What narrows a run beyond its own selection: the caller's PYTEST_ADDOPTS, and the options
    scripts/test.sh passes (ARGV), or None."""
    if os.environ.get("PYTEST_ADDOPTS", "").strip():
        return "PYTEST_ADDOPTS=%s" % os.environ["PYTEST_ADDOPTS"]
    found = [arg for arg in argv if NARROWING.match(arg)]
    return " ".join(found) or None


def select(run, selection, tests):
    tests = [os.path.relpath(os.path.abspath(t), REPO_ROOT) for t in tests]
    if re.match(r"^\w+$", selection):
        # A file that never names the marker holds no test of it: pytest would only collect it.
        unmarked = [t for t in tests if not re.search(r"\b%s\b" % selection, text(t))]
        tests = [t for t in tests if t not in unmarked]
        if unmarked:
            sys.stderr.write("%s: %d test files hold no test marked %s\n" % (run, len(unmarked), selection))
    found, reads, shared = key_files(run, selection, tests)
    passes = {}
    for test, key in found.items():
        entry = kept(key)
        if entry:
            passes[test] = entry
    to_run = [test for test in found if test not in passes]
    with open(state_file(run), "w") as handle:
        json.dump(dict(keys=found, run=to_run, reads=reads, shared=shared, checkout=checkout_files(),
                       narrowed=narrowed(os.environ.get("CEPHOPS_PYTEST_ARGS", "").split())), handle)
    for test in to_run:
        print(test)
    if passes:
        when = sorted(passes.values(), key=lambda entry: entry[1])
        sys.stderr.write("%s: %d of %d test files passed before on these same inputs, not run again (commits %s, "
                         "%s to %s; CEPHOPS_REUSE=0 runs them): %s\n" % (
                             run, len(passes), len(found), " ".join(sorted(set(e[0][:12] for e in when))), when[0][1],
                             when[-1][1], " ".join(os.path.basename(t) for t in sorted(passes))))
    sys.stderr.write("%s: %d test files to run%s\n" % (run, len(to_run), "" if reuse() else " (CEPHOPS_REUSE=0)"))


def case_outcomes(junit):
    """[(classname, name, outcome, skip reason)] of every case in JUNIT."""
    cases = []
    try:
        root = ET.parse(junit).getroot()
    except (OSError, ET.ParseError):
        return cases  # no JUnit file, or a run cut short while writing it: no case ran
    for case in root.iter("testcase"):
        outcome, reason = "passed", ""
        for child in case:
            if child.tag in ("failure", "error"):
                outcome = "failed"
            elif child.tag == "skipped" and outcome == "passed":
                outcome, reason = "skipped", child.get("message", "")
        cases.append((case.get("classname", ""), case.get("name", ""), outcome, reason))
    return cases


def clean_files(junit, tests):
    """{test file: why it is not kept, or None}: a file is kept where it ran a case and each of its
    cases passed or was skipped for an allowed reason."""
    verdict = {test: "no test case ran" for test in tests}
    for module, name, outcome, reason in case_outcomes(junit):
        for test in tests:
            dotted = test[:-3].replace("/", ".")
            if not (module == dotted or module.startswith(dotted + ".")):
                continue
            if verdict[test] == "no test case ran":
                verdict[test] = None
            if outcome == "failed":
                verdict[test] = "%s failed" % name
            elif outcome == "skipped" and not any(allowed in reason for allowed in ALLOWED_SKIPS):
                verdict[test] = verdict[test] or "%s skipped: %s" % (name, reason)
            elif outcome == "skipped":
                sys.stderr.write("  %s: %s skipped, allowed: %s\n" % (os.path.basename(test), name, reason))
    return verdict


def audit_reads(run):
    """{test file, or "" for reads outside any test: set of real paths it read}."""
    reads = {}
    folder = audit_dir(run)
    for name in sorted(os.listdir(folder)) if os.path.isdir(folder) else ():
        with open(os.path.join(folder, name)) as handle:
            for line in handle:
                test, path = line.rstrip("\n").split("\t", 1)
                reads.setdefault(os.path.relpath(test, REPO_ROOT) if test else "", set()).add(path)
    return reads


def outside_key(run, state):
    """[(test, file)] of the files of the checkout or the peers a test read that its key leaves out."""
    checkout, shared = set(state["checkout"]), set(state["shared"])
    root, peers = os.path.realpath(REPO_ROOT) + os.sep, os.path.realpath(PEERS) + os.sep
    found = []
    for test, paths in sorted(audit_reads(run).items()):
        own, reads_checkout, reads_peers = state["reads"].get(test, ([], False, False))
        allowed = shared | set(own)
        for path in sorted(paths):
            if path.startswith(peers):
                if not reads_peers:
                    found.append((test or "(no test)", os.path.relpath(path, os.path.dirname(PEERS))))
            elif path.startswith(root):
                name = os.path.relpath(path, root)
                if name in checkout and name not in allowed and not reads_checkout:
                    found.append((test or "(no test)", name))
    return found


def record(run, junit, rc):
    with open(state_file(run)) as handle:
        state = json.load(handle)
    found, ran = state["keys"], state["run"]
    outside = outside_key(run, state)
    for test, name in outside:
        sys.stderr.write("%s: AUDIT: %s read %s, which its key leaves out (scripts/proven.py)\n" % (run, test, name))
    if rc != 0 or state["narrowed"] or outside:
        why = ("pytest's exit status %d" % rc if rc else
               "narrowed by %s" % state["narrowed"] if state["narrowed"] else "files read outside their keys")
        sys.stderr.write("%s: nothing kept as proven: %s\n" % (run, why))
        return 1 if outside else 0
    verdict = clean_files(junit, ran)
    for test in ran:
        if verdict[test]:
            sys.stderr.write("  %s: not kept: %s\n" % (os.path.basename(test), verdict[test]))
        else:
            keep(found[test])
    sys.stderr.write("%s: %d of %d test files run passed and are kept as proven\n" % (
        run, sum(1 for t in ran if not verdict[t]), len(ran)))
    return 0


def image_lines(scenario):
    """The content of the OS image and the pre-filled disks' images the scenario boots."""
    sys.path.insert(0, os.path.join(REPO_ROOT, "lab"))
    import labimage  # pylint: disable=import-outside-toplevel
    variant, suite_variable = LAB_IMAGE[scenario]
    suite = os.environ.get(suite_variable or "", "") or labimage.VARIANTS[variant].suites[0]
    images = [labimage.os_image_path(suite, variant)] + [labimage.base_image_path(kind) for kind in labimage.BASE_KINDS]
    if not all(path.exists() for path in images):
        # Built here, or waited for where a build of them is under way (its lock): a key is of content.
        labimage.ensure_images(suite, variant=variant)
    return ["image %s %s" % (path.name, tree_digest(str(path))) for path in images]


def lab_names(scenario, prefixes):
    """The checkout's files under PREFIXES (not the integration test files), and the scenario's own
    playbooks and the default one's, which the others borrow."""
    return [n for n in checkout_files() if n.startswith(prefixes) and not TEST_FILE.match(n)
            or n == "molecule/default/" + os.path.basename(n) or n.startswith("molecule/%s/" % scenario) and "/tests/" not in n]


def lab_lines(scenario, prefixes):
    names = lab_names(scenario, prefixes)
    lines = run_lines(lab_run(scenario), "") + tree_lines(REPO_ROOT, names)
    if scenario == "ceph":
        lines += peer_lines()
    return lines + image_lines(scenario)


def lab_run(scenario):
    """The run's name: a scenario runs on each release at once (releases)."""
    suite = os.environ.get("CEPHOPS_LAB_SUITE", "")
    return "lab-%s%s" % (scenario, "-" + suite if suite else "")


def lab_key(scenario):
    return hashlib.sha256("\n".join(lab_lines(scenario, LAB_CONVERGE_INPUTS)).encode()).hexdigest()[:16]


def lab_verify_key(scenario):
    lines = lab_lines(scenario, LAB_CONVERGE_INPUTS + LAB_VERIFY_INPUTS) + peer_lines()
    return "lab-%s-%s" % (scenario, hashlib.sha256("\n".join(lines).encode()).hexdigest()[:32])


def lab_select(scenario):
    key = lab_verify_key(scenario)
    entry = kept(key)
    with open(state_file(lab_run(scenario)), "w") as handle:
        # The verify's reads are charged to no test file: molecule runs its pytest.
        json.dump(dict(keys={"verify": key}, run=["verify"], reads={"": [[], False, True]},
                       shared=lab_names(scenario, LAB_CONVERGE_INPUTS + LAB_VERIFY_INPUTS),
                       checkout=checkout_files(), narrowed=narrowed([])), handle)
    if entry:
        suite = os.environ.get("CEPHOPS_LAB_SUITE", "")
        sys.stderr.write("lab %s%s: its verify passed on these same inputs at %s, %s; not run again "
                         "(CEPHOPS_REUSE=0 runs it)\n" % (scenario, " " + suite if suite else "", entry[0][:12], entry[1]))
        return 0
    return 1


def lab_record(scenario, junit, rc):
    run = lab_run(scenario)
    with open(state_file(run)) as handle:
        state = json.load(handle)
    outside = outside_key(run, state)
    for test, name in outside:
        sys.stderr.write("%s: AUDIT: %s read %s, which the verify's key leaves out (scripts/proven.py)\n" % (run, test, name))
    cases = case_outcomes(junit)
    bad = [(name, outcome, reason) for _module, name, outcome, reason in cases if outcome == "failed"
           or outcome == "skipped" and not any(allowed in reason for allowed in ALLOWED_SKIPS)]
    why = ("the verify's exit status %d" % rc if rc else "narrowed by %s" % state["narrowed"] if state["narrowed"]
           else "files read outside its key" if outside else "no test case ran" if not cases
           else "%s %s %s" % bad[0] if bad else None)
    if why:
        sys.stderr.write("%s: verify not kept as proven: %s\n" % (run, why))
    else:
        keep(state["keys"]["verify"])
        sys.stderr.write("%s: verify kept as proven (%d cases)\n" % (run, len(cases)))
    return 1 if outside else 0


def fresh(path):
    """Whether the kept converged state at PATH may be booted: reuse is on and it is young enough."""
    if not (reuse() and os.path.isdir(path)):
        return False
    made = datetime.datetime.fromtimestamp(os.stat(path).st_mtime, datetime.timezone.utc)
    return fresh_enough(made.isoformat())


def main(argv):
    if len(argv) >= 3 and argv[0] == "select":
        select(argv[1], argv[2], argv[3:])
    elif len(argv) == 4 and argv[0] == "record":
        sys.exit(record(argv[1], argv[2], int(argv[3])))
    elif len(argv) == 2 and argv[0] == "lab-key":
        print(lab_key(argv[1]))
    elif len(argv) == 2 and argv[0] == "lab-select":
        sys.exit(lab_select(argv[1]))
    elif len(argv) == 4 and argv[0] == "lab-record":
        sys.exit(lab_record(argv[1], argv[2], int(argv[3])))
    elif len(argv) == 2 and argv[0] == "fresh":
        sys.exit(0 if fresh(argv[1]) else 1)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
