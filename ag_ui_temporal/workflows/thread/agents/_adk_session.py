"""A Google ADK agent's session, kept in the thread's state between runs (`adk_agent`): ADK's
own `Session` (its events) as JSON under `SESSION`, within `SESSION_BYTES`, and the one-session
service a run's `Runner` reads it from."""

from __future__ import annotations

from typing import Any, Final

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from google.adk.sessions import BaseSessionService, Session
    from google.adk.sessions.base_session_service import GetSessionConfig, ListSessionsResponse

    from ag_ui_temporal.workflows.contract import THREAD_WINDOW_BYTES, json_size

SESSION: Final = "adk:session"
"""`ThreadState.agent_data` key: ADK's `Session`, as JSON."""
SESSION_BYTES: Final = THREAD_WINDOW_BYTES
"""The most the session may take (its JSON): its oldest invocations are dropped beyond it; an
invocation over it alone is not carried on, and does not pause (`adk_agent._not_paused`)."""
APP: Final = "ag_ui_temporal"
USER: Final = "thread"
"""ADK's session is the thread's: one app and one user name for all of them."""


class ThreadSession(BaseSessionService):
    """The thread's one ADK session, held in memory for one run (the thread keeps its JSON)."""

    def __init__(self, session: Session) -> None:
        self.session = session

    async def create_session(self, **kwargs: Any) -> Session:
        raise NotImplementedError("a thread's session exists before its runner")

    async def get_session(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        config: GetSessionConfig | None = None,
    ) -> Session | None:
        return self.session if session_id == self.session.id else None

    async def list_sessions(
        self, *, app_name: str, user_id: str | None = None
    ) -> ListSessionsResponse:
        return ListSessionsResponse(sessions=[self.session])

    async def delete_session(self, *, app_name: str, user_id: str, session_id: str) -> None:
        raise NotImplementedError("a thread's session lives as long as the thread")


def session_of(kept: Any, thread_id: str) -> Session:
    if kept is None:
        return Session(id=thread_id, app_name=APP, user_id=USER)
    return Session.model_validate(kept)


def kept(data: dict[str, Any], session: Session) -> bool:
    """Keep the session for the next run, within its budget: its oldest invocations dropped
    until it fits. False, and nothing kept, when its last invocation alone does not fit."""
    dump = session.model_dump(mode="json", exclude_none=True)
    while json_size(dump) > SESSION_BYTES:
        events = dump["events"]
        first = events[0].get("invocation_id") if events else None
        rest = [i for i, event in enumerate(events) if event.get("invocation_id") != first]
        if not rest:
            return False
        dump["events"] = events[rest[0] :]
    data[SESSION] = dump
    return True


def without_last_invocation(session: Session) -> Session:
    last = session.events[-1].invocation_id if session.events else None
    events = [event for event in session.events if event.invocation_id != last]
    return session.model_copy(update={"events": events})
