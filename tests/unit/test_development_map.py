"""docs/development.md's walk of one disk is the map a maintainer follows. It must name files
that exist, each once, each reached from a file before it; and it must be whole: every file a
file of the walk reaches (a Python import, a task file, module, filter or role a task or
variable names, a role's variables, defaults and argument specs) is on the walk, or on the
list of files the walk passes by, with the reason."""

import ast
import os
import re

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PACKAGE = "ansible_collections.cephops.osd_tuning."
WALK_ROW = re.compile(r"^\| (\d+) \| `([^`]+)` \| (.+?) \| ?(decides)? ?\|$")
PASSED_ROW = re.compile(r"^\| `([^`]+)` \| (.+?) \|$")
FQCN = re.compile(r"\bcephops\.osd_tuning\.([a-z_]+)\b")
TASK_FILE = re.compile(r"\b(?:import|include)_tasks: (\S+\.yml)")
ROLE = re.compile(r"\bname: cephops\.osd_tuning\.([a-z_]+)\b")
# What a role's tasks/main.yml brings in besides its task files.
ROLE_PARTS = ("vars/main.yml", "defaults/main.yml", "meta/argument_specs.yml")
# What the redesign holds the walk to: the files a maintainer follows, and those that decide.
MAX_WALK_FILES = 30
MAX_DECIDING_FILES = 9


def section():
    with open(os.path.join(REPO_ROOT, "docs", "development.md")) as handle:
        text = handle.read()
    return text.split("## One disk, from the inventory to its udev rule", 1)[1].split("\n## ", 1)[0]


def walk():
    """[(number, path, decides)] of the walk's table, and the files it passes by."""
    lines = section().splitlines()
    rows = [WALK_ROW.match(line) for line in lines if line.startswith("| ") and line[2].isdigit()]
    assert all(rows), "a row of the walk does not read | N | `file` | what | decides? |"
    passed = [PASSED_ROW.match(line) for line in lines if line.startswith("| `")]
    assert all(passed), "a row of the files passed by does not read | `file` | why |"
    return ([(int(row.group(1)), row.group(2), bool(row.group(4))) for row in rows],
            [row.group(1) for row in passed])


def exists(path):
    return os.path.isfile(os.path.join(REPO_ROOT, path))


def filter_files():
    """{filter name: its plugin file}, from each file's FilterModule.filters()."""
    found = {}
    directory = os.path.join(REPO_ROOT, "plugins", "filter")
    for name in os.listdir(directory):
        if name.endswith(".py"):
            with open(os.path.join(directory, name)) as handle:
                for key in re.findall(r'"([a-z_]+)": [a-z_]+[,}]', handle.read()):
                    found[key] = "plugins/filter/" + name
    return found


def reached_from(path, filters):
    """The collection files ``path`` leads to."""
    with open(os.path.join(REPO_ROOT, path)) as handle:
        text = handle.read()
    reached = set()
    if path.endswith("meta/argument_specs.yml"):
        return reached  # its mentions of modules and filters are documentation
    if path.endswith(".py"):
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(PACKAGE):
                base = node.module[len(PACKAGE):].replace(".", "/")
                candidates = [base + ".py"] + ["%s/%s.py" % (base, alias.name) for alias in node.names]
                reached.update(p for p in candidates if exists(p))
        return reached
    reached.update("roles/%s/tasks/main.yml" % name for name in ROLE.findall(text))
    for name in FQCN.findall(ROLE.sub("", text)):
        for candidate in ("plugins/modules/%s.py" % name, filters.get(name), "plugins/lookup/%s.py" % name,
                          "roles/%s/tasks/main.yml" % name):
            if candidate and exists(candidate):
                reached.add(candidate)
                break
    if path.startswith("roles/"):
        role = "/".join(path.split("/")[:2])
        reached.update(os.path.join(os.path.dirname(path), name) for name in TASK_FILE.findall(text))
        if path.endswith("tasks/main.yml"):
            reached.update(p for p in ("%s/%s" % (role, part) for part in ROLE_PARTS) if exists(p))
    reached.discard(path)
    return reached


def reached_by_step():
    """[(path, the files it reaches)] of the walk, in order, and the files it passes by; each
    file read once."""
    steps, passed = walk()
    filters = filter_files()
    return [(path, reached_from(path, filters)) for _number, path, _decides in steps], passed


def test_every_file_of_the_walk_exists_once_in_order():
    steps, passed = walk()
    assert [number for number, _path, _decides in steps] == list(range(1, len(steps) + 1))
    paths = [path for _number, path, _decides in steps]
    assert len(set(paths + passed)) == len(paths) + len(passed)
    assert [path for path in paths + passed if not exists(path)] == []


def test_each_file_is_reached_from_a_file_before_it():
    walked, _passed = reached_by_step()
    unreached, reachable = [], set(walked[0][1])
    for path, reached in walked[1:]:
        if path not in reachable:
            unreached.append(path)
        reachable |= reached
    assert unreached == []


def test_the_walk_leaves_out_no_file_it_reaches():
    walked, passed = reached_by_step()
    listed = set(path for path, _reached in walked) | set(passed)
    left_out = sorted("%s -> %s" % (path, target) for path, reached in walked
                      for target in reached if target not in listed)
    assert left_out == []


def test_the_prose_counts_the_walk_and_its_decisions():
    steps, passed = walk()
    text = section()
    decisions = sum(decides for _number, _path, decides in steps)
    assert "The %d marked **decides**" % decisions in text
    assert "the walk crosses %d files" % len(steps) in text
    assert "passes by %d" % len(passed) in text


def test_the_walk_is_short_and_few_of_its_files_decide():
    steps, _passed = walk()
    deciding = [path for _number, path, decides in steps if decides]
    assert len(steps) <= MAX_WALK_FILES, "the walk crosses %d files" % len(steps)
    assert len(deciding) <= MAX_DECIDING_FILES, deciding
