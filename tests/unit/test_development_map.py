"""docs/development.md's walk of one disk is the map a maintainer follows: it must name files
that exist, each once, each reached from a file before it, with the decisions counted right."""

import os
import re

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ROW = re.compile(r"^\| (\d+) \| `([^`]+)` \| (.+?) \| ?(decides)? ?\|$")


def walk():
    """[(number, path, decides)] from the table of the section on one disk, and its prose."""
    with open(os.path.join(REPO_ROOT, "docs", "development.md")) as handle:
        text = handle.read()
    section = text.split("## One disk, from the inventory to its udev rule", 1)[1].split("\n## ", 1)[0]
    rows = [ROW.match(line) for line in section.splitlines() if line.startswith("| ") and line[2].isdigit()]
    assert all(rows), "a row of the walk does not read | N | `file` | what | decides? |"
    return [(int(row.group(1)), row.group(2), bool(row.group(4))) for row in rows], section


def test_every_file_of_the_walk_exists_once_in_order():
    steps, _section = walk()
    assert [number for number, _path, _decides in steps] == list(range(1, len(steps) + 1))
    paths = [path for _number, path, _decides in steps]
    assert len(set(paths)) == len(paths)
    assert [path for path in paths if not os.path.isfile(os.path.join(REPO_ROOT, path))] == []


def test_each_file_is_reached_from_a_file_before_it():
    """A role by its name, a task file, module, filter or module_utils by its stem."""
    steps, _section = walk()
    texts = []
    for _number, path, _decides in steps:
        with open(os.path.join(REPO_ROOT, path)) as handle:
            texts.append((path.split("/")[-1], handle.read()))
    unreached = []
    for index, (_number, path, _decides) in enumerate(steps[1:], start=1):
        parts = path.split("/")
        name = parts[1] if parts[0] == "roles" and parts[-1] == "main.yml" else os.path.splitext(parts[-1])[0]
        before = [text for basename, text in texts[:index] if basename != parts[-1]]
        if not any(re.search(r"\b%s\b" % re.escape(name), text) for text in before):
            unreached.append(path)
    assert unreached == []


def test_the_prose_counts_the_walk_and_its_decisions():
    steps, section = walk()
    assert sum(decides for _number, _path, decides in steps) == 8 and "The eight marked **decides**" in section
    assert "the walk crosses %d." % len(steps) in section
