"""direct_io: O_DIRECT reads of a file in a temporary directory (O_DIRECT works on it as on a
disk), zero tests, and work on many disks at once."""

import threading
import time

import pytest

from ansible_collections.cephops.osd_tuning.plugins.module_utils import direct_io, probe_region

MIB = 1024 ** 2


def test_reads_reuse_one_buffer_per_length_and_stop_where_the_disk_ends(disk_file):
    with open(disk_file, "r+b") as handle:
        handle.seek(MIB + 4096)
        handle.write(b"data")
    with direct_io.Reader(disk_file) as reader:
        buf, got = reader.read(MIB, MIB)
        assert got == MIB and buf[4096:4100] == b"data"
        again, _got = reader.read(0, MIB)
        assert again is buf and direct_io.is_zero(again[:MIB])
        _buf, got = reader.read(15 * MIB + 512 * 1024, MIB)
        assert got == 512 * 1024
        assert reader.read(16 * MIB, 4096)[1] == 0


def test_a_missing_disk_cannot_be_opened(tmp_path):
    with pytest.raises(OSError):
        direct_io.Reader(str(tmp_path / "missing"))


def test_is_zero():
    assert direct_io.is_zero(bytes(MIB)) and direct_io.is_zero(b"")
    assert not direct_io.is_zero(bytes(4095) + b"\x01")
    assert direct_io.zeros(4096) is direct_io.zeros(4096)


def test_in_parallel_keeps_order_and_turns_failures_into_text(disk_file):
    outcomes = direct_io.in_parallel(lambda region: probe_region.nonzero_mib(disk_file, region),
                                     [(0, MIB), (15 * MIB, 2 * MIB)], errors=probe_region.ERRORS)
    assert outcomes[0] == ([], None)
    assert outcomes[1][0] is None and "ended at byte" in outcomes[1][1]


def test_in_parallel_runs_at_most_the_threads_asked_for():
    lock, running, most = threading.Lock(), [0], [0]

    def work(item):
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        time.sleep(0.1)
        with lock:
            running[0] -= 1
        return item * 2

    assert direct_io.in_parallel(work, list(range(12)), most=3) == [(n * 2, None) for n in range(12)]
    assert most[0] == 3
    most[0] = 0
    direct_io.in_parallel(work, list(range(6)))
    assert most[0] == 6


def test_in_parallel_raises_what_it_was_not_asked_to_turn_into_text():
    def work(item):
        if item == 2:
            raise KeyError(item)
        return item

    with pytest.raises(KeyError):
        direct_io.in_parallel(work, [1, 2, 3])
    with pytest.raises(OSError):
        direct_io.in_parallel(lambda item: open("/nonexistent/%s" % item), [1], errors=())
