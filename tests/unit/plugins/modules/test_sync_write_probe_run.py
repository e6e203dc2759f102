"""sync_write_probe: the result records, the drive's write cache switched
off for a probe or for the comparison, read back and always switched back, and the fio runs
the power-loss verdict takes. The drives answer as hdparm, sdparm and nvme-cli did in the
captured outputs, fio as it did on a loop disk; every command is recorded."""

import pytest

from ansible_collections.cephops.osd_tuning.plugins.module_utils import (
    blockdev, fio_job, probe_region, probe_verdict, write_cache)
from ansible_collections.cephops.osd_tuning.plugins.modules import sync_write_probe

from .test_sync_write_probe_cache import DISK, SETTINGS, stored

DISABLED = dict(SETTINGS, write_cache="disabled")


def test_served_result_carries_the_disk_as_it_is_now_and_says_cached():
    renamed = dict(DISK, name="sdf", path="/dev/sdf")
    result = probe_verdict.cached_result(renamed, stored(), 120)
    assert (result["device"], result["name"], result["verdict"], result["write_iops"]) == ("/dev/sdf", "sdf", "suitable", 8713.0)
    assert (result["cached"], result["cache_age_seconds"], result["written"], result["zeroed"]) == (True, 120, False, None)


class Drives:
    """Drives that keep the write cache state each switch sets, unless told to ignore
    switches, and answer reads with the captured output of their tool. NVMe drives
    ``without_cache`` identify with vwc 0 and refuse the feature as nvme-cli reports it."""

    def __init__(self, fixture_text, states, ignoring=(), without_cache=()):
        self.states = dict(states)  # path: cache on
        self.ignoring = set(ignoring)
        self.without_cache = set(without_cache)
        self.text = fixture_text
        self.calls = []
        self.rescanned = []

    def __call__(self, argv):
        self.calls.append(argv)
        path = next(arg for arg in argv if arg.startswith("/dev/"))
        if path in self.without_cache:
            if argv[:2] == ["nvme", "id-ctrl"]:
                return 0, self.text("nvme/id_ctrl_ns_management.json"), ""
            return 1, "", self.text("nvme/get_feature_6_invalid_field.stderr")
        on = self.states[path]
        if argv[0] == "hdparm" and argv[1] == "-W":
            return 0, self.text("fio/write_cache/hdparm_W_%s.txt" % ("on" if on else "off")), ""
        if argv[0] == "sdparm" and argv[1] == "--get=WCE":
            return 0, self.text("fio/write_cache/sdparm_wce_%s.txt" % ("on" if on else "off")), ""
        if argv[:2] == ["nvme", "get-feature"]:
            return 0, self.text("fio/write_cache/nvme_get_feature_6.txt").replace("0x00000001", "0x%08x" % on), ""
        if argv[:2] == ["nvme", "id-ctrl"]:
            return 0, '{"vid": 6966, "vwc": 7}', ""
        if path not in self.ignoring:
            self.states[path] = argv[1] in ("-W1", "--set=WCE") or argv[-1] == "--value=1"
        return 0, "", ""

    def refresh_kernel_view(self, name):
        self.rescanned.append(name)

    def kernel_view(self, name):
        """sd revalidates the caching mode after a switch; NVMe's view stays what vwc says."""
        disk = [d for d in DRIVES if d["name"] == name][0]
        if disk["transport"] == "nvme":
            return "write back"
        return "write back" if self.states[disk["path"]] else "write through"


DRIVES = (
    {"name": "sdy", "path": "/dev/cephops-sata", "transport": "sata", "write_cache": "write back"},
    {"name": "sdz", "path": "/dev/cephops-scsi", "transport": "scsi", "write_cache": "write back"},
    {"name": "nvme9n1", "path": "/dev/cephops-nvme", "transport": "nvme", "write_cache": "write back"},
)
SWITCH_OFF = {
    "sata": ["hdparm", "-W0", "/dev/cephops-sata"],
    "scsi": ["sdparm", "--clear=WCE", "--quiet", "/dev/cephops-scsi"],
    "nvme": ["nvme", "set-feature", "/dev/cephops-nvme", "--namespace-id=4294967295", "--feature-id=6", "--value=0"],
}
SWITCH_ON = {
    "sata": ["hdparm", "-W1", "/dev/cephops-sata"],
    "scsi": ["sdparm", "--set=WCE", "--quiet", "/dev/cephops-scsi"],
    "nvme": ["nvme", "set-feature", "/dev/cephops-nvme", "--namespace-id=4294967295", "--feature-id=6", "--value=1"],
}


