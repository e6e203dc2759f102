"""mclock_seeds: the figure each approved disk of a host is seeded with, from the gate's fleet
document as the json report gives it - the model and firmware's median, a pin, the factor."""

import json

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.cephops.osd_tuning.plugins.filter import gate_report
from ansible_collections.cephops.osd_tuning.plugins.filter.mclock_seeds import mclock_seeds
from ansible_collections.cephops.osd_tuning.plugins.plugin_utils import gate_decision
from gate_samples import SETTINGS, candidate, finished_ok, record, result

MODEL = "INTEL SSDSC2BB016T4"
OTHER = "SAMSUNG MZ7LH480"


def deep(iops):
    return {"write_iops": iops, "iodepth": 32, "bytes": 12288000, "seconds": 0.2, "bounded_by": "bytes", "error": None}


def fleet():
    """Two hosts: three disks of one model and firmware (41k, 43k, 39k), one of another model,
    one unsuitable disk and one of the model without a deep-queue figure."""
    first = record([candidate("/dev/sdb"), candidate("/dev/sdc"), candidate("/dev/sdd"), candidate("/dev/sde")],
                   finished_ok(result("/dev/sdb", "suitable", 9000.0, firmware="G2010140", wwn="0x5001",
                                      deep_queue=deep(41000.0)),
                               result("/dev/sdc", "suitable", 9000.0, model=OTHER, firmware="HXT7404Q",
                                      deep_queue=deep(62000.0)),
                               result("/dev/sdd", "unsuitable", 400.0, deep_queue=deep(2000.0)),
                               result("/dev/sde", "suitable", 9000.0, firmware="G2010140")), host="osd1")
    second = record([candidate("/dev/sdb"), candidate("/dev/sdc")],
                    finished_ok(result("/dev/sdb", "suitable", 9100.0, firmware="G2010140", deep_queue=deep(43000.0)),
                                result("/dev/sdc", "suitable", 8900.0, firmware="G2010140", deep_queue=deep(39000.0))),
                    host="osd2")
    document = gate_decision.fleet_document(["osd1", "osd2"], [first, second], SETTINGS)
    return json.loads(gate_report.to_json(document))  # as the role reads it, from the report


def test_like_disks_get_their_model_and_firmware_s_median_and_a_lone_model_its_own():
    seeds = mclock_seeds(fleet(), "osd1")
    assert [(s["device"], s["iops"]) for s in seeds] == [
        ("/dev/sdb", 41000.0), ("/dev/sdc", 62000.0), ("/dev/sde", 41000.0)]
    assert seeds[0]["why"] == "the median deep-queue IOPS of 3 disks of %s firmware G2010140" % MODEL
    assert (seeds[0]["wwn"], seeds[0]["name"], seeds[0]["serial"]) == ("0x5001", "sdb", "Sb")
    # The same model on the other host: the same figure, whatever each disk measured alone.
    assert [s["iops"] for s in mclock_seeds(fleet(), "osd2")] == [41000.0, 41000.0]


def test_an_unapproved_disk_gets_no_seed_and_a_pin_and_the_factor_win():
    seeds = mclock_seeds(fleet(), "osd1", models=[{"model": "SAMSUNG*", "iops": 30000}], factor=0.5)
    assert "/dev/sdd" not in [s["device"] for s in seeds]
    assert [(s["device"], s["iops"], s["why"]) for s in seeds][1] == (
        "/dev/sdc", 15000.0, "pinned by mclock_capacity_models (SAMSUNG*), times 0.5")


def test_a_host_the_report_does_not_hold_is_an_error_naming_it():
    with pytest.raises(AnsibleFilterError, match="no host osd9"):
        mclock_seeds(fleet(), "osd9")
