#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: cephops.osd_tuning contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: sync_write_probe
short_description: Measure sync-write performance of blank disks and judge them for Ceph OSDs
version_added: 0.1.0
description:
  - Every Ceph write returns only once it is durable (fsync or O_DSYNC), so the sync-write
    rate of a drive, not its datasheet IOPS, decides whether it can carry an OSD. This module
    measures it with fio and gives each disk a verdict, V(suitable), V(marginal),
    V(unsuitable), V(refused) or V(error), with human-readable reasons.
  - The default probe is 4 KiB random writes at queue depth 1 with an fsync after each write
    (C(--ioengine=libaio --direct=1 --fsync=1 --bs=4k --iodepth=1 --rw=randwrite)) for 15
    seconds. O(mode=journal) runs the journal test instead (sequential O_DSYNC writes) and
    ramps C(numjobs) 1, 2, 4, ... until the gain falls under O(journal_min_gain).
    How fio issues the writes (engine, block size, queue depth, pace, ...) can be changed
    with O(fio_options), never where or how much it writes; the exact fio command line is
    returned with each result.
  - All disks are probed side by side in one fio run (one job section per disk, each
    reporting on its own), so a host with twelve disks takes about as long as one.
  - Safety. It changes no byte it does not own. It writes only to disks that
    M(cephops.osd_tuning.disk_facts) calls available (no partitions, signatures, LVM, md,
    BlueStore label, holders, mounts, swap, data its content checks find, not the root disk,
    not read-only), and only inside the probe region (O(region_offset_mib),
    O(region_size_mib)), which must read back as all zeros first (the region check reads all
    of it). Any other disk gets V(refused) with the check that refused it and is not touched;
    the others are still probed.
  - Before the first write each disk is recorded in a journal on the host (O(journal_dir));
    afterwards every 4 KiB block of the region that is not zero is overwritten with zeros
    (plain writes, not Write Zeroes, which some firmware fails) and read back, so the region
    holds exactly what it held before and ceph-volume still sees a blank disk. A probe killed
    before it could restore (SIGKILL, a power cut, a disk that vanished) leaves its record,
    and the next run on that disk restores the region first; see O(journal_dir).
  - fio failing, printing no JSON, a job reporting an error, a disk that disappears, a run
    longer than O(timeout) (fio is killed) and a termination signal to the module each give
    V(error) with the cause, never a verdict.
  - Also reports the volatile write cache of each disk, a power-loss protection verdict from
    what one fsync costs (read from the probe's own fsync latency, so it takes no extra time;
    in O(mode=journal) from a short probe without fsync), and optionally
    (O(compare_write_cache)) which cache setting gives more sync IOPS. O(write_cache=disabled)
    measures with the drive's write cache off.
  - How the default thresholds were chosen is explained in the collection's
    C(docs/gate_thresholds.md); no public standard exists.
