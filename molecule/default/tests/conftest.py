"""The lab's tests are shared by two scenarios: `default` runs those not marked `drives`, and
`drives` (make lab-drives) those marked, on a VM converged and rebooted the same way."""


def pytest_configure(config):
    config.addinivalue_line("markers", "drives: a drive's identity, write cache, power-loss protection, measured "
                            "max_sectors_kb or removal; run by the drives scenario, not by default")
