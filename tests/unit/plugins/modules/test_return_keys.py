"""No module documents a result key Ansible gives a meaning of its own: a module's ``skipped``
list, for one, made Ansible call the task skipped and lose its change and its handler."""

import ast
import glob
import os

import pytest
import yaml

MODULES = sorted(glob.glob(os.path.join(os.path.dirname(__file__), *[os.pardir] * 3, os.pardir, "plugins", "modules",
                                        "*.py")))
# Keys of a task's result that Ansible reads as the task's own state or as its internals.
RESERVED = {"skipped", "failed", "unreachable", "invocation", "exception", "warnings", "deprecations", "item",
            "skip_reason", "failed_when_result", "changed_when_result"}
# A result list Ansible reads as loop results: an entry's "skipped" marks the whole task skipped.
RESERVED_IN_RESULTS = {"skipped", "failed", "unreachable"}


def return_doc(path):
    """The RETURN documentation of a module file, as YAML."""
    tree = ast.parse(open(path).read())
    found = [node.value.value for node in tree.body if isinstance(node, ast.Assign)
             and [target.id for target in node.targets if isinstance(target, ast.Name)] == ["RETURN"]]
    assert len(found) == 1, "%s has no RETURN" % path
    return yaml.safe_load(found[0]) or {}


def reserved_keys(doc):
    keys = [key for key in doc if key in RESERVED or (key.startswith(("ansible_", "_ansible")) and key != "ansible_facts")]
    keys += ["results.%s" % key for key in (doc.get("results") or {}).get("contains", {}) if key in RESERVED_IN_RESULTS]
    return keys


def test_every_module_is_walked():
    assert len(MODULES) >= 14, MODULES


@pytest.mark.parametrize("path", MODULES, ids=[os.path.basename(p)[:-3] for p in MODULES])
def test_no_module_returns_a_key_ansible_reserves(path):
    assert reserved_keys(return_doc(path)) == []


def test_a_reserved_key_is_found():
    assert reserved_keys({"skipped": {}, "mounts": {}, "results": {"contains": {"failed": {}}}}) == [
        "skipped", "results.failed"]
