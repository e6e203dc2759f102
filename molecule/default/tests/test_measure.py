"""The max_sectors_kb role's measurement mode, end to end on a lab disk: the value chosen for
the disk's model is the measured best by the minimum gain or the value the disk had, a model
rule keeps it (udev applies it again to the disk), and rollback undoes it all.

The disk starts at a small request size (16 KiB, set by the test) and the candidate is its
max_hw_sectors_kb, which reads the same data in an eighth of the requests: the measurement must
find the gain and change the value, so the changed-value path (the new value, its read figures
before and after) runs, not only the path that keeps what the disk had.

Runs the role from the controller (measure_max_sectors_kb.yml) against this host only."""

import json
import os
import subprocess
from pathlib import Path

import pytest

from test_lab import whole_disk_by_serial

testinfra_hosts = ["ansible://osds"]
pytestmark = pytest.mark.drives

PLAYBOOK = Path(__file__).parent / "measure_max_sectors_kb.yml"
RULES = "/etc/udev/rules.d/62-cephops-measure-test.rules"
SERIAL = "CEPHOPS-RAND-0001"
MIN_GAIN = 5  # the role's default
START_KB = 16  # the disk's value before the role runs


def play(host, candidate=None, rollback=False):
    """This host's results of the playbook's tasks, by task name, from the json callback."""
    argv = ["ansible-playbook", "-i", os.environ["MOLECULE_INVENTORY_FILE"], "--limit", host.backend.get_hostname(),
            "-e", json.dumps({"rollback": rollback, "candidate": candidate}), str(PLAYBOOK)]
    env = dict(os.environ, ANSIBLE_STDOUT_CALLBACK="ansible.builtin.json", ANSIBLE_LOAD_CALLBACK_PLUGINS="1")
    done = subprocess.run(argv, capture_output=True, text=True, env=env, check=False)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    report = json.loads(done.stdout)
    return dict((task["task"]["name"].split(" : ")[-1], task["hosts"].get(host.backend.get_hostname(), {}))
                for task in report["plays"][0]["tasks"])


def max_sectors_kb(host, name):
    return int(host.file(f"/sys/block/{name}/queue/max_sectors_kb").content_string)


def set_max_sectors_kb(host, name, value):
    assert host.run("sh -c %s", f"echo {value} > /sys/block/{name}/queue/max_sectors_kb").rc == 0
    assert max_sectors_kb(host, name) == value


def disk_model(host, serial):
    """The full model disk_facts reports, which the model rule is written for."""
    disks = host.ansible("cephops.osd_tuning.disk_facts", check=False, become=True)["disks"]
    return [d["model"] for d in disks if d["serial"] == serial][0]


def test_measurement_mode_chooses_by_the_minimum_gain_and_keeps_it_by_model(host):
    name = Path(whole_disk_by_serial(host, SERIAL)).name
    model_name = disk_model(host, SERIAL)
    original = max_sectors_kb(host, name)
    candidate = int(host.file(f"/sys/block/{name}/queue/max_hw_sectors_kb").content_string)
    assert candidate >= 8 * START_KB, candidate
    set_max_sectors_kb(host, name, START_KB)
    before = START_KB
    try:
        result = play(host, candidate)["Hand the result to the test"]["max_sectors_kb_result"]
        model = result["measured"][model_name]
        table = dict((row["max_sectors_kb"], row) for row in model["table"])
        assert sorted(table) == sorted([before, candidate]) and model["baseline"] == before, model
        for row in table.values():
            assert row["read_mib_s"] > 0 and row["disks"] == 1
            assert row["interrupts_per_s"] > 0  # of the AHCI controller's IRQs
        speeds = dict((kb, row["read_mib_s"]) for kb, row in table.items())
        best = max(sorted(speeds), key=lambda kb: speeds[kb])
        gain = 100.0 * (speeds[best] - speeds[before]) / speeds[before]
        expected = best if best != before and gain >= MIN_GAIN else before
        assert (model["best"], model["chosen"]) == (best, expected), model
        assert expected == candidate, "eight times fewer requests did not read %d%% faster: %s" % (MIN_GAIN, speeds)
        assert result["chosen"][name] == {"value": expected, "source": "model %s" % model_name, "keep_worse": False}
        assert max_sectors_kb(host, name) == expected

        # The article's other cost of small requests: more of them, so more interrupts for the
        # same data. Counted per MiB read: the larger value reads more MiB a second, and under
        # TCG its interrupts a second can outnumber the smaller value's (1515 against 1364).
        per_mib = dict((kb, row["interrupts_per_s"] / row["read_mib_s"]) for kb, row in table.items())
        assert per_mib[before] > per_mib[candidate], table

        # The changed disk gets its read figures, from separate runs that must agree.
        figure, = result["read_figures"]
        assert figure["device"] == name and figure["setting"] == candidate, figure
        assert len(figure["before"]["runs"]) == 5 and len(figure["after"]["runs"]) == 5, figure
        assert figure["after"]["read_mib_s"] > figure["before"]["read_mib_s"], figure["line"]
        # And the 4 KiB random reads at QD32 beside them, on the emulated SATA disk.
        for side in (figure["before"], figure["after"]):
            assert len(side["random_runs"]) == 5 and side["random_iops"] > 0 and side["random_lat_ms"] > 0, figure

        # The model rule keeps the choice: udev sets it again after the value was changed.
        rules = host.file(RULES).content_string
        # A SATA disk's rule matches udev's ID_MODEL: its whole model, blanks as underscores.
        udev_model = "_".join(model_name.split())
        assert f'ENV{{ID_MODEL}}=="{udev_model}"' in rules and f'ATTR{{queue/max_sectors_kb}}="{expected}"' in rules
        set_max_sectors_kb(host, name, before)  # measured, so the disk takes it
        assert host.run("udevadm trigger --action=change --settle /sys/block/%s", name).rc == 0
        assert max_sectors_kb(host, name) == expected
    finally:
        play(host, rollback=True)
        rolled_back = max_sectors_kb(host, name)
        set_max_sectors_kb(host, name, original)
    assert not host.file(RULES).exists
    assert rolled_back == before
