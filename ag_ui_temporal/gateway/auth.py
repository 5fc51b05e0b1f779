"""Who is calling: one authenticator per `AUTH_MODE`, each turning a request into a `Principal`.

- `dev`: `X-Principal` (and `X-Principal-Groups`, comma separated); a request without them
  is the fixed `anonymous` principal.
- `api_key`: `Authorization: Bearer KEY` or `X-API-Key: KEY`; keys are kept as SHA-256
  hashes (`API_KEYS_FILE`), each mapped to a principal and its groups.
- `jwt`: `Authorization: Bearer JWT`, HS256 (`JWT_SECRET`) or RS256 (`JWT_PUBLIC_KEY` or a
  cached `JWT_JWKS_URL`), with `exp` required and `iss`/`aud` checked when configured.
  A token's name claim, and its email claim when the token says it is verified
  (`email_verified: true`, or every address with `JWT_EMAILS_VERIFIED`), are remembered in
  the store (`store.people`), so that notifications reach people the directory file does
  not list.
- `none`: everyone is `anonymous` (local demos only).

`dev` and `none` believe every caller, so they serve this machine only: the gateway will not
start with them off loopback (`exposure_problem`), and a request from a non-loopback peer,
or relayed by a proxy, is refused (`from_this_machine`).

A failure is a 401 with `WWW-Authenticate: Bearer`, before any stream; no credential is
ever echoed or logged.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import ipaddress
import logging
import time
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import jwt
import yaml
from fastapi import HTTPException, Request
from pydantic import BaseModel, Field

from ag_ui_temporal.settings import Settings
from ag_ui_temporal.store import KnownPeople
from ag_ui_temporal.store.people import MAX_PRINCIPAL, usable_email, usable_name
from ag_ui_temporal.workflows.contract import GROUP_PREFIX, admits

log = logging.getLogger(__name__)

EMAIL_VERIFIED = "email_verified"
"""The claim that says the token's email address is its holder's (OpenID Connect)."""
ANONYMOUS = "anonymous"
"""The principal of a `dev` request without `X-Principal`, and of every `none` request."""
FORWARDING_HEADERS = frozenset({b"forwarded", b"x-forwarded-for", b"x-real-ip"})


def is_loopback(host: str | None) -> bool:
    if host is None:
        return False
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def exposure_problem(settings: Settings) -> str | None:
    """Why this gateway must not start: a trusting mode listening beyond this machine."""
    if settings.trusts_callers and not is_loopback(settings.gateway_host):
        return (
            f"AUTH_MODE={settings.auth_mode} trusts every caller, so it serves loopback only, "
            f"but GATEWAY_HOST={settings.gateway_host}: set AUTH_MODE=jwt or api_key "
            "(docs/auth.md), or GATEWAY_HOST=127.0.0.1"
        )
    return None


def from_this_machine(request: Request) -> bool:
    """The socket's peer is loopback and no proxy relayed the request. A forwarding header
    means the caller is elsewhere (and uvicorn's proxy_headers may have already rewritten
    `client` from it), so it is never trusted, whatever address it names."""
    if any(name in FORWARDING_HEADERS for name, _ in request.scope.get("headers", [])):
        return False
    client = request.scope.get("client")
    return is_loopback(client[0] if client else None)


def local_only(mode: str) -> HTTPException:
    return HTTPException(
        403, f"AUTH_MODE={mode} serves clients on this machine only, never through a proxy"
    )


@dataclass(frozen=True)
class Principal:
    name: str
    groups: tuple[str, ...] = ()

    def named_in(self, entries: list[str]) -> bool:
        """Whether `entries` (principals or `group:G`) name this principal."""
        return admits(entries, self.name, self.groups)


class Authenticator(Protocol):
    async def authenticate(self, request: Request) -> Principal: ...


def unauthorized(message: str) -> HTTPException:
    """401 before any stream. `message` must never contain the credential."""
    return HTTPException(401, message, headers={"WWW-Authenticate": "Bearer"})


def _principal(name: object, groups: object) -> Principal:
    """A principal from untrusted values; a name that could pass for a group is refused."""
    if not isinstance(name, str) or not name.strip() or name.startswith(GROUP_PREFIX):
        raise unauthorized("the credential names no usable principal")
    if isinstance(groups, str):
        groups = groups.replace(",", " ").split()
    if not isinstance(groups, list | tuple):
        groups = []
    return Principal(name.strip(), tuple(str(g).strip() for g in groups if str(g).strip()))


def bearer(request: Request) -> str | None:
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return token.strip()


class NoAuth:
    async def authenticate(self, request: Request) -> Principal:
        if not from_this_machine(request):
            raise local_only("none")
        return Principal(ANONYMOUS)


class DevAuth:
    """Trusts the headers, so only from this machine (a proxy in front would defeat it)."""

    async def authenticate(self, request: Request) -> Principal:
        if not from_this_machine(request):
            raise local_only("dev")
        name = request.headers.get("x-principal", "").strip()
        groups = request.headers.get("x-principal-groups", "")
        if not name and not groups.strip():
            return Principal(ANONYMOUS)
        return _principal(name or ANONYMOUS, groups)


class ApiKeyEntry(BaseModel):
    sha256: str = Field(pattern="^[0-9a-f]{64}$")
    principal: str
    groups: list[str] = Field(default_factory=list)


def hash_key(key: str) -> str:
    """Keys are high-entropy random strings, so a plain SHA-256 is the usual (and enough)."""
    return hashlib.sha256(key.encode()).hexdigest()


def load_api_keys(path: Path) -> list[ApiKeyEntry]:
    """A JSON or YAML list of entries (or `{"keys": [...]}`)."""
    try:
        data: Any = yaml.safe_load(path.read_text())  # YAML is a superset of JSON
    except yaml.YAMLError as err:
        raise ValueError(f"{path}: not JSON or YAML ({err})") from None
    if isinstance(data, dict):
        data = data.get("keys", [])
    return [ApiKeyEntry.model_validate(item) for item in data or []]


class ApiKeyAuth:
    def __init__(self, entries: list[ApiKeyEntry]) -> None:
        self.entries = entries

    async def authenticate(self, request: Request) -> Principal:
        key = bearer(request) or request.headers.get("x-api-key", "").strip()
        if not key:
            raise unauthorized("an API key is required (Authorization: Bearer or X-API-Key)")
        digest = hash_key(key)
        found = None
        for entry in self.entries:  # every entry is compared: no early exit to time
            if hmac.compare_digest(entry.sha256, digest):
                found = entry
        if found is None:
            raise unauthorized("unknown API key")
        return _principal(found.principal, found.groups)


class JwtAuth:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.secret = settings.jwt_secret.get_secret_value() if settings.jwt_secret else None
        self.public_key = _pem(settings.jwt_public_key)
        self.jwks = (
            jwt.PyJWKClient(
                settings.jwt_jwks_url,
                cache_keys=True,
                lifespan=int(settings.jwt_jwks_cache.total_seconds()) or 1,
            )
            if settings.jwt_jwks_url
            else None
        )
        self.people = ClaimedPeople()

    async def authenticate(self, request: Request) -> Principal:
        token = bearer(request)
        if token is None:
            raise unauthorized("a bearer token is required")
        try:
            algorithm, key = await self._key(token)
            claims = jwt.decode(
                token,
                key,
                algorithms=[algorithm],
                audience=self.settings.jwt_audience,
                issuer=self.settings.jwt_issuer,
                leeway=self.settings.jwt_leeway.total_seconds(),
                options={"require": ["exp"]},
            )
        except jwt.PyJWKClientConnectionError as err:
            log.warning("JWKS unavailable: %s", err)
            raise HTTPException(503, "the token's keys cannot be fetched; retry") from None
        except jwt.PyJWTError as err:  # the reason, never the token
            raise unauthorized(f"invalid token: {err}") from None
        principal = _principal(
            claims.get(self.settings.jwt_principal_claim),
            claims.get(self.settings.jwt_groups_claim, []),
        )
        email = claims.get(self.settings.jwt_email_claim)
        if not (self.settings.jwt_emails_verified or _verified(claims.get(EMAIL_VERIFIED))):
            email = None  # anyone can put any address in their token: mail goes to verified ones
        name = claims.get(self.settings.jwt_name_claim)
        if engine := getattr(request.app.state, "store", None):
            await self.people.note(
                KnownPeople(engine),
                principal.name,
                email if isinstance(email, str) else None,
                name if isinstance(name, str) else None,
            )
        return principal

    async def _key(self, token: str) -> tuple[str, Any]:
        """The algorithm the token claims, and our key for it: one key type per algorithm,
        so an RS256 public key can never be used as an HS256 secret."""
        algorithm = jwt.get_unverified_header(token).get("alg")
        if algorithm == "HS256" and self.secret is not None:
            return algorithm, self.secret
        if algorithm == "RS256" and self.public_key is not None:
            return algorithm, self.public_key
        if algorithm == "RS256" and self.jwks is not None:
            # PyJWKClient fetches with urllib: off the event loop; its cache makes it rare
            signing = await asyncio.to_thread(self.jwks.get_signing_key_from_jwt, token)
            return algorithm, signing.key
        raise jwt.InvalidAlgorithmError(f"algorithm {algorithm!r} is not accepted")


def _verified(claim: object) -> bool:
    """OpenID Connect's `email_verified`: a boolean, or (some issuers) the string "true"."""
    return claim is True or (isinstance(claim, str) and claim.lower() == "true")