author:
  - cephops maintainers (@cephops)
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - cephops.osd_tuning.attributes.no_diff
options:
  devices:
    description:
      - Disks to probe, as kernel names (V(sdb)), C(/dev) paths or C(/dev/disk/by-id) links.
      - A device that does not exist or is a partition is V(refused) with the reason.
      - A disk named twice (for example by kernel name and by-id link) is probed once; each
        entry gets a result.
    type: list
    elements: str
    required: true
  overwrite_data:
    description:
      - Disks of O(devices) whose data the probe may overwrite, named like them. Only for
        disks that hold data no tool recognises and that you mean to give to Ceph anyway;
        the probe region need not read back as zeros, and the content checks of
        M(cephops.osd_tuning.disk_facts) (its C(data_reasons)) do not refuse the disk. The data
        in the region is lost; the region is left zeroed. Every other refusal (a signature,
        partitions, a mount, the root disk, ...) still holds.
      - Naming a disk that O(devices) does not list fails the module.
    type: list
    elements: str
    default: []
  mode:
    description:
      - V(randwrite) probes 4 KiB random writes with an fsync after each (what an OSD does).
      - V(journal) probes sequential 4 KiB O_DSYNC writes (C(--sync=1 --rw=write)) and then
        ramps C(numjobs) to find where the disk saturates. The verdict uses the one-job step.
    type: str
    choices: [randwrite, journal]
    default: randwrite
  runtime:
    description:
      - Seconds of each full-length probe (each journal ramp step too).
    type: int
    default: 15
  min_iops:
    description:
      - Sync write IOPS a disk needs for V(suitable).
    type: int
    default: 5000
  marginal_min_iops:
    description:
      - Sync write IOPS a disk needs for V(marginal); below it is V(unsuitable).
    type: int
    default: 1000
  max_p99_sync_latency_ms:
    description:
      - Largest 99th percentile sync latency (fsync latency, or write completion latency
        with O_DSYNC) for V(suitable), in milliseconds.
    type: float
    default: 1.0
  marginal_max_p99_sync_latency_ms:
    description:
      - Largest 99th percentile sync latency for V(marginal), in milliseconds.
    type: float
    default: 5.0
  class_thresholds:
    description:
      - Thresholds of their own for classes of disks (for example V(hdd), V(db) or V(wal)), by
        class name, each a dictionary of any of O(min_iops), O(marginal_min_iops),
        O(max_p99_sync_latency_ms) and O(marginal_max_p99_sync_latency_ms); what one leaves out
        is taken from those options. O(device_classes) says which disks each class judges.
      - With both, one call probes disks of every class at once (the disk_gate role starts one
        job per host this way); results and cache entries are those of one call per class.
    type: dict
    default: {}
  device_classes:
    description:
      - The class (a key of O(class_thresholds)) of disks of O(devices), by the device as given
        there. A disk not listed is judged by the top-level thresholds.
    type: dict
    default: {}
  parallel:
    description:
      - Probe all disks in one fio run side by side. V(false) probes them one after another,
        which avoids a shared controller or CPU limiting the figures.
    type: bool
    default: true
  adaptive:
    description:
      - Probe in short stages of O(adaptive_stage_seconds) (at most three) and stop a disk
        early once its last two stages each lie outside
        [limit / O(adaptive_margin), limit * O(adaptive_margin)] for every threshold and give
        the same verdict, or each fall short of one marginal limit by that margin (unsuitable
        whatever the other figure). A disk still undecided then gets the full-length probe,
        whose result is the verdict.
    type: bool
    default: false
  adaptive_stage_seconds:
    description:
      - Length of one adaptive stage in seconds; a clear-cut disk is decided after two.
    type: int
    default: 1
  adaptive_margin:
    description:
      - Factor by which a stage must clear every threshold to decide early; must exceed 1.
    type: float
    default: 1.5
  fio_options:
    description:
      - fio options that replace or add to the mode's job options, without the leading
        dashes (key V(bs) and value V(16k) for C(--bs=16k)); a V(null) value removes an
        option of the mode's job.
      - Only options that cannot change where or how much the probe writes, nor touch
        anything outside its region, are accepted. These are C(ioengine), C(direct),
        C(buffered), C(fsync), C(fdatasync), C(sync), C(end_fsync), C(fsync_on_close), C(bs),
        C(bsrange), C(bssplit), C(ba), C(iodepth), C(iodepth_batch),
        C(iodepth_batch_complete_min), C(iodepth_batch_complete_max), C(iodepth_low), C(rw),
        C(rwmixread), C(rwmixwrite), C(randrepeat), C(randseed), C(allrandrepeat),
        C(norandommap), C(random_generator), C(random_distribution), C(percentage_random),
        C(rate), C(rate_min), C(rate_process), C(rate_cycle), C(rate_ignore_thinktime),
        C(rate_iops), C(rate_iops_min), C(thinktime), C(thinktime_spin), C(thinktime_blocks),
        C(thinktime_blocks_type), C(thinktime_iotime), C(nice), C(prio), C(prioclass),
        C(cpus_allowed), C(cpumask), C(cpus_allowed_policy), C(mem),
        C(zero_buffers), C(refill_buffers), C(scramble_buffers), C(buffer_pattern),
        C(buffer_compress_percentage), C(buffer_compress_chunk), C(dedupe_percentage),
        C(clat_percentiles), C(lat_percentiles), C(slat_percentiles), C(percentile_list),
        C(significant_figures), C(gtod_reduce), C(disable_lat), C(disable_clat),
        C(disable_slat) and C(invalidate).
      - Some values are restricted. C(ioengine) takes V(libaio), V(io_uring), V(psync),
        V(sync), V(pvsync), V(pvsync2) or V(posixaio) (others delete files, run programs,
        send SCSI commands or load code). C(rw) takes V(read), V(write), V(randread),
        V(randwrite), V(rw), V(readwrite) or V(randrw) (no trims, no C(:N) suffix). C(mem)
        takes V(malloc), V(shm), V(shmhuge), V(mmap), V(mmapshared) or V(mmaphuge) (no
        C(:FILE), a file fio would create and truncate). C(buffer_pattern) must not hold a
        single quote (a quoted part names a file fio reads). No value may hold whitespace or
        a control character.
      - Each key is looked up with C(fio --cmdhelp=KEY) on the host and must be exactly the
        name or an alias of an option (V(blocksize) is C(bs)); fio is given the option's own
        name. Abbreviations, which fio's command line would take, are refused.
      - 'Anything else fails the task before anything runs, with a message that names every
        refused option and why (for an alias, which option it stands for), for example
        C(fio_options refused, nothing was run. fileoffset: alias of offset, which is not
        allowed; fileoff: fio has no option or alias of exactly this name ...).'
      - Without fio on the host (O(method=auto) then probes with dd) any fio option is refused.
    type: dict
    default: {}
  region_offset_mib:
    description:
      - Start of the probe region in MiB from the start of the disk. The default keeps it
        clear of every signature at the start and the end of a disk.
    type: int
    default: 1024
  region_size_mib:
    description:
      - Size of the probe region in MiB; all writes stay inside it and it is zeroed afterwards.
    type: int
    default: 512
  timeout:
    description:
      - Seconds one probe run may take before it is killed and its disks get V(error).
        Defaults to O(runtime) plus 60. The zeroing of the probe regions afterwards (all
        disks at once) has no limit, since a zeroing cut short would leave probe data behind.
    type: int
  method:
    description:
      - V(fio), or V(dd) (C(oflag=direct,dsync), sequential, IOPS and mean latency only).
        V(auto) uses fio when installed, else dd, and says so in each result's C(method).
    type: str
    choices: [auto, fio, dd]
    default: auto
  plp_runtime:
    description:
      - Seconds of a probe without fsync after the main one, which gives what an fsync costs
        (the power-loss protection verdict, C(plp)) where the main probe has no fsync latency
        of its own, as in O(mode=journal) (O_DSYNC writes, whose flush is inside the write's
        completion) or with O(fio_options) that fsync only every few writes. V(0) skips it,
        and their verdict is then V(unknown). fio only.
      - A probe that fsyncs after each write (the default O(mode=randwrite)) needs no such
        run. Its power-loss verdict comes from its own fsync latency, whatever this says.
    type: int
    default: 3
  deep_queue_seconds:
    description:
      - After the main probe, every measured disk gets a run in the shape of the bench an OSD
        runs at its first start for the mClock scheduler's capacity (C(osd bench)) - 4 KiB random
        writes with O(deep_queue_iodepth) in flight and one flush at the end, inside the same
        probe region. It ends after Ceph's 12,288,000 bytes or this many seconds, whichever
        comes first, so that a spinning disk does not pay minutes. RV(results[].deep_queue)
        holds its figure, the one the mClock capacity is seeded from.
      - V(0) skips it. Less than O(timeout), which kills this run as it kills every other. fio only.
    type: int
    default: 3
  deep_queue_iodepth:
    description:
      - Writes in flight in the deep-queue run (O(deep_queue_seconds)).
    type: int
    default: 32
  compare_write_cache:
    description:
      - Measure once more with the write cache switched the other way (C(hdparm -W) for ATA,
        C(nvme set-feature) feature 6 for NVMe, C(sdparm WCE) for SCSI, and the kernel's
        C(queue/write_cache) for other disks), report which is faster, and always switch it
        back. Changes are not saved to the drive.
      - The drive is read back after each switch, C(observed) in RV(results[].write_cache_comparison);
        a drive that does not report the switched state is not measured that way.
      - An NVMe drive that reports no volatile write cache (id-ctrl C(vwc) 0) has nothing to
        switch; it is measured once, and its comparison says so (C(note)).
    type: bool
    default: false
  write_cache:
    description:
      - V(as_is) measures the drive as it is set. V(disabled) switches the drive's volatile
        write cache off for the whole probe (the journal test article's advice, measuring the
        drive as it writes to flash) and always switches it back on afterwards, also when the
        probe fails or is interrupted. Changes are not saved to the drive.
      - With V(disabled) the drive is read back after switching it off; a drive that still
        reports its cache on, or whose state cannot be read, is not probed (V(error)). An NVMe
        drive that reports no volatile write cache (id-ctrl C(vwc) 0) is probed as it is; its
        writes are durable when they complete, as the switch would make them. A disk
        whose own cache no tool reaches (virtio, loop; only the kernel's C(queue/write_cache)
        exists, and switching that stops the flushes, not the cache) is V(refused).
        RV(results[].write_cache_disabled) holds the states read.
      - Cannot be combined with O(compare_write_cache), which measures both settings itself.
      - Check mode switches nothing.
    type: str
    choices: [as_is, disabled]
    default: as_is
  journal_min_gain:
    description:
      - In O(mode=journal), stop ramping when doubling numjobs raised IOPS by less than this
        share.
    type: float
    default: 0.1
  journal_max_numjobs:
    description:
      - Largest numjobs of the journal ramp.
    type: int
    default: 16
  cache_max_age:
    description:
      - Seconds a measured verdict (V(suitable), V(marginal), V(unsuitable)) stays valid in
        O(cache_dir). A disk with a valid entry is not probed again; its stored result comes
        back with C(cached) and C(cache_age_seconds). V(0) neither reads nor writes the cache.
      - An entry belongs to the disk's identity (WWN or serial, the full model, firmware and
        size; a loop device's backing file) and to every setting that shapes the measurement or the
        verdict (mode, method, fio options, runtime, region, thresholds, adaptive, journal,
        power-loss and write cache settings). A disk without a WWN, serial or backing file is
        always probed.
      - The refusal checks run first, always, so a disk that is no longer blank is V(refused)
        whatever the cache holds. Errors and refusals are never stored. Check mode reads the
        cache but never writes it.
    type: int
    default: 0
  cache_dir:
    description:
      - Directory on the host that holds one JSON file per cached result (created mode 0700).
    type: path
    default: /var/cache/cephops-osd-tuning/gate
  journal_dir:
    description:
      - Directory on the host (created mode 0700) with one record per disk whose probe region
        may hold probe data, written and flushed before the first write and removed once the
        region reads back as zeros. Keep it on storage that survives a reboot.
      - A record left by an interrupted probe is handled before anything else happens to that
        disk. The region is zeroed and the record removed when the disk is the same (WWN,
        serial or loop backing file, and size) and nothing uses it; otherwise the disk is
        V(refused) with the reason and the command to zero the region by hand. A disk
        without WWN, serial or backing file cannot be proven the same disk and needs
        O(overwrite_data). A probe still running (same boot, same process) or any process
        still holding the disk open (a writer that outlived its probe) also refuses it.
      - Records of disks not probed in a run are listed in RV(pending_restores).
    type: path
    default: /var/lib/cephops-osd-tuning/probe-journal
