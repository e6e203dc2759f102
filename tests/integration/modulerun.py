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
    ``env`` adds environment variables."""
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


def run_playbook(argv, env):
    """(rc, JSON report) of one ``ansible-playbook`` run with a json_env(); fails on any warning
    or deprecation."""
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=tempfile.gettempdir(), check=False)
    try:
        report = json.loads(proc.stdout)
    except ValueError:
        raise AssertionError("ansible-playbook gave no JSON (rc=%s)\n%s\n%s" % (proc.returncode, proc.stdout, proc.stderr))
    assert not any(line.startswith(WARNING_MARKERS) for line in proc.stderr.splitlines()), proc.stderr
    assert not deprecations(report), deprecations(report)
    return proc.returncode, report
