"""What AG-UI clients before 1.0 send that 1.0 retired, taken at the door.

CopilotKit 1.74 pins `@ag-ui/client` 0.0.59, whose user messages may carry the legacy
`binary` content part (`{"type": "binary", "mimeType", "data" | "url", "filename"?}`), which
AG-UI 1.0 replaced by the media parts (`image`, `audio`, `video`, `document` with a `source`)
and `ag_ui.core` refuses. `@ag-ui/client` 1.0's compatibility boundary upgrades such a part
before it sends it (`convertBinaryToNewFormat`); a 1.0 server must do the same for the
clients that do not, so a run is parsed here as `RunInput`, which upgrades them the same way
before the protocol's own validation. Everything else 0.0.59 sends and reads is 1.0's.
"""

from __future__ import annotations

from typing import Any

from ag_ui.core import RunAgentInput
from pydantic import model_validator

MEDIA = ("image", "audio", "video")


class RunInput(RunAgentInput):
    """A `RunAgentInput` as clients of either protocol version send it (see the module)."""

    @model_validator(mode="before")
    @classmethod
    def _upgrade_legacy_parts(cls, data: Any) -> Any:
        messages = data.get("messages") if isinstance(data, dict) else None
        if not isinstance(messages, list):
            return data
        upgraded = [_message(message, i) for i, message in enumerate(messages)]
        if all(new is old for new, old in zip(upgraded, messages, strict=True)):
            return data
        return {**data, "messages": upgraded}


def _message(message: Any, index: int) -> Any:
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, list) or not any(_legacy(part) for part in content):
        return message
    media = [part for part in content if not _legacy(part)]
    carried = {_key(part, named) for part in media for named in (True, False)} - {None}
    parts = []
    for n, part in enumerate(content):
        if _legacy(part):
            part = _converted(part, f"messages[{index}].content[{n}]")
            if _key(part) in carried:
                continue  # a legacy mirror of a media part the message carries too
        parts.append(part)
    return {**message, "content": parts}


def _legacy(part: Any) -> bool:
    return isinstance(part, dict) and part.get("type") == "binary"


def _converted(part: dict[str, Any], where: str) -> dict[str, Any]:
    """The media part a legacy `binary` part becomes (`@ag-ui/client`'s mapping)."""
    mime_type = part.get("mimeType")
    if not isinstance(mime_type, str):
        raise ValueError(f"{where}: a binary part needs a mimeType")
    kind = next((k for k in MEDIA if mime_type.startswith(f"{k}/")), "document")
    for source in ("data", "url"):
        if value := part.get(source):
            modern = {
                "type": kind,
                "source": {"type": source, "value": value, "mimeType": mime_type},
            }
            if filename := part.get("filename"):
                modern["metadata"] = {"filename": filename}
            return modern
    raise ValueError(f"{where}: a binary part without data or a url (AG-UI 1.0 retired it)")


def _key(part: Any, named: bool = True) -> tuple[Any, ...] | None:
    """What tells a media part's attachment apart (its kind, source and, `named`, filename)."""
    if not isinstance(part, dict) or not isinstance(source := part.get("source"), dict):
        return None
    metadata = part.get("metadata")
    filename = metadata.get("filename") if named and isinstance(metadata, dict) else None
    return (
        part.get("type"),
        source.get("type"),
        source.get("value"),
        source.get("mimeType"),
        filename,
    )
