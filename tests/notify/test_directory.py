"""The directory: people from a YAML or JSON file, their groups, a bad file refused with its
name and the problem, and `People`, which fills what the file lacks from what sign-in tokens
said (`store.people.KnownPeople`, on SQLite and PostgreSQL)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from ag_ui_temporal.notify.directory import MAX_FILE_BYTES, Directory, People, Person
from ag_ui_temporal.store import KnownPeople, open_engine
from ag_ui_temporal.store.migrate import upgrade
from tests.conftest import new_database

YAML = """\
bob:
  name: Bob Baker
  email: bob@example.com
  groups: [managers, staff]
  channels: [email, webhook]
carol:
  name: Carol Chen
  groups: [finance, staff]
  apprise: ["json://127.0.0.1:9/carol"]
dave:
  email: " dave@example.com "
  groups: [finance]
erin:
"""


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_a_yaml_directory(tmp_path: Path):
    directory = Directory.load(write(tmp_path, "people.yaml", YAML))
    bob = directory.person("bob")
    assert (bob.name, bob.email, bob.display) == ("Bob Baker", "bob@example.com", "Bob Baker")
    assert bob.wants("email") and bob.wants("webhook") and not bob.wants("chat")
    carol = directory.person("carol")
    assert carol.email is None and all(carol.wants(c) for c in ("email", "chat", "webhook"))
    assert [url.get_secret_value() for url in carol.apprise] == ["json://127.0.0.1:9/carol"]
    assert "127.0.0.1:9" not in repr(carol)  # a person's Apprise URLs are secrets
    assert directory.person("dave").email == "dave@example.com"
    assert directory.person("dave").display == "dave"
    assert directory.person("erin") == Person(principal="erin")  # listed with nothing
    assert directory.person("zoe") == Person(principal="zoe")  # not listed
    assert directory.names() == {"bob": "Bob Baker", "carol": "Carol Chen"}
    assert directory.has_own_channels()


def test_groups_and_expansion_keep_file_order_and_name_each_once(tmp_path: Path):
    directory = Directory.load(write(tmp_path, "people.yml", YAML))
    assert directory.members("staff") == ["bob", "carol"]
    assert directory.members("finance") == ["carol", "dave"]
    assert directory.members("nobody") == []
    assert directory.expand(["dave", "group:staff", "bob", "group:finance", "zoe"]) == [
        "dave",
        "bob",
        "carol",
        "zoe",
    ]


def test_a_json_directory(tmp_path: Path):
    data = {"ann": {"name": "Ann", "email": "ann@example.com", "groups": ["ops"]}}
    directory = Directory.load(write(tmp_path, "people.json", json.dumps(data)))
    assert directory.person("ann").email == "ann@example.com"
    assert directory.expand(["group:ops"]) == ["ann"]
    assert not directory.has_own_channels()


def test_no_file_and_an_empty_file_are_empty_directories(tmp_path: Path):
    assert len(Directory.load(None)) == 0
    assert len(Directory.load(write(tmp_path, "empty.yaml", ""))) == 0


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("- bob\n- carol\n", "expected a mapping of principal -> entry"),
        ('bob: {email: "bob@example.com\\nBcc: all@example.com"}\n', "bob.email: "),
        ('bob: {email: "bob@example.com, eve@example.com"}\n', "bob.email: "),
        ("bob: {email: bob.example.com}\n", "bob.email: "),
        ('bob: {name: "Bob\\r\\nX-Header: 1"}\n', "bob.name: "),
        ("bob: {mail: bob@example.com}\n", "bob.mail: "),
        ("bob: {channels: [email, pigeon]}\n", "bob.channels.1: "),
        ("bob: [email]\n", "bob: "),
        ("group:ops: {name: Ops}\n", "cannot start with 'group:'"),
        ("bob: {name: [unclosed\n", "not YAML"),
    ],
)
def test_a_bad_file_names_itself_and_the_problem(tmp_path: Path, text: str, problem: str):
    path = write(tmp_path, "people.yaml", text)
    with pytest.raises(ValueError) as refused:
        Directory.load(path)
    assert str(refused.value).startswith(f"{path}: ")
    assert problem in str(refused.value)


def test_bad_json_a_missing_file_and_a_huge_one_are_refused(tmp_path: Path):
    bad = write(tmp_path, "people.json", "{bob: 1}")
    with pytest.raises(ValueError, match=f"^{bad}: not JSON"):
        Directory.load(bad)
    missing = tmp_path / "nowhere.yaml"
    with pytest.raises(ValueError, match=f"^{missing}: cannot be read"):
        Directory.load(missing)
    entry = "p{}: {{name: Person {}, email: p{}@example.com}}\n"
    huge = write(tmp_path, "huge.yaml", "".join(entry.format(i, i, i) for i in range(30_000)))
    assert huge.stat().st_size > MAX_FILE_BYTES
    with pytest.raises(ValueError, match=f"^{huge}: larger than {MAX_FILE_BYTES} bytes"):
        Directory.load(huge)


def test_an_error_never_shows_an_apprise_url(tmp_path: Path):
    path = write(tmp_path, "people.yaml", 'bob: {apprise: {"slack://T0/B0/s3cr3t": 1}}\n')
    with pytest.raises(ValueError, match=r"bob\.apprise") as refused:
        Directory.load(path)
    assert "s3cr3t" not in str(refused.value)


# -- what sign-in tokens said -------------------------------------------------------------


@pytest.fixture(params=["sqlite", "postgresql"])
async def engine(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[AsyncEngine]:
    """A new store at the newest schema, on each engine."""
    url = new_database(request, request.param, tmp_path)
    await upgrade(url)
    engine = open_engine(url)
    yield engine
    await engine.dispose()


async def test_known_people_remember_the_latest_usable_values(engine: AsyncEngine):
    known = KnownPeople(engine)
    assert await known.get("bob") is None
    await known.remember("bob", "bob@example.com", "Bob Baker")
    assert await known.get("bob") == ("bob@example.com", "Bob Baker")
    await known.remember("bob", "robert@example.com", None)  # no name claim: the name stays
    assert await known.get("bob") == ("robert@example.com", "Bob Baker")
    await known.remember("bob", "robert@example.com\r\nBcc: x@example.com", "Rob\nX: 1")
    assert await known.get("bob") == ("robert@example.com", "Bob Baker")  # unusable: ignored
    await known.remember("zoe", "not an address", None)
    assert await known.get("zoe") is None  # nothing usable: nothing stored


async def test_people_take_the_file_first_and_the_store_for_what_it_lacks(
    engine: AsyncEngine, tmp_path: Path
):
    known = KnownPeople(engine)
    await known.remember("bob", "bob@elsewhere.example", "Robert")
    await known.remember("carol", "carol@example.com", "Carol from the token")
    await known.remember("zoe", "zoe@example.com", "Zoe Zimmer")
    people = People(Directory.load(write(tmp_path, "people.yaml", YAML)), engine)
    bob = await people.person("bob")  # the file has both: the file wins
    assert (bob.email, bob.name) == ("bob@example.com", "Bob Baker")
    carol = await people.person("carol")  # the file has a name, no email
    assert (carol.email, carol.name, carol.groups) == (
        "carol@example.com",
        "Carol Chen",
        ["finance", "staff"],
    )
    zoe = await people.person("zoe")  # only the token knows her
    assert (zoe.email, zoe.display) == ("zoe@example.com", "Zoe Zimmer")
    assert await people.person("nobody") == Person(principal="nobody")
    assert await People(Directory(), None).person("zoe") == Person(principal="zoe")
