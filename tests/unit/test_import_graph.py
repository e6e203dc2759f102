"""The layout rules of docs/development.md ("Where each decision lives"), read from the code's
imports: no filter that only forwards to a helper nothing else uses, and no helper file with a
single importer unless it is large enough to stand alone."""

import ast
import glob
import os

import yaml
from jinja2 import Environment, TemplateSyntaxError, nodes

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PACKAGE = "ansible_collections.cephops.osd_tuning.plugins."
HELPER_DIRS = ("module_utils", "plugin_utils")
# A helper with one importer stays a file of its own only from this many lines.
STANDS_ALONE = 250
MAX_SINGLE_IMPORTER_HELPERS = 4


def plugin_files():
    """{path under plugins/: source} of every Python file of the collection's plugins."""
    found = {}
    for root, _dirs, names in os.walk(os.path.join(REPO_ROOT, "plugins")):
        for name in names:
            if name.endswith(".py") and name != "__init__.py":
                path = os.path.relpath(os.path.join(root, name), REPO_ROOT)
                with open(os.path.join(REPO_ROOT, path)) as handle:
                    found[path] = handle.read()
    return found


def importers(files):
    """{helper path: set of plugin files importing it}."""
    found = dict((path, set()) for path in files if path.split(os.sep)[1] in HELPER_DIRS)
    for path, text in files.items():
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(PACKAGE):
                base = os.path.join("plugins", *node.module[len(PACKAGE):].split("."))
                for alias in node.names:
                    for target in (base + ".py", os.path.join(base, alias.name + ".py")):
                        if target in found and target != path:
                            found[target].add(path)
    return found


def test_every_filter_holds_its_logic_or_calls_a_shared_helper():
    files = plugin_files()
    users = importers(files)
    forwarding = sorted("%s -> %s (its only importer)" % (path, helper)
                        for path in files if path.startswith(os.path.join("plugins", "filter"))
                        for helper, by in users.items() if path in by and len(by) == 1
                        and helper.startswith(os.path.join("plugins", "plugin_utils")))
    assert forwarding == []


def test_a_helper_with_one_importer_is_large_enough_to_stand_alone():
    files = plugin_files()
    single = dict((helper, len(files[helper].splitlines())) for helper, by in importers(files).items() if len(by) < 2)
    small = sorted("%s: %d lines" % item for item in single.items() if item[1] < STANDS_ALONE)
    assert small == [], "fold these into their one importer"
    assert len(single) <= MAX_SINGLE_IMPORTER_HELPERS, sorted(single)


def yaml_files():
    """Every YAML file of the collection and its tests but the changelog's prose."""
    for root, dirs, names in os.walk(REPO_ROOT):
        dirs[:] = sorted(name for name in dirs if not name.startswith(".") and name != "changelogs")
        for name in sorted(names):
            if name.endswith((".yml", ".yaml")):
                yield os.path.relpath(os.path.join(root, name), REPO_ROOT)


def _expression_names(text):
    """The names each list, tuple or dict literal of a template or condition string lists: its
    constant items (a dict's keys), and the attribute or variable an item reads."""
    source = text if ("{{" in text or "{%" in text) else "{{ %s }}" % text
    try:
        tree = Environment().parse(source)
    except TemplateSyntaxError:
        return  # prose, not an expression
    for node in tree.find_all((nodes.List, nodes.Tuple, nodes.Dict)):
        items = [pair.key for pair in node.items] if isinstance(node, nodes.Dict) else node.items
        yield [getattr(item, "value", None) or getattr(item, "attr", None) or getattr(item, "name", None)
               for item in items]


def yaml_lists(data):
    """Every collection of names a YAML document lists by hand: the keys of each mapping, the
    strings of each sequence and the literals of each template or condition string."""
    if isinstance(data, dict):
        yield list(data)
        for key, value in data.items():
            for part in (key, value):
                yield from yaml_lists(part)
    elif isinstance(data, list):
        yield data
        for value in data:
            yield from yaml_lists(value)
    elif isinstance(data, str):
        yield from _expression_names(data)


def test_the_identity_keys_are_copied_in_one_place():
    """blockdev.py makes a disk's identity and lists its keys (IDENTITY_KEYS); every other file
    copies them with blockdev.copy_identity, so no other literal names three of them. In YAML
    neither: a playbook or role takes the keys from disk_facts' ``identity_keys``."""
    from ansible_collections.cephops.osd_tuning.plugins.module_utils.blockdev import IDENTITY_KEYS
    found = []
    for path, text in plugin_files().items():
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Dict):
                items = node.keys
            elif isinstance(node, (ast.Tuple, ast.List, ast.Set)):
                items = node.elts
            else:
                continue
            named = set(item.value for item in items if isinstance(item, ast.Constant)) & set(IDENTITY_KEYS)
            if len(named) >= 3 and not path.endswith(os.path.join("module_utils", "blockdev.py")):
                found.append("%s:%d %s" % (path, node.lineno, sorted(named)))
    for path in yaml_files():
        with open(os.path.join(REPO_ROOT, path)) as handle:
            text = handle.read()
        if sum(key in text for key in IDENTITY_KEYS) < 3:
            continue  # cannot list three
        documents = list(yaml.load_all(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)))
        for listed in (names for document in documents for names in yaml_lists(document)):
            named = set(name for name in listed if isinstance(name, str)) & set(IDENTITY_KEYS)
            if len(named) >= 3:
                found.append("%s %s" % (path, sorted(named)))
    assert found == []


