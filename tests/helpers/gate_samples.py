"""Candidates, probe results and fleet documents shaped as the disk_gate role produces them."""

from ansible_collections.cephops.osd_tuning.plugins.plugin_utils import gate_decision

FLASH = {"min_iops": 5000, "marginal_min_iops": 1000, "max_p99_sync_latency_ms": 1.0,
         "marginal_max_p99_sync_latency_ms": 5.0}
HDD = {"min_iops": 50, "marginal_min_iops": 20, "max_p99_sync_latency_ms": 100.0,
       "marginal_max_p99_sync_latency_ms": 250.0}
SETTINGS = {"policy": "block", "allow_marginal": False, "hdd_policy": "probe", "thresholds": {"flash": FLASH, "hdd": HDD},
            "cephadm_service_id": "gated"}
HOSTILE = '<script>alert("x")</script> & "Evo" \x01|pipe'


def candidate(device, rotational=False, sources=("devices",), roles=("data",), index=0, links=(), **changes):
    """A candidate as gate_candidates gives it; ``index`` is its entry in each source."""
    found = {"device": device, "given": [device], "sources": list(sources), "roles": list(roles),
             "slots": [[source, index, role] for source, role in zip(sources, roles)],
             "probe": True, "presence": "present", "reasons": [], "links": [device] + list(links), "wwn": None,
             "rotational": rotational, "gate_class": "hdd" if rotational else "flash",
             "thresholds_class": "hdd" if rotational else "flash"}
    found.update(changes)
    return found


def result(device, verdict, iops=None, model="INTEL SSDSC2BB016T4", **extra):
    found = {"device": device, "name": device.rsplit("/", 1)[-1], "model": model, "serial": "S" + device[-1],
             "verdict": verdict, "reasons": ["because %s" % verdict], "write_iops": iops,
             "p99_sync_latency_ms": 0.265 if iops else None, "runtime_ms": 15000 if iops else None,
             "cached": False, "cache_age_seconds": None, "plp": {"verdict": "likely", "reasons": ["fsync costs 0.02 ms"]}}
    found.update(extra)
    return found


def job(status):
    """The registered results of the role's async start task and of async_status for one probe
    job whose status is ``status``; no job at all ({}) when ``status`` is None."""
    if status is None:
        return {"skipped": True}, {"skipped": True}
    return {"ansible_job_id": "j1", "started": 1, "finished": 0}, dict(status, ansible_job_id="j1")


def record(candidates, status, host="osd1", **settings):
    started, finished = job(status)
    return gate_decision.host_record(host, candidates, started, finished, dict(SETTINGS, **settings))


def finished_ok(*results):
    return {"finished": 1, "changed": True, "results": list(results)}


def fleet(records=None, hosts=None):
    if records is None:
        candidates = [candidate("/dev/sdb"), candidate("/dev/sdc"), candidate("/dev/nvme0n1", sources=["dedicated_devices"],
                                                                              roles=["db"])]
        good = record(candidates, finished_ok(
            result("/dev/sdb", "suitable", 8713.0), result("/dev/sdc", "unsuitable", 574.0, model=HOSTILE),
            result("/dev/nvme0n1", "suitable", 36600.0, cached=True, cache_age_seconds=7200)), host="osd1")
        records = [good, None]
    hosts = hosts or ["osd1", "osd<2>"]
    return gate_decision.fleet_document(hosts, records, SETTINGS, "2026-01-01T00:00:00Z")


# Two models of a fleet, as their drives name themselves.
MODEL = "INTEL SSDSC2KB960G8"
OTHER = "SAMSUNG MZ7KH960HAJR-00005"


def fleet_of(disks):
    """The fleet document of disks given as (host, model, firmware, sync IOPS, p99 ms), each
    through the same decisions the role runs; a host's disks are sdb, sdc, ..."""
    hosts = []
    for host, *_rest in disks:
        if host not in hosts:
            hosts.append(host)
    records = []
    for host in hosts:
        mine = [d for d in disks if d[0] == host]
        devices = ["/dev/sd%s" % chr(ord("b") + i) for i in range(len(mine))]
        results = [result(device, "suitable" if iops and iops >= 5000 else "unsuitable", iops, model=model,
                          firmware=firmware, p99_sync_latency_ms=p99, serial="%s-%s" % (host, device[-1]))
                   for device, (_host, model, firmware, iops, p99) in zip(devices, mine)]
        records.append(record([candidate(d) for d in devices], finished_ok(*results), host=host))
    return gate_decision.fleet_document(hosts, records, SETTINGS)


def same_model(iops, p99=None, firmware="XCV10132", model=MODEL):
    """One disk per host of one model."""
    p99 = p99 or [0.3] * len(iops)
    return [("osd-%02d" % i, model, firmware, value, latency) for i, (value, latency) in enumerate(zip(iops, p99))]
