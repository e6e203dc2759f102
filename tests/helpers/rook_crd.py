"""Rook's own CephCluster CRD (v1.20.6, in the peer snapshots beside the checkout) as the judge
of the storage section the gate writes: its openAPIV3Schema validates the section, and, as the
API server prunes what a structural schema does not name, a field it does not name fails too."""

import copy
import os

import jsonschema
import pytest
import yaml

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# The peer snapshots beside the checkout.
CRDS = os.path.join(os.path.dirname(REPO_ROOT), "shared", "peers", "rook-v1.20.6", "crds.yaml")


def storage_schema():
    if not os.path.isfile(CRDS):
        if os.environ.get("CI") == "true":
            pytest.fail("Rook's CRDs are missing: looked for %s" % os.path.normpath(CRDS))
        pytest.skip("Rook's CRDs are missing: looked for %s" % os.path.normpath(CRDS))
    with open(CRDS) as handle:
        crd = next(doc for doc in yaml.safe_load_all(handle) if doc and doc["spec"]["names"]["kind"] == "CephCluster")
    schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["storage"]
    return _closed(copy.deepcopy(schema))


def _closed(schema):
    """The schema with every object that names its fields closed to others, as pruning would drop them."""
    if isinstance(schema, dict):
        if schema.get("type") == "object" and "properties" in schema and not schema.get(
                "x-kubernetes-preserve-unknown-fields"):
            schema.setdefault("additionalProperties", False)
        for value in schema.values():
            _closed(value)
    elif isinstance(schema, list):
        for value in schema:
            _closed(value)
    return schema


def validate(text):
    """The storage section of TEXT (a YAML document with a ``storage`` key), checked by Rook's schema."""
    document = yaml.safe_load(text)
    assert list(document) == ["storage"], document
    jsonschema.validate(document["storage"], storage_schema())
    return document["storage"]
