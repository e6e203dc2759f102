"""Run one collection module through ``ansible``, or a playbook through ``ansible-playbook``, as a
user would: shared by the integration tests and the benchmarks in bench/."""

import json
import os
import subprocess
import tempfile


def json_env(**extra):
    """Environment for ``ansible`` or ``ansible-playbook`` whose output a test parses: the json
    callback, one interpreter, UTF-8 for the controller; ``extra`` adds or overrides variables."""
    return dict(
        os.environ,
        ANSIBLE_STDOUT_CALLBACK="ansible.builtin.json",
        ANSIBLE_LOAD_CALLBACK_PLUGINS="1",
        ANSIBLE_PYTHON_INTERPRETER=os.environ.get("CEPHOPS_TEST_PYTHON", "/usr/bin/python3"),
        LC_ALL="C.UTF-8",  # the ansible controller insists on UTF-8; modules set LC_ALL=C themselves
        **extra)


def ansible_module(module, args=None, check=False, prefix=(), inventory="localhost,", host="localhost", env=None):
    """The result dict of one module run on ``host`` (this machine by default; a lab VM through
    its inventory). ``prefix`` runs ansible under another command, e.g. a private mount namespace;
    ``env`` adds environment variables.

    With CEPHOPS_DIRECT_MODULES=1 (the integration stage) a run on this machine skips the
    controller: see direct_module. Everywhere else (the cores stage's runs per ansible-core and
    per managed-host Python, a run by hand, the benchmarks) it goes through ``ansible``."""
    if os.environ.get("CEPHOPS_DIRECT_MODULES") == "1" and inventory == "localhost,":
        return direct_module(module, args, check, prefix, env)
    env = json_env(**(env or {}))
    argv = list(prefix) + ["ansible", host, "--inventory", inventory, "--module-name", "cephops.osd_tuning." + module]
    if inventory == "localhost,":
        argv += ["--connection", "local"]
    if args:
        argv += ["--args", json.dumps(args)]
    if check:
        argv.append("--check")
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=tempfile.gettempdir(), check=False)
    try:
        report = json.loads(proc.stdout)
        return report["plays"][0]["tasks"][0]["hosts"][host]
    except (ValueError, KeyError, IndexError):
        raise AssertionError("ansible gave no result (rc=%s)\nstdout: %s\nstderr: %s"
                             % (proc.returncode, proc.stdout, proc.stderr))


def direct_module(module, args=None, check=False, prefix=(), env=None):
    """The result dict of one module run on this machine without Ansible's controller: the
    managed-host interpreter runs the module file with its arguments on stdin, as AnsiballZ
    hands them over, and ansible-core's module_utils on its path (the controller's, which
    AnsiballZ would bundle). The module's behaviour on real disks is what a test of it proves;
    the controller's start-up cost about 1.5 s of CPU a call. What the controller adds (the
    packaging, a connection, each ansible-core and managed Python) is proven by the playbook
    tests and by the cores stage, whose runs take the ``ansible`` path."""
    env = json_env(**(env or {}))
    env["PYTHONPATH"] = _module_path()
    internal = {"_ansible_check_mode": check, "_ansible_diff": False, "_ansible_verbosity": 0,
                "_ansible_module_name": "cephops.osd_tuning." + module}
    argv = list(prefix) + [env["ANSIBLE_PYTHON_INTERPRETER"], "-m",
                           "ansible_collections.cephops.osd_tuning.plugins.modules." + module]
    proc = subprocess.run(argv, input=json.dumps({"ANSIBLE_MODULE_ARGS": dict(args or {}, **internal)}),
                          capture_output=True, text=True, env=env, cwd=tempfile.gettempdir(), check=False)
    try:
        result = json.loads(proc.stdout)
    except ValueError:
        # What Ansible reports of a module that printed no result.
        return {"failed": True, "msg": "MODULE FAILURE", "rc": proc.returncode,
                "module_stdout": proc.stdout, "module_stderr": proc.stderr}
    result.setdefault("changed", False)
    # ansible-core 2.19 and later modules return warnings and deprecations as structured
    # events, which the controller turns into the text and dictionaries a result shows.
    if "warnings" in result:
        result["warnings"] = [_event(item)["msg"] for item in result["warnings"]]
    if "deprecations" in result:
        result["deprecations"] = [_event(item) for item in result["deprecations"]]
    return result