def test_a_yaml_list_of_identity_keys_is_found():
    keys = ["model", "serial", "wwn"]
    assert [sorted(set(names) & set(keys)) for names in yaml_lists({"fields": keys})] == [[], keys]
    template = "{{ disk | dict2items | selectattr('key', 'in', ['path', 'model', 'serial', 'wwn']) | items2dict }}"
    assert list(yaml_lists(template)) == [["path", "model", "serial", "wwn"]]
    assert list(yaml_lists("[disk.model, disk.serial, disk.wwn]")) == [keys]
    assert list(yaml_lists("{{ {'model': m, 'serial': s} }}")) == [["model", "serial"]]
    assert list(yaml_lists("the model, serial and WWN of a disk")) == []


def test_ceph_ansible_variables_are_named_in_one_python_file():
    """ceph_ansible.py is the one Python file that knows ceph-ansible's variable names; the
    others take them from it (LIST_PARTS, LVM_VOLUMES, ...). ``devices`` is the collection's
    own word too (the option of every module that takes disks, a key of the gate's plan and
    host record), so only the names that are ceph-ansible's alone are looked for."""
    from ansible_collections.cephops.osd_tuning.plugins.plugin_utils.ceph_ansible import READ_VARS
    names = set(READ_VARS) - set(["devices"])
    assert names >= set(["dedicated_devices", "bluestore_wal_devices", "lvm_volumes", "osd_auto_discovery"])
    found = sorted("%s:%d %s" % (path, node.lineno, node.value) for path, text in plugin_files().items()
                   if not path.endswith(os.path.join("plugin_utils", "ceph_ansible.py"))
                   for node in ast.walk(ast.parse(text))
                   if isinstance(node, ast.Constant) and node.value in names)
    assert found == []


MAX_CLASS_LINES = 200
MAX_CODE_LINES = 700
DOC_BLOCKS = ("DOCUMENTATION", "EXAMPLES", "RETURN")


def code_lines(text):
    """Lines of code: not blank, not a comment, not in a docstring or documentation block."""
    tree = ast.parse(text)
    prose = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef)) and node.body \
                and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant):
            prose.update(range(node.body[0].lineno, node.body[0].end_lineno + 1))
        if isinstance(node, ast.Assign) and any(getattr(target, "id", None) in DOC_BLOCKS for target in node.targets):
            prose.update(range(node.lineno, node.end_lineno + 1))
    return sum(1 for number, line in enumerate(text.splitlines(), 1)
               if line.strip() and not line.strip().startswith("#") and number not in prose)


def test_every_class_and_file_is_a_size_a_reader_can_hold():
    """No class over 200 lines; no file over 700 lines of code."""
    found = []
    for path, text in plugin_files().items():
        lines = code_lines(text)
        if lines > MAX_CODE_LINES:
            found.append("%s: %d lines of code" % (path, lines))
        found += ["%s: class %s, %d lines" % (path, node.name, node.end_lineno - node.lineno + 1)
                  for node in ast.walk(ast.parse(text)) if isinstance(node, ast.ClassDef)
                  and node.end_lineno - node.lineno + 1 > MAX_CLASS_LINES]
    assert found == []


# Tests of every module at once, not of one of them.
ACROSS_MODULES = ("tests/unit/plugins/modules/test_return_keys.py",)


def test_the_unit_tests_of_a_plugin_file_sit_beside_its_kind_and_start_with_its_name():
    """tests/unit/plugins/K/test_N*.py tests plugins/K/N.py: a reader finds a file's tests by its path."""
    stray = []
    for test in sorted(glob.glob(os.path.join(REPO_ROOT, "tests", "unit", "plugins", "*", "test_*.py"))):
        relative = os.path.relpath(test, REPO_ROOT)
        kind, name = os.path.basename(os.path.dirname(test)), os.path.basename(test)[len("test_"):-len(".py")]
        plugins = [os.path.basename(p)[:-len(".py")] for p in glob.glob(os.path.join(REPO_ROOT, "plugins", kind, "*.py"))]
        if relative not in ACROSS_MODULES and not any(name == p or name.startswith(p + "_") for p in plugins):
            stray.append(relative)
    assert stray == []
