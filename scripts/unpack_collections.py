"""Unpack selected collections from the `ansible` wheel, the offline stand-in for Galaxy.

usage: python3 unpack_collections.py WHEEL DEST NAMESPACE/NAME [NAMESPACE/NAME ...]
"""

import sys
import zipfile


def main(argv):
    wheel, dest, wanted = argv[1], argv[2], argv[3:]
    prefixes = tuple("ansible_collections/%s/" % name for name in wanted)
    with zipfile.ZipFile(wheel) as archive:
        members = [m for m in archive.namelist() if m.startswith(prefixes)]
        missing = [p for p in prefixes if not any(m.startswith(p) for m in members)]
        if missing:
            sys.exit("not in %s: %s" % (wheel, ", ".join(missing)))
        archive.extractall(dest, members)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
