# shellcheck shell=bash
# Prepares, offline from Ansible Galaxy, everything the tests and the demo need and
# exports the environment to use it. Sourced by scripts/test.sh and scripts/demo.sh.
#
#   Debian packages   installed with apt-get when missing (root only)
#   Python venv       built from scripts/requirements.txt, cached by its hash
#   collections       community.general, ansible.posix and ansible.utils unpacked from the
#                     pinned `ansible` wheel on PyPI, cached by its version
#   core venvs        ansible-core of another minor version, for tests that run with it
#   .build/           a collections tree in which this checkout is cephops.osd_tuning
#
# CEPHOPS_CACHE (default ~/.cache/cephops-osd-tuning) holds what is shared between
# clones; .build/ in the checkout holds what belongs to this clone.

set -euo pipefail

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CEPHOPS_CACHE="${CEPHOPS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cephops-osd-tuning}"
BUILD_DIR="$REPO_ROOT/.build"
# The `ansible` package that carries the community.general and ansible.posix we test with.
ANSIBLE_BUNDLE_VERSION="12.3.0"
export REPO_ROOT CEPHOPS_CACHE BUILD_DIR

# Packages the tests use on the test host; the lab adds QEMU and mmdebstrap.
DEBIAN_PACKAGES=(
  fio hdparm xfsprogs e2fsprogs parted gdisk util-linux lvm2 mdadm nvme-cli sdparm cryptsetup-bin
  python3-venv shellcheck qemu-system-x86 qemu-utils mmdebstrap openssh-client
  # Ceph's own code the tests compare with: its spec validation (python3-ceph-common) and
  # ceph-volume, which bookworm ships in ceph-osd.
  python3-ceph-common ceph-osd
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

ensure_venv() {
  local key
  key="$(sha256sum "$REPO_ROOT/scripts/requirements.txt" | cut -c1-12)"
  VENV_DIR="$CEPHOPS_CACHE/venv-$key"
  if [ ! -f "$VENV_DIR/.complete" ]; then
    log "creating Python virtual environment $VENV_DIR (first run only)"
    rm -rf "$VENV_DIR"
    python3 -m venv "$VENV_DIR"
    "$VENV_DIR/bin/pip" install -q --disable-pip-version-check -r "$REPO_ROOT/scripts/requirements.txt"
    touch "$VENV_DIR/.complete"
  fi
  export VIRTUAL_ENV="$VENV_DIR"
  export PATH="$VENV_DIR/bin:$PATH"
}

ensure_collections() {
  # ansible.utils: ceph-ansible needs it, with community.general and ansible.posix.
  local names=(community/general ansible/posix ansible/utils)
  local vendor="$CEPHOPS_CACHE/collections-ansible-$ANSIBLE_BUNDLE_VERSION-${#names[@]}"
  if [ ! -f "$vendor/.complete" ]; then
    log "unpacking ${names[*]} from ansible $ANSIBLE_BUNDLE_VERSION (first run only)"
    rm -rf "$vendor" "$vendor.tmp"
    mkdir -p "$vendor.tmp"
    pip download -q --disable-pip-version-check --no-deps -d "$vendor.tmp/wheel" "ansible==$ANSIBLE_BUNDLE_VERSION"
    python3 "$REPO_ROOT/scripts/unpack_collections.py" "$vendor.tmp"/wheel/*.whl "$vendor.tmp" "${names[@]}"
    rm -rf "$vendor.tmp/wheel"
    touch "$vendor.tmp/.complete"
    mv "$vendor.tmp" "$vendor"
  fi
  local tree="$BUILD_DIR/collections/ansible_collections"
  mkdir -p "$tree/cephops" "$tree/community" "$tree/ansible"
  ln -sfn "$vendor/ansible_collections/community/general" "$tree/community/general"
  ln -sfn "$vendor/ansible_collections/ansible/posix" "$tree/ansible/posix"
  ln -sfn "$vendor/ansible_collections/ansible/utils" "$tree/ansible/utils"
  ln -sfn "$REPO_ROOT" "$tree/cephops/osd_tuning"
  export ANSIBLE_COLLECTIONS_PATH="$BUILD_DIR/collections"
  export PYTHONPATH="$BUILD_DIR/collections${PYTHONPATH:+:$PYTHONPATH}"
}

# ensure_core_venv MINOR [PACKAGE ...]: a venv with ansible-core MINOR.x and PACKAGEs, cached
# by both; its directory in CORE_VENV. The test playbooks' own venv stays the main one.
ensure_core_venv() {
  local minor="$1" key
  shift
  key="$(printf '%s\n' "ansible-core==$minor.*" "$@" | sha256sum | cut -c1-12)"
  CORE_VENV="$CEPHOPS_CACHE/core-$minor-$key"
  if [ ! -f "$CORE_VENV/.complete" ]; then
    log "creating the ansible-core $minor virtual environment $CORE_VENV (first run only)"
    rm -rf "$CORE_VENV"
    python3 -m venv "$CORE_VENV"
    "$CORE_VENV/bin/pip" install -q --disable-pip-version-check "ansible-core==$minor.*" "$@"
    touch "$CORE_VENV/.complete"
  fi
}

# ceph-ansible stable-8.0 (tests/integration/test_ceph_ansible.py): its requirements.txt.
ensure_ceph_ansible_venv() {
  ensure_core_venv 2.16 netaddr six
  export CEPH_ANSIBLE_VENV="$CORE_VENV"
}

mkdir -p "$CEPHOPS_CACHE" "$BUILD_DIR"
ensure_debian_packages
ensure_venv
ensure_collections
ensure_ceph_ansible_venv
export ANSIBLE_LOCAL_TEMP="$BUILD_DIR/ansible-tmp"
export ANSIBLE_NOCOLOR="${ANSIBLE_NOCOLOR:-${CI:+1}}"
set +euo pipefail
