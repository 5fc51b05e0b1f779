"""The reference UI (web/) end to end in a real browser: Debian's chromium, driven by
playwright-core from tests/web/ui.mjs, against the real gateway serving the built UI
(`make web` builds it into the package, where `WEB_DIST` finds it by default).

Besides the session's gateway, three of their own, each in front of a worker: one that
authenticates (`AUTH_MODE=api_key`, the compose demo's setup), one that gives forms 2 s
(`INPUT_EXPIRES_IN`), and the `paced` agent's (its own worker: tests/paced.py). Every
scenario runs in one browser (one launch), each in a fresh context, several at once.

`make test` installs chromium (apt), builds web/ and installs tests/web's Node deps.
Screenshots of every step land in tests/artifacts/ui/.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import uuid
from asyncio.subprocess import PIPE
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import AsyncExitStack, asynccontextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from temporalio.client import Client
from temporalio.worker import Worker

from ag_ui_temporal.demo.offline import PICK_DATE_QUESTION
from ag_ui_temporal.gateway.auth import hash_key
from ag_ui_temporal.gateway.main import create_app
from ag_ui_temporal.gateway.web import WEB_MOUNT
from ag_ui_temporal.settings import PACKAGED_WEB, Settings
from ag_ui_temporal.worker import build_worker
from tests.conftest import serve_gateway
from tests.effects import EffectLog
from tests.paced import PACED, REPLY, paced_stack

ROOT = Path(__file__).parents[2]
HERE = Path(__file__).parent
WEB_DIST = PACKAGED_WEB
ARTIFACTS = ROOT / "tests" / "artifacts" / "ui"
DIRECTORY = ROOT / "ag_ui_temporal" / "demo" / "directory.yaml"
"""The demo's people: the task list shows their names."""
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
SCENARIOS = [
    "email",
    "edits",
    "parallel",
    "quarterly",
    "reload",
    "inbox",
    "tasks",
    "pickDate",
    "confirm",
    "subagent",
]

ready = (
    (WEB_DIST / "index.html").is_file()
    and (HERE / "node_modules" / "playwright-core").is_dir()
    and Path(CHROMIUM).exists()
    and shutil.which("node") is not None
)
pytestmark = pytest.mark.skipif(
    not ready,
    reason="needs the built UI (make web), tests/web/node_modules and chromium (make test does it)",
)


@pytest.fixture(scope="module")
def ui_settings(settings: Settings) -> Settings:
    return settings.model_copy(update={"web_dist": WEB_DIST, "directory_file": DIRECTORY})


@pytest.fixture(scope="module")
async def ui_url(ui_settings: Settings, client: Client, worker: Worker) -> AsyncIterator[str]:
    async with serve_gateway(ui_settings, client) as url:
        yield url


@pytest.fixture(scope="module")
async def tag() -> str:
    return uuid.uuid4().hex[:8]


async def drive(url: str, tag: str, scenarios: list[str], **extra: Any) -> dict[str, Any]:
    """Run ui.mjs's `scenarios` in one browser (one launch); each in a fresh context, on
    `url`'s gateway or its own (`sites`)."""
    job = {
        "url": url,
        "artifacts": str(ARTIFACTS),
        "chromium": CHROMIUM,
        "tag": tag,
        "scenarios": scenarios,
        **extra,
    }
    process = await asyncio.create_subprocess_exec(
        "node", "ui.mjs", cwd=HERE, stdin=PIPE, stdout=PIPE, stderr=PIPE
    )
    stdout, stderr = await asyncio.wait_for(process.communicate(json.dumps(job).encode()), 240)
    assert process.returncode == 0, f"ui.mjs exited {process.returncode}: {stderr[-3000:]!r}"
    results: dict[str, Any] = json.loads(stdout)["results"]
    return results


ALICE = f"ui-key-alice-{uuid.uuid4().hex}"
"""alice's API key on the gateway that authenticates."""


@pytest.fixture(scope="module")
async def ui(
    ui_url: str,
    ui_settings: Settings,
    client: Client,
    executor: ThreadPoolExecutor,
    tag: str,
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, Any]:
    """Every scenario's result: `SCENARIOS` on the session's worker behind `ui_url`, the
    others on gateways of their own."""
    shutil.rmtree(ARTIFACTS, ignore_errors=True)
    keys = tmp_path_factory.mktemp("keys") / "keys.json"
    keys.write_text(json.dumps([{"sha256": hash_key(ALICE), "principal": "alice"}]))
    with_keys = {"auth_mode": "api_key", "api_keys_file": keys}
    expiring = {"input_expires_in": timedelta(seconds=2)}
    async with AsyncExitStack() as stack:
        key_url, expiry_url, paced_url, openai_url = [
            await stack.enter_async_context(served)
            for served in (
                serve_gateway(ui_settings.model_copy(update=with_keys), client),
                serve_gateway(ui_settings.model_copy(update=expiring), client),
                paced_stack(client, ui_settings, executor),
                openai_stack(client, ui_settings, executor),
            )
        ]
        sites = {
            "apiKey": {"url": key_url, "apiKey": ALICE},
            "expired": {"url": expiry_url},
            "streaming": {"url": paced_url, "agent": PACED},
            "stop": {"url": paced_url, "agent": PACED},
            "openai": {"url": openai_url, "agent": "openai"},
            "standing": {"url": openai_url, "agent": STANDING},
            "adk": {"url": openai_url},
        }
        return await drive(ui_url, tag, [*SCENARIOS, *sites], sites=sites)


