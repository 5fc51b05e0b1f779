"""Signed decision links: approve or reject from a notification, without opening the chat.

A link is `PUBLIC_URL/decisions/<token>`; the token is a JWT (HS256, `DECISION_LINK_SECRET`)
bound to one thread, one interrupt, one principal and one decision, which expires with the
interrupt (`expiresAt`; without one, after `LINK_LIFETIME`) and carries a random `jti` the
gateway uses once (`store.UsedLinks`). The link is the credential: whoever holds it decides as
its principal, so it is only ever sent to that principal.

A link can only say approve or reject, so it is offered only where that is a whole answer:
`one_click_payload` says which payload each decision sends, or that the form needs more.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Final, Literal, get_args

import jwt

from ag_ui_temporal.workflows.contract.chains import APPROVAL_REASON
from ag_ui_temporal.workflows.schema import payload_problem

Decision = Literal["approve", "reject"]
DECISIONS: Final = get_args(Decision)
LINK_LIFETIME: Final = timedelta(days=14)
"""How long a link lives when its interrupt has no `expiresAt`."""
AUDIENCE: Final = "ag-ui-temporal:decision"
"""The tokens' `aud`: a sign-in token signed with the same secret is never a link."""
ALGORITHM: Final = "HS256"
MAX_TOKEN_LENGTH: Final = 4096
"""Longer tokens are refused before they are decoded (ours are a few hundred characters)."""
CLAIMS: Final = ("sub", "tid", "iid", "dec", "exp", "iat", "jti")


def one_click_payload(
    reason: str | None, response_schema: dict[str, Any] | None, decision: Decision
) -> Any | None:
    """The payload a one-click `decision` sends, or None when the answer needs more than
    approve or reject (the notification then links to the inbox instead).

    The candidate is chosen by the interrupt's reason and kept only if the interrupt's own
    schema takes it (the thread's checker, so the thread would accept it too): a chain's seat
    `{"decision": ...}`, a tool call TanStack's `{"approved": ...}`, a confirmation a bare
    boolean. A resolve of an interrupt without a schema is held to its reason's rule (the
    thread's `schemaless_problem`), which the same candidates meet."""
    approve = decision == "approve"
    candidate: Any
    if reason == APPROVAL_REASON:
        candidate = {"decision": decision}
        if response_schema is None:
            return None  # a seat always has one: without it nothing says what it takes
    elif reason == "tool_call":
        candidate = {"approved": approve}
    elif reason == "confirmation":
        candidate = approve
    else:
        return None
    if response_schema is not None and payload_problem(response_schema, candidate) is not None:
        return None
    return candidate


@dataclass(frozen=True)
class DecisionClaim:
    """What a valid link says: who may decide what, until when."""

    thread_id: str
    interrupt_id: str
    principal: str
    decision: Decision
    expires_at: datetime
    jti: str
    """The link's own id: the store marks it used (`UsedLinks`)."""


class LinkInvalid(ValueError):
    """Not a link this server signed: forged, garbled, another secret, another shape."""


class LinkExpired(ValueError):
    """A link this server signed, past its `exp` (the interrupt's deadline)."""


def mint(
    secret: str,
    *,
    thread_id: str,
    interrupt_id: str,
    principal: str,
    decision: Decision,
    expires_at: datetime | None,
    now: datetime,
) -> str:
    """A token for `principal` to send `decision` to the interrupt, valid until `expires_at`
    (the interrupt's deadline; None: `LINK_LIFETIME` from `now`)."""
    if decision not in DECISIONS:
        raise ValueError(f"a link decides approve or reject, not {decision!r}")
    until = expires_at if expires_at is not None else now + LINK_LIFETIME
    claims = {
        "sub": principal,
        "tid": thread_id,
        "iid": interrupt_id,
        "dec": decision,
        "exp": int(until.timestamp()),
        "iat": int(now.timestamp()),
        "jti": uuid.uuid4().hex,
        "aud": AUDIENCE,
    }
    return jwt.encode(claims, secret, algorithm=ALGORITHM)


def read(secret: str, token: str, now: datetime) -> DecisionClaim:
    """The claim of a token this server signed; `LinkInvalid` for anything else (checked
    first: an edited token is invalid even if its `exp` passed), `LinkExpired` past `exp`."""
    if not token or len(token) > MAX_TOKEN_LENGTH:
        raise LinkInvalid("not a decision link")
    try:
        claims = jwt.decode(
            token,
            secret,
            algorithms=[ALGORITHM],
            audience=AUDIENCE,
            # `exp` is compared with `now` below (the caller's clock); `iat` is not a rule
            options={"require": [*CLAIMS, "aud"], "verify_exp": False, "verify_iat": False},
        )
    except jwt.PyJWTError as err:
        raise LinkInvalid(f"not a decision link: {type(err).__name__}") from None
    claim = _claim(claims)
    if now >= claim.expires_at:
        raise LinkExpired(f"the link expired at {claim.expires_at.isoformat()}")
    return claim


def _claim(claims: dict[str, Any]) -> DecisionClaim:
    """The claims' shape: a token we signed always has it, so anything else is refused."""
    texts = [claims.get(name) for name in ("sub", "tid", "iid", "jti")]
    if not all(isinstance(text, str) and text for text in texts):
        raise LinkInvalid("not a decision link: a claim is missing")
    decision: Decision = "approve" if claims.get("dec") == "approve" else "reject"
    exp = claims.get("exp")
    if claims.get("dec") != decision or not isinstance(exp, int) or isinstance(exp, bool):
        raise LinkInvalid("not a decision link: a claim is malformed")
    try:
        expires_at = datetime.fromtimestamp(exp, tz=UTC)
    except (OverflowError, OSError, ValueError):
        raise LinkInvalid("not a decision link: a claim is malformed") from None
    return DecisionClaim(
        thread_id=claims["tid"],
        interrupt_id=claims["iid"],
        principal=claims["sub"],
        decision=decision,
        expires_at=expires_at,
        jti=claims["jti"],
    )


def decision_url(base_url: str, token: str) -> str:
    """The link as people click it (`base_url`: `settings.base_url`)."""
    return f"{base_url}/decisions/{token}"
