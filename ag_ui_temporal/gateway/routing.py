"""Routes told apart by a query parameter.

TanStack's client uses one agent URL for three verbs: POST runs, `GET ?runId=`
joins a run (SSE), `GET ?threadId=` hydrates a thread (JSON). Giving each GET
its own route keeps FastAPI's SSE support and response models for both.
"""

from __future__ import annotations

from urllib.parse import parse_qs

from starlette.routing import Match
from starlette.types import Scope

from ag_ui_temporal.gateway.deps import AuthenticatedRoute


def requiring_query(name: str) -> type[AuthenticatedRoute]:
    """A route class that matches only requests carrying query parameter `name` (and
    authenticates first, as every route of the API does)."""

    class QueryRoute(AuthenticatedRoute):
        def matches(self, scope: Scope) -> tuple[Match, Scope]:
            match, child = super().matches(scope)
            if match == Match.NONE:
                return match, child
            query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
            return (match, child) if name in query else (Match.NONE, {})

    QueryRoute.__name__ = f"Requires_{name}"
    return QueryRoute