notes:
  - Must run as root. Needs fio (or dd), dd and wipefs on the host.
  - Writes random data to the probe region of each available disk and restores it to zeros
    afterwards; run it before OSDs are deployed. A disk holding data is refused unless it is
    named in O(overwrite_data).
  - In check mode nothing is written, but everything is read (the refusal checks, the region
    check, the journal); results list the fio command line each disk would get and the
    disks that would be refused.
seealso:
  - module: cephops.osd_tuning.disk_facts
  - name: Ceph hardware recommendations, write caches
    description: Why sync writes matter and why to measure with and without the write cache.
    link: https://docs.ceph.com/en/latest/start/hardware-recommendations/
"""

EXAMPLES = r"""
- name: Probe the disks meant for OSDs
  cephops.osd_tuning.sync_write_probe:
    devices: "{{ devices }}"
  register: probe

- name: Stop when a disk is not good enough
  ansible.builtin.assert:
    that: probe.results | rejectattr('verdict', 'in', ['suitable', 'marginal']) | list | length == 0
    fail_msg: "{{ probe.results | rejectattr('verdict', 'in', ['suitable', 'marginal']) | map(attribute='reasons') | list }}"

- name: Quick fleet pass, stopping early when the verdict is clear
  cephops.osd_tuning.sync_write_probe:
    devices: [/dev/sdb, /dev/sdc, /dev/nvme0n1]
    adaptive: true

- name: Probe again only disks whose result is older than a week or whose identity changed
  cephops.osd_tuning.sync_write_probe:
    devices: "{{ devices }}"
    cache_max_age: 604800

- name: The journal test article's test with the drive's write cache disabled, as it advises
  cephops.osd_tuning.sync_write_probe:
    devices: [/dev/disk/by-id/wwn-0x5002538e40a1b2c3]
    mode: journal
    write_cache: disabled

- name: The journal test article's test and which write cache setting is faster
  cephops.osd_tuning.sync_write_probe:
    devices: [/dev/disk/by-id/wwn-0x5002538e40a1b2c3]
    mode: journal
    runtime: 30
    compare_write_cache: true
