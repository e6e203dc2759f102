# shellcheck shell=bash
# Prepares, offline from Ansible Galaxy, everything the tests and the demo need and
# exports the environment to use it. Sourced by scripts/test.sh and scripts/demo.sh.
#
#   Debian packages   installed with apt-get when missing (root only)
#   Python venv       built from scripts/requirements.txt on Python CONTROLLER_PYTHON, cached
#                     by the lock's hash
#   collections       community.general, ansible.posix and ansible.utils unpacked from the
#                     pinned `ansible` wheel on PyPI, cached by its version
#   older cores       the same pair per release of OLDER_CORES, made on demand by
#                     make_core_env (scripts/test.sh cores); ceph-ansible's tests use 2.16's
#   Ceph's own code   ceph-volume and the spec validation, from Debian's packages
#   claimed Pythons   the managed-host interpreters of CLAIMED_PYTHONS, checked (not installed)
#   .build/           a collections tree in which this checkout is cephops.osd_tuning
#
# CEPHOPS_CACHE (default ~/.cache/cephops-osd-tuning) holds what is shared between
# clones; .build/ in the checkout holds what belongs to this clone.

set -euo pipefail

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CEPHOPS_CACHE="${CEPHOPS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cephops-osd-tuning}"
BUILD_DIR="$REPO_ROOT/.build"
# The `ansible` package that carries the community.general and ansible.posix we test with.
ANSIBLE_BUNDLE_VERSION="14.5.0"
# The older ansible-core releases the playbook tests also run on (scripts/test.sh cores),
# MINOR=BUNDLE: the venv comes from scripts/cores/requirements-MINOR.txt, the collections
# from the `ansible` release BUNDLE built for that ansible-core.
OLDER_CORES=(2.15=8.7.0 2.16=9.13.0 2.17=10.7.0 2.18=11.13.0 2.19=12.3.0 2.20=13.8.0)
# The Python of the main venv and of the older cores' venvs from FIRST_NEW_CONTROLLER_CORE on:
# ansible-core 2.20 and later need a controller Python of 3.12 or newer. The venvs of the
# cores before it use the system's python3 (3.11 on Debian 12), which 2.15 still supports.
CONTROLLER_PYTHON=3.13 FIRST_NEW_CONTROLLER_CORE=2.20
# The collections taken from each `ansible` release; ceph-ansible needs ansible.utils too.
COLLECTIONS=(community/general ansible/posix ansible/utils)
# The ansible-core of the main venv.
MAIN_CORE="$(sed -n 's/^ansible-core==\([0-9]*\.[0-9]*\)\..*/\1/p' "$REPO_ROOT/scripts/requirements.txt")"
# The managed-host Pythons the collection claims (docs/platforms.md), oldest first, each as
# PYTHON=CORE: the newest ansible-core that still supports it as a target, whose ansible-test
# checks it (scripts/test.sh sanity) and, for the oldest and the newest, under which the tests
# marked `pythons` run modules with it (scripts/test.sh cores). The main venv's Python is the
# controller's and runs the full sanity and integration stages.
CLAIMED_PYTHONS=(3.6=2.16 3.7=2.17 3.8=2.19 3.9=2.21 3.10=2.21 3.11=2.21 3.12=2.21 3.13=2.21)
# Where those interpreters (and CONTROLLER_PYTHON) are found: DIR/X.Y.*/bin/pythonX.Y, as pyenv
# installs them, else /usr/bin/pythonX.Y.
CEPHOPS_PYTHONS="${CEPHOPS_PYTHONS:-${PYENV_ROOT:-$HOME/.pyenv}/versions}"
export REPO_ROOT CEPHOPS_CACHE BUILD_DIR CEPHOPS_PYTHONS

