"""Who people are: names, email addresses, groups and channels, from the directory file.

`DIRECTORY_FILE` (YAML or JSON) maps each principal to an entry (docs/notifications.md):

    bob:
      name: Bob Baker
      email: bob@example.com
      groups: [managers]
      channels: [email, chat]        # absent: every channel there is
      apprise: ["slack://..."]       # this person's own chat services

`People` adds what the gateway learned from sign-in tokens (`store.people`): the file's
entry wins, the store fills the email and name it lacks.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator
from sqlalchemy.ext.asyncio import AsyncEngine

from ag_ui_temporal.store.people import MAX_NAME, KnownPeople, usable_email, usable_name
from ag_ui_temporal.workflows.contract import GROUP_PREFIX

ChannelName = Literal["email", "chat", "webhook"]
"""`email` (SMTP_URL), `chat` (Apprise: APPRISE_URLS and a person's own), `webhook`."""

MAX_FILE_BYTES = 1024 * 1024
"""The largest directory file read (a bigger one is refused, not truncated)."""
MAX_GROUPS = 100
"""The most groups one person is in."""
MAX_APPRISE = 20
"""The most Apprise URLs of one person."""
MAX_PROBLEMS = 5
"""The most validation problems one error message lists."""


class _Entry(BaseModel):
    """A person as the directory file writes them (the principal is the key)."""

    model_config = ConfigDict(extra="forbid")

    name: str | None = None
    email: str | None = None
    groups: list[str] = Field(default_factory=list, max_length=MAX_GROUPS)
    channels: list[ChannelName] | None = None
    """The channels this person is told on; None: every channel there is."""
    apprise: list[SecretStr] = Field(default_factory=list, max_length=MAX_APPRISE)
    """This person's own Apprise URLs (their Slack DM, their Matrix room, ...)."""

    @field_validator("email")
    @classmethod
    def _an_address(cls, value: str | None) -> str | None:
        if value is not None and not usable_email(value.strip()):
            raise ValueError("not an email address (one @, no spaces or line breaks)")
        return None if value is None else value.strip()

    @field_validator("name")
    @classmethod
    def _a_name(cls, value: str | None) -> str | None:
        if value is not None and not usable_name(value):
            raise ValueError(f"a name is one line of at most {MAX_NAME} characters")
        return None if value is None else value.strip()


class Person(_Entry):
    """One principal: how to address them and on which channels."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    principal: str

    @property
    def display(self) -> str:
        """How texts call them: their name, else their principal."""
        return self.name or self.principal

    def wants(self, channel: ChannelName) -> bool:
        return self.channels is None or channel in self.channels


class Directory:
    """The directory file, read once: principal -> `Person`, in file order."""

    def __init__(self, people: Sequence[Person] = ()) -> None:
        self._people = {person.principal: person for person in people}

    @classmethod
    def load(cls, path: Path | None) -> Directory:
        """The file at `path` (None: an empty directory). YAML, or JSON for `.json`; a
        `ValueError` naming the file and what is wrong with it."""
        if path is None:
            return cls()
        data = _read(path)
        if data is None:
            return cls()
        if not isinstance(data, dict):
            raise ValueError(f"{path}: expected a mapping of principal -> entry at the top")
        people: list[Person] = []
        problems: list[str] = []
        for principal, entry in data.items():
            person = _person(principal, entry)
            if isinstance(person, Person):
                people.append(person)
            else:
                problems.extend(person)
        if problems:
            more = len(problems) - MAX_PROBLEMS
            listed = "; ".join(problems[:MAX_PROBLEMS]) + (
                f" (and {more} more)" if more > 0 else ""
            )
            raise ValueError(f"{path}: {listed}")
        return cls(people)

    def person(self, principal: str) -> Person:
        """Their entry; someone the file does not list is a `Person` with no address."""
        return self._people.get(principal) or Person(principal=principal)

    def members(self, group: str) -> list[str]:
        """Everyone whose `groups` holds `group`, in file order."""
        return [p.principal for p in self._people.values() if group in p.groups]

    def expand(self, entries: Sequence[str]) -> list[str]:
        """Principals and `group:G` entries as principals, each once, in order."""
        found: dict[str, None] = {}
        for entry in entries:
            if entry.startswith(GROUP_PREFIX):
                found.update(dict.fromkeys(self.members(entry.removeprefix(GROUP_PREFIX))))
            else:
                found[entry] = None
        return list(found)

    def names(self) -> dict[str, str]:
        """principal -> display name, for those the file names."""
        return {p.principal: p.name for p in self._people.values() if p.name}

    def has_own_channels(self) -> bool:
        """Whether someone has Apprise URLs of their own (they can be told with no global
        channel set)."""
        return any(p.apprise for p in self._people.values())

    def __len__(self) -> int:
        return len(self._people)


def _read(path: Path) -> Any:
    try:
        with path.open("rb") as file:
            raw = file.read(MAX_FILE_BYTES + 1)
    except OSError as err:
        raise ValueError(f"{path}: cannot be read ({err.strerror or err})") from None
    if len(raw) > MAX_FILE_BYTES:
        raise ValueError(f"{path}: larger than {MAX_FILE_BYTES} bytes")
    try:
        text = raw.decode()
        if path.suffix.lower() == ".json":
            return json.loads(text)
        return yaml.safe_load(text)
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not UTF-8 text") from None
    except json.JSONDecodeError as err:
        raise ValueError(f"{path}: not JSON ({err})") from None
    except yaml.YAMLError as err:
        raise ValueError(f"{path}: not YAML ({err})") from None


def _person(principal: object, entry: object) -> Person | list[str]:
    """One entry of the file, or what is wrong with it."""
    if not isinstance(principal, str) or not principal.strip():
        return [f"{principal!r}: a principal is a non-empty string"]
    if principal.startswith(GROUP_PREFIX):
        return [f"{principal}: a principal cannot start with {GROUP_PREFIX!r}"]
    if entry is not None and not isinstance(entry, dict):
        return [f"{principal}: expected a mapping of {', '.join(_Entry.model_fields)}"]
    if entry and "principal" in entry:
        return [f"{principal}: the key is the principal (no `principal` field)"]
    try:
        return Person.model_validate({**(entry or {}), "principal": principal})
    except ValidationError as err:
        return _described(principal, err)


def _described(principal: str, err: ValidationError) -> list[str]:
    """Where and what, never the value: an Apprise URL holds its service's token."""
    return [
        ".".join([principal, *(str(part) for part in problem["loc"])])
        + f": {problem['msg'].removeprefix('Value error, ')}"
        for problem in err.errors()
    ]


class People:
    """The directory file plus what the gateway learned from sign-in tokens."""

    def __init__(self, directory: Directory, engine: AsyncEngine | None) -> None:
        self.directory = directory
        self.known = KnownPeople(engine) if engine is not None else None

    async def person(self, principal: str) -> Person:
        """The file's entry; the store fills the email and name it lacks."""
        person = self.directory.person(principal)
        if self.known is None or (person.email and person.name):
            return person
        learned = await self.known.get(principal)
        if learned is None:
            return person
        email, name = learned
        filled: dict[str, str] = {}
        if person.email is None and email and usable_email(email):
            filled["email"] = email
        if person.name is None and name and usable_name(name):
            filled["name"] = name
        return person.model_copy(update=filled) if filled else person