"""

RETURN = r"""
results:
  description: One entry per device in O(devices), in order.
  returned: always
  type: list
  elements: dict
  contains:
    given:
      description: The device as given in O(devices).
      type: str
      sample: /dev/disk/by-id/wwn-0x5002538e40a1b2c3
    device:
      description: Device node of the disk, or the name as given when it did not resolve.
      type: str
      sample: /dev/sdb
    name:
      description: Kernel name, null when the device did not resolve.
      type: str
      sample: sdb
    model:
      description: Model string.
      type: str
      sample: INTEL SSDSC2BB016T4
    serial:
      description: Serial number.
      type: str
    transport:
      description: Transport as M(cephops.osd_tuning.disk_facts) reports it.
      type: str
      sample: sata
    rotational:
      description: Whether the kernel treats the disk as rotational.
      type: bool
    verdict:
      description: V(suitable), V(marginal), V(unsuitable), V(refused) or V(error);
        null in check mode for a disk that would be probed.
      type: str
      sample: suitable
    reasons:
      description: Why, one sentence per threshold, refusal reason or error.
      type: list
      elements: str
      sample: [write IOPS 8713 >= 5000, p99 sync latency 0.265 ms <= 1 ms]
    method:
      description: V(fio) or V(dd).
      type: str
      sample: fio
    mode:
      description: V(randwrite) or V(journal).
      type: str
    command:
      description: The argv of the probe run that gave the verdict (shared by all disks of a
        parallel run); in check mode the one that would run.
      type: list
      elements: str
      sample: [fio, --output-format=json, --allow_file_create=0, --thread, --time_based, --runtime=15,
               --offset=1073741824, --size=536870912, --ioengine=libaio, --direct=1, --fsync=1,
               --bs=4k, --iodepth=1, --rw=randwrite, --name=sdb, --filename=/dev/sdb]
    fio_version:
      description: Version fio reported.
      type: str
      sample: fio-3.33
    write_iops:
      description: Sync write IOPS (summed over a disk's jobs).
      type: float
      sample: 8713.0
    write_bw_bytes:
      description: Write bandwidth in bytes per second.
      type: int
    total_ios:
      description: Writes completed.
      type: int
    runtime_ms:
      description: How long the measuring run wrote, in milliseconds.
      type: int
    latency_us:
      description: Latency in microseconds, C(completion) (write completion, clat) and C(sync)
        (fsync, null with O_DSYNC), each with C(mean), C(p50), C(p99) and C(p99_9).
      type: dict
      sample: {completion: {mean: 49.9, p50: 44.0, p99: 113.0, p99_9: 182.0},
               sync: {mean: 108.5, p50: 96.0, p99: 265.0, p99_9: 355.0}}
    p99_sync_latency_ms:
      description: The latency the thresholds judge, the sync p99 (the completion p99 with
        O_DSYNC), in milliseconds.
      type: float
      sample: 0.265
    adaptive:
      description: C(enabled), C(stages) run, C(decided_early) and C(seconds_probed).
      type: dict
      sample: {enabled: true, stages: 2, decided_early: true, seconds_probed: 4.0}
    journal:
      description: In O(mode=journal), C(steps) (C(numjobs), C(write_iops), C(write_bw_bytes)),
        C(saturated_at) (numjobs after which more gained less than O(journal_min_gain), null
        when the ramp ended first) and C(error).
      type: dict
      sample: {steps: [{numjobs: 1, write_iops: 5854, write_bw_bytes: 23980000},
                       {numjobs: 2, write_iops: 10924, write_bw_bytes: 44745000}],
               saturated_at: null, error: null}
    plp:
      description:
        - Power-loss protection C(verdict) (V(likely), V(unlikely) or V(unknown)) with its
          C(reasons), from what one fsync costs, the write cache state and the absolute figures.
        - C(flush_cost_ms) is what one fsync costs and C(plain_write_ms) the mean write without
          it; the mean durable write (the inverse of the probe's IOPS at queue depth 1) is their
          sum. C(flush_cost_source) says where the cost comes from. V(fsync_latency) is the
          mean fsync latency fio reported for the probe itself, less the write's completion
          where fio timed the fsync from the write's issue (fio 3.33's libaio does, and its
          fsync latency and the write's latency then add up to more than a durable write
          takes), with no extra run. V(run_without_fsync) is a short run of the same job
          without fsync (O(plp_runtime)) after a probe without an fsync latency of its own
          (O(mode=journal)), its write the inverse of that run's IOPS; C(unsynced_iops) and
          C(ratio) (sync / unsynced IOPS) give that run, null otherwise, and C(error) says why
          it failed.
        - V(unknown) with C(flush_cost_source) null without either (O(method=dd), or
          O(mode=journal) with O(plp_runtime=0)).
      type: dict
      sample: {verdict: unlikely, reasons: ["a durable write takes 1.742 ms (574 IOPS), the write itself 0.024 ms:
               fsync costs 1.719 ms (the mean fsync latency fio reported, 1.735 ms, less the write's completion,
               0.016 ms, which fio timed with it)", "a flush of 0.5 ms or more empties a volatile cache to flash"],
               flush_cost_source: fsync_latency, flush_cost_ms: 1.719, plain_write_ms: 0.024, unsynced_iops: null,
               ratio: null, error: null}
    deep_queue:
      description:
        - The deep-queue figure (O(deep_queue_seconds)) of a measured disk - C(write_iops) (the
          closing flush counted in its time), C(iodepth), C(bytes) written, C(seconds), and
          C(bounded_by) (V(bytes) when Ceph's 12,288,000 bytes were written, V(time) when
          O(deep_queue_seconds) ended it first) - or C(error) alone when the run failed; the
          verdict stands on the main probe either way. C(command) is fio's command line.
        - Null when not run (V(0), O(method=dd), a disk not measured).
      type: dict
      sample: {write_iops: 27345.9, iodepth: 32, bytes: 12288000, seconds: 0.112, bounded_by: bytes, error: null,
               command: [fio, --output-format=json, "..."]}
    write_cache:
      description: C(tool) that reads the drive's cache (V(hdparm), V(nvme), V(sdparm) or
        V(sysfs) when only the kernel's view exists), C(present) (the drive has a volatile
        write cache, for NVMe the vwc bit of id-ctrl; null where the drive does not say, ATA,
        SCSI and the kernel's view), C(enabled) (false without a cache), C(volatile) (a
        volatile cache is present and on) and C(kernel_view) (queue/write_cache).
      type: dict
      sample: {tool: hdparm, present: null, enabled: true, volatile: true, kernel_view: write back}
    write_cache_comparison:
      description: With O(compare_write_cache), C(on_iops), C(off_iops), C(faster), C(original),
        C(observed) (the state the drive reported, V(on), V(off) or V(unknown), in the half
        measured as on and in the half measured as off), C(after) (the state it reports once
        switched back), C(restored) (the original setting is back and read back) and
        C(restore_error); C(error) when the cache could not be switched or measured.
        A drive without a volatile write cache has only C(original) V(absent), C(note) (why
        nothing was switched) and C(error) null.
      type: dict
      sample: {on_iops: 574.0, off_iops: 1830.0, faster: "off", original: "on", observed: {"on": "on", "off": "off"},
               after: "on", restored: true, restore_error: null, error: null}
    write_cache_disabled:
      description: With O(write_cache=disabled), the drive's write cache C(original) (V(on),
        V(off), V(absent) for a drive without a volatile write cache, measured as it is, or
        V(unknown)), C(during) (read back after switching it off, before the probe),
        C(after) (read back after switching it on again), C(restored) (the original state is
        back and read back), C(restore_error), and C(error) when the cache could not be seen
        off (the disk is then not probed). Null otherwise.
      type: dict
      sample: {original: "on", during: "off", after: "on", restored: true, restore_error: null, error: null}
    region:
      description: C(offset) and C(length) in bytes of the region the probe wrote.
      type: dict
      sample: {offset: 1073741824, length: 536870912}
    wwn:
      description: WWN, as M(cephops.osd_tuning.disk_facts) reports it.
      type: str
    firmware:
      description: Firmware revision.
      type: str
    size_bytes:
      description: Size in bytes.
      type: int
    cached:
      description: The result comes from the cache (O(cache_max_age)); nothing was measured now.
      type: bool
    cache_age_seconds:
      description: Age of the cached result in seconds, null when measured now.
      type: int
    region_nonzero_mib:
      description: MiB of the probe region that were not zero before the probe (the region
        check); more than 0 only for a disk named in O(overwrite_data). Null when the region
        was not checked (refused, cached).
      type: int
      sample: 0
    written:
      description: A probe wrote to the disk in this run.
      type: bool
    zeroed:
      description: The probe region reads back as zeros after the probe (null when nothing
        was written).
      type: bool
    zeroed_bytes:
      description: Bytes of the probe region overwritten with zeros after the probe.
      type: int
      sample: 61440000
    recovered:
      description: The record an earlier, interrupted probe left for this disk in
        O(journal_dir) and what this run did about it, C(action) (V(restored), or V(planned)
        in check mode), C(note), C(started_at), C(region), C(file) and C(zeroed_bytes). Null
        when there was none; a record that refuses the disk shows in C(reasons) instead.
      type: dict
      sample: {action: restored, started_at: "2026-11-23 21:25:38 UTC", zeroed_bytes: 5836800,
               region: {offset: 1073741824, length: 536870912},
               file: /var/lib/cephops-osd-tuning/probe-journal/ee03e0ab6fd53d0ec4c694f74517ba34.json,
               note: "journal: zeroed the region a probe interrupted at 2026-11-23 21:25:38 UTC left behind
                      (5836800 bytes)"}
pending_restores:
  description: Records in O(journal_dir) of interrupted probes on disks not probed in this run,
    each with C(device), C(model), C(serial), C(started_at), C(region) and C(file). The next
    probe of that disk restores its region first. A probe still running (its process alive
    since this boot, in another play or by another operator) is not listed; a warning names it
    as running.
  returned: always
  type: list
  elements: dict
  sample: []
"""

import hashlib
import json
import os
import tempfile
import time

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.cephops.osd_tuning.plugins.module_utils import (
    blockdev, direct_io, fio_job, probe_region, probe_verdict, processes, write_cache)


# --------------------------------------------------------------------------- the result cache

# 2: the power-loss protection verdict replaced the hint. 3: its flush cost comes from the
# probe's fsync latency, with flush_cost_source and plain_write_ms.
CACHE_FORMAT = 3
# Only measurements are kept: an error or a refusal must be looked at again on the next run.
CACHEABLE_VERDICTS = ("suitable", "marginal", "unsuitable")
# Every setting that shapes a measurement or its verdict; the timeout and fio's path do not.
CACHE_KEY_SETTINGS = ("mode", "method", "options", "runtime", "region", "thresholds", "parallel", "adaptive",
                      "stage_seconds", "margin", "plp_runtime", "compare_write_cache", "min_gain", "max_numjobs")
# Settings added since, with the value that measures as before they existed: they enter the key
# only at another value, so the entries stored before them stay valid.
LATER_CACHE_KEY_SETTINGS = {"write_cache": "as_is", "deep_queue": {"seconds": 0, "iodepth": 32}}


def disk_identity(disk, backing_file=None):
    """What a cached result is bound to: WWN or serial with the full model, firmware and
    size, so a swapped disk, new firmware or a resized namespace misses. A serial is unique
    only within its maker's models (udev's by-id names join model and serial for that
    reason), and two models may share their first 16 characters, all SATA shows in sysfs:
    the model is the whole string from the identify data. A loop device has neither WWN nor
    serial and is known by its backing file instead. None when nothing stable identifies the
    disk (not cached)."""
    if not (disk.get("wwn") or disk.get("serial") or backing_file):
        return None
    return dict(blockdev.copy_identity(disk), backing_file=backing_file)


def entry_key(identity, settings):
    """Hex digest naming the cache entry of one disk under one set of probe settings."""
    document = {"format": CACHE_FORMAT, "disk": identity,
                "settings": dict((name, settings[name]) for name in CACHE_KEY_SETTINGS)}
    for name, before in LATER_CACHE_KEY_SETTINGS.items():
        if settings[name] != before:
            document["settings"][name] = settings[name]
    return hashlib.sha256(json.dumps(document, sort_keys=True).encode("utf-8")).hexdigest()


def entry_path(cache_dir, key):
    return os.path.join(cache_dir, key + ".json")


def lookup(cache_dir, key, now, max_age):
    """(result, age in seconds) of a stored entry younger than ``max_age``, else None.
    An unreadable or damaged entry, or one from the future (clock set back), is a miss."""
    try:
        with open(entry_path(cache_dir, key)) as handle:
            entry = json.load(handle)
        age = now - float(entry["stored_at"])
        result = entry["result"]
    except (IOError, OSError, ValueError, KeyError, TypeError):
        return None
    if entry.get("key") != key or not 0 <= age <= max_age or result.get("verdict") not in CACHEABLE_VERDICTS:
        return None
    return result, int(age)


def store(cache_dir, key, result, now):
    """Store one result atomically (readers never see half a file); the directory is
    root's alone since it names the host's disks."""
    if not os.path.isdir(cache_dir):
        os.makedirs(cache_dir, 0o700)
    handle, temporary = tempfile.mkstemp(dir=cache_dir, suffix=".tmp")
    try:
        with os.fdopen(handle, "w") as out:
            json.dump({"key": key, "stored_at": now, "result": result}, out, sort_keys=True)
        os.rename(temporary, entry_path(cache_dir, key))
    except BaseException:
        os.unlink(temporary)
        raise


def prune(cache_dir, now, max_age):
    """Remove entries older than ``max_age`` (by file time), which no lookup would serve."""
    try:
        names = os.listdir(cache_dir)
    except OSError:
        return
    for name in names:
        path = os.path.join(cache_dir, name)
        try:
            if name.endswith(".json") and now - os.path.getmtime(path) > max_age:
                os.unlink(path)
        except OSError:
            pass


# --------------------------------------------------------------------------- a run of the module

def requested(devices):
    """(entries, names): one (device as given, kernel name or None, refused result or None)
    per requested device, and the kernel names to judge. A disk named twice (say by name and
    by-id link) is judged once and both entries carry its result."""
    entries, names = [], []
    for spec in devices:
        try:
            name = blockdev.resolve_disk(spec)
        except blockdev.DeviceError as exc:
            entries.append((spec, None, probe_verdict.refused_result(spec, [str(exc)])))
            continue
        entries.append((spec, name, None))
        if name not in names:
            names.append(name)
    return entries, names


def judge(run_command, names, overwrite, settings, journal, cache, check_mode, warn):
    """({name: result}, pending restores, changed) of one run over the disks ``names``.

    Each disk's journal record is handled first; then the refusal checks, the result cache
    (``cache`` is (directory, max age in seconds), or None) and the region check leave the
    disks to probe. Check mode reads all of that and writes nothing. ``overwrite`` are the
    disks named in overwrite_data; ``warn(text)`` reports what does not fail the run.
    """
    disks, recovered = _recover(run_command, names, overwrite, journal, check_mode)
    # Check mode cannot zero a region an interrupted probe left: judge such a disk as if it had.
    planned = set(n for n, found in recovered.items() if found[0] == "planned")
    outcomes, probe = _refuse(names, disks, overwrite | planned, recovered, settings)
    now = time.time()
    keys = {}
    if cache:
        keys = _from_cache(probe, outcomes, settings, cache, now)
        probe = [d for d in probe if d["name"] not in outcomes]
    _check_regions(probe, outcomes, settings, overwrite | planned)
    _check_open(probe, outcomes)

    prober = Prober(run_command, settings, journal)
    if check_mode:
        commands = dict((n, argv) for names_, argv in prober.probe_commands(probe) for n in names_)
        for disk in probe:
            outcomes[disk["name"]] = probe_verdict.planned_result(disk, settings, commands[disk["name"]],
                                                                  write_cache.read(run_command, disk))
    else:
        processes.trap_termination()
        measured = prober.probe_all(probe)
        for disk in probe:
            outcomes[disk["name"]] = probe_verdict.probe_result(disk, measured[disk["name"]], settings, prober.fio_version)
    for name, (action, text, details) in recovered.items():
        if action != "refused":
            outcomes[name]["recovered"] = dict(details, action=action, note=text)
    if keys and not check_mode:
        _store(cache, [outcomes[d["name"]] for d in probe], keys, now, warn)

    identities = [disks[n]["identity"] for n in names]
    pending = []
    for record in journal.records():
        if record.get("identity") in identities:
            continue
        found = _pending(record)
        # A probe of another play or operator keeps its record while it runs: not interrupted.
        if probe_region.owner_alive(record):
            warn("a probe of %s started at %s is still running (pid %d); the probe journal's record of it is its own"
                 % (found["device"], found["started_at"], record["pid"]))
            continue
        pending.append(found)
        warn("a probe of %s interrupted at %s left probe data in its region: the next probe of that disk restores "
             "the region before it probes (name it in devices, or run the gate on it); record %s"
             % (found["device"], found["started_at"], found["file"]))
    changed = bool(prober.written) or any(a == "restored" for a, _t, _d in recovered.values())
    return outcomes, pending, changed


def _recover(run_command, names, overwrite, journal, check_mode):
    """({name: disk}, {name: (action, text, details)}): the disks with their journal identity,
    and what was done about the record an interrupted probe left (see probe_region.recovery)."""
    disks, recovered = _inventory(run_command, names), {}
    for name in names:
        disk = disks[name]
        disk["identity"], disk["stable_identity"] = probe_region.journal_identity(disk, backing_file(name))
        try:
            found = probe_region.recovery(journal, disk, disk["identity"], disk["stable_identity"],
                                          blockdev.blocking_reasons(disk, overwrite_data=True), name in overwrite,
                                          check_mode)
        except probe_region.RegionError as exc:
            found = ("refused", "journal: zeroing the region an interrupted probe left behind failed: %s" % exc, None)
        if found:
            recovered[name] = found
    if any(action == "restored" for action, _text, _details in recovered.values()):
        # The region is zero again: judge the disks as they are now.
        fresh = _inventory(run_command, [n for n, found in recovered.items() if found[0] == "restored"])
        for name, disk in fresh.items():
            disk["identity"], disk["stable_identity"] = disks[name]["identity"], disks[name]["stable_identity"]
            disks[name] = disk
    return disks, recovered


def _refuse(names, disks, overwrite, recovered, settings):
    """({name: refused result}, [disks left to probe]) after the refusal checks of disk_facts,
    the journal's refusals, the disk's size and, with the write cache to be disabled, whether
    the drive's own cache can be switched."""
    outcomes, probe = {}, []
    region_end = sum(settings["region"])
    for name in names:
        disk = disks[name]
        reasons = blockdev.blocking_reasons(disk, overwrite_data=name in overwrite)
        if name in recovered and recovered[name][0] == "refused":
            # First: the content checks then also see the probe data the record explains.
            reasons.insert(0, recovered[name][1])
        if disk["size_bytes"] < region_end:
            reasons.append("smaller than the end of the probe region (%d bytes)" % region_end)
        if settings["write_cache"] == "disabled" and write_cache.tool_for(disk["transport"]) == "sysfs":
            reasons.append("write_cache disabled: the drive's own write cache cannot be switched here (transport "
                           "%s); only the kernel's view (queue/write_cache) can, which stops the flushes, not the "
                           "cache" % disk["transport"])
        if reasons:
            outcomes[name] = probe_verdict.refused_result(disk["path"], reasons, disk)
        else:
            probe.append(disk)
    return outcomes, probe


