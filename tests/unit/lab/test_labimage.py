"""How the lab's image build makes sure it copies a filesystem GRUB can read: no process left in
the chroot, and no journal left to replay."""

import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "lab"))

import labimage  # noqa: E402


def ext4(path):
    subprocess.run(["mkfs.ext4", "-q", "-F", str(path), "16M"], check=True)
    return str(path)


def test_a_cleanly_unmounted_filesystem_passes(tmp_path):
    labimage._check_clean(ext4(tmp_path / "fs.img"))


def test_a_filesystem_with_a_journal_to_replay_is_refused(tmp_path):
    """The state a lazily detached root was copied in: GRUB saw grub.cfg.new and no grub.cfg."""
    image = ext4(tmp_path / "fs.img")
    subprocess.run(["debugfs", "-w", "-R", "feature needs_recovery", image], check=True, capture_output=True)
    with pytest.raises(RuntimeError, match="not cleanly unmounted"):
        labimage._check_clean(image)


def test_a_process_working_under_the_mountpoint_is_found_and_one_elsewhere_is_not(tmp_path):
    inside, outside = tmp_path / "mnt" / "var", tmp_path / "elsewhere"
    inside.mkdir(parents=True)
    outside.mkdir()
    with subprocess.Popen(["sleep", "60"], cwd=inside) as held, subprocess.Popen(["sleep", "60"], cwd=outside) as free:
        try:
            found = dict(labimage._processes_rooted_in(tmp_path / "mnt"))
            assert found.get(held.pid) == "sleep" and free.pid not in found
        finally:
            held.kill()
            free.kill()
