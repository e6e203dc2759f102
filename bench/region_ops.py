"""Timed operations on the probe region of disks, run where the disks are (this host, or a
lab VM it is copied to next to probe_region.py and direct_io.py): prints one JSON object of
seconds.

  check         the region check: read every MiB of the region, all disks at once
  save_restore  the alternative the probe does not take: copy the region to a file on the
                host, write it back, read it back and compare checksums, all disks at once
  restore       what the probe does after writing: zero the non-zero blocks, read them back
  zero_all      what the probe did before: overwrite the whole region with zeros (dd)
  dirty         write random 4 KiB blocks into the region for N seconds like a probe (fio)

usage: python3 region_ops.py MODULE_UTILS_DIR OFFSET LENGTH OP DEVICE [DEVICE ...]
"""

import hashlib
import importlib
import json
import os
import subprocess
import sys
import tempfile
import time
import types


def load_module_utils(folder, *names):
    """The modules ``names`` of the module_utils in ``folder`` (copied there with those they
    import): the collection need not be installed where this runs."""
    package = "ansible_collections.cephops.osd_tuning.plugins.module_utils"
    parts = package.split(".")
    for depth in range(1, len(parts) + 1):
        stub = types.ModuleType(".".join(parts[:depth]))
        stub.__path__ = []
        sys.modules[stub.__name__] = stub
    sys.modules[package].__path__ = [folder]
    return [importlib.import_module(package + "." + name) for name in names]


def each(direct_io, function, devices):
    """Run ``function`` on all devices at once, as the module does; a failure voids the timing."""
    outcomes = direct_io.in_parallel(function, devices, errors=(Exception,))
    errors = ["%s: %s" % (device, error) for device, (_result, error) in zip(devices, outcomes) if error]
    if errors:
        sys.exit("; ".join(errors))


def save_restore(region_lib, region, device):
    """Copy the region out, write it back and verify, with the same O_DIRECT reads."""
    digest = hashlib.sha256()
    with tempfile.TemporaryFile(dir="/var/tmp") as saved:
        for _position, data in region_lib._read_region(device, region):
            digest.update(data)
            saved.write(data)
        saved.flush()
        os.fsync(saved.fileno())
        saved.seek(0)
        fd = os.open(device, os.O_WRONLY)
        try:
            position = region[0]
            while True:
                data = saved.read(region_lib.READ_CHUNK)
                if not data:
                    break
                os.pwrite(fd, data, position)
                position += len(data)
            os.fsync(fd)
        finally:
            os.close(fd)
    again = hashlib.sha256()
    for _position, data in region_lib._read_region(device, region):
        again.update(data)
    if again.digest() != digest.digest():
        raise RuntimeError("restored region differs")


def main():
    folder, offset, length, op = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    devices = sys.argv[5:]
    (region_lib, direct_io), region = load_module_utils(folder, "probe_region", "direct_io"), (offset, length)
    mib = 1024 ** 2
    operations = {
        "check": lambda d: region_lib.nonzero_mib(d, region),
        "save_restore": lambda d: save_restore(region_lib, region, d),
        "restore": lambda d: region_lib.restore_zeros(d, region),
        "zero_all": lambda d: subprocess.run(
            ["dd", "if=/dev/zero", "of=" + d, "bs=1M", "seek=%d" % (offset // mib), "count=%d" % (length // mib),
             "oflag=direct", "conv=notrunc,nocreat,fsync", "status=none"], check=True),
    }
    if op == "dirty":
        seconds = int(devices.pop(0))
        operations["dirty"] = lambda d: subprocess.run(
            ["fio", "--name=dirty", "--filename=" + d, "--ioengine=libaio", "--direct=1", "--fsync=1", "--bs=4k",
             "--iodepth=1", "--rw=randwrite", "--offset=%d" % offset, "--size=%d" % length, "--time_based",
             "--runtime=%d" % seconds, "--output-format=terse"], check=True, capture_output=True)
    start = time.monotonic()
    each(direct_io, operations[op], devices)
    print(json.dumps({"op": op, "seconds": round(time.monotonic() - start, 3), "disks": len(devices)}))


if __name__ == "__main__":
    main()
