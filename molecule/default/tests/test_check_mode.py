"""Check mode of every playbook on a tuned lab host changes nothing, byte for byte.

The playbooks run from the controller against this host, as a user would run them; the host is
compared before and after wherever the collection could write. Shared with test_refusals.py.
"""

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

testinfra_hosts = ["ansible://osds"]

PLAYBOOKS = Path(__file__).resolve().parents[3] / "playbooks"

# Everything the collection writes or manages: files under /etc, grub's output, its records and
# gate cache (mode, owner, content), every block queue attribute, the mounts and partitions.
SNAPSHOT = r"""
import glob, hashlib, json, os
state = {}
for top in ("/etc", "/boot/grub", "/var/lib/cephops-osd-tuning", "/var/cache/cephops-osd-tuning"):
    for folder, dirs, files in os.walk(top):
        for name in dirs + files:
            path = os.path.join(folder, name)
            info = os.lstat(path)
            entry = [oct(info.st_mode), info.st_uid, info.st_gid]
            if os.path.islink(path):
                entry.append(os.readlink(path))
            elif os.path.isfile(path):
                with open(path, "rb") as handle:
                    entry.append(hashlib.sha256(handle.read()).hexdigest())
            state[path] = entry
for path in glob.glob("/sys/block/*/queue/*") + glob.glob("/sys/block/*/queue/iosched/*"):
    if os.path.isfile(path) and os.access(path, os.R_OK):
        try:
            with open(path) as handle:
                state[path] = handle.read()
        except OSError:
            pass
for path in ("/proc/self/mountinfo", "/proc/partitions"):
    with open(path) as handle:
        state[path] = handle.read()
print(json.dumps(state))
"""


def snapshot(host):
    return json.loads(host.check_output("python3 -c %s", SNAPSHOT))


def differences(before, after):
    keys = set(before) | set(after)
    return sorted(k for k in keys if before.get(k) != after.get(k))


def playbook(host, name, *args):
    """Run a playbook from the controller against this host only: (returncode, output)."""
    argv = ["ansible-playbook", "-i", os.environ["MOLECULE_INVENTORY_FILE"], "--limit", host.backend.get_hostname(),
            str(name), *args]
    # No colour codes in the output this parses (molecule asks for them).
    env = dict(os.environ, ANSIBLE_FORCE_COLOR="0", ANSIBLE_NOCOLOR="1")
    done = subprocess.run(argv, capture_output=True, text=True, env=env, check=False)
    return done.returncode, done.stdout + done.stderr


def recap(output, hostname):
    """{"ok": n, "changed": n, ...} of this host's PLAY RECAP line."""
    line = re.search(r"^%s\s+:\s+(.*)$" % re.escape(hostname), output, re.MULTILINE).group(1)
    return {key: int(value) for key, value in re.findall(r"(\w+)=(\d+)", line)}


# Values a second site.yml would change on this host, so its check run has something to plan.
SITE_CHANGES = {
    "io_scheduler_ssd": "mq-deadline",
    "max_sectors_kb_ssd": 128,
    "mount_options_options": ["noatime", "lazytime"],
}


# Check mode is the modules' and roles' own logic, the same on every release (the cores stage
# runs each module on the oldest and newest claimed Python): Debian 12's run proves it.
@pytest.mark.same_on_every_release
def test_check_mode_of_every_playbook_changes_nothing(host, tmp_path):
    hostname = host.backend.get_hostname()
    runs = [
        ("site.yml", ["-e", json.dumps(SITE_CHANGES)], True),
        ("rollback.yml", [], True),
        ("qualify.yml", ["-e", json.dumps({"cephops_report_dir": str(tmp_path / "reports")})], False),
    ]
    before = snapshot(host)
    for name, extra, expects_changes in runs:
        returncode, output = playbook(host, PLAYBOOKS / name, "--check", *extra)
        counts = recap(output, hostname)
        # qualify.yml exits non-zero here by design: the lab's throttled disk is blocked.
        assert counts["unreachable"] == 0 and (returncode == 0 or name == "qualify.yml"), output[-3000:]
        if expects_changes:
            assert counts["changed"] > 0, f"{name} --check planned no change, so it proves nothing:\n{output[-3000:]}"
        assert differences(before, snapshot(host)) == [], f"{name} --check changed the host"
