"""How the udev rules files the roles installed are checked before they are: by udev itself
(`udevadm verify`, systemd 254 and later) where the host's udevadm has that verb, by their
structure (udev_queue_rules' own checks) where it has not.

udev_queue_rules reports the check it made (validated_with) only when it writes a file, and
after idempotence and the reboot nothing is left to write: each installed file's rules are read
back and written to a scratch file by the module, which must render the very same bytes.
"""

import json
import re
from pathlib import PurePosixPath

import pytest

from test_lab import systemd_version
from test_tuning import RULES

testinfra_hosts = ["ansible://osds"]

UDEVADM_VERIFY_SINCE = 254  # systemd 254 added `udevadm verify`
HEADER = re.compile(r"# Managed by (.+)\. Local changes are overwritten\.\n")
# KEY=="value" (a match) and ATTR{queue/name}="value" (an assignment), as the module renders them.
PAIR = re.compile(r'([A-Z]+(?:\{[^}]+\})?)(==|=)"([^"]*)"')
PREFIX_KEYS = ("ACTION", "SUBSYSTEM", "ENV{DEVTYPE}")  # the same on every rule


def rules_of(text):
    """The rules udev_queue_rules rendered ``text`` from: its render, reversed."""
    rules, comment = [], None
    for line in text.splitlines()[1:]:
        if line.startswith("# "):
            comment = line[2:]
        elif line and not line.startswith("LABEL="):  # the label a skip rule jumps to ends the file
            pairs = PAIR.findall(line)
            rule = {"match": {key: value for key, op, value in pairs if op == "==" and key not in PREFIX_KEYS},
                    "attributes": {key[len("ATTR{queue/"):-1]: value for key, op, value in pairs
                                   if op == "=" and key.startswith("ATTR{")}}
            if any(key == "GOTO" for key, _op, _value in pairs):
                rule["skip"] = True
            if comment is not None:
                rule["comment"] = comment
            rules.append(rule)
            comment = None
    return rules


def udevadm_verifies(host):
    has_verb = host.run("udevadm verify --help").rc == 0
    assert has_verb == (systemd_version(host) >= UDEVADM_VERIFY_SINCE), \
        f"udevadm verify {'exists' if has_verb else 'is missing'} on systemd {systemd_version(host)}"
    return has_verb


@pytest.mark.parametrize("path", RULES)
def test_rules_checked_by_udev_where_it_can(host, path):
    installed = host.file(path).content_string
    scratch = host.check_output("mktemp -d")
    args = {"path": f"{scratch}/{PurePosixPath(path).name}", "rules": rules_of(installed),
            "owner": HEADER.match(installed).group(1), "reload": False, "backup": False}
    try:
        result = host.ansible("cephops.osd_tuning.udev_queue_rules", json.dumps(args), check=False, become=True)
    finally:
        host.run("rm -rf %s", scratch)
    assert result.get("content") == installed, result  # the rules the play installed, and only those
    verifies = udevadm_verifies(host)
    assert result.get("validated_with") == ("udevadm verify" if verifies else "structure"), result
    if verifies:
        # The installed file itself passes udev's own check, style checks included.
        check = host.run("udevadm verify --resolve-names=never %s", path)
        assert check.rc == 0, check.stdout + check.stderr