# Packages the tests use on the test host; the lab adds QEMU and mmdebstrap.
DEBIAN_PACKAGES=(
  fio hdparm xfsprogs e2fsprogs parted gdisk util-linux lvm2 mdadm nvme-cli sdparm cryptsetup-bin strace
  python3-venv shellcheck qemu-system-x86 qemu-utils mmdebstrap openssh-client
  # A real browser to look at the gate's HTML report (tests/integration/test_report_in_browser.py).
  chromium-headless-shell
  # Ceph's own code the tests compare with: its spec validation (python3-ceph-common) and
  # ceph-volume, which bookworm ships in ceph-osd.
  python3-ceph-common ceph-osd
  # A monitor of its own for the mClock capacity tests (tests/integration/test_mclock_capacity.py).
  ceph-mon
)

log() { printf '==> %s\n' "$*" >&2; }

ensure_debian_packages() {
  local missing=() pkg
  for pkg in "${DEBIAN_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "ok installed" || missing+=("$pkg")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" -ne 0 ]; then
    log "missing Debian packages: ${missing[*]} (run as root, or install them first)"
    return 1
  fi
  log "installing Debian packages: ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
}

# make_venv REQUIREMENTS NAME [PYTHON]: sets VENV_DIR to a venv built from the full lock
# REQUIREMENTS on Python PYTHON (X.Y; the system's python3 if not given), cached as
# $CEPHOPS_CACHE/NAME[-pyX.Y]-<hash of the lock>.
make_venv() {
  # The system's own python3, by path: once the main venv is on PATH, python3 is its 3.13.
  local key python=/usr/bin/python3 name="$2"
  key="$(sha256sum "$1" | cut -c1-12)"
  if [ -n "${3:-}" ]; then
    python="$(claimed_python "$3")" || return 1
    name="$name-py$3"
  fi
  VENV_DIR="$CEPHOPS_CACHE/$name-$key"
  # A venv some earlier run built on another Python is built again.
  local version='import sys; print(sys.version_info[:2])'
  if [ ! -f "$VENV_DIR/.complete" ] || [ "$("$VENV_DIR/bin/python3" -c "$version")" != "$("$python" -c "$version")" ]; then
    log "creating Python virtual environment $VENV_DIR (first run only)"
    rm -rf "$VENV_DIR"
    "$python" -m venv "$VENV_DIR"
    "$VENV_DIR/bin/pip" install -q --disable-pip-version-check -r "$1"
    touch "$VENV_DIR/.complete"
  fi
}

# make_collections BUNDLE TREE: TREE/ansible_collections holds this checkout as
# cephops.osd_tuning and the COLLECTIONS of the `ansible` release BUNDLE with the collections
# they depend on, unpacked once into $CEPHOPS_CACHE (keyed by what and how it unpacks).
make_collections() {
  local key collection
  key="$(printf '%s\n' "${COLLECTIONS[@]}" | cat - "$REPO_ROOT/scripts/unpack_collections.py" | sha256sum | cut -c1-8)"
  local vendor="$CEPHOPS_CACHE/collections-ansible-$1-$key" tree="$2/ansible_collections"
  if [ ! -f "$vendor/.complete" ]; then
    log "unpacking ${COLLECTIONS[*]} from ansible $1 (first run only)"
    rm -rf "$vendor" "$vendor.tmp"
    mkdir -p "$vendor.tmp"
    # Only its collections are used: the release may need a newer Python than this pip's.
    pip download -q --disable-pip-version-check --no-deps --ignore-requires-python -d "$vendor.tmp/wheel" "ansible==$1"
    python3 "$REPO_ROOT/scripts/unpack_collections.py" "$vendor.tmp"/wheel/*.whl "$vendor.tmp" "${COLLECTIONS[@]}"
    rm -rf "$vendor.tmp/wheel"
    touch "$vendor.tmp/.complete"
    mv "$vendor.tmp" "$vendor"
  fi
  rm -rf "$tree" && mkdir -p "$tree/cephops"
  for collection in "$vendor"/ansible_collections/*/*; do
    mkdir -p "$tree/$(basename "$(dirname "$collection")")"
    ln -sfn "$collection" "$tree/$(basename "$(dirname "$collection")")/$(basename "$collection")"
  done
  ln -sfn "$REPO_ROOT" "$tree/cephops/osd_tuning"
}