class FailingJournal:
    """A journal whose first record cannot be written: the probe stops before any write."""

    def __init__(self, error):
        self.error = error

    def begin(self, *args):
        raise self.error


def prober(monkeypatch, drives, journal, settings=None):
    monkeypatch.setattr(write_cache, "kernel_view", drives.kernel_view)
    monkeypatch.setattr(write_cache, "refresh_kernel_view", drives.refresh_kernel_view)
    return sync_write_probe.Prober(drives, settings or DISABLED, journal)


def probed(disk):
    return dict(disk, identity="id-" + disk["name"], stable_identity=True, region_nonzero_mib=0)


@pytest.mark.parametrize("disk", DRIVES, ids=lambda d: d["transport"])
def test_disabled_cache_is_switched_off_read_back_and_switched_on_when_the_probe_fails(
        monkeypatch, fixture_text, disk):
    drives = Drives(fixture_text, {disk["path"]: True})
    probe = prober(monkeypatch, drives, FailingJournal(probe_region.JournalError("journal: disk full")))
    result = probe.probe_all([probed(disk)])[disk["name"]]
    switches = [argv for argv in drives.calls if argv in (SWITCH_OFF[disk["transport"]], SWITCH_ON[disk["transport"]])]
    assert switches == [SWITCH_OFF[disk["transport"]], SWITCH_ON[disk["transport"]]]
    # After each sdparm switch sd revalidates the disk, so it sees the cache as the drive has it.
    assert drives.rescanned == ([disk["name"]] * 2 if disk["transport"] == "scsi" else [])
    assert result["write_cache_disabled"] == {"original": "on", "during": "off", "after": "on", "restored": True,
                                              "restore_error": None, "error": None}
    assert result["error"] == "journal: disk full" and drives.states[disk["path"]] is True
    assert probe.written == set()


def test_the_cache_is_switched_back_on_when_the_probe_dies_of_anything(monkeypatch, fixture_text):
    sata = DRIVES[0]
    drives = Drives(fixture_text, {sata["path"]: True})
    probe = prober(monkeypatch, drives, FailingJournal(RuntimeError("unexpected")))
    with pytest.raises(RuntimeError):
        probe.probe_all([probed(sata)])
    assert drives.calls[-2:] == [SWITCH_ON["sata"], ["hdparm", "-W", sata["path"]]]
    assert drives.states[sata["path"]] is True


def test_a_drive_that_ignores_the_switch_is_not_probed_and_still_switched_back(monkeypatch, fixture_text):
    scsi, nvme = DRIVES[1], DRIVES[2]
    drives = Drives(fixture_text, {scsi["path"]: True, nvme["path"]: True}, ignoring=[scsi["path"]])
    journal = FailingJournal(probe_region.JournalError("journal: disk full"))
    results = prober(monkeypatch, drives, journal).probe_all([probed(scsi), probed(nvme)])
    ignored = results[scsi["name"]]
    assert ignored["write_cache_disabled"]["during"] == "on"
    assert ignored["error"] == "write_cache disabled: the drive reports its write cache on after switching it off"
    assert ignored["written"] is False
    assert SWITCH_ON["scsi"] in drives.calls and ignored["write_cache_disabled"]["restored"] is True
    # The other drive went on to the probe, which stopped at the journal.
    assert results[nvme["name"]]["error"] == "journal: disk full"
    assert results[nvme["name"]]["write_cache_disabled"]["during"] == "off"


def test_a_cache_already_off_is_neither_switched_nor_switched_on(monkeypatch, fixture_text):
    sata = DRIVES[0]
    drives = Drives(fixture_text, {sata["path"]: False})
    result = prober(monkeypatch, drives, FailingJournal(probe_region.JournalError("x"))).probe_all(
        [probed(sata)])[sata["name"]]
    assert drives.calls == [["hdparm", "-W", sata["path"]]] * 2
    assert result["write_cache_disabled"] == {"original": "off", "during": "off", "after": "off", "restored": True,
                                              "restore_error": None, "error": None}


def test_an_unreadable_cache_is_not_switched_and_the_disk_not_probed(monkeypatch, fixture_text):
    sata = DRIVES[0]
    drives = Drives(fixture_text, {sata["path"]: True})
    monkeypatch.setattr(write_cache, "kernel_view", drives.kernel_view)
    monkeypatch.setattr(write_cache, "refresh_kernel_view", drives.refresh_kernel_view)
    results = sync_write_probe.Prober(lambda argv: (5, "", "SG_IO: bad/missing sense data"), DISABLED, None).probe_all(
        [probed(sata)])
    record = results[sata["name"]]["write_cache_disabled"]
    assert record["original"] == "unknown" and record["during"] is None
    assert results[sata["name"]]["error"] == "write_cache disabled: write cache state unknown (hdparm): cannot measure with it disabled"


