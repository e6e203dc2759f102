"""The fleet's tests reuse helpers of the default scenario's test_lab.py, whose marks the default
scenario's conftest registers: registered here the same way, pytest knows them."""

import importlib.util
import os

_SPEC = importlib.util.spec_from_file_location(
    "default_scenario_conftest",
    os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir, "default", "tests", "conftest.py"))
_DEFAULT = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(_DEFAULT)
pytest_configure = _DEFAULT.pytest_configure