class ClaimedPeople:
    """Writes a token's email and name to the store once per (principal, email, name) per
    process: every request carries them, the store needs them once. Bounded (an LRU of
    `size`); a store that fails is logged and tried again after `RETRY_AFTER`, and never
    fails the request (the email only matters to notifications)."""

    SIZE = 10_000
    TIMEOUT = 2.0
    """Seconds a request waits for the store at most."""
    RETRY_AFTER = 60.0
    """Seconds before a value the store failed to take is tried again."""

    def __init__(self, size: int = SIZE) -> None:
        self.size = size
        self.seen: OrderedDict[tuple[str, str | None, str | None], float] = OrderedDict()
        """Each value, and until when it needs no write (forever once written)."""

    async def note(
        self, known: KnownPeople, principal: str, email: str | None, name: str | None
    ) -> None:
        email = email.strip() if email is not None and usable_email(email.strip()) else None
        name = name.strip() if name is not None and usable_name(name.strip()) else None
        if (email is None and name is None) or len(principal) > MAX_PRINCIPAL:
            return  # nothing to remember (and nothing unbounded kept in memory)
        key = (principal, email, name)
        now = time.monotonic()
        if self.seen.get(key, now) > now:
            self.seen.move_to_end(key)
            return
        # marked before the write: concurrent first requests do not all write
        self._mark(key, now + self.RETRY_AFTER)
        try:
            await asyncio.wait_for(known.remember(*key), self.TIMEOUT)
        except Exception as err:  # any store failure: the request goes on
            log.warning("could not remember the email of %s: %s", principal, type(err).__name__)
            return
        self._mark(key, float("inf"))

    def _mark(self, key: tuple[str, str | None, str | None], until: float) -> None:
        self.seen[key] = until
        self.seen.move_to_end(key)
        while len(self.seen) > self.size:
            self.seen.popitem(last=False)


def _pem(value: str | None) -> str | None:
    if value is None or value.lstrip().startswith("-----BEGIN"):
        return value
    return Path(value).read_text()


def build_authenticator(settings: Settings) -> Authenticator:
    """The gateway's authenticator; `ValueError` when `AUTH_MODE` lacks what it needs."""
    if settings.auth_mode == "api_key":
        if settings.api_keys_file is None:
            raise ValueError("AUTH_MODE=api_key needs API_KEYS_FILE")
        return ApiKeyAuth(load_api_keys(settings.api_keys_file))
    if settings.auth_mode == "jwt":
        if not (settings.jwt_secret or settings.jwt_public_key or settings.jwt_jwks_url):
            raise ValueError("AUTH_MODE=jwt needs JWT_SECRET, JWT_PUBLIC_KEY or JWT_JWKS_URL")
        return JwtAuth(settings)
    if settings.auth_mode == "none":
        return NoAuth()
    return DevAuth()
