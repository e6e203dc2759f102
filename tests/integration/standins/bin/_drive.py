"""What the stand-in tools share: the drive's state, kept in the JSON file that
CEPHOPS_STANDIN_STATE names, and the captured outputs they replay (../captured/README.md)."""

import json
import os
import sys

HERE = os.path.dirname(os.path.realpath(__file__))
CAPTURED = os.path.join(HERE, "..", "captured")
FIXTURES = os.path.join(HERE, "..", "..", "..", "unit", "fixtures")


def load():
    with open(os.environ["CEPHOPS_STANDIN_STATE"]) as handle:
        return json.load(handle)


def save(state):
    path = os.environ["CEPHOPS_STANDIN_STATE"]
    with open(path + ".new", "w") as handle:
        json.dump(state, handle, indent=1, sort_keys=True)
    os.rename(path + ".new", path)


def replay(path, *replacements):
    """A captured output with its device name and numbers replaced by the drive's."""
    with open(path) as handle:
        text = handle.read()
    for old, new in replacements:
        assert old in text, "%s holds no %r" % (path, old)
        text = text.replace(old, str(new))
    return text


def no_output(argv):
    """A call no captured output answers: fail loudly rather than invent one."""
    sys.stderr.write("stand-in %s: no captured output for: %s\n" % (os.path.basename(argv[0]), " ".join(argv[1:])))
    sys.exit(2)
