"""The audit trail's keys: what makes its hashes unforgeable by whoever holds only the store.

Every record's `hash`, every anchor a prune leaves and every heads export is an HMAC-SHA256
under a key the database never holds (`AUDIT_KEY` or `AUDIT_KEY_FILE`; for development, a
file under `DATA_DIR`). What a key made names it by its id, a fingerprint of the key, so a
rotation needs no ids to manage: the new key in `AUDIT_KEY`, the old one in
`AUDIT_PREVIOUS_KEYS`, whose records and anchors still verify.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import secrets
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from ag_ui_temporal.settings import MIN_AUDIT_KEY_BYTES, Settings

DEV_KEY_FILE: Final = "audit.key"
"""The development key's file under `DATA_DIR` (beside the SQLite store, never in it)."""
_ID_PREFIX: Final = b"ag-ui-temporal audit key id\n"


class AuditKeyMissing(ValueError):
    """No audit key where one is needed; the message is one line saying what to set."""


@dataclass(frozen=True)
class AuditKey:
    """One key: its id (in every record, anchor and heads export it keyed) and its secret."""

    id: str
    secret: bytes = field(repr=False)

    @classmethod
    def of(cls, secret: str) -> AuditKey:
        """The key of `secret` (surrounding whitespace dropped: a file's last newline)."""
        raw = secret.strip().encode()
        if len(raw) < MIN_AUDIT_KEY_BYTES:
            raise ValueError(f"an audit key is {MIN_AUDIT_KEY_BYTES} bytes or more")
        # A fingerprint: naming the key gives away nothing a keyed record does not.
        return cls(hashlib.sha256(_ID_PREFIX + raw).hexdigest()[:16], raw)

    def mac(self, message: bytes) -> str:
        """HMAC-SHA256 of `message` under this key, hex."""
        return hmac.digest(self.secret, message, "sha256").hex()

    def hasher(self) -> hmac.HMAC:
        """An HMAC-SHA256 under this key to `update` piecewise (a heads export's lines)."""
        return hmac.new(self.secret, digestmod="sha256")

    def signs(self, message: bytes, mac: str) -> bool:
        """Whether `mac` is this key's of `message` (compared in constant time)."""
        return hmac.compare_digest(self.mac(message), mac)


class AuditKeys:
    """The key new records are keyed with (`current`) and every key that still verifies."""

    def __init__(
        self, current: AuditKey, previous: Iterable[AuditKey] = (), source: str = ""
    ) -> None:
        self.current = current
        self._by_id = {key.id: key for key in (*previous, current)}
        self.source = source
        """Where the current key came from (`AUDIT_KEY`, a file), for people to read."""

    @classmethod
    def of(cls, current: str, *previous: str) -> AuditKeys:
        return cls(AuditKey.of(current), [AuditKey.of(p) for p in previous])

    def get(self, key_id: str | None) -> AuditKey | None:
        """The key named `key_id`, if it is one of these."""
        return None if key_id is None else self._by_id.get(key_id)

    @property
    def all(self) -> list[AuditKey]:
        return list(self._by_id.values())


def new_key() -> str:
    """A fresh audit key: 32 random bytes, URL-safe base64 (43 characters)."""
    return secrets.token_urlsafe(32)


def dev_key_allowed(settings: Settings) -> bool:
    """Whether the trail may be keyed with `DATA_DIR/audit.key` when no key is set: only a
    SQLite store (one machine, whose processes share `DATA_DIR`) that authenticates nobody.
    A shared database needs one key for every worker, and a deployment that authenticates
    must not keep its trail under a key made on the spot next to its data."""
    return settings.trusts_callers and settings.store_url.startswith("sqlite")


def audit_keys(settings: Settings) -> AuditKeys:
    """The keys the settings give: `AUDIT_KEY` or `AUDIT_KEY_FILE`, else the development
    key file (`dev_key_allowed`; made on first use), and `AUDIT_PREVIOUS_KEYS`. Raises
    `AuditKeyMissing` saying what to set."""
    previous = [AuditKey.of(k.get_secret_value()) for k in settings.audit_previous_keys]
    source = key_source(settings)
    if settings.audit_key is not None:
        key = AuditKey.of(settings.audit_key.get_secret_value())
    elif settings.audit_key_file is not None:
        key = read_key_file(settings.audit_key_file, "AUDIT_KEY_FILE")
    else:
        key = dev_key(dev_key_file(settings))
    return AuditKeys(key, previous, source)


def key_source(settings: Settings) -> str:
    """Where `audit_keys` takes the key from, in words, making nothing (a file named is
    read); or `AuditKeyMissing`, a worker's reason not to start."""
    if settings.audit_key is not None:
        return "AUDIT_KEY"
    if settings.audit_key_file is not None:
        read_key_file(settings.audit_key_file, "AUDIT_KEY_FILE")
        return f"AUDIT_KEY_FILE {settings.audit_key_file}"
    if dev_key_allowed(settings):
        return f"the development key file {dev_key_file(settings)}"
    if settings.trusts_callers:
        why = "the store is not SQLite (its workers need one key)"
    else:
        why = f"AUTH_MODE {settings.auth_mode} is no development stack"
    raise AuditKeyMissing(
        f"AUDIT_KEY is not set and {why}: set AUDIT_KEY or AUDIT_KEY_FILE to a key the "
        "database does not hold (`ag-ui-temporal audit keygen` makes one)"
    )


def dev_key_file(settings: Settings) -> Path:
    return (settings.data_dir / DEV_KEY_FILE).resolve()


def read_key_file(path: Path, setting: str) -> AuditKey:
    try:
        text = path.read_text()
    except OSError as err:
        raise AuditKeyMissing(f"{setting} {path}: {err.strerror or err}") from None
    try:
        return AuditKey.of(text)
    except ValueError as err:
        raise AuditKeyMissing(f"{setting} {path}: {err}") from None


def dev_key(path: Path) -> AuditKey:
    """The key in `path`, made there (readable by its owner only) if there is none."""
    if not path.exists():
        with contextlib.suppress(FileExistsError):  # another process made it first
            write_key_file(path, new_key())
    return read_key_file(path, "the development audit key")


def write_key_file(path: Path, key: str) -> None:
    """Write `key` to a new file `path` (mode 0600), whole or not at all: written aside and
    linked in, so a reader never sees half a key. FileExistsError if `path` exists (it is
    kept as it is)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.{secrets.token_hex(4)}")
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w") as out:
            out.write(key + "\n")
        os.link(partial, path)
    finally:
        partial.unlink()
