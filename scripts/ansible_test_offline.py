"""Let ansible-test sanity bootstrap pip without its download server.

ansible-test fetches a get-pip script from a server outside PyPI before it builds the
virtual environments of its sanity tests, unless the script is already in its cache.
This puts a stand-in there: it bootstraps pip with ensurepip and then installs the
requested packages from PyPI, which is what the real script does.

usage: python3 ansible_test_offline.py [X.Y ...]   (run with the Python and ansible-core whose
ansible-test will use it; X.Y are further Pythons the sanity tests run on)
"""

import os
import sys
import types

from ansible_test._internal.python_requirements import get_venv_packages

STAND_IN = '''"""get-pip stand-in: ensurepip, then pip install from PyPI."""
import subprocess
import sys

DROPPED = ("--no-setuptools", "--no-wheel")
subprocess.check_call([sys.executable, "-m", "ensurepip", "--upgrade"])
subprocess.check_call([sys.executable, "-m", "pip", "install"] + [a for a in sys.argv[1:] if a not in DROPPED])
'''


def main():
    # The controller's own Python gets a venv too (the import test of older ansible-test).
    for version in ["%d.%d" % sys.version_info[:2]] + sys.argv[1:]:
        pip_version = get_venv_packages(types.SimpleNamespace(version=version))["pip"]
        path = os.path.expanduser("~/.ansible/test/cache/get_pip_%s.py" % pip_version.replace(".", "_"))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as handle:
            handle.write(STAND_IN)
    return 0


if __name__ == "__main__":
    sys.exit(main())
