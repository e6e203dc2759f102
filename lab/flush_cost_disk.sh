#!/bin/sh
# A lab guest disk whose every command, the flush included, costs a set time: a memory-backed
# null_blk disk with a volatile write cache (so the kernel sends flushes), made through configfs.
# Used by the power-loss protection tests and the OSD bench; runs in the guest, as root.
#
# usage: flush_cost_disk.sh create NAME NANOSECONDS   prints the disk's /dev node
#        flush_cost_disk.sh remove NAME               unloads null_blk after the last disk
#
# 0 ns completes every command at once. Newer kernels name the disk after NAME, older ones
# nullbN, so the node printed is the one that appeared.
set -eu

CONFIGFS=/sys/kernel/config/nullb

case "${1:-}" in
  create)
    item="$CONFIGFS/$2"
    [ -d /sys/module/null_blk ] || modprobe null_blk nr_devices=0
    before=" $(cd /sys/block && echo *) "
    mkdir "$item"
    # 8 GiB, allocated only where written: ceph-volume refuses disks under 5 GB.
    echo 8192 >"$item/size"
    echo 4096 >"$item/blocksize"
    echo 1 >"$item/memory_backed"
    echo 64 >"$item/cache_size"
    if [ "$3" -gt 0 ]; then
      echo 2 >"$item/irqmode" # completion by timer, after completion_nsec
      echo "$3" >"$item/completion_nsec"
    else
      echo 0 >"$item/irqmode"
    fi
    echo 1 >"$item/power"
    udevadm settle
    added="" count=0
    for disk in /sys/block/*; do
      case "$before" in
        *" ${disk##*/} "*) ;;
        *) added="${disk##*/}" count=$((count + 1)) ;;
      esac
    done
    [ "$count" -eq 1 ] || { echo "expected one new disk, found $count" >&2; exit 1; }
    echo "/dev/$added"
    ;;
  remove)
    echo 0 >"$CONFIGFS/$2/power"
    rmdir "$CONFIGFS/$2"
    # The last disk gone, only the attribute "features" is left.
    for left in "$CONFIGFS"/*/; do
      [ -d "$left" ] && exit 0
    done
    udevadm settle
    modprobe -r null_blk
    ;;
  *)
    echo "usage: $0 create NAME NANOSECONDS | remove NAME" >&2
    exit 2
    ;;
esac
