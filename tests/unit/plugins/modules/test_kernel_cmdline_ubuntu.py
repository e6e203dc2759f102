"""kernel_cmdline on an Ubuntu cloud image: /etc/default/grub as Ubuntu 24.04 ships it, and the
grub.d/50-cloudimg-settings.cfg of Ubuntu's cloud images, whose GRUB_CMDLINE_LINUX_DEFAULT
replaces the "quiet splash" of /etc/default/grub (sources: tests/unit/fixtures/grub/README.md).
Both are sourced by the real sh, as update-grub does; update-grub itself does not run here."""

import pytest

from ansible_collections.cephops.osd_tuning.plugins.modules import kernel_cmdline

CLOUDIMG_DEFAULT = 'GRUB_CMDLINE_LINUX_DEFAULT="console=tty1 console=ttyS0"\n'


@pytest.fixture
def cloud_image(tmp_path, fixture_text):
    """(defaults file, 50-cloudimg-settings.cfg) of an Ubuntu cloud image."""
    defaults = tmp_path / "grub"
    defaults.write_text(fixture_text("grub/ubuntu2404_default_grub"))
    (tmp_path / "grub.d").mkdir()
    cloudimg = tmp_path / "grub.d" / "50-cloudimg-settings.cfg"
    cloudimg.write_text(fixture_text("grub/ubuntu_cloudimg_50-cloudimg-settings.cfg"))
    return defaults, cloudimg


def run(run_module, defaults, **args):
    return run_module(kernel_cmdline.main, dict(dict(defaults_file=str(defaults), update=False), **args))


def test_the_drop_in_line_is_the_one_grub_boots_with(run_module, cloud_image):
    defaults, _cloudimg = cloud_image
    result = run(run_module, defaults, absent=["elevator"])
    assert (result["changed"], result["files"]) == (False, {})
    assert result["effective"] == {"GRUB_CMDLINE_LINUX": [], "GRUB_CMDLINE_LINUX_DEFAULT": ["console=tty1", "console=ttyS0"]}


def test_set_into_grub_cmdline_linux_goes_to_the_defaults_file(run_module, cloud_image):
    defaults, cloudimg = cloud_image
    shipped = (defaults.read_text(), cloudimg.read_text())
    result = run(run_module, defaults, present={"elevator": "deadline"})
    assert result["changed"] is True
    assert defaults.read_text() == shipped[0].replace('GRUB_CMDLINE_LINUX=""', 'GRUB_CMDLINE_LINUX="elevator=deadline"')
    assert cloudimg.read_text() == shipped[1]
    assert result["effective"]["GRUB_CMDLINE_LINUX"] == ["elevator=deadline"]


def test_set_into_grub_cmdline_linux_default_goes_to_the_drop_in_that_wins(run_module, cloud_image):
    defaults, cloudimg = cloud_image
    shipped = (defaults.read_text(), cloudimg.read_text())
    result = run(run_module, defaults, present={"elevator": "deadline"}, variable="GRUB_CMDLINE_LINUX_DEFAULT")
    assert sorted(result["files"]) == [str(cloudimg)]
    assert defaults.read_text() == shipped[0]  # its "quiet splash" is replaced by the drop-in's line anyway
    assert cloudimg.read_text() == shipped[1].replace(
        CLOUDIMG_DEFAULT, 'GRUB_CMDLINE_LINUX_DEFAULT="console=tty1 console=ttyS0 elevator=deadline"\n')
    assert result["effective"]["GRUB_CMDLINE_LINUX_DEFAULT"] == ["console=tty1", "console=ttyS0", "elevator=deadline"]


def test_elevator_in_the_drop_in_is_removed_there(run_module, cloud_image):
    defaults, cloudimg = cloud_image
    shipped = cloudimg.read_text()
    cloudimg.write_text(shipped.replace(CLOUDIMG_DEFAULT, CLOUDIMG_DEFAULT.replace('ttyS0"', 'ttyS0 elevator=noop"')))
    result = run(run_module, defaults, absent=["elevator"])
    assert result["files"] == {str(cloudimg): {"before": ["console=tty1", "console=ttyS0", "elevator=noop"],
                                               "after": ["console=tty1", "console=ttyS0"]}}
    assert cloudimg.read_text() == shipped


def test_a_drop_in_that_replaces_grub_cmdline_linux_gets_the_argument(run_module, cloud_image):
    """A later drop-in that assigns the variable outright would undo an edit of /etc/default/grub."""
    defaults, _cloudimg = cloud_image
    shipped = defaults.read_text()
    local = defaults.parent / "grub.d" / "99-local.cfg"
    local.write_text('GRUB_CMDLINE_LINUX="nomodeset"\n')
    result = run(run_module, defaults, present={"elevator": "deadline"})
    assert local.read_text() == 'GRUB_CMDLINE_LINUX="nomodeset elevator=deadline"\n'
    assert defaults.read_text() == shipped
    assert result["effective"]["GRUB_CMDLINE_LINUX"] == ["nomodeset", "elevator=deadline"]


def test_an_override_the_files_do_not_show_is_refused(run_module, cloud_image, tmp_path):
    """A drop-in that sources another file: the edit would be undone at boot, so nothing is written."""
    defaults, cloudimg = cloud_image
    site = tmp_path / "site-grub"
    site.write_text('GRUB_CMDLINE_LINUX="nomodeset"\n')
    sourcing = defaults.parent / "grub.d" / "99-site.cfg"
    sourcing.write_text(". %s\n" % site)
    before = (defaults.read_bytes(), cloudimg.read_bytes(), sourcing.read_bytes())
    result = run(run_module, defaults, present={"elevator": "deadline"})
    assert result["failed"] is True
    assert result["msg"] == ("the edited grub defaults would boot with nomodeset console=tty1 console=ttyS0, "
                             "not what was asked; nothing written")
    assert (defaults.read_bytes(), cloudimg.read_bytes(), sourcing.read_bytes()) == before
