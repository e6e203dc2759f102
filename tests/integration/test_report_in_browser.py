"""The gate's HTML report as a browser shows it: Chromium (headless) lays the report out, a script
appended to a copy measures each disk label of the SVG chart where the browser drew it, and a
screenshot is taken. Two by-id paths of one maker share their first 49 characters, so a label
cut short makes the two disks look alike."""

import json
import re
import shutil
import subprocess
from html import unescape

from ansible_collections.cephops.osd_tuning.plugins.filter import gate_report
from ansible_collections.cephops.osd_tuning.plugins.plugin_utils import gate_decision

from gate_samples import SETTINGS, candidate, finished_ok, record, result

BROWSER = "chromium-headless-shell"  # Debian's chromium-headless-shell (scripts/env.sh installs it)
PRO = "/dev/disk/by-id/ata-CEPHOPS_SATA_SSD_870_PRO_3840GB_WITH_PLP_CEPHOPS-SSD-0001"
EVO = "/dev/disk/by-id/ata-CEPHOPS_SATA_SSD_870_EVO_500GB_CEPHOPS-SLOW-0001"
# Per chart: each disk label (the texts of the label column) with where it starts and ends as laid
# out, and where the bars start.
MEASURE = """<script>
document.body.setAttribute("data-labels", JSON.stringify([...document.querySelectorAll("svg")].map(svg => ({
  bars: Math.min(...[...svg.querySelectorAll("rect")].map(bar => bar.x.baseVal.value)),
  labels: [...svg.querySelectorAll("text")].filter(text => text.getAttribute("x") === "4").map(label => ({
    text: label.textContent, left: label.getBBox().x, right: label.getBBox().x + label.getComputedTextLength()}))}))));
</script>"""


def browser(*args):
    assert shutil.which(BROWSER), BROWSER + " is missing: scripts/env.sh installs Debian's chromium-headless-shell"
    return subprocess.run([BROWSER, "--no-sandbox", "--disable-gpu", "--hide-scrollbars"] + list(args),
                          capture_output=True, text=True, timeout=120, check=True)


def test_the_chart_shows_each_disk_label_whole_beside_the_bars(tmp_path):
    models = {PRO: "Samsung SSD 870 PRO 3840GB", EVO: "Samsung SSD 870 EVO 500GB"}
    host = record([candidate(PRO), candidate(EVO)], finished_ok(
        result(PRO, "suitable", 8713.0, model=models[PRO]), result(EVO, "unsuitable", 574.0, model=models[EVO])))
    report = gate_report.to_html(gate_decision.fleet_document(["osd1"], [host], SETTINGS, "2026-11-27T00:00:00Z"))
    page = tmp_path / "disk_gate.html"
    page.write_text(report)
    measured = tmp_path / "measured.html"
    measured.write_text(report.replace("</body>", MEASURE + "</body>"))

    dom = browser("--dump-dom", measured.as_uri()).stdout
    chart, = json.loads(unescape(re.search(r'data-labels="([^"]*)"', dom).group(1)))
    assert [label["text"] for label in chart["labels"]] == [PRO + " " + models[PRO], EVO + " " + models[EVO]]
    for label in chart["labels"]:
        assert 0 <= label["left"] and label["right"] < chart["bars"], (label, chart["bars"])

    screenshot = tmp_path / "disk_gate.png"
    browser("--screenshot=%s" % screenshot, "--window-size=1400,900", page.as_uri())
    assert screenshot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and screenshot.stat().st_size > 10000
