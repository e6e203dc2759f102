"""The lab's image variants: what QEMU gets for each, and which image each boots."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "lab"))

import labctl  # noqa: E402
import labimage  # noqa: E402

DISKS = {"root": "/nonexistent/root.qcow2"}


def machine(argv):
    """The -cpu, -smp and -m options of a QEMU command line."""
    return {opt: argv[i + 1] for i, opt in enumerate(argv) if opt in ("-cpu", "-smp", "-m")}


def test_ceph_vm_gets_a_cpu_ceph_can_run_on(tmp_path, monkeypatch):
    monkeypatch.delenv("LAB_MEMORY", raising=False)
    argv = labctl.Lab(tmp_path, "trixie", "ceph").qemu_argv("ceph1", 2222, "tcg", DISKS, ())
    assert machine(argv) == {"-cpu": "max", "-smp": "2", "-m": "4096"}


def test_plain_vm_keeps_qemus_defaults(tmp_path, monkeypatch):
    monkeypatch.delenv("LAB_MEMORY", raising=False)
    argv = labctl.Lab(tmp_path, "bookworm").qemu_argv("node1", 2222, "tcg", DISKS, ())
    assert machine(argv) == {"-m": "1024"}


def test_ceph_image_is_a_trixie_image_of_its_own():
    plain, ceph = labimage.os_image_path("trixie"), labimage.os_image_path("trixie", "ceph")
    assert plain.name.startswith("debian-trixie-") and ceph.name.startswith("debian-trixie-ceph-")
    assert plain.name.rsplit("-", 1)[1] != ceph.name.rsplit("-", 1)[1]
    assert set(labimage.os_packages("ceph")) - set(labimage.os_packages("plain")) == {
        "ceph-common", "ceph-mgr", "ceph-mon", "ceph-osd", "ceph-volume"}


def test_no_ceph_image_of_bookworm():
    with pytest.raises(ValueError, match="no ceph image of 'bookworm'"):
        labimage.ensure_images("bookworm", variant="ceph")


def test_default_suite_follows_the_variant(monkeypatch):
    monkeypatch.delenv("CEPHOPS_LAB_SUITE", raising=False)
    assert labctl.parse_args(["--variant", "ceph", "status"]).suite is None
    assert labimage.VARIANTS["ceph"].suites[0] == "trixie"
    assert labimage.VARIANTS["plain"].suites[0] == labimage.DEFAULT_SUITE