@asynccontextmanager
async def openai_stack(
    client: Client, settings: Settings, executor: ThreadPoolExecutor
) -> AsyncIterator[str]:
    """A worker serving the OpenAI Agents SDK example of `make run`, the agents that offer
    standing decisions, the tests' ADK agents (and the assistant) and a gateway; yields its
    URL."""
    name = f"openai-{uuid.uuid4().hex[:8]}"
    own = settings.model_copy(
        update={
            "task_queue": name,
            "data_dir": settings.data_dir / name,
            "agent_modules": [*settings.agent_modules, OPENAI_EXAMPLE, STANDING_AGENTS, ADK_AGENTS],
        }
    )
    async with build_worker(client, own, executor), serve_gateway(own, client) as url:
        yield url


OPENAI_EXAMPLE = "ag_ui_temporal.examples.agents.openai_email"
STANDING_AGENTS = "tests.agents.standing_agents"
ADK_AGENTS = "tests.agents.adk_agents"
STANDING = "standing-openai"
"""An OpenAI Agents SDK agent that offers standing decisions (tests/agents/standing_agents.py)."""


def test_the_openai_examples_card_is_approved_in_the_browser(ui: dict[str, Any]) -> None:
    """The OpenAI Agents SDK example's approval: a generic card (the UI binds TanStack's
    `tool-approval` items to the published `sendEmail`, whose approval takes edits; this one's
    takes none), with no edits offered; approving it sends the email and the card goes."""
    result = passed(ui, "openai")
    assert result["kind"] == "generic" and result["editable"] == 0
    assert result["cardsAfter"] == 0


def test_an_adk_agents_free_text_questions_are_answered_in_the_browser(
    ui: dict[str, Any],
) -> None:
    """ADK's `request_input` with a string schema, and a long-running tool's call: each is a
    card with one text field ("Answer"), and what is typed there is the answer the agent reads.
    The cards used to offer only "Done" (an empty object, refused) and "Cancel"."""
    result = passed(ui, "adk")
    assert result["askReason"] == "input_required"
    assert result["longMessage"] == "Reimburse 5 EUR?"
    assert result["cardsAfter"] == 0


def test_an_approval_from_now_on_is_listed_goes_ahead_and_is_revoked_in_the_browser(
    ui: dict[str, Any],
) -> None:
    """ "Approve from now on" on the card: the next email goes without a card, the decision is
    listed under the conversation, and once revoked there the next email asks again."""
    result = passed(ui, "standing")
    assert result["kind"] == "generic"  # TanStack's typed envelope has no room for the offer
    assert result["decisions"] == 1 and "sendEmail" in result["listed"]
    assert "any arguments" in result["listed"]
    assert result["cardsForTheNext"] == 0
    assert result["decisionsAfterRevoke"] == 0 and result["cardsAfterRevoke"] == 1


def passed(ui: dict[str, Any], name: str) -> dict[str, Any]:
    result = ui[name]
    assert result["ok"], f"{name}: {result.get('error')} (screenshots: {result['screenshots']})"
    assert result["screenshots"], name
    return result


async def test_web_ui_is_served_at_root_and_the_api_still_answers(ui_url: str) -> None:
    async with httpx.AsyncClient(base_url=ui_url) as http:
        page = await http.get("/")
        assert page.status_code == 200 and '<div id="root">' in page.text
        assert (await http.get("/agents")).json()
        assert (await http.get("/healthz")).status_code == 200
        assert (await http.get("/agents/nobody/capabilities")).status_code == 404


def test_web_mount_comes_after_every_api_route(ui_settings: Settings) -> None:
    app = create_app(ui_settings, client=None)
    assert getattr(app.routes[-1], "name", None) == WEB_MOUNT
    without = create_app(ui_settings.model_copy(update={"web_dist": None}), client=None)
    assert all(getattr(r, "name", None) != WEB_MOUNT for r in without.routes)


