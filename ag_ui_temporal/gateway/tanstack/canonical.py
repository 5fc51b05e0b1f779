"""Canonical JSON and its digest, ported from ``@tanstack/ai`` 0.58.0.

Schema hashes in a TanStack interrupt binding are ``digest(canonical(schema))``,
so the canonical JSON must reproduce the library's output byte for byte:

* ``canonical_interrupt_json`` ports ``canonicalInterruptJson``
  (``src/interrupt-serialization.ts``): JavaScript ``JSON.stringify`` for
  scalars, object keys sorted by UTF-16 code units, no whitespace.
* ``digest_interrupt_json`` ports ``digestInterruptJson`` with the default
  hash: ``"sha256:"`` + lower-case hex SHA-256 of the text's UTF-8.
"""

from __future__ import annotations

import hashlib
import math
import numbers
import re
from typing import Any, Final

__all__ = ["JsonObject", "canonical_interrupt_json", "digest_interrupt_json", "interrupt_json_hash"]

# The library's TypeError messages (interrupt-serialization.ts).
_NOT_JSON: Final = "Interrupt values must be JSON-compatible."
_NOT_PLAIN: Final = "Interrupt values must use plain JSON objects."
_CYCLE: Final = "Interrupt values must not cycle."
_NOT_TEXT: Final = "Interrupt digests require canonical JSON text."

JsonObject = dict[str, Any]

# ---------------------------------------------------------------------------
# Strings: JavaScript JSON.stringify (well-formed, ES2019) on UTF-16 text.
# ---------------------------------------------------------------------------

_SURROGATE = re.compile("[\ud800-\udfff]")
_NEEDS_ESCAPE = re.compile('[\x00-\x1f"\\\\\ud800-\udfff]')
_SHORT_ESCAPES: Final = {
    '"': '\\"',
    "\\": "\\\\",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
}


def _join_surrogate_pairs(text: str) -> str:
    """Read ``text`` as JS does: adjacent high+low surrogates form one character."""
    if not _SURROGATE.search(text):
        return text
    utf16 = text.encode("utf-16-be", "surrogatepass")
    return utf16.decode("utf-16-be", "surrogatepass")


def _escape_char(match: re.Match[str]) -> str:
    char = match.group()
    return _SHORT_ESCAPES.get(char) or f"\\u{ord(char):04x}"


def _js_string(text: str) -> str:
    """``JSON.stringify(text)``: escape quote, backslash, controls, lone surrogates."""
    return '"' + _NEEDS_ESCAPE.sub(_escape_char, _join_surrogate_pairs(text)) + '"'


def _utf16_sort_key(text: str) -> bytes:
    """Big-endian UTF-16 bytes compare like JS ``Array.prototype.sort`` on strings."""
    return text.encode("utf-16-be", "surrogatepass")


# ---------------------------------------------------------------------------
# Numbers: ECMAScript Number::toString (what JSON.stringify writes).
# ---------------------------------------------------------------------------


def _shortest_digits(value: float) -> tuple[str, int]:
    """Shortest round-trip digits ``s`` and exponent ``n`` with value = 0.s * 10**n."""
    mantissa, _, exponent = repr(value).partition("e")  # repr is shortest round-trip
    whole, _, fraction = mantissa.partition(".")
    digits = whole + fraction
    significant = digits.lstrip("0")
    n = len(whole) + int(exponent or 0) - (len(digits) - len(significant))
    return significant.rstrip("0"), n


def _js_number(value: float) -> str:
    """Format a finite double exactly as JavaScript ``String(value)`` does."""
    if value == 0:
        return "0"  # also -0
    sign = "-" if value < 0 else ""
    digits, n = _shortest_digits(abs(value))
    k = len(digits)
    if k <= n <= 21:
        body = digits + "0" * (n - k)
    elif 0 < n <= 21:
        body = f"{digits[:n]}.{digits[n:]}"
    elif -6 < n <= 0:
        body = "0." + "0" * -n + digits
    else:
        mantissa = digits if k == 1 else f"{digits[0]}.{digits[1:]}"
        body = f"{mantissa}e{'+' if n >= 1 else '-'}{abs(n - 1)}"
    return sign + body


def _number_json(value: int | float) -> str:
    """A Python number as the JS double ``JSON.parse`` would have produced."""
    try:
        as_double = float(value)
    except OverflowError:
        raise TypeError(_NOT_JSON) from None  # JSON.parse gives Infinity
    if not math.isfinite(as_double):
        raise TypeError(_NOT_JSON)
    return _js_number(as_double)


# ---------------------------------------------------------------------------
# Canonical JSON and digest.
# ---------------------------------------------------------------------------


def _rejection(value: Any) -> TypeError:
    """Map a non-JSON Python value onto the library's two rejection messages.

    JS primitives that are not JSON (undefined, function, bigint, NaN) get the
    "JSON-compatible" message; objects with a non-plain prototype (Date, Map,
    class instances) get the "plain JSON objects" one. Python's analogues:
    other numbers and callables are primitives; everything else is an object.
    """
    if isinstance(value, numbers.Number) or callable(value):
        return TypeError(_NOT_JSON)
    return TypeError(_NOT_PLAIN)


def _canonical_object(record: dict[Any, Any], active: set[int]) -> str:
    if not all(isinstance(key, str) for key in record):
        raise TypeError(_NOT_PLAIN)  # JS object keys are always strings
    members = (
        f"{_js_string(key)}:{_canonical(record[key], active)}"
        for key in sorted(record, key=_utf16_sort_key)
    )
    return "{" + ",".join(members) + "}"


def _canonical_array(items: list[Any], active: set[int]) -> str:
    return "[" + ",".join(_canonical(item, active) for item in items) + "]"


def _canonical(value: Any, active: set[int]) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):  # before int: bool is an int subclass
        return "true" if value else "false"
    if isinstance(value, str):
        return _js_string(value)
    if isinstance(value, int | float):
        return _number_json(value)
    if not isinstance(value, list | dict):
        raise _rejection(value)
    if id(value) in active:
        raise TypeError(_CYCLE)
    active.add(id(value))
    if isinstance(value, list):
        encoded = _canonical_array(value, active)
    else:
        encoded = _canonical_object(value, active)
    active.discard(id(value))
    return encoded


def canonical_interrupt_json(value: Any) -> str:
    """Port of ``canonicalInterruptJson``: deterministic JSON text for hashing.

    Raises ``TypeError`` with the library's messages for NaN, infinities,
    cycles and values that are not JSON.
    """
    return _canonical(value, set())


def _utf8_like_text_encoder(text: str) -> bytes:
    """``new TextEncoder().encode(text)``: lone surrogates become U+FFFD."""
    return _SURROGATE.sub("\ufffd", _join_surrogate_pairs(text)).encode("utf-8")


def digest_interrupt_json(canonical: str) -> str:
    """Port of ``digestInterruptJson`` with the default hash (``sha256:<hex>``)."""
    if not isinstance(canonical, str):
        raise TypeError(_NOT_TEXT)
    return "sha256:" + hashlib.sha256(_utf8_like_text_encoder(canonical)).hexdigest()


def interrupt_json_hash(value: Any) -> str:
    """``digestInterruptJson(canonicalInterruptJson(value))``, as schema hashes are made."""
    return digest_interrupt_json(canonical_interrupt_json(value))
