"""The lab's tests of one converged and rebooted VM (the default scenario); those about field
drives are marked `drives`: PYTEST_ADDOPTS="-m drives" molecule verify -s default runs them
alone."""


def pytest_configure(config):
    config.addinivalue_line("markers", "drives: a drive's identity, write cache, power-loss protection, measured "
                            "max_sectors_kb or removal")
