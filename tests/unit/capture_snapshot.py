"""Capture what disk_facts reads on a real host, as a JSON fixture for the unit tests.

usage (as root, on the host to capture, with the collection importable, for example
PYTHONPATH holding a folder with ansible_collections/cephops/osd_tuning/plugins in it):
    python3 capture_snapshot.py [--include-loop] [--include-virtual] [DEVICE ...] > host.json

It reads only (sysfs, udev data, /proc, wipefs --no-act, and for disks nothing else refuses
the content sample with O_DIRECT and blkid --probe at offsets).
"""

import argparse
import json
import os
import subprocess
import sys

from ansible_collections.cephops.osd_tuning.plugins.module_utils import blockdev


def run(argv):
    proc = subprocess.run(argv, capture_output=True, text=True, env=dict(os.environ, LC_ALL="C"), check=False)
    return proc.returncode, proc.stdout, proc.stderr


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("devices", nargs="*")
    parser.add_argument("--include-loop", action="store_true")
    parser.add_argument("--include-virtual", action="store_true")
    args = parser.parse_args()
    names = blockdev.resolve_disks(args.devices) if args.devices else None
    snapshot = blockdev.take_snapshot(run, names, args.include_loop, args.include_virtual)
    json.dump(snapshot, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
