"""Unpack selected collections and the collections they depend on from the `ansible` wheel,
the offline stand-in for Galaxy.

usage: python3 unpack_collections.py WHEEL DEST NAMESPACE/NAME [NAMESPACE/NAME ...]
"""

import json
import sys
import zipfile


def closure(archive, wanted):
    """``wanted`` and every collection their MANIFEST.json files name as dependencies."""
    found, todo = [], list(wanted)
    while todo:
        name = todo.pop(0)
        if name in found:
            continue
        try:
            manifest = json.loads(archive.read("ansible_collections/%s/MANIFEST.json" % name))
        except KeyError:
            sys.exit("not in %s: %s" % (archive.filename, name))
        found.append(name)
        todo.extend(dependency.replace(".", "/") for dependency in manifest["collection_info"]["dependencies"])
    return found


def main(argv):
    wheel, dest, wanted = argv[1], argv[2], argv[3:]
    with zipfile.ZipFile(wheel) as archive:
        prefixes = tuple("ansible_collections/%s/" % name for name in closure(archive, wanted))
        archive.extractall(dest, [m for m in archive.namelist() if m.startswith(prefixes)])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
