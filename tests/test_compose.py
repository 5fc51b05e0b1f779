"""docker-compose.yml and the Dockerfile, checked offline.

The Compose file matches the Compose Specification, every dependency waits on a
health check or a completed setup job, every command it runs exists (the app's CLI
subcommands, the `temporal` CLI's subcommands and flags, the images' tools), and every
variable it gives the app is a setting. The Dockerfile copies every module the
package installs and its entry point runs the app's CLI.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tomllib
from datetime import timedelta
from pathlib import Path

import pytest
import yaml
from jsonschema import Draft7Validator

from ag_ui_temporal.cli import main as cli_main
from ag_ui_temporal.settings import Settings

ROOT = Path(__file__).parent.parent
COMPOSE_TEXT = (ROOT / "docker-compose.yml").read_text()
COMPOSE = yaml.safe_load(COMPOSE_TEXT)
SERVICES = COMPOSE["services"]
SETTINGS = {name.upper() for name in Settings.model_fields}
# Executables the third-party images ship (checked by hand against their Dockerfiles).
IMAGE_TOOLS = {
    "postgres": {"pg_isready"},
    "temporalio/auto-setup": {"temporal"},  # server image + the temporal CLI
    "ag-ui-temporal": {"python", "ag-ui-temporal"},
}
TEMPORAL_CLI_IMAGE = "temporalio/temporal"  # ENTRYPOINT ["temporal"]


def test_compose_file_matches_the_compose_spec():
    schema = json.loads((Path(__file__).parent / "compose-spec.json").read_text())
    errors = [e.message for e in Draft7Validator(schema).iter_errors(COMPOSE)]
    assert errors == []
    assert {"postgresql", "temporal", "temporal-setup", "temporal-ui", "worker", "gateway"} <= set(
        SERVICES
    )


def test_every_dependency_waits_for_health_or_setup():
    for name, service in SERVICES.items():
        for dependency, condition in service.get("depends_on", {}).items():
            assert dependency in SERVICES, (name, dependency)
            wanted = condition["condition"]
            if wanted == "service_healthy":
                assert "healthcheck" in SERVICES[dependency], (name, dependency)
            else:
                assert wanted == "service_completed_successfully", (name, dependency)
    app = {"worker", "gateway"}
    for name in app:
        assert SERVICES[name]["depends_on"]["temporal-setup"] == {
            "condition": "service_completed_successfully"
        }


def test_worker_and_gateway_use_the_store_on_postgresql_after_its_migrations():
    """The outbox is shared by every worker: its own database on the compose PostgreSQL,
    created and migrated by the one-shot `migrate` before the worker and gateway start."""
    from sqlalchemy import make_url

    migrate = SERVICES["migrate"]
    assert migrate["command"][0] == "migrate" and "--create-database" in migrate["command"]
    assert migrate["depends_on"] == {"postgresql": {"condition": "service_healthy"}}
    for name in ("worker", "gateway", "migrate"):
        url = make_url(SERVICES[name]["environment"]["DATABASE_URL"])
        assert (url.drivername, url.host) == ("postgresql+asyncpg", "postgresql")
        assert url.database not in ("temporal", "temporal_visibility", "postgres")
    for name in ("worker", "gateway"):
        wanted = {"condition": "service_completed_successfully"}
        assert SERVICES[name]["depends_on"]["migrate"] == wanted


def test_the_search_attributes_the_app_needs_are_registered():
    from ag_ui_temporal.workflows.contract import SEARCH_ATTRIBUTES

    command = SERVICES["temporal-setup"]["command"]
    names = [command[i + 1] for i, arg in enumerate(command) if arg == "--name"]
    assert names == [key.name for key in SEARCH_ATTRIBUTES]
    assert {key.indexed_value_type.name for key in SEARCH_ATTRIBUTES} == {"KEYWORD_LIST"}
    assert command[command.index("--type") + 1] == "KeywordList"


def image_of(service: dict) -> str:
    return service["image"].rsplit(":", 1)[0]


def temporal_cli_accepts(args: list[str]) -> None:
    """The bundled `temporal` CLI knows the subcommand and every flag used."""
    first_flag = next(i for i, a in enumerate(args) if a.startswith("-"))
    subcommand = args[:first_flag]
    help_text = subprocess.run(
        [str(Path(sys.executable).parent / "temporal"), *subcommand, "--help"],
        capture_output=True, text=True, timeout=30, check=True,
    ).stdout  # fmt: skip
    # cobra answers an unknown subcommand with its parent's help: check the usage line
    assert f"temporal {' '.join(subcommand)} [flags]" in help_text, (subcommand, help_text)
    help_text += subprocess.run(  # the global and connection flags
        [str(Path(sys.executable).parent / "temporal"), "options"],
        capture_output=True, text=True, timeout=30, check=True,
    ).stdout  # fmt: skip
    for flag in (a for a in args if a.startswith("--")):
        assert flag in help_text, (subcommand, flag)


@pytest.mark.parametrize("name", sorted(SERVICES))
def test_every_command_exists(name: str):
    service = SERVICES[name]
    image = image_of(service)
    if image == TEMPORAL_CLI_IMAGE:
        temporal_cli_accepts(service["command"])
    elif "command" in service:
        assert image == "ag-ui-temporal"
        with pytest.raises(SystemExit) as exit_:
            cli_main([*service["command"], "--help"])
        assert exit_.value.code == 0
    check = service.get("healthcheck", {}).get("test")
    if check:
        assert check[0] == "CMD"
        assert check[1] in IMAGE_TOOLS[image], (name, check)
        if check[1] == "temporal":
            temporal_cli_accepts(check[2:])
        if check[1] == "python":
            compile(check[3], f"{name} healthcheck", "exec")


def test_app_environment_is_settings():
    for name in ("worker", "gateway"):
        assert set(SERVICES[name]["environment"]) <= SETTINGS


def interpolated(value: str, **variables: str) -> str:
    """`value` as Compose gives it to the container (`${VAR:-default}`), `variables` set."""
    found = re.fullmatch(r"\$\{(\w+):-(.*)\}", value)
    return value if found is None else variables.get(found[1]) or found[2]


def test_the_demo_is_served_as_asked_and_your_agents_instead():
    """Worker and gateway serve the same AGENT_MODULES: the demo's module, named here (this
    stack is the demo's, on its public keys), unless `AGENT_MODULES` names a team's modules,
    which then stand alone."""
    (value,) = {SERVICES[name]["environment"]["AGENT_MODULES"] for name in ("worker", "gateway")}

    def served(**variables: str) -> list[str]:
        modules = json.loads(interpolated(value, **variables))
        return Settings(_env_file=None, agent_modules=modules).agent_modules

    assert served() == ["ag_ui_temporal.demo.agents"]
    assert served(AGENT_MODULES='["team.agents"]') == ["team.agents"]


def test_worker_stops_after_its_graceful_shutdown():
    from ag_ui_temporal.durations import parse_duration

    worker = SERVICES["worker"]
    graceful = parse_duration(worker["environment"]["WORKER_GRACEFUL_SHUTDOWN_TIMEOUT"])
    stop = parse_duration(worker["stop_grace_period"])
    assert isinstance(graceful, timedelta) and isinstance(stop, timedelta)
    assert stop > graceful


def test_dockerfile_copies_every_module_and_runs_the_cli():
    lines = [line.split() for line in (ROOT / "Dockerfile").read_text().splitlines()]
    copied = {
        source.rstrip("/")
        for words in lines
        if words and words[0] == "COPY" and not words[1].startswith("--from")
        for source in words[1:-1]
    }
    for source in copied:
        assert (ROOT / source).exists(), source
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "ag_ui_temporal" in copied, copied  # the one tree: every module is in it
    entry = next(json.loads(" ".join(w[1:])) for w in lines if w and w[0] == "ENTRYPOINT")
    assert entry == ["ag-ui-temporal"] and "ag-ui-temporal" in project["project"]["scripts"]
    assert any(w[:2] == ["USER", "10001"] for w in lines)  # not root


def published(service: dict) -> list[str]:
    return [str(port) for port in service.get("ports", [])]


def test_every_port_is_published_on_loopback_only():
    """Temporal's frontend and UI have no authentication, the demo's keys are public."""
    ports = {name: published(service) for name, service in SERVICES.items()}
    assert {"temporal", "temporal-ui", "gateway"} <= {n for n, p in ports.items() if p}
    for name, listed in ports.items():
        for port in listed:
            assert port.startswith("127.0.0.1:") and port.count(":") == 2, (name, port)
    assert "127.0.0.1:" in COMPOSE_TEXT.split("services:")[0]  # and the header says so


def test_the_gateway_runs_a_real_auth_mode_with_keys_that_load():
    from ag_ui_temporal.gateway.auth import exposure_problem, load_api_keys

    gateway = SERVICES["gateway"]
    env = gateway["environment"]
    assert env["AUTH_MODE"] == "api_key"
    (secret,) = gateway["secrets"]
    assert env["API_KEYS_FILE"] == f"/run/secrets/{secret}"
    default = COMPOSE["secrets"][secret]["file"].split(":-", 1)[1].rstrip("}")
    entries = load_api_keys(ROOT / default)
    assert {e.principal for e in entries} >= {"alice", "bob", "carol", "dave", "erin", "dana"}
    image_host = re.findall(r"GATEWAY_HOST=(\S+)", (ROOT / "Dockerfile").read_text())[0]
    settings = Settings(
        _env_file=None,
        auth_mode=env["AUTH_MODE"],
        api_keys_file=ROOT / default,
        gateway_host=env.get("GATEWAY_HOST", image_host),
    )
    assert exposure_problem(settings) is None
    # the same service in `dev` (the old default) would be refused: the check can fail
    dev = settings.model_copy(update={"auth_mode": "dev"})
    assert "GATEWAY_HOST=0.0.0.0" in (exposure_problem(dev) or "")


def test_the_worker_keys_the_audit_trail_with_a_key_made_once_beside_it(tmp_path: Path):
    """The worker (PostgreSQL: it needs a key) reads AUDIT_KEY_FILE from its own volume,
    where the one-shot `audit-key` made it before the worker starts; a re-run keeps it."""
    from ag_ui_temporal.cli.audit import keygen as make_key
    from ag_ui_temporal.store import AuditKeyMissing, audit_keys

    keygen, worker = SERVICES["audit-key"], SERVICES["worker"]
    path = worker["environment"]["AUDIT_KEY_FILE"]
    assert keygen["command"] == ["audit", "keygen", "--output", path]
    assert keygen["restart"] == "on-failure" and keygen["depends_on"] == {}
    volume = f"{next(v.split(':')[0] for v in worker['volumes'])}:{Path(path).parent}"
    assert volume in keygen["volumes"] and volume in worker["volumes"]
    assert worker["depends_on"]["audit-key"] == {"condition": "service_completed_successfully"}
    assert "AUDIT_KEY_FILE" not in SERVICES["gateway"]["environment"]  # it only reads

    made = tmp_path / "audit.key"
    assert make_key(made) == make_key(made) == 0  # the one-shot, and its re-run
    # AGENT_MODULES left out: a list, which only the environment gives as JSON, not keyword
    env = {k: v for k, v in worker["environment"].items() if k != "AGENT_MODULES"}
    env["AUDIT_KEY_FILE"] = str(made)
    keys = audit_keys(Settings(_env_file=None, **{k.lower(): v for k, v in env.items()}))
    assert keys.source == f"AUDIT_KEY_FILE {made}"
    del env["AUDIT_KEY_FILE"]
    with pytest.raises(AuditKeyMissing):  # without it, the worker would not start
        audit_keys(Settings(_env_file=None, **{k.lower(): v for k, v in env.items()}))
