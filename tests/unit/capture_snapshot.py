"""Capture what disk_facts reads on a real host, as a JSON fixture for the unit tests.

usage (as root, on the host to capture):
    python3 capture_snapshot.py [--include-loop] [--include-virtual] [DEVICE ...] > host.json

It reads only (sysfs, udev data, /proc, wipefs --no-act). Copy it together with
plugins/module_utils/blockdev.py when capturing on a host without the collection.
"""

import argparse
import importlib.util
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CANDIDATES = (
    os.path.join(HERE, "blockdev.py"),
    os.path.join(HERE, "..", "..", "plugins", "module_utils", "blockdev.py"),
)


def load_blockdev():
    path = next(p for p in CANDIDATES if os.path.exists(p))
    spec = importlib.util.spec_from_file_location("blockdev", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run(argv):
    proc = subprocess.run(argv, capture_output=True, text=True, env=dict(os.environ, LC_ALL="C"), check=False)
    return proc.returncode, proc.stdout, proc.stderr


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("devices", nargs="*")
    parser.add_argument("--include-loop", action="store_true")
    parser.add_argument("--include-virtual", action="store_true")
    args = parser.parse_args()
    blockdev = load_blockdev()
    names = blockdev.resolve_disks(args.devices) if args.devices else None
    snapshot = blockdev.take_snapshot(run, names, args.include_loop, args.include_virtual)
    json.dump(snapshot, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