def test_email_approval(ui: dict[str, Any], outbox: EffectLog, tag: str) -> None:
    result = passed(ui, "email")
    assert result["kind"] == "tool-approval"  # the published sendEmail definition binds it
    assert result["cardsAfter"] == 0
    assert result["unlabelled"] == []
    assert f"ada-{tag}@example.com" in {e["args"]["to"] for e in outbox.effects("sendEmail")}


def test_approve_with_edits(ui: dict[str, Any], outbox: EffectLog, tag: str) -> None:
    result = passed(ui, "edits")
    assert result["kind"] == "tool-approval"
    sent = [e["args"] for e in outbox.effects("sendEmail") if tag in e["args"]["to"]]
    assert {"to": f"grace-{tag}@example.com", "subject": "Edited", "body": "hi"} in sent or any(
        args["to"] == f"grace-{tag}@example.com" and args["subject"] == "Edited" for args in sent
    )


def test_parallel_approvals_at_phone_width(ui: dict[str, Any], outbox: EffectLog, tag: str) -> None:
    result = passed(ui, "parallel")
    assert result["count"] == 3 and result["kinds"] == ["tool-approval"] * 3
    assert result["overflow"] is False, "horizontal scrolling at 390 px"
    assert result["cardsAfter"] == 0
    sent = {e["args"]["to"] for e in outbox.effects("sendEmail")}
    assert f"ada-{tag}@example.com" in sent and f"cy-{tag}@example.com" in sent
    assert f"bob-{tag}@example.com" not in sent


def test_quarterly_form_validation_then_fix(ui: dict[str, Any]) -> None:
    result = passed(ui, "quarterly")
    assert result["reason"] == "input_required"
    assert result["countdown"] == 1
    assert result["focusedAfterError"] == "year"
    assert result["unlabelled"] == []


def test_reload_mid_approval_keeps_the_conversation_and_the_card(ui: dict[str, Any]) -> None:
    result = passed(ui, "reload")
    assert result["userMessageKept"] == 1
    assert result["kindAfterReload"] == "tool-approval"


INTERNAL_IDS = ("inbox:", "expense-", "call_", "int-", "chain ")
"""What must never be in a text the task list shows: thread, chain and interrupt ids."""


def test_inbox_task_of_bob_approved_from_his_task_list(ui: dict[str, Any], tag: str) -> None:
    """alice's expense reaches bob's task list as it arrives (no run of his inbox thread, no
    reload); he approves it with a note and the card says so; its history is in sentences."""
    result = passed(ui, "inbox")
    assert result["fetchRuns"] == 0
    facts = result["facts"]
    for fact in ("Step: manager", "From: Alice Adams", "Answer by", f"taxi-{tag}", "Delegate…"):
        assert fact in facts, facts
    assert result["unlabelled"] == []
    assert result["outcome"].startswith("You approved on ")
    assert "Your note: “ok by bob”" in result["outcome"]
    # his background tab still showed it waiting: its answer is refused in plain words
    assert result["staleRefusal"] == "This request has already been answered."
    assert result["staleComment"] == "too expensive"  # what he typed stays
    assert result["backgroundReads"] == 1  # a hidden tab does not poll
    history = "\n".join(result["history"])
    assert "Alice Adams submitted the request." in history
    assert "Step manager started: 1 of Bob Baker must approve." in history
    assert "Bob Baker approved (through the API), note: 'ok by bob'." in history
    assert not any(i in result["visibleText"] for i in INTERNAL_IDS), result["visibleText"]
    assert "[" not in history and "Nothing waits for you." not in result["visibleText"]


def test_two_tasks_at_once_one_approved_one_delegated(ui: dict[str, Any], tag: str) -> None:
    """Both of bob's items are on his list at once; approving one and delegating the other
    (with the picker of allowed delegates) updates each card in place."""
    result = passed(ui, "tasks")
    assert result["bothVisible"] is True
    assert result["waitingStatuses"] == ["waiting", "waiting"]
    assert result["refreshButtons"] == 0
    assert result["unlabelled"] == []
    assert "Step: manager" in result["lunchFacts"] and "12" in result["lunchFacts"]
    assert result["lunchOutcome"].startswith("You approved on ")
    # the allowed delegates by name: not bob himself, not alice (the requester)
    options = result["delegateOptions"]
    assert options[0] == "Choose a person…" and "Dana Diaz" in options
    assert not {"Bob Baker", "Alice Adams", "bob", "alice"} & set(options)
    assert result["noTargetError"] == "Please choose someone to delegate to."
    assert result["trainOutcome"].startswith("You delegated to Dana Diaz on ")
    assert "Bob Baker handed this to you." in result["danaFacts"]
    assert not any(i in result["visibleText"] for i in INTERNAL_IDS), result["visibleText"]


