"""Derive strict JSON Schemas from CustomResourceDefinitions, for offline checks.

`kubernetes-validate` knows only the built-in kinds. For the custom resources the
manifests use (KEDA `ScaledObject` / `TriggerAuthentication`, the Temporal Worker
Controller's `WorkerDeployment` / `Connection`) `crd-schemas.json` holds each served
version's `openAPIV3Schema`, made strict the way `kubernetes-validate --strict` is:
an object schema with `properties` and no `x-kubernetes-preserve-unknown-fields`
rejects unknown fields. Regenerate from the upstream CRD files:

    python -m tests.deploy.derive_crd_schemas keda.sh_scaledobjects.yaml ... \
        > tests/deploy/crd-schemas.json

Sources (2026-08): kedacore/keda config/crd/bases/keda.sh_{scaledobjects,
triggerauthentications}.yaml at 8b4f083c; temporalio/temporal-worker-controller
helm/temporal-worker-controller-crds/templates/temporal.io_{workerdeployments,
connections}.yaml at 9cd89c07.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import yaml


def strict(schema: Any) -> Any:
    if isinstance(schema, list):
        return [strict(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out = {key: strict(value) for key, value in schema.items() if not key.startswith("x-")}
    if "properties" in out:
        # the key "properties" here is a map of names, not a schema keyword
        out["properties"] = {name: strict(sub) for name, sub in schema["properties"].items()}
    if (
        schema.get("type") == "object"
        and "properties" in schema
        and "additionalProperties" not in schema
        and not schema.get("x-kubernetes-preserve-unknown-fields")
    ):
        out["additionalProperties"] = False
    if schema.get("x-kubernetes-int-or-string"):
        out.pop("type", None)
        out["anyOf"] = [{"type": "integer"}, {"type": "string"}]
    return out


def derive(crd: dict[str, Any]) -> dict[str, Any]:
    group, kind = crd["spec"]["group"], crd["spec"]["names"]["kind"]
    return {
        f"{group}/{version['name']}/{kind}": strict(version["schema"]["openAPIV3Schema"])
        for version in crd["spec"]["versions"]
        if version.get("served")
    }


if __name__ == "__main__":
    schemas: dict[str, Any] = {}
    for path in sys.argv[1:]:
        with open(path) as file:
            for crd in yaml.safe_load_all(file):
                if crd:
                    schemas.update(derive(crd))
    json.dump(schemas, sys.stdout, sort_keys=True, separators=(",", ":"))