# make_core_env MINOR: sets VENV_DIR and COLLECTIONS_DIR for one of OLDER_CORES.
make_core_env() {
  local entry
  for entry in "${OLDER_CORES[@]}"; do
    [ "${entry%%=*}" = "$1" ] || continue
    local python=""
    [ "$(printf '%s\n' "$FIRST_NEW_CONTROLLER_CORE" "$1" | sort -V | head -n 1)" = "$FIRST_NEW_CONTROLLER_CORE" ] &&
      python=$CONTROLLER_PYTHON
    make_venv "$REPO_ROOT/scripts/cores/requirements-$1.txt" "venv-core-$1" "$python" || return 1
    COLLECTIONS_DIR="$BUILD_DIR/collections-core-$1"
    make_collections "${entry#*=}" "$COLLECTIONS_DIR"
    return
  done
  log "no ansible-core $1 in OLDER_CORES (${OLDER_CORES[*]})"
  return 1
}

# claimed_python X.Y: prints the interpreter of Python X.Y under CEPHOPS_PYTHONS (the newest
# patch release there), else /usr/bin/pythonX.Y, or fails saying how to get it.
claimed_python() {
  local found
  found="$(printf '%s\n' "$CEPHOPS_PYTHONS/$1".*/bin/"python$1" | sort -V | tail -n 1)"
  [ -x "$found" ] || found="/usr/bin/python$1"
  if [ ! -x "$found" ]; then
    log "no Python $1 in $CEPHOPS_PYTHONS or /usr/bin: the venvs and the sanity and cores stages need" \
      "it (docs/platforms.md, README); install it with 'pyenv install $1' or set CEPHOPS_PYTHONS to" \
      "a folder holding X.Y.Z/bin/pythonX.Y"
    return 1
  fi
  echo "$found"
}

# check_claimed_pythons: whether every Python of CLAIMED_PYTHONS is there (says which is not).
check_claimed_pythons() {
  local entry absent=0
  for entry in "${CLAIMED_PYTHONS[@]}"; do
    claimed_python "${entry%%=*}" >/dev/null || absent=1
  done
  return "$absent"
}

# use_core MINOR: sets VENV_DIR and COLLECTIONS_DIR for MAIN_CORE or one of OLDER_CORES.
use_core() {
  if [ "$1" = "$MAIN_CORE" ]; then
    VENV_DIR="$VIRTUAL_ENV" COLLECTIONS_DIR="$BUILD_DIR/collections"
  else
    make_core_env "$1"
  fi
}

mkdir -p "$CEPHOPS_CACHE" "$BUILD_DIR"
ensure_debian_packages
make_venv "$REPO_ROOT/scripts/requirements.txt" venv "$CONTROLLER_PYTHON"
export VIRTUAL_ENV="$VENV_DIR"
export PATH="$VENV_DIR/bin:$PATH"
make_collections "$ANSIBLE_BUNDLE_VERSION" "$BUILD_DIR/collections"
export ANSIBLE_COLLECTIONS_PATH="$BUILD_DIR/collections"
export PYTHONPATH="$BUILD_DIR/collections${PYTHONPATH:+:$PYTHONPATH}"
# ceph-ansible stable-8.0 and 9.0 (tests/integration/test_ceph_ansible.py, molecule/ceph) run on the
# 2.16 venv, whose lock holds their requirements (netaddr, and six for stable-8.0) too, with the
# collections of the `ansible` release for 2.16, as their users have them: their ansible.cfg
# names community.general's yaml callback, which community.general 12 removed.
make_core_env 2.16
export CEPH_ANSIBLE_VENV="$VENV_DIR" CEPH_ANSIBLE_COLLECTIONS="$COLLECTIONS_DIR"
VENV_DIR="$VIRTUAL_ENV"
check_claimed_pythons || true  # only the sanity and cores stages need them; they fail without
export ANSIBLE_LOCAL_TEMP="$BUILD_DIR/ansible-tmp"
export ANSIBLE_NOCOLOR="${ANSIBLE_NOCOLOR:-${CI:+1}}"
set +euo pipefail