def test_frontend_tool_pick_date(ui: dict[str, Any]) -> None:
    """The agent calls the browser's `pickDate`: a dialog asks (again after a reload);
    Cancel and Confirm are both answers the agent hears."""
    result = passed(ui, "pickDate")
    assert result["question"] == PICK_DATE_QUESTION
    assert result["composerDisabled"] is True
    assert result["unlabelled"] == []
    assert result["dialogsAfter"] == 0


def test_confirmation_no_is_a_false_payload(ui: dict[str, Any]) -> None:
    """A `confirmation` card's "No" resolves with `false` (the spec's denial), not a cancel;
    the agent hears it (what it did not do: tests/gateway/test_confirmation.py)."""
    result = passed(ui, "confirm")
    assert result["reason"] == "confirmation"
    [answer] = result["resume"]
    assert (answer["status"], answer["payload"]) == ("resolved", False)


def test_a_sub_agents_card_says_who_asks(ui: dict[str, Any]) -> None:
    """The assistant's sub-agent `orders` asks to approve `cancelOrder`: the card names it
    (the interrupt's sub-agent metadata) and approving it carries the run to the end."""
    result = passed(ui, "subagent")
    assert result["askedBy"] == "asked by orders"
    assert result["title"] == "Approve cancelOrder?"


EXPECTED_CONSOLE = {"inbox": ["Failed to load resource: the server responded with a status of 409"]}
"""The browser logs every refused request: the inbox scenario's stale tab is refused once."""


def test_no_console_errors(ui: dict[str, Any]) -> None:
    errors = {
        name: [
            line
            for line in ui[name]["console"]
            if not any(line.startswith(known) for known in EXPECTED_CONSOLE.get(name, []))
        ]
        for name in SCENARIOS
    }
    assert not any(errors.values()), errors


# -- against a gateway that authenticates (`AUTH_MODE=api_key`) ------------------------------


def test_sign_in_with_a_key_then_approve_an_email(
    ui: dict[str, Any], outbox: EffectLog, tag: str
) -> None:
    """Without a key the page says to sign in; with alice's key it works as alice."""
    result = passed(ui, "apiKey")
    assert "sign in with an API key" in result["signInMessage"]
    assert result["unlabelled"] == []
    assert result["principal"] == "alice"
    assert result["sentBearer"] and not result["sentXPrincipal"]
    assert result["toolResults"] >= 1 and result["cardsAfter"] == 0
    assert f"key-{tag}@example.com" in {e["args"]["to"] for e in outbox.effects("sendEmail")}
    assert result["inboxThread"] == 1  # the inbox is alice's: the principal /me named
    # the only console errors are the browser logging the refused (401) requests
    assert all("401" in line for line in result["console"]), result["console"]


# -- against a gateway that gives forms 2 s (`INPUT_EXPIRES_IN`) -----------------------------


def test_an_expired_card_does_not_lock_the_composer(ui: dict[str, Any]) -> None:
    """A form whose deadline passed while the page was open says so, the composer stays
    open, and a new message is answered (the UI first acknowledges the expired form with a
    cancel: TanStack sends nothing new while it holds an interrupt)."""
    result = passed(ui, "expired")
    assert "Expired." in result["cardText"] and "Submit" not in result["cardText"]
    assert result["composerDisabled"] is False
    assert result["cardsAfter"] == 0
    [[acknowledged]] = result["resumes"]  # one run: the cancel old clients send too
    assert acknowledged["status"] == "cancelled" and "payload" not in acknowledged
    assert result["cardsAfterReload"] == 0  # hydrate offers nothing to resolve
    assert result["composerDisabledAfterReload"] is False
    assert not result["console"], result["console"]


# -- while an assistant's text streams: the `paced` agent (`?agent=paced`) ------------------


def test_text_is_shown_while_it_streams(ui: dict[str, Any]) -> None:
    """The page holds part of the reply, in a message marked as streaming, before the
    whole of it."""
    result = passed(ui, "streaming")
    assert result["finalText"] == REPLY
    seen = result["seen"]
    partial = [s for s in seen if 0 < s["length"] < len(REPLY)]
    assert partial and all(s["streaming"] for s in partial), seen
    assert len({s["length"] for s in partial}) > 1  # it grew in several steps
    assert not result["console"], result["console"]


def test_stop_keeps_the_text_shown_and_the_chat_goes_on(ui: dict[str, Any]) -> None:
    """Stop ends the run there, the text shown so far kept and marked stopped, and the
    next message is answered."""
    result = passed(ui, "stop")
    stopped = result["stoppedText"]
    assert stopped and REPLY.startswith(stopped) and stopped != REPLY  # cut where it was
    assert result["alerts"] == []  # a stop is no error
    assert result["answer"] == REPLY and result["stopButtons"] == 0
    assert result["stoppedAfterReload"] == stopped  # hydrated with its mark
    assert not result["console"], result["console"]
