"""The Kubernetes overlay the capacity model implies (`deploy/k8s/overlays/capacity`).

`make bench` and `python -m bench.capacity --overlay` write it from a report, for the
scenario `SCENARIO`: the KEDA bounds of the workers, the gateways' HPA, and the CPU
requests they assume (a pod uses at most `pod_core` of a core: one Python process).
`tests/bench/test_overlay.py` holds the committed overlay to the committed report.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from bench.model import Inputs

OVERLAY = Path(__file__).resolve().parent.parent / "deploy" / "k8s" / "overlays" / "capacity"
SCENARIO = {"parked": 1e6, "resumes": 100.0, "streams": 10_000.0, "runs": 200.0}
"""A million parked threads, 100 resumes/s, 10,000 streams watching the ~200 runs going on."""
CPU_REQUEST = "/spec/template/spec/containers/0/resources/requests/cpu"


def kustomization(model: dict[str, Any], pod_core: float) -> str:
    """The overlay's kustomization.yaml: `../keda` with the model's replicas patched in."""
    keda, hpa = model["workers"]["keda"], model["gateways"]["hpa"]
    gateway_cpu = round(pod_core * 1000 * 100 / hpa["averageUtilization"])  # HPA scales at it
    patches = [
        _patch("ScaledObject", "ag-ui-temporal-worker", {
            "/spec/minReplicaCount": keda["minReplicaCount"],
            "/spec/maxReplicaCount": keda["maxReplicaCount"],
        }),
        _patch("Deployment", "ag-ui-temporal-worker", {CPU_REQUEST: f"{round(pod_core * 1000)}m"}),
        _patch("HorizontalPodAutoscaler", "ag-ui-temporal-gateway", {
            "/spec/minReplicas": hpa["minReplicas"],
            "/spec/maxReplicas": hpa["maxReplicas"],
            "/spec/metrics/0/resource/target/averageUtilization": hpa["averageUtilization"],
        }),
        _patch("Deployment", "ag-ui-temporal-gateway", {CPU_REQUEST: f"{gateway_cpu}m"}),
    ]  # fmt: skip
    s = model["scenario"]
    header = (
        "# Written by `make bench` (or `python -m bench.capacity --overlay`) from\n"
        f"# bench/results/latest.json: {s['parked']:,.0f} parked threads, "
        f"{s['resumes_per_s']:g} resumes/s,\n# {s['streams']:,.0f} streams following "
        f"{s['followed_runs']:,.0f} running runs (docs/capacity.md). Not edited by hand.\n"
    )
    document = {
        "apiVersion": "kustomize.config.k8s.io/v1beta1",
        "kind": "Kustomization",
        "resources": ["../keda"],
        "patches": patches,
    }
    return header + yaml.dump(document, Dumper=_Dumper, sort_keys=False, width=100)


class _Dumper(yaml.SafeDumper):
    """Block literals (`|`) for the patches, as the other overlays write them."""


def _literal(dumper: yaml.SafeDumper, text: str) -> yaml.Node:
    style = "|" if "\n" in text else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", text, style=style)


_Dumper.add_representer(str, _literal)


def _patch(kind: str, name: str, values: dict[str, Any]) -> dict[str, Any]:
    ops = [{"op": "replace", "path": path, "value": value} for path, value in values.items()]
    return {"target": {"kind": kind, "name": name}, "patch": yaml.safe_dump(ops, sort_keys=False)}


def write(model: dict[str, Any], pod_core: float, directory: Path = OVERLAY) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "kustomization.yaml"
    path.write_text(kustomization(model, pod_core))
    return path


def scenario_model(inputs: Inputs) -> dict[str, Any]:
    from bench.capacity import build

    s = SCENARIO
    return build(inputs, s["parked"], s["resumes"], s["streams"], s["runs"])