def _event(item):
    """The message dictionary of a module's warning or deprecation, as ansible-core's
    controller reports it, whether the module's ansible-core sent it as text or as an event."""
    if isinstance(item, str):
        return {"msg": item}
    if "event" in item:
        return dict(item["event"], **dict((key, item[key]) for key in ("version", "date", "collection_name") if key in item))
    return item


def _module_path():
    """PYTHONPATH for a module run directly: the collections directory Ansible loads this
    collection from, and a directory holding only the controller's ``ansible`` package (a
    managed host's interpreter may be another Python than the controller's, whose other
    packages it must not see), kept under .build."""
    import ansible  # pylint: disable=import-outside-toplevel
    package = os.path.dirname(os.path.abspath(ansible.__file__))
    root = os.path.join(os.environ["BUILD_DIR"], "module-path")
    link = os.path.join(root, "ansible")
    if not os.path.islink(link) or os.readlink(link) != package:
        os.makedirs(root, exist_ok=True)
        staged = "%s.%d" % (link, os.getpid())
        os.symlink(package, staged)
        os.replace(staged, link)  # atomic, so pytest-xdist's workers may race
    return os.pathsep.join([os.environ["ANSIBLE_COLLECTIONS_PATH"].split(os.pathsep)[0], root])


def ansible_module_cases(module, cases, check=False):
    """The result dict of each of ``cases`` (module arguments), all run in one ``ansible-playbook``
    on this machine, one task a case that may fail without stopping the others: one controller
    start-up for many refusals instead of one each. Arguments are handed in as they are, so none
    may hold a template, which a playbook would render and ``ansible --args`` would not."""
    for args in cases:
        assert "{{" not in json.dumps(args) and "{%" not in json.dumps(args), args
    tasks = [{"name": "case %d" % number, "cephops.osd_tuning." + module: args, "ignore_errors": True}
             for number, args in enumerate(cases)]
    play = [{"name": "cases of " + module, "hosts": "localhost", "gather_facts": False,
             "check_mode": check, "tasks": tasks}]
    with tempfile.NamedTemporaryFile("w", suffix=".yml", prefix="cases-") as playbook:
        json.dump(play, playbook)  # JSON is YAML
        playbook.flush()
        _rc, report = run_playbook(["ansible-playbook", "--inventory", "localhost,", "--connection", "local",
                                    playbook.name], json_env())
    results = [task["hosts"]["localhost"] for task in report["plays"][0]["tasks"]]
    assert len(results) == len(cases), report
    return results


# What ansible-core prints on stderr about a playbook, a role or a collection (a deprecated
# construct, a version outside requires_ansible); the json callback keeps module warnings,
# which describe disks, in its report instead.
WARNING_MARKERS = ("[WARNING]", "[DEPRECATION WARNING]")


def failed(result):
    """Whether a task's or a loop item's result failed: ansible-core 2.21 marks a failed loop item
    with its exception only, no `failed`."""
    return bool(result.get("failed")) or "exception" in result


def deprecations(report):
    """Every deprecation in a json callback report: ansible-core puts those of a task's templates
    (the ``vars`` dictionary, for one) in the task's result, not on stderr."""
    if isinstance(report, dict):
        found = list(report.get("deprecations") or [])
        return found + [item for value in report.values() for item in deprecations(value)]
    if isinstance(report, list):
        return [item for value in report for item in deprecations(value)]
    return []


def run_playbook(argv, env, preexec_fn=None):
    """(rc, JSON report) of one ``ansible-playbook`` run with a json_env(); fails on any warning
    or deprecation."""
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=tempfile.gettempdir(), check=False,
                          preexec_fn=preexec_fn)
    try:
        report = json.loads(proc.stdout)
    except ValueError:
        raise AssertionError("ansible-playbook gave no JSON (rc=%s)\n%s\n%s" % (proc.returncode, proc.stdout, proc.stderr))
    assert not any(line.startswith(WARNING_MARKERS) for line in proc.stderr.splitlines()), proc.stderr
    assert not deprecations(report), deprecations(report)
    return proc.returncode, report
