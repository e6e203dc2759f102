"""The one record store: load, keep the first original, save atomically, drop when empty."""

import json
import os

import pytest

from ansible_collections.cephops.osd_tuning.plugins.module_utils import records

SECTIONS = {"disks": {}, "removed": []}


class Module:
    """What records.save needs of AnsibleModule."""

    @staticmethod
    def atomic_move(src, dest):
        os.rename(src, dest)


def test_no_file_is_an_empty_record(tmp_path):
    assert records.load(str(tmp_path / "none.json"), SECTIONS) == {"disks": {}, "removed": []}
    (tmp_path / "empty.json").write_text("\n")
    assert records.load(str(tmp_path / "empty.json"), SECTIONS) == {"disks": {}, "removed": []}


@pytest.mark.parametrize("text,message", [
    ('{"disks": []}', "not a record of this module (disks is not a mapping)"),
    ('{"removed": {}}', "not a record of this module (removed is not a list)"),
    ('[1, 2]', "not a record (a JSON object)"),
    ('{"disks": ', "not JSON"),
])
def test_other_json_is_refused(tmp_path, text, message):
    path = tmp_path / "other.json"
    path.write_text(text)
    with pytest.raises(records.RecordError, match=r"^%s: %s" % (path, message.replace("(", r"\(").replace(")", r"\)"))):
        records.load(str(path), SECTIONS)


def test_the_first_original_stays():
    section = {}
    assert records.keep_first(section, "wwn:0x5000", {"scheduler": "mq-deadline"}) == {"scheduler": "mq-deadline"}
    assert records.keep_first(section, "wwn:0x5000", {"scheduler": "none"}) == {"scheduler": "mq-deadline"}
    assert section == {"wwn:0x5000": {"scheduler": "mq-deadline"}}


def test_save_writes_json_and_creates_the_directory(tmp_path):
    path = tmp_path / "var" / "lib" / "record.json"
    records.save(Module(), str(path), {"disks": {"name:loop3": {"method": "partition"}}, "removed": []})
    assert json.loads(path.read_text()) == {"disks": {"name:loop3": {"method": "partition"}}, "removed": []}
    assert [p.name for p in path.parent.iterdir()] == ["record.json"]  # no staging file left


def test_the_file_goes_once_every_section_is_empty(tmp_path):
    path = tmp_path / "record.json"
    records.save(Module(), str(path), {"disks": {"a": 1}, "removed": []})
    records.save(Module(), str(path), {"disks": {}, "removed": []})
    assert not path.exists()
    records.save(Module(), str(path), {})  # nothing to remove: no error
    assert not path.exists()
