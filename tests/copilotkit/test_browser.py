"""A React page on CopilotKit's provider (`<CopilotKit>`) and its real `useInterrupt` (v2) in
Debian's chromium, driven by playwright-core (browser.mjs), built with esbuild (build.mjs):
the user asks for an email, clicks Approve on the card, the email is sent once, the card goes
and does not come back after a reload (issue 39). Twice: with a self-managed `HttpAgent` (the
gateway serves the page) and through CopilotKit's runtime (runtime.mjs serves the page).

`make test` builds the page with the rest of tests/copilotkit (`make copilotkit-tools`); a
page older than its sources is built again here. Screenshots land in
tests/artifacts/copilotkit/.
"""

from __future__ import annotations

import shutil
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest
from temporalio.client import Client
from temporalio.worker import Worker

from ag_ui_temporal.settings import Settings
from tests.conftest import serve_gateway
from tests.copilotkit.driver import HERE, available, copilotkit_runtime, offered, run_script
from tests.effects import EffectLog

ROOT = HERE.parents[1]
ARTIFACTS = ROOT / "tests" / "artifacts" / "copilotkit"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
PAGE = HERE / "page"
BUILT = PAGE / "dist"
SOURCES = [PAGE / "page.jsx", PAGE / "index.html", HERE / "build.mjs", HERE / "package-lock.json"]

pytestmark = pytest.mark.skipif(
    not (available() and Path(CHROMIUM).exists()),
    reason="needs tests/copilotkit/node_modules and chromium (make test installs them)",
)


async def built_page() -> Path:
    """The page's build, made again when it is missing or older than its sources."""
    index = BUILT / "index.html"
    if not index.exists() or index.stat().st_mtime < max(s.stat().st_mtime for s in SOURCES):
        shutil.rmtree(BUILT, ignore_errors=True)
        await run_script("build.mjs", {}, args=[str(BUILT)])
    return BUILT


@pytest.fixture(scope="module")
async def browsed(
    settings: Settings, client: Client, worker: Worker, gateway_url: str
) -> dict[str, Any]:
    dist = await built_page()
    tag = uuid.uuid4().hex[:8]
    shutil.rmtree(ARTIFACTS, ignore_errors=True)
    served = settings.model_copy(update={"web_dist": dist})
    async with (
        serve_gateway(served, client) as page_url,
        copilotkit_runtime(f"{gateway_url}/agents/assistant", dist) as runtime_url,
    ):
        runtime_page = runtime_url.removesuffix("/api/copilotkit")
        scenarios = [
            {
                "name": name,
                "thread": f"ck-browser-{name}-{tag}",
                "url": f"{base}/?thread=ck-browser-{name}-{tag}{query}",
                "text": f"Send an email to {name}-{tag}@example.com saying hi",
                "sent": f"Sent the email to {name}-{tag}@example.com",
            }
            for name, base, query in [
                ("agent", page_url, ""),
                ("runtime", runtime_page, "&runtime=1"),
            ]
        ]
        job = {"chromium": CHROMIUM, "artifacts": str(ARTIFACTS), "scenarios": scenarios}
        result = await run_script("browser.mjs", job)
    return {
        "scenarios": {s["name"]: s for s in scenarios},
        "results": result["results"],
        "tag": tag,
    }


@pytest.mark.parametrize("transport", ["agent", "runtime"])
async def test_approve_sends_once_and_the_card_stays_gone_after_a_reload(
    browsed: dict[str, Any], transport: str, http: httpx.AsyncClient, outbox: EffectLog
) -> None:
    scenario, result = browsed["scenarios"][transport], browsed["results"][transport]
    cards = result.get("cardsAtFailure")
    assert result["ok"], f"{result.get('error')} ({cards} cards; see {result['screenshots']})"
    assert result["reason"] == "tool_call"
    [resume] = result["resumes"]  # one click, one resume
    assert [entry["status"] for entry in resume["resume"]] == ["resolved"]
    assert result["resumeStatus"] == 200
    assert (result["cardsAfter"], result["sentAfter"]) == (0, 1)
    assert (result["cardsAfterReload"], result["sentAfterReload"]) == (0, 1)
    assert await offered(http, scenario["thread"]) == []
    address = f"{transport}-{browsed['tag']}@example.com"
    assert [e["args"]["to"] for e in outbox.effects("sendEmail")].count(address) == 1
    assert result["console"] == []