def test_a_drive_without_a_volatile_cache_is_probed_as_it_is_with_the_cache_disabled(monkeypatch, fixture_text):
    nvme = DRIVES[2]
    drives = Drives(fixture_text, {}, without_cache=[nvme["path"]])
    probe = prober(monkeypatch, drives, FailingJournal(probe_region.JournalError("journal: disk full")))
    result = probe.probe_all([probed(nvme)])[nvme["name"]]
    # Its writes are durable already: it went on to the probe, which stopped at the journal.
    assert result["write_cache_disabled"] == {"original": "absent", "during": "absent", "after": "absent",
                                              "restored": True, "restore_error": None, "error": None}
    assert result["error"] == "journal: disk full"
    assert [argv[1] for argv in drives.calls] == ["id-ctrl", "id-ctrl"] and probe.caches.switched_off == []


def test_a_drive_without_a_volatile_cache_has_nothing_to_compare(monkeypatch, fixture_text):
    nvme = DRIVES[2]
    drives = Drives(fixture_text, {}, without_cache=[nvme["path"]])
    probe = prober(monkeypatch, drives, None, dict(SETTINGS, compare_write_cache=True))
    caches = {nvme["name"]: write_cache.read(drives, nvme)}
    assert sync_write_probe.compare_write_cache(probe.measure, probe.caches, [nvme], caches, {}) == {nvme["name"]: {
        "original": "absent", "error": None,
        "note": "the drive reports no volatile write cache (NVMe vwc 0): nothing to switch"}}
    assert [argv[1] for argv in drives.calls] == ["id-ctrl"]


def test_comparison_reads_each_half_back_and_does_not_measure_a_switch_the_drive_ignored(monkeypatch, fixture_text):
    sata = DRIVES[0]
    drives = Drives(fixture_text, {sata["path"]: True}, ignoring=[sata["path"]])
    probe = prober(monkeypatch, drives, None, dict(SETTINGS, compare_write_cache=True))
    caches = {sata["name"]: write_cache.read(drives, sata)}
    comparison = sync_write_probe.compare_write_cache(probe.measure, probe.caches, [sata], caches, {})[sata["name"]]
    assert comparison == {"observed": {"on": "on", "off": "on"}, "after": "on", "restored": True,
                          "restore_error": None,
                          "error": "the drive reports its write cache on after switching it off"}
    assert drives.calls.count(SWITCH_OFF["sata"]) == drives.calls.count(SWITCH_ON["sata"]) == 1


def test_a_switch_back_the_drive_ignores_is_not_called_restored(monkeypatch, fixture_text):
    nvme = DRIVES[2]
    drives = Drives(fixture_text, {nvme["path"]: True})
    probe = prober(monkeypatch, drives, None)
    probe.caches.switched_off.append(nvme)
    results = {nvme["name"]: {"write_cache": write_cache.read(drives, nvme),
                              "write_cache_disabled": {"original": "on"}}}
    drives.states[nvme["path"]] = False
    drives.ignoring.add(nvme["path"])
    probe.caches.restore(results)
    assert results[nvme["name"]]["write_cache_disabled"] == {
        "original": "on", "after": "off", "restored": False,
        "restore_error": "the drive reports its write cache off after switching it back on"}


def test_disks_without_a_drive_cache_of_their_own_are_refused_for_a_disabled_cache(snapshot):
    disks = dict((d["name"], d) for d in blockdev.build_disks(snapshot("host_loop_zoo")))
    outcomes, probe = sync_write_probe._refuse(["loop0"], disks, set(), {}, dict(DISABLED, region=(0, 1)))
    assert probe == [] and outcomes["loop0"]["verdict"] == "refused"
    assert outcomes["loop0"]["reasons"] == [
        "write_cache disabled: the drive's own write cache cannot be switched here (transport loop); only the "
        "kernel's view (queue/write_cache) can, which stops the flushes, not the cache"]
    outcomes, probe = sync_write_probe._refuse(["loop0"], disks, set(), {}, dict(SETTINGS, region=(0, 1)))
    assert outcomes == {} and probe == [disks["loop0"]]


