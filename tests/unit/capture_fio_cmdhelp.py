"""Capture what the installed fio says about its option names, as a JSON fixture for the unit
tests of the fio_options allow-list.

usage (with the collection importable, for example PYTHONPATH holding a folder with
ansible_collections/cephops/osd_tuning/plugins in it):
    python3 capture_fio_cmdhelp.py [EXTRA_KEY ...] > fixtures/fio/cmdhelp.json

It runs ``fio --cmdhelp=all``, then ``fio --cmdhelp=KEY`` (LC_ALL=C) for every option name
listed there, for every alias those name, and for each EXTRA_KEY (abbreviations and
misspellings that must not match). fio only prints; nothing is written.
"""

import json
import os
import re
import subprocess
import sys

from ansible_collections.cephops.osd_tuning.plugins.module_utils import fio_job

# Abbreviations fio's command line would accept, misspellings fio answers with its closest
# option, and names fio knows only as something else (an engine option, a program option).
EXTRA_KEYS = ("fileoff", "fileofs", "offs", "offest", "bss", "iodept", "hipri", "output")


def run(argv):
    proc = subprocess.run(argv, capture_output=True, text=True, env=dict(os.environ, LC_ALL="C"), check=False)
    return {"rc": proc.returncode, "stdout": proc.stdout, "stderr": proc.stderr}


def main():
    # "all" lists every option; as a key it must not match the first one listed.
    keys = {"all": run(fio_job.cmdhelp_command("fio", "all"))}
    names = re.findall(r"^\s*([a-z0-9_-]+)\s*:", keys["all"]["stdout"], re.M)
    for name in names:
        keys[name] = run(fio_job.cmdhelp_command("fio", name))
        _canonical, aliases = fio_job.parse_cmdhelp(keys[name]["stdout"], keys[name]["stderr"])
        for alias in aliases:
            keys[alias] = run(fio_job.cmdhelp_command("fio", alias))
    for key in EXTRA_KEYS + tuple(sys.argv[1:]):
        keys[key] = run(fio_job.cmdhelp_command("fio", key))
    fixture = {
        "fio_version": run(["fio", "--version"])["stdout"].strip(),
        "captured_with": "LC_ALL=C fio --cmdhelp=KEY (tests/unit/capture_fio_cmdhelp.py)",
        "names": names,
        "keys": keys,
    }
    json.dump(fixture, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
