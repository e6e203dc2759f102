"""The lab's tests of one converged and rebooted VM (the default scenario); those about field
drives are marked `drives`: PYTEST_ADDOPTS="-m drives" molecule verify -s default runs them
alone. The release runs (make lab-releases) leave them out, and the tests marked
`same_on_every_release`, which would only repeat Debian 12's run."""


def pytest_configure(config):
    config.addinivalue_line("markers", "lab_self: a check of the lab itself (its emulated disks, its guest), which the "
                            "collection's tests rely on and which proves nothing about the collection")
    config.addinivalue_line("markers", "same_on_every_release: a test whose outcome rests on the collection and the "
                            "controller alone, not on the guest's kernel, systemd, udev, Python or grub tooling; "
                            "the release runs (make lab-releases) leave it out")
    config.addinivalue_line("markers", "drives: a drive's identity, write cache, power-loss protection, measured "
                            "max_sectors_kb or removal")
    config.addinivalue_line("markers", "load_sensitive: figures other work on the machine moves (the guest's own "
                            "path per flush); run before the others")


def pytest_collection_modifyitems(items):
    """The tests marked load_sensitive first: in `make test` the rotation's VMs start beside the
    lab when the integration stage ends, and three emulated CPUs on two cores add tenths of a
    millisecond to the guest's flush, more than a protected cache may cost."""
    items.sort(key=lambda item: item.get_closest_marker("load_sensitive") is None)


def pytest_terminal_summary(terminalreporter):
    """The lab's own checks counted apart from the collection's tests."""
    passed = [r for r in terminalreporter.stats.get("passed", []) if r.when == "call"]
    own = sum(1 for r in passed if "lab_self" in r.keywords)
    terminalreporter.write_line("passed: %d tests of the collection, %d self-checks of the lab" % (len(passed) - own, own))