def test_check_mode_says_it_would_switch_the_cache(fixture_text):
    on = write_cache.read(Drives(fixture_text, {DISK["path"]: True}), DISK)
    planned = probe_verdict.planned_result(dict(DISK, region_nonzero_mib=0), DISABLED, ["fio"], on)
    assert planned["reasons"][-1] == "check mode: would switch the drive's write cache off for the probe and back afterwards"
    assert planned["write_cache"] is on and planned["write_cache_disabled"] is None
    nvme = DRIVES[2]
    absent = write_cache.read(Drives(fixture_text, {}, without_cache=[nvme["path"]]), nvme)
    planned = probe_verdict.planned_result(dict(nvme, region_nonzero_mib=0), DISABLED, ["fio"], absent)
    assert planned["reasons"][-1] == ("check mode: the drive reports no volatile write cache (NVMe vwc 0): would "
                                      "measure it as it is, nothing to switch")


def test_a_disk_opened_since_the_inventory_is_refused_before_the_probe_writes(snapshot, monkeypatch):
    disks = dict((d["name"], d) for d in blockdev.build_disks(snapshot("host_loop_zoo")))
    names = sorted(disks)[:2]
    monkeypatch.setattr(blockdev, "open_now", lambda disks: dict(
        (d["name"], blockdev.REASON_OPEN % "postgres (pid 4242)") for d in disks if d["name"] == names[0]))
    probe, outcomes = [disks[n] for n in names], {}
    sync_write_probe._check_open(probe, outcomes)
    assert probe == [disks[names[1]]] and list(outcomes) == [names[0]]
    assert outcomes[names[0]]["verdict"] == "refused"
    assert outcomes[names[0]]["reasons"] == ["open check: open by another process: postgres (pid 4242) since the inventory"]


class Journal:
    """A probe journal that records nothing."""

    def begin(self, *args):
        pass

    def finish(self, identity):
        pass


LOOP = {"name": "loop2", "path": "/dev/loop2", "transport": "loop", "write_cache": "write back"}
FIO_OUTPUT = {"randwrite": "randwrite_fsync_loop.json", "journal": "journal_sync_numjobs1.json",
              "unsynced": "randwrite_nofsync_loop.json"}


def probe_loop(monkeypatch, fixture_text, mode, plp_runtime):
    """The result of one probe of a loop disk and the fio runs it took, fio answering with
    runs captured on a loop disk: the probe's own (2 s) and the one without fsync (1 s)."""
    runs = []

    def run_processes(argvs, timeout, stop_after=None):
        runs.extend(argvs)
        kind = "unsynced" if "--fsync=0" in argvs[0] else mode
        return [(0, fixture_text("fio/" + FIO_OUTPUT[kind]), "", False)]

    monkeypatch.setattr(sync_write_probe.processes, "run_processes", run_processes)
    monkeypatch.setattr(probe_region, "restore_zeros", lambda path, region: 0)
    settings = dict(SETTINGS, mode=mode, options=fio_job.job_options(mode), runtime=2, plp_runtime=plp_runtime,
                    max_numjobs=1)
    result = sync_write_probe.Prober(None, settings, Journal()).probe_all([probed(LOOP)])["loop2"]
    return result, runs


def test_the_power_loss_verdict_of_a_probe_that_fsyncs_takes_no_run_of_its_own(monkeypatch, fixture_text):
    result, runs = probe_loop(monkeypatch, fixture_text, "randwrite", plp_runtime=3)
    assert len(runs) == 1 and "--fsync=1" in runs[0]
    # fio's mean fsync latency of that run, 382.482 us, less the write's completion it holds, 43.234 us.
    assert (result["plp"]["flush_cost_source"], result["plp"]["flush_cost_ms"]) == ("fsync_latency", 0.339)
    assert (result["plp"]["unsynced_iops"], result["plp"]["error"]) == (None, None)


def test_an_o_dsync_probe_gets_its_flush_cost_from_a_run_without_fsync(monkeypatch, fixture_text):
    result, runs = probe_loop(monkeypatch, fixture_text, "journal", plp_runtime=1)
    assert [("--sync=1" in argv, "--fsync=0" in argv and "--sync=0" in argv) for argv in runs] == [
        (True, False), (False, True)]
    plp = result["plp"]
    assert (plp["flush_cost_source"], plp["unsynced_iops"], plp["error"]) == ("run_without_fsync", 52914.1, None)
    result, runs = probe_loop(monkeypatch, fixture_text, "journal", plp_runtime=0)
    assert len(runs) == 1
    assert (result["plp"]["verdict"], result["plp"]["reasons"]) == ("unknown", [sync_write_probe.NO_FLUSH_COST])
