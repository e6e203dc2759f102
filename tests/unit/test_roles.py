"""The roles read like a table of contents (docs/development.md, "How the roles read"): one
task file of named steps and a rollback each, constants only under vars/, and no filter call whose positional arguments a
reader has to count."""

import os
import re

import yaml
from jinja2 import Environment, nodes

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ROLES = os.path.join(REPO_ROOT, "roles")
MAX_POSITIONAL = 4
REGISTERED = re.compile(r"^\s*register: (\S+)", re.M)
LOOP_VAR = re.compile(r"^\s*loop_var: (\S+)", re.M)


def roles():
    return sorted(name for name in os.listdir(ROLES) if os.path.isdir(os.path.join(ROLES, name, "tasks")))


def read(*path):
    with open(os.path.join(*path)) as handle:
        return handle.read()


def strings(data):
    """Every string of a loaded YAML document, keys included."""
    if isinstance(data, dict):
        for key, value in data.items():
            yield from strings(key)
            yield from strings(value)
    elif isinstance(data, list):
        for value in data:
            yield from strings(value)
    elif isinstance(data, str):
        yield data


def yaml_files():
    for top in ("roles", "playbooks"):
        for root, _dirs, names in os.walk(os.path.join(REPO_ROOT, top)):
            for name in names:
                if name.endswith(".yml"):
                    yield os.path.join(root, name)


def filter_calls(template):
    """(filter name, positional argument count) of each filter call in a template string."""
    for node in Environment().parse(template).find_all(nodes.Filter):
        yield node.name, len(node.args)


def test_a_role_is_one_task_file_and_its_rollback():
    other = {}
    for role in roles():
        files = sorted(os.listdir(os.path.join(ROLES, role, "tasks")))
        if files != ["main.yml", "rollback.yml"]:
            other[role] = files
    assert other == {}


def test_vars_hold_constants_only():
    found = []
    for role in roles():
        path = os.path.join(ROLES, role, "vars", "main.yml")
        if not os.path.exists(path):
            continue
        tasks = "".join(read(ROLES, role, "tasks", name) for name in os.listdir(os.path.join(ROLES, role, "tasks")))
        made_by_tasks = set(REGISTERED.findall(tasks)) | set(LOOP_VAR.findall(tasks))
        for text in strings(yaml.safe_load(read(path))):
            found += ["%s: a filter in %r" % (role, text) for _name, _args in filter_calls(text)]
            found += ["%s: %s, which a task makes, in %r" % (role, name, text)
                      for name in made_by_tasks if re.search(r"\b%s\b" % re.escape(name), text)]
    assert found == []


def test_no_collection_filter_call_takes_more_than_four_positional_arguments():
    found = []
    for path in yaml_files():
        for text in strings(yaml.safe_load(read(path))):
            if "{{" not in text:
                continue
            found += ["%s: %s with %d" % (os.path.relpath(path, REPO_ROOT), name, count)
                      for name, count in filter_calls(text)
                      if name.startswith("cephops.osd_tuning.") and count > MAX_POSITIONAL]
    assert found == []
