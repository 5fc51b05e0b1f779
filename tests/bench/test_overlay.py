"""The capacity overlay (`deploy/k8s/overlays/capacity`) is what the capacity model gives for
the committed report, and renders to those replicas and CPU requests."""

from __future__ import annotations

import json
from typing import Any

from bench.capacity import RESULTS, limit
from bench.model import read_inputs
from bench.overlay import OVERLAY, kustomization, scenario_model
from tests.deploy.test_k8s import one, render


def model() -> dict[str, Any]:
    inputs, _ = read_inputs(json.loads((RESULTS / "latest.json").read_text()))
    return scenario_model(inputs)


def test_the_overlay_is_the_models_for_the_committed_report():
    written = (OVERLAY / "kustomization.yaml").read_text()
    expected = kustomization(model(), limit("pod_core"))
    assert written == expected, "re-run `python -m bench.capacity --overlay` (make bench does)"


def test_the_overlay_renders_the_models_replicas():
    workers, gateways = model()["workers"], model()["gateways"]
    docs = render(OVERLAY.name)
    scaled = one(docs, "ScaledObject", "ag-ui-temporal-worker")["spec"]
    assert (scaled["minReplicaCount"], scaled["maxReplicaCount"]) == (
        workers["keda"]["minReplicaCount"],
        workers["keda"]["maxReplicaCount"],
    )
    hpa = one(docs, "HorizontalPodAutoscaler", "ag-ui-temporal-gateway")["spec"]
    assert hpa["minReplicas"] == gateways["hpa"]["minReplicas"]
    gateway = one(docs, "Deployment", "ag-ui-temporal-gateway")["spec"]["template"]["spec"]
    assert gateway["containers"][0]["resources"]["requests"]["cpu"] == "1000m"  # 0.7 at 70%
    worker = one(docs, "Deployment", "ag-ui-temporal-worker")["spec"]["template"]["spec"]
    assert worker["containers"][0]["resources"]["requests"]["cpu"] == "700m"
