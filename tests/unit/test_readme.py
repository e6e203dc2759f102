"""The README is a front door: short, each way the collection is used shown near its top, and
links that resolve; docs/status.md, where its proof table went, names only tests that exist."""

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"


def blocks(text, language):
    return re.findall(r"^```%s\n(.*?)^```" % language, text, re.MULTILINE | re.DOTALL)


def test_the_readme_is_short_and_shows_each_way_of_use_within_its_first_60_lines():
    text = README.read_text()
    assert len(text.encode()) <= 8 * 1024
    top = "\n".join(text.splitlines()[:60])
    assert re.search(r"^ansible-playbook -i hosts cephops\.osd_tuning\.site$", top, re.MULTILINE)
    assert re.search(r"^ansible-playbook -i hosts cephops\.osd_tuning\.qualify .*cephops_report_dir", top, re.MULTILINE)
    assert "disk_gate.junit.xml" in top
    roles = [task["ansible.builtin.import_role"]["name"] for block in blocks(top, "yaml")
             for task in (yaml.safe_load(block) or []) if isinstance(task, dict) and "ansible.builtin.import_role" in task]
    assert roles == ["ceph-config", "cephops.osd_tuning.disk_gate", "ceph-osd"]


def test_the_readmes_two_commands_are_the_ones_ci_runs():
    commands = re.findall(r"^(make \w+)\s", blocks(README.read_text(), "sh")[-1], re.MULTILINE)
    assert commands == ["make demo", "make test"]
    assert (ROOT / ".ci" / "run").read_text().splitlines()[-1] == "exec make test"


def test_every_relative_link_of_the_readme_and_the_status_page_resolves():
    for page in (README, ROOT / "docs" / "status.md"):
        for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", page.read_text()):
            if not target.startswith("http"):
                assert (page.parent / target).exists(), (page.name, target)


def test_the_status_page_names_only_tests_that_exist():
    tests = set(path.name for path in ROOT.glob("tests/**/test_*.py")) | set(
        path.name for path in ROOT.glob("molecule/*/tests/test_*.py"))
    named = set(re.findall(r"`(test_\w+\.py)`", (ROOT / "docs" / "status.md").read_text()))
    assert named and named <= tests, sorted(named - tests)
