"""Timed operations on the probe region of disks, run where the disks are (this host, or a
lab VM it is copied to next to probe_region.py): prints one JSON object of seconds.

  check         the region check: read every MiB of the region, all disks at once
  save_restore  the alternative the probe does not take: copy the region to a file on the
                host, write it back, read it back and compare checksums, all disks at once
  restore       what the probe does after writing: zero the non-zero blocks, read them back
  zero_all      what the probe did before: overwrite the whole region with zeros (dd)
  dirty         write random 4 KiB blocks into the region for N seconds like a probe (fio)

usage: python3 region_ops.py MODULE_UTILS_DIR OFFSET LENGTH OP DEVICE [DEVICE ...]
"""

import hashlib
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import threading
import time


def load_probe_region(folder):
    spec = importlib.util.spec_from_file_location("probe_region", os.path.join(folder, "probe_region.py"))
    found = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(found)
    return found


def each(function, devices):
    errors = []

    def work(device):
        try:
            function(device)
        except Exception as exc:  # noqa: BLE001 (reported, the timing is void)
            errors.append("%s: %s" % (device, exc))

    threads = [threading.Thread(target=work, args=(d,)) for d in devices]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
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
    region_lib, region = load_probe_region(folder), (offset, length)
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
    each(operations[op], devices)
    print(json.dumps({"op": op, "seconds": round(time.monotonic() - start, 3), "disks": len(devices)}))


if __name__ == "__main__":
    main()
