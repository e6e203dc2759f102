"""Fleet report scale: the controller-side report of 1,000 hosts with 12 disks each.

Builds per-host records from synthetic probe results (a mix of verdicts, as a real fleet
would give) with the same functions the disk_gate role calls, then the fleet document and
every format the role writes (JSON, JUnit, Markdown, HTML with SVG, cephadm spec). Prints
medians of wall time and the peak memory of the process. Targets: under 10 s and 300 MB.

usage: bench/run.sh fleet_report [--hosts 1000] [--disks 12] [--repeats 3]
"""

import argparse
import resource
import time

import benchlib  # noqa: F401  (puts the collection on the path via the test environment)

from ansible_collections.cephops.osd_tuning.plugins.filter import gate_report
from ansible_collections.cephops.osd_tuning.plugins.plugin_utils import gate_decision

VERDICTS = ("suitable", "suitable", "suitable", "marginal", "unsuitable", "refused")
SETTINGS = {"policy": "block", "allow_marginal": False, "hdd_policy": "probe", "cephadm_service_id": "gated",
            "thresholds": {"flash": {"min_iops": 5000, "marginal_min_iops": 1000, "max_p99_sync_latency_ms": 1.0,
                                     "marginal_max_p99_sync_latency_ms": 5.0},
                           "hdd": {"min_iops": 50, "marginal_min_iops": 20, "max_p99_sync_latency_ms": 100.0,
                                   "marginal_max_p99_sync_latency_ms": 250.0}}}


def host_records(hosts, disks):
    records = []
    for index in range(hosts):
        devices = ["/dev/disk/by-id/wwn-0x5000c500%08x" % (index * disks + d) for d in range(disks)]
        # Shaped as gate_candidates gives them.
        candidates = [{"device": dev, "given": [dev], "sources": ["devices"], "roles": ["data"], "rotational": False,
                       "slots": [["devices", d, "data"]], "thresholds_class": "flash", "probe": True, "presence": "present",
                       "reasons": [], "links": [dev], "wwn": None} for d, dev in enumerate(devices)]
        results = [{"device": dev, "name": "sd%s" % chr(97 + d), "model": "SYNTHETIC SSD", "serial": "S%d" % d,
                    "verdict": VERDICTS[(index + d) % len(VERDICTS)], "reasons": ["synthetic"],
                    "write_iops": 500.0 + 997 * ((index + d) % 40), "p99_sync_latency_ms": 0.3,
                    "runtime_ms": 15000, "cached": False, "cache_age_seconds": None, "plp": {"verdict": "unknown", "reasons": ["synthetic"]}}
                   for d, dev in enumerate(devices)]
        # The registered results of the role's async start task and of async_status.
        started = {"ansible_job_id": "j1", "started": 1, "finished": 0}
        finished = {"finished": 1, "changed": True, "results": results, "ansible_job_id": "j1"}
        records.append(gate_decision.host_record("osd-%04d" % index, candidates, started, finished,
                                                 SETTINGS))
    return records


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    parser.add_argument("--hosts", type=int, default=1000)
    parser.add_argument("--disks", type=int, default=12)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    timings, sizes = {}, {}
    for _repeat in range(args.repeats):
        start = time.perf_counter()
        records = host_records(args.hosts, args.disks)
        document = gate_decision.fleet_document(["osd-%04d" % i for i in range(args.hosts)], records, SETTINGS)
        timings.setdefault("records + fleet document", []).append(time.perf_counter() - start)
        total = time.perf_counter() - start
        for name, build in (("json", gate_report.to_json), ("junit", gate_report.to_junit),
                            ("markdown", gate_report.to_markdown), ("html", gate_report.to_html),
                            ("cephadm spec", gate_report.to_cephadm_spec)):
            begin = time.perf_counter()
            sizes[name] = len(build(document))
            elapsed = time.perf_counter() - begin
            timings.setdefault(name, []).append(elapsed)
            total += elapsed
        timings.setdefault("total", []).append(total)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    rows = [(name, "%.2f" % benchlib.median(values), "%.1f" % (sizes[name] / 1024.0 ** 2) if name in sizes else "")
            for name, values in timings.items()]
    met = benchlib.median(timings["total"]) < 10 and peak_mb < 300
    benchlib.table("Fleet report: %d hosts x %d disks (median of %d)" % (args.hosts, args.disks, args.repeats),
                   ("step", "seconds", "output MB"), rows,
                   notes=["Peak memory of the process: %.0f MB. Targets (under 10 s, under 300 MB): %s."
                          % (peak_mb, "met" if met else "**missed**")])


if __name__ == "__main__":
    main()
