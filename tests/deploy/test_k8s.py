"""deploy/k8s: every overlay renders with kustomize and is valid, strictly, offline.

Built-in kinds go through `kubernetes-validate --strict`; custom resources (KEDA,
the Temporal Worker Controller) through strict schemas derived from their CRDs
(`derive_crd_schemas.py`). Then the properties the rollout story depends on.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from datetime import timedelta
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml
from jsonschema import Draft7Validator

from ag_ui_temporal.durations import parse_duration
from ag_ui_temporal.settings import Settings

ROOT = Path(__file__).parents[2]
K8S = ROOT / "deploy" / "k8s"
OVERLAYS = sorted(path.name for path in (K8S / "overlays").iterdir())
BIN = Path(sys.executable).parent
CRD_SCHEMAS = json.loads((Path(__file__).parent / "crd-schemas.json").read_text())
SETTINGS = {name.upper() for name in Settings.model_fields}


@cache
def render(overlay: str) -> list[dict[str, Any]]:
    out = subprocess.run(
        [str(BIN / "kubectl"), "kustomize", str(K8S / "overlays" / overlay)],
        capture_output=True, text=True, check=True, timeout=60,
    )  # fmt: skip
    return [doc for doc in yaml.safe_load_all(out.stdout) if doc]


def crd_key(doc: dict[str, Any]) -> str:
    return f"{doc['apiVersion']}/{doc['kind']}"


def containers(doc: dict[str, Any], kind: str = "containers") -> list[dict[str, Any]]:
    return doc.get("spec", {}).get("template", {}).get("spec", {}).get(kind, [])


def one(docs: list[dict[str, Any]], kind: str, name: str) -> dict[str, Any]:
    (found,) = [d for d in docs if d["kind"] == kind and d["metadata"]["name"] == name]
    return found


def test_the_overlays_are_there():
    assert {"dev", "production", "keda", "worker-controller"} <= set(OVERLAYS)


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_overlay_is_valid_kubernetes(overlay: str, tmp_path: Path):
    docs = render(overlay)
    builtin = [doc for doc in docs if "." not in doc["apiVersion"].split("/")[0]
               or doc["apiVersion"].split("/")[0].endswith(".k8s.io")]  # fmt: skip
    custom = [doc for doc in docs if doc not in builtin]
    rendered = tmp_path / f"{overlay}.yaml"
    rendered.write_text(yaml.safe_dump_all(builtin))
    result = subprocess.run(
        [str(BIN / "kubernetes-validate"), "--strict", "--quiet", str(rendered)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    assert "WARN" not in result.stdout + result.stderr, result.stdout + result.stderr
    for doc in custom:
        assert crd_key(doc) in CRD_SCHEMAS, f"no schema for {crd_key(doc)}"
        errors = [
            f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
            for e in Draft7Validator(CRD_SCHEMAS[crd_key(doc)]).iter_errors(doc)
        ]
        assert errors == [], f"{doc['kind']}/{doc['metadata']['name']}: {errors}"


def test_crd_schemas_are_strict():
    """The derived schemas reject an unknown field, as --strict does for built-ins."""
    scaled = {"apiVersion": "keda.sh/v1alpha1", "kind": "ScaledObject",
              "metadata": {"name": "x"}, "spec": {"scaleTargetRef": {"name": "w"},
                                                  "triggers": [], "minReplicas": 2}}  # fmt: skip
    errors = list(Draft7Validator(CRD_SCHEMAS[crd_key(scaled)]).iter_errors(scaled))
    assert any("minReplicas" in e.message for e in errors)


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_every_env_var_is_a_setting(overlay: str):
    for doc in render(overlay):
        for container in containers(doc) + containers(doc, "initContainers"):
            names = {env["name"] for env in container.get("env", [])}
            assert names <= SETTINGS, f"{doc['kind']}: {names - SETTINGS}"
        if doc["kind"] == "ConfigMap":
            assert set(doc["data"]) <= SETTINGS, set(doc["data"]) - SETTINGS


def mebibytes(quantity: str) -> int:
    return int(quantity[:-2]) * {"Mi": 1, "Gi": 1024}[quantity[-2:]]


def worker_pods(docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [d for d in docs if d["kind"] in ("Deployment", "WorkerDeployment")
            and d["metadata"]["name"] == "ag-ui-temporal-worker"]  # fmt: skip


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_worker_drains_before_it_is_killed(overlay: str):
    """Probes hit the worker's health endpoint; SIGKILL comes after the graceful timeout."""
    (worker,) = worker_pods(render(overlay))
    pod = worker["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    env = {e["name"]: e.get("value") for e in container["env"]}
    graceful = parse_duration(env["WORKER_GRACEFUL_SHUTDOWN_TIMEOUT"])
    assert isinstance(graceful, timedelta)
    assert pod["terminationGracePeriodSeconds"] > graceful.total_seconds()
    port = int(env["WORKER_HEALTH_PORT"])
    assert env["WORKER_HEALTH_HOST"] == "0.0.0.0"
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert container["livenessProbe"]["httpGet"]["path"] == "/livez"
    named = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert named[container["readinessProbe"]["httpGet"]["port"]] == port
    # the workflow cache is what the memory limit pays for (~0.3 MiB a thread + process)
    limit_mib = mebibytes(container["resources"]["limits"]["memory"])
    assert 150 + 0.3 * int(env["WORKER_MAX_CACHED_WORKFLOWS"]) <= 0.9 * limit_mib


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_availability(overlay: str):
    docs = render(overlay)
    pdbs = {d["metadata"]["name"] for d in docs if d["kind"] == "PodDisruptionBudget"}
    assert pdbs == {"ag-ui-temporal-worker", "ag-ui-temporal-gateway"}
    hpa = one(docs, "HorizontalPodAutoscaler", "ag-ui-temporal-gateway")
    assert hpa["spec"]["minReplicas"] >= 2
    assert one(docs, "Service", "ag-ui-temporal-gateway")
    for scaled in (d for d in docs if d["kind"] == "ScaledObject"):
        assert scaled["spec"]["minReplicaCount"] >= 2  # timers need a live poller
        (trigger,) = scaled["spec"]["triggers"]
        assert trigger["type"] == "temporal"
    (worker,) = worker_pods(docs)
    assert worker["spec"]["replicas"] >= 2


def test_worker_controller_overlay_replaces_the_worker_deployment():
    docs = render("worker-controller")
    kinds = {(d["kind"], d["metadata"]["name"]) for d in docs}
    assert ("Deployment", "ag-ui-temporal-worker") not in kinds
    assert ("WorkerDeployment", "ag-ui-temporal-worker") in kinds
    assert ("Connection", "ag-ui-temporal") in kinds


# -- identity fails closed --------------------------------------------------------------------

IMAGE_GATEWAY_HOST = re.findall(r"GATEWAY_HOST=(\S+)", (ROOT / "Dockerfile").read_text())[0]
"""The image's own default (its ENV), used when a pod does not set GATEWAY_HOST."""
SECRET_SETTINGS = {"JWT_SECRET", "TEMPORAL_API_KEY", "DATABASE_URL", "AUDIT_KEY"}


def gateway_containers(docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Containers of the image that run the gateway (its default command when none is given)."""
    return [
        c for d in docs for c in containers(d)
        if c["image"].rsplit(":", 1)[0].endswith("ag-ui-temporal")
        and (c.get("args") or ["gateway"])[0] == "gateway"
    ]  # fmt: skip


SECRET_SHAPES = {"DATABASE_URL": "postgresql+asyncpg://user:password@db/{}"}
"""A Secret's value where the setting checks its shape: a stand-in of that shape."""


def container_env(docs: list[dict[str, Any]], container: dict[str, Any]) -> dict[str, str]:
    """The container's environment: its ConfigMaps, then `env` (Secret values as markers, in
    the shape the setting takes: `SECRET_SHAPES`)."""
    maps = {d["metadata"]["name"]: d.get("data", {}) for d in docs if d["kind"] == "ConfigMap"}
    env: dict[str, str] = {}
    for source in container.get("envFrom", []):
        if "configMapRef" in source:
            env.update(maps[source["configMapRef"]["name"]])
    for entry in container.get("env", []):
        secret = entry.get("valueFrom", {}).get("secretKeyRef")
        marker = f"<secret {secret['name']}>" if secret else None
        shape = SECRET_SHAPES.get(entry["name"], "{}")
        env[entry["name"]] = shape.format(marker) if marker else entry["value"]
    return env


def exposure(env: dict[str, str]) -> tuple[Settings, str | None]:
    """The gateway's settings from `env` (defaults as the image has them) and why it would
    refuse to start, if it would."""
    from ag_ui_temporal.gateway.auth import exposure_problem

    defaults = {"AUTH_MODE": "dev", "GATEWAY_HOST": IMAGE_GATEWAY_HOST}  # whatever this shell has
    with pytest.MonkeyPatch.context() as patch:  # parsed as the process parses its environment
        for name, value in {**defaults, **env}.items():
            patch.setenv(name, value)
        settings = Settings(_env_file=None)
    return settings, exposure_problem(settings)


def test_the_exposure_check_catches_a_default_gateway():
    """The check below can fail: the image's defaults alone (dev on 0.0.0.0) are refused."""
    assert IMAGE_GATEWAY_HOST == "0.0.0.0"
    assert exposure({})[1] is not None
    assert exposure({"AUTH_MODE": "none"})[1] is not None
    assert exposure({"AUTH_MODE": "dev", "GATEWAY_HOST": "127.0.0.1"})[1] is None


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_no_gateway_could_start_trusting_its_callers(overlay: str):
    """Every gateway runs a real auth mode (a loopback-only one could not serve a pod),
    with its key from a Secret, never from the manifests."""
    docs = render(overlay)
    gateways = gateway_containers(docs)
    assert gateways, f"{overlay}: no gateway container found"
    for container in gateways:
        env = container_env(docs, container)
        settings, problem = exposure(env)
        assert problem is None, f"{overlay}: {problem}"
        assert settings.auth_mode in ("jwt", "api_key")
        for name in SECRET_SETTINGS & set(env):
            assert "<secret " in env[name], f"{overlay}: {name} is not from a Secret"
    for doc in docs:
        if doc["kind"] == "ConfigMap":
            assert not SECRET_SETTINGS & set(doc.get("data", {})), doc["metadata"]["name"]


@pytest.mark.parametrize("overlay", ["production", "keda", "worker-controller"])
def test_production_keeps_metrics_and_docs_off_the_public_port(overlay: str):
    docs = render(overlay)
    for container in gateway_containers(docs):
        settings, _ = exposure(container_env(docs, container))
        assert settings.metrics_public is False and settings.docs_public is False
        assert not settings.public(settings.metrics_public)


# -- the store --------------------------------------------------------------------------------


def app_pods(docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The worker's and the gateway's pod templates (Deployments or a WorkerDeployment)."""
    names = {"ag-ui-temporal-worker", "ag-ui-temporal-gateway"}
    return [d for d in docs if d["kind"] in ("Deployment", "WorkerDeployment")
            and d["metadata"]["name"] in names]  # fmt: skip


def secret_ref(container: dict[str, Any], name: str) -> dict[str, Any] | None:
    (entry,) = [e for e in container.get("env", []) if e["name"] == name] or [{}]
    return entry.get("valueFrom", {}).get("secretKeyRef")


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_worker_and_gateway_use_the_store_from_a_secret_after_its_migrations(overlay: str):
    """Every worker and gateway pod gets DATABASE_URL from a Secret, and runs the store's
    migrations (`ag-ui-temporal migrate`, same image, same Secret) before it starts."""
    pods = app_pods(render(overlay))
    kinds = {d["metadata"]["name"] for d in pods}
    assert kinds == {"ag-ui-temporal-worker", "ag-ui-temporal-gateway"}, overlay
    for doc in pods:
        (app,) = containers(doc)
        (migrate,) = containers(doc, "initContainers")
        assert migrate["image"] == app["image"] and migrate["args"] == ["migrate"]
        wanted = {"name": "ag-ui-temporal-db", "key": "DATABASE_URL"}
        assert secret_ref(app, "DATABASE_URL") == wanted, doc["metadata"]["name"]
        assert secret_ref(migrate, "DATABASE_URL") == wanted, doc["metadata"]["name"]


# -- the audit key ----------------------------------------------------------------------------


def worker_containers(docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [c for d in worker_pods(docs) for c in containers(d) if c.get("args") == ["worker"]]


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_every_worker_keys_the_audit_trail_with_a_key_from_a_secret(overlay: str):
    """AUDIT_KEY from a Secret (never a manifest, never the database): a worker without it
    would refuse to start (its store is PostgreSQL, its AUTH_MODE jwt), and with it starts."""
    from ag_ui_temporal.store import AuditKeyMissing, audit_keys

    docs = render(overlay)
    workers = worker_containers(docs)
    assert workers, overlay
    for container in workers:
        wanted = {"name": "ag-ui-temporal-audit", "key": "AUDIT_KEY"}
        assert secret_ref(container, "AUDIT_KEY") == wanted, overlay
        # no JWT_SECRET, whatever the AUTH_MODE (the shared ConfigMap's jwt): the gateway's to
        # check, and the worker's settings load without it
        env = container_env(docs, container)
        assert "JWT_SECRET" not in env, overlay
        with pytest.MonkeyPatch.context() as patch:
            for name, value in env.items():
                patch.setenv(name, value)
            patch.delenv("AUDIT_KEY")
            with pytest.raises(AuditKeyMissing):
                audit_keys(Settings(_env_file=None))
            patch.setenv("AUDIT_KEY", "a stand-in for the Secret's 32-byte key")
            assert audit_keys(Settings(_env_file=None)).source == "AUDIT_KEY"


# -- the agents served ------------------------------------------------------------------------


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_no_overlay_serves_the_demo(overlay: str):
    """The worker and the gateway serve the agents of the same `AGENT_MODULES` (the shared
    ConfigMap's: a team's own modules), and nothing renders the demo's: the demo assistant is
    served only where a deployment names it (`make run`, compose), never here."""
    docs = render(overlay)
    served = {}
    for doc in app_pods(docs):
        (app,) = containers(doc)
        env = container_env(docs, app)
        served[doc["metadata"]["name"]] = Settings(
            _env_file=None, agent_modules=json.loads(env["AGENT_MODULES"])
        ).agent_modules
    assert set(served) == {"ag-ui-temporal-worker", "ag-ui-temporal-gateway"}, overlay
    assert served["ag-ui-temporal-worker"] == served["ag-ui-temporal-gateway"], overlay
    assert [m for m in served["ag-ui-temporal-worker"] if m.startswith("ag_ui_temporal.")] == []
    assert "ag_ui_temporal.demo" not in yaml.safe_dump_all(docs)