def _from_cache(probe, outcomes, settings, cache, now):
    """Serve the disks of ``probe`` that have a valid cache entry into ``outcomes``; returns
    {name: cache key} of every disk that can be cached."""
    cache_dir, max_age = cache
    keys = {}
    for disk in probe:
        identity = disk_identity(disk, backing_file(disk["name"]))
        if identity is not None:
            # The disk's own thresholds: a key as one job per class of thresholds made it.
            keys[disk["name"]] = entry_key(identity, dict(settings, thresholds=probe_verdict.thresholds_of(
                settings, disk["name"])))
            hit = lookup(cache_dir, keys[disk["name"]], now, max_age)
            if hit:
                outcomes[disk["name"]] = probe_verdict.cached_result(disk, *hit)
    return keys


def _check_regions(probe, outcomes, settings, overwrite):
    """Refuse, into ``outcomes`` and out of ``probe``, each disk whose probe region is not all
    zeros. Reading is safe in check mode too, so check mode predicts these refusals exactly."""
    region = settings["region"]
    checks = direct_io.in_parallel(lambda d: probe_region.nonzero_mib(d["path"], region), probe,
                                   errors=probe_region.ERRORS)
    for disk, (nonzero, error) in zip(list(probe), checks):
        reason = None
        if error:
            reason = "region check: %s" % error
        elif nonzero and disk["name"] not in overwrite:
            reason = ("region check: %d of %d MiB of the probe region from %d MiB are not zero, so the disk holds "
                      "data the probe would overwrite; name the disk in overwrite_data to allow that (the region "
                      "is left zeroed)" % (len(nonzero), region[1] // probe_region.MIB, region[0] // probe_region.MIB))
        if reason:
            outcomes[disk["name"]] = probe_verdict.refused_result(disk["path"], [reason], disk)
            probe.remove(disk)
        else:
            disk["region_nonzero_mib"] = len(nonzero or [])
            forget_region_reads(disk["name"], region)


def _check_open(probe, outcomes):
    """Refuse, into ``outcomes`` and out of ``probe``, each disk a process opened since the
    inventory: the last check before the write cache is switched and fio starts."""
    held = blockdev.open_now(probe)
    for disk in [d for d in probe if d["name"] in held]:
        outcomes[disk["name"]] = probe_verdict.refused_result(
            disk["path"], ["open check: %s since the inventory" % held[disk["name"]]], disk)
        probe.remove(disk)


def _store(cache, measured, keys, now, warn):
    """Cache the verdicts measured now; a cache that cannot be written costs a re-probe
    next time, never this run's results."""
    cache_dir, max_age = cache
    prune(cache_dir, now, max_age)
    for result in measured:
        if result["verdict"] in CACHEABLE_VERDICTS and result["name"] in keys:
            try:
                store(cache_dir, keys[result["name"]], result, now)
            except (IOError, OSError) as exc:
                warn("could not cache the result of %s: %s" % (result["device"], exc))


def _inventory(run_command, names):
    return dict((d["name"], d) for d in blockdev.build_disks(blockdev.take_snapshot(run_command, names)))


def _pending(record):
    return {"device": record.get("device"), "model": record.get("model"), "serial": record.get("serial"),
            "started_at": probe_region.when(record.get("started_at", 0)), "region": record.get("region"),
            "file": record["file"]}


def backing_file(name):
    """The file behind a loop device, its only stable identity."""
    if not name.startswith("loop"):
        return None
    try:
        with open("/sys/block/%s/loop/backing_file" % name) as handle:
            return handle.read().strip() or None
    except (IOError, OSError):
        return None


def forget_region_reads(name, region):
    """Drop what the region check's reads left cached under a loop device. A loop device that
    does no direct I/O of its own reads its backing file through the page cache, even for
    O_DIRECT reads of the device, and pages cached over blocks the file has never written make
    fsync'd writes to them about 40 % slower: the probe would measure the check, not the disk
    (docs/benchmarks.md, probe fidelity). Clean pages only, no byte changes; a disk of its own
    keeps no such cache, and a loop device's partitions are not looked up."""
    backing = backing_file(name)
    if not backing:
        return
    try:
        with open("/sys/block/%s/loop/offset" % name) as handle:
            offset = int(handle.read())
        fd = os.open(backing, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        try:
            os.posix_fadvise(fd, offset + region[0], region[1], os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)
    except (IOError, OSError, ValueError):
        pass  # costs a loop disk's figure some speed, never a result's safety


# --------------------------------------------------------------------------- probing

ADAPTIVE_MAX_STAGES = 3
NO_FLUSH_COST = ("no fsync latency in the probe (O_DSYNC writes, or the dd method) and no probe without fsync to "
                 "compare with (plp_runtime 0, or the dd method)")


class Prober:
    """Probes a set of available disks and always cleans up after itself.

    ``run_command(argv)`` -> (rc, out, err) runs the short commands (write cache reads and
    switches); the probes go through processes.run_processes. Results are keyed by kernel name.
    """

    def __init__(self, run_command, settings, journal):
        self.run_command = run_command
        self.s = settings
        self.journal = journal
        self.written = set()
        self.fio_version = None
        self.caches = write_cache.Switcher(run_command)

    # ---- planning

    def probe_commands(self, disks, options=None, runtime=None, numjobs=1):
        """[(names, argv)]: one command for all disks, or one per disk when not parallel."""
        options = options or self.s["options"]
        runtime = runtime or self.s["runtime"]
        if self.s["method"] == "dd":
            return [([d["name"]], fio_job.dd_command(d["path"], self.s["region"])) for d in disks]
        groups = [disks] if self.s["parallel"] else [[d] for d in disks]
        return [([d["name"] for d in group],
                 fio_job.fio_command(self.s["fio"], [(d["name"], d["path"]) for d in group],
                                     options, runtime, self.s["region"], numjobs))
                for group in groups if group]

    # ---- measuring

    def measure(self, disks, options=None, runtime=None, numjobs=1):
        """{name: {"measurement"|"error": ...}, "command": argv} for one probe of the disks."""
        runtime = runtime or self.s["runtime"]
        commands = self.probe_commands(disks, options, runtime, numjobs)
        batches = [commands] if self.s["parallel"] else [[c] for c in commands]
        outcomes = {}
        for batch in batches:
            if self.s["method"] == "dd":
                runs = processes.run_processes([argv for _names, argv in batch], runtime + self.s["timeout"],
                                               stop_after=runtime)
                for (names, argv), (rc, _out, err, timed_out) in zip(batch, runs):
                    outcome = fio_job.dd_outcome(rc, err) if not timed_out else {"error": "dd did not stop; killed"}
                    outcomes[names[0]] = dict(outcome, command=argv)
                continue
            for names, argv in batch:
                found = self.fio(names, argv, runtime)
                for name in names:
                    outcomes[name] = dict(found[name], command=argv)
        return outcomes

    def fio(self, names, argv, runtime):
        """{name: {"measurement"|"error": ...}} of one fio run over the disks ``names``; a
        job that ran shorter than ``runtime`` seconds was cut off (0: it may end sooner)."""
        rc, out, err, timed_out = processes.run_processes([argv], self.s["timeout"])[0]
        if timed_out:
            return dict((n, {"error": "fio did not finish within %d s; killed" % self.s["timeout"]}) for n in names)
        found, version = fio_job.fio_outcome(rc, out, err, names, runtime)
        self.fio_version = version or self.fio_version
        return found

    def measure_main(self, disks):
        """The verdict probe: full length, or adaptive stages with a full-length fallback."""
        final, stages = {}, dict((d["name"], []) for d in disks)
        pending = list(disks)
        if self.s["adaptive"]:
            for _stage in range(ADAPTIVE_MAX_STAGES):
                if not pending:
                    break
                outcomes = self.measure(pending, runtime=self.s["stage_seconds"])
                still = []
                for disk in pending:
                    outcome = outcomes[disk["name"]]
                    if "measurement" in outcome:
                        stages[disk["name"]].append(outcome["measurement"])
                    if "error" in outcome or probe_verdict.decided_early(
                            stages[disk["name"]], probe_verdict.thresholds_of(self.s, disk["name"]), self.s["margin"]):
                        final[disk["name"]] = outcome
                    else:
                        still.append(disk)
                pending = still
        if pending:
            final.update(self.measure(pending))
        for disk in disks:
            name = disk["name"]
            probed = sum(m["runtime_ms"] for m in stages[name])
            if "measurement" in final[name] and final[name]["measurement"] not in stages[name]:
                probed += final[name]["measurement"]["runtime_ms"]
            final[name]["adaptive"] = {
                "enabled": self.s["adaptive"],
                "stages": len(stages[name]),
                "decided_early": bool(stages[name]) and final[name].get("measurement") is stages[name][-1],
                "seconds_probed": round(probed / 1000.0, 1),
            }
        return final

    def plp_verdicts(self, disks, measured, caches):
        """Each disk's power-loss protection verdict from a short run of the same job without
        fsync, for probes whose own fsync latency gives none (O_DSYNC writes)."""
        outcomes = self.measure(disks, options=fio_job.unsynced(self.s["options"]), runtime=self.s["plp_runtime"])
        verdicts = {}
        for disk in disks:
            outcome = outcomes[disk["name"]]
            if "error" in outcome:
                verdicts[disk["name"]] = dict(probe_verdict.plp_unknown(
                    "the probe without fsync failed: %s" % outcome["error"]), error=outcome["error"])
            else:
                verdicts[disk["name"]] = dict(probe_verdict.plp_verdict(
                    measured[disk["name"]], outcome["measurement"], caches[disk["name"]]), error=None)
        return verdicts

    def probe_all(self, disks):
        """{name: result fields} for every disk. Each disk is journaled before its first write
        and its region restored to zeros afterwards whatever happens; write caches are switched
        back (also those switched off for the whole probe); an interrupt turns every unfinished
        disk into an error."""
        results = dict((d["name"], {"write_cache": write_cache.read(self.run_command, d)}) for d in disks)
        try:
            during = {}
            if self.s["write_cache"] == "disabled":
                disks, during = self.caches.disable(disks, results)
            self.begin(disks)
            main = self.measure_main(disks)
            for disk in disks:
                results[disk["name"]].update(main[disk["name"]])
            good = [d for d in disks if "measurement" in main[d["name"]]]
            measured = dict((d["name"], main[d["name"]]["measurement"]) for d in good)
            if good and self.s["mode"] == "journal":
                for name, ramp in journal_ramp(self.measure, self.s, good, measured).items():
                    results[name]["journal"] = ramp
            if good and self.s["deep_queue"]["seconds"] and self.s["method"] == "fio":
                for name, figure in deep_queue(self, good).items():
                    results[name]["deep_queue"] = figure
            # The cache as it was while measuring: what the power-loss verdict must weigh.
            caches = dict((d["name"], during.get(d["name"]) or results[d["name"]]["write_cache"]) for d in good)
            for disk in good:
                verdict = probe_verdict.plp_from_fsync(measured[disk["name"]], caches[disk["name"]])
                if verdict is not None:
                    results[disk["name"]]["plp"] = dict(verdict, error=None)
            # Only a probe without an fsync latency of its own (O_DSYNC writes) needs a run without fsync.
            unsynced = [d for d in good if "plp" not in results[d["name"]]]
            if unsynced and self.s["plp_runtime"] and self.s["method"] == "fio":
                for name, verdict in self.plp_verdicts(unsynced, measured, caches).items():
                    results[name]["plp"] = verdict
            for disk in good:
                results[disk["name"]].setdefault("plp", dict(probe_verdict.plp_unknown(NO_FLUSH_COST), error=None))
            if good and self.s["compare_write_cache"]:
                for name, comparison in compare_write_cache(self.measure, self.caches, good, caches, measured).items():
                    results[name]["write_cache_comparison"] = comparison
        except (processes.Interrupted, probe_region.JournalError) as exc:
            for disk in disks:
                results[disk["name"]].setdefault("error", str(exc))
                results[disk["name"]].pop("measurement", None)
        finally:
            try:
                self.caches.restore(results)
            finally:
                restored = self.restore_written(disks)
        for name, (zeroed_bytes, error) in restored.items():
            results[name].update(zeroed=error is None, zeroed_bytes=zeroed_bytes)
            if error:
                results[name]["error"] = "; ".join(e for e in (results[name].get("error"), error) if e)
                results[name].pop("measurement", None)
        return results

    def begin(self, disks):
        """Journal every disk durably before anything writes to it: a run killed later leaves
        a record from which the next run restores the region."""
        for disk in disks:
            self.journal.begin(disk["identity"], disk, self.s["region"], disk["stable_identity"],
                               disk["region_nonzero_mib"])
            self.written.add(disk["name"])

    def restore_written(self, disks):
        """{name: (bytes zeroed, error or None)} for every journaled disk, all disks at once: a
        host with many disks would otherwise spend most of its gating time restoring. No time
        limit: a restore cut short leaves probe data behind. A disk whose region reads back as
        zeros leaves the journal; the others stay in it for the next run."""
        written = [d for d in disks if d["name"] in self.written]
        outcomes = direct_io.in_parallel(lambda d: probe_region.restore_zeros(d["path"], self.s["region"]), written,
                                         errors=probe_region.ERRORS)
        restored = {}
        for disk, (zeroed_bytes, error) in zip(written, outcomes):
            if error is None:
                self.journal.finish(disk["identity"])
            else:
                error = ("the probe region still holds probe data (%s); %s keeps the record, and the next run "
                         "restores it once the disk is back, or zero it yourself: %s" % (
                             error, self.journal.path(disk["identity"]),
                             probe_region.zero_command(disk["path"], self.s["region"])))
            restored[disk["name"]] = (zeroed_bytes, error)
        return restored


def deep_queue(prober, disks):
    """{name: deep-queue figure or {"error": ...}}: the OSD start-up bench's shape, inside
    each disk's probe region like every other write of the probe."""
    found, settings = {}, prober.s
    for group in ([disks] if settings["parallel"] else [[d] for d in disks]):
        argv = fio_job.deep_queue_command(settings["fio"], [(d["name"], d["path"]) for d in group], settings["region"],
                                          settings["deep_queue"]["iodepth"], settings["deep_queue"]["seconds"])
        for name, outcome in prober.fio([d["name"] for d in group], argv, 0).items():
            found[name] = dict(fio_job.deep_queue_figure(outcome["measurement"], settings["deep_queue"]["iodepth"],
                                                         settings["region"][1])
                               if "measurement" in outcome else {"error": outcome["error"]}, command=argv)
    return found


def journal_ramp(measure, settings, disks, first):
    """The journal test article's ramp: numjobs 1, 2, 4, ... per disk until the gain falls under min_gain."""
    steps = dict((d["name"], [_step(1, first[d["name"]])]) for d in disks)
    errors = {}
    ramping = list(disks)
    while ramping:
        numjobs = probe_verdict.next_numjobs(steps[ramping[0]["name"]], settings["min_gain"], settings["max_numjobs"])
        ramping = [d for d in ramping if probe_verdict.next_numjobs(
            steps[d["name"]], settings["min_gain"], settings["max_numjobs"]) == numjobs]
        if numjobs is None or not ramping:
            break
        outcomes = measure(ramping, numjobs=numjobs)
        for disk in ramping:
            outcome = outcomes[disk["name"]]
            if "error" in outcome:
                errors[disk["name"]] = outcome["error"]
            else:
                steps[disk["name"]].append(_step(numjobs, outcome["measurement"]))
        ramping = [d for d in ramping if d["name"] not in errors]
    return dict((name, {
        "steps": found,
        "saturated_at": probe_verdict.saturated_at(found, settings["min_gain"]),
        "error": errors.get(name),
    }) for name, found in steps.items())


def compare_write_cache(measure, caches_switcher, disks, caches, measured):
    """Measure each disk with its write cache switched the other way, then switch it back.
    The drive is read back after each switch: ``observed`` is the state it reported in the
    half measured as on and in the half measured as off, ``after`` the state it reports
    once switched back."""
    comparisons, switched, other_half = {}, [], []
    try:
        for disk in disks:
            name, cache = disk["name"], caches[disk["name"]]
            if write_cache.state(cache) == write_cache.ABSENT:
                comparisons[name] = {"original": write_cache.ABSENT, "error": None,
                                     "note": write_cache.NO_CACHE + ": nothing to switch"}
                continue
            if cache["enabled"] is None:
                comparisons[name] = {"error": "write cache state unknown; not switched"}
                continue
            switched.append(disk)
            wanted = write_cache.STATES[not cache["enabled"]]
            error, found = caches_switcher.switch_checked(disk, cache["tool"], not cache["enabled"], wanted)
            comparisons[name] = {"observed": {write_cache.state(cache): write_cache.state(cache), wanted: found},
                                 "error": error}
            if error is None:
                other_half.append(disk)
        outcomes = measure(other_half) if other_half else {}
    finally:
        for disk in switched:
            comparisons[disk["name"]].update(caches_switcher.switch_back(disk, caches[disk["name"]]))
    for disk in other_half:
        name, original = disk["name"], caches[disk["name"]]["enabled"]
        outcome = outcomes[name]
        if "error" in outcome:
            comparisons[name]["error"] = outcome["error"]
            continue
        here, other = measured[name]["write_iops"], outcome["measurement"]["write_iops"]
        on_iops, off_iops = (here, other) if original else (other, here)
        comparisons[name].update(on_iops=on_iops, off_iops=off_iops,
                                 faster=probe_verdict.faster_cache_setting(on_iops, off_iops),
                                 original=write_cache.STATES[original])
    return comparisons


def _step(numjobs, measurement):
    return {"numjobs": numjobs, "write_iops": measurement["write_iops"],
            "write_bw_bytes": measurement["write_bw_bytes"]}


# --------------------------------------------------------------------------- the module

def _number(key, value):
    if value is None:
        return None
    return float(value) if "latency" in key else int(value)


def class_thresholds(given, defaults):
    """{class: thresholds} of class_thresholds, each completed from ``defaults`` and checked."""
    classes = {}
    for name, limits in given.items():
        if not isinstance(limits, dict) or set(limits) - set(probe_verdict.DEFAULT_THRESHOLDS):
            raise ValueError("class_thresholds.%s takes only %s" % (name, ", ".join(sorted(probe_verdict.DEFAULT_THRESHOLDS))))
        try:
            found = dict(defaults, **dict((key, _number(key, value)) for key, value in limits.items()))
        except (TypeError, ValueError):
            raise ValueError("class_thresholds.%s: every threshold is a number" % name)
        try:
            probe_verdict.check_thresholds(found)
        except ValueError as exc:
            raise ValueError("class_thresholds.%s: %s" % (name, exc))
        classes[str(name)] = found
    return classes


def main():
    module = AnsibleModule(
        argument_spec=dict(
            devices=dict(type="list", elements="str", required=True),
            overwrite_data=dict(type="list", elements="str", default=[]),
            mode=dict(type="str", choices=sorted(fio_job.MODE_JOBS), default="randwrite"),
            runtime=dict(type="int", default=15),
            min_iops=dict(type="int", default=probe_verdict.DEFAULT_THRESHOLDS["min_iops"]),
            marginal_min_iops=dict(type="int", default=probe_verdict.DEFAULT_THRESHOLDS["marginal_min_iops"]),
            max_p99_sync_latency_ms=dict(
                type="float", default=probe_verdict.DEFAULT_THRESHOLDS["max_p99_sync_latency_ms"]),
            marginal_max_p99_sync_latency_ms=dict(
                type="float", default=probe_verdict.DEFAULT_THRESHOLDS["marginal_max_p99_sync_latency_ms"]),
            class_thresholds=dict(type="dict", default={}),
            device_classes=dict(type="dict", default={}),
            parallel=dict(type="bool", default=True),
            adaptive=dict(type="bool", default=False),
            adaptive_stage_seconds=dict(type="int", default=1),
            adaptive_margin=dict(type="float", default=1.5),
            fio_options=dict(type="dict", default={}),
            region_offset_mib=dict(type="int", default=probe_region.REGION_OFFSET_MIB),
            region_size_mib=dict(type="int", default=probe_region.REGION_SIZE_MIB),
            timeout=dict(type="int"),
            method=dict(type="str", choices=["auto", "fio", "dd"], default="auto"),
            plp_runtime=dict(type="int", default=3),
            deep_queue_seconds=dict(type="int", default=3),
            deep_queue_iodepth=dict(type="int", default=32),
            compare_write_cache=dict(type="bool", default=False),
            write_cache=dict(type="str", choices=["as_is", "disabled"], default="as_is"),
            journal_min_gain=dict(type="float", default=0.1),
            journal_max_numjobs=dict(type="int", default=16),
            cache_max_age=dict(type="int", default=0),
            cache_dir=dict(type="path", default="/var/cache/cephops-osd-tuning/gate"),
            journal_dir=dict(type="path", default="/var/lib/cephops-osd-tuning/probe-journal"),
        ),
        supports_check_mode=True,
    )
    module.run_command_environ_update = {"LC_ALL": "C"}  # output is parsed
    params = module.params
    thresholds = dict((key, params[key]) for key in probe_verdict.DEFAULT_THRESHOLDS)
    fio = module.get_bin_path("fio", required=params["method"] == "fio")

    try:
        probe_verdict.check_thresholds(thresholds)
        classes = class_thresholds(params["class_thresholds"], thresholds)
        overrides = fio_job.allowed_overrides(params["fio_options"], fio, module.run_command)
        options = fio_job.job_options(params["mode"], overrides)
    except ValueError as exc:
        module.fail_json(msg=str(exc))
    for key in ("runtime", "adaptive_stage_seconds", "region_size_mib"):
        if params[key] < 1:
            module.fail_json(msg="%s must be at least 1" % key)
    timeout = params["timeout"] or params["runtime"] + 60
    if not 0 <= params["deep_queue_seconds"] < timeout:
        module.fail_json(msg="deep_queue_seconds must be from 0 (off) to less than timeout (%d)" % timeout)
    if params["deep_queue_iodepth"] < 1:
        module.fail_json(msg="deep_queue_iodepth must be at least 1")
    if params["cache_max_age"] < 0:
        module.fail_json(msg="cache_max_age must not be negative")
    if params["adaptive_margin"] <= 1:
        module.fail_json(msg="adaptive_margin must exceed 1")
    if params["write_cache"] == "disabled" and params["compare_write_cache"]:
        module.fail_json(msg="write_cache=disabled and compare_write_cache exclude each other: the comparison "
                             "measures with the cache on and off itself")

    method = params["method"] if params["method"] != "auto" else ("fio" if fio else "dd")
    module.get_bin_path("wipefs", required=True)
    module.get_bin_path("dd", required=True)
    settings = dict(
        mode=params["mode"], method=method, fio=fio, options=options, runtime=params["runtime"],
        region=probe_region.region_bytes(params["region_offset_mib"], params["region_size_mib"]),
        thresholds=thresholds, parallel=params["parallel"], adaptive=params["adaptive"],
        stage_seconds=params["adaptive_stage_seconds"], margin=params["adaptive_margin"],
        timeout=timeout, plp_runtime=params["plp_runtime"],
        compare_write_cache=params["compare_write_cache"], write_cache=params["write_cache"],
        deep_queue={"seconds": params["deep_queue_seconds"], "iodepth": params["deep_queue_iodepth"]},
        min_gain=params["journal_min_gain"],
        max_numjobs=params["journal_max_numjobs"],
    )

    entries, names = requested(params["devices"])
    unknown = sorted(set(params["device_classes"]) - set(params["devices"]))
    if unknown:
        module.fail_json(msg="device_classes names %s, which devices does not list" % ", ".join(unknown))
    unknown = sorted(set(str(c) for c in params["device_classes"].values()) - set(classes))
    if unknown:
        module.fail_json(msg="device_classes uses the class %s, which class_thresholds does not define"
                         % ", ".join(unknown))
    by_name = {}
    for spec, name, _refused in entries:
        if name and spec in params["device_classes"]:
            found = classes[str(params["device_classes"][spec])]
            if by_name.setdefault(name, found) != found:
                module.fail_json(msg="%s is given twice, in classes of different thresholds" % spec)
    settings["thresholds_by_name"] = by_name
    try:
        overwrite = set(blockdev.resolve_disks(params["overwrite_data"]))
    except blockdev.DeviceError as exc:
        module.fail_json(msg="overwrite_data: %s" % exc)
    if overwrite - set(names):
        module.fail_json(msg="overwrite_data names %s, which devices does not list"
                         % ", ".join("/dev/" + n for n in sorted(overwrite - set(names))))

    outcomes, pending, changed = judge(
        module.run_command, names, overwrite, settings, probe_region.Journal(params["journal_dir"]),
        (params["cache_dir"], params["cache_max_age"]) if params["cache_max_age"] else None,
        module.check_mode, module.warn)
    results = [dict(refused or outcomes[name], given=spec) for spec, name, refused in entries]
    module.exit_json(changed=changed, results=results, pending_restores=pending)


if __name__ == "__main__":
    main()
