"""Why a command could not run, in one line on stderr: what failed and the setting or option
to change. The full traceback only on demand (`--debug` or `AGUI_DEBUG=1`).

Exit codes: 2 when a setting or an option is wrong as written (it does not parse, or names
what is not there: a module, a model, or a `DATA_DIR` this version cannot resume); 1 when
the process cannot start or stopped for any other reason (a taken port, a Temporal server
or a database that cannot be reached, a refusal to run unsafely); 0 when it ran and stopped.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import traceback
import typing
from collections.abc import Iterator
from typing import Final

from pydantic import SecretStr, ValidationError
from pydantic_settings import SettingsError

from ag_ui_temporal.settings import SettingError, Settings

DEBUG_VARIABLE: Final = "AGUI_DEBUG"
"""Set (to anything but `0` or empty): tracebacks, as `--debug` (read from the environment
only, never `.env`: a setting that does not parse must not hide its own traceback)."""
USAGE: Final = 2
FAILED: Final = 1
HINT: Final = f"(--debug or {DEBUG_VARIABLE}=1 for the traceback)"


def debugging(flag: bool) -> bool:
    return flag or os.environ.get(DEBUG_VARIABLE, "") not in ("", "0")


def report(command: str, err: BaseException, debug: bool) -> int:
    """Say why `command` stopped on `err` (stderr) and return its exit code."""
    if isinstance(err, SystemExit):  # ours say their reason; argparse's and uvicorn's their code
        if err.code is None or isinstance(err.code, int):
            return err.code or 0
        _say(command, str(err.code))
        return FAILED
    if debug:
        traceback.print_exception(err)
    code, line = reason(err)
    if code == FAILED and not _known(err) and not debug:
        line = f"{line} {HINT}"
    _say(command, line)
    return code


def reason(err: BaseException) -> tuple[int, str]:
    """(exit code, the reason in a line) of `err`."""
    if isinstance(err, SettingsError) or (
        isinstance(err, ValidationError) and err.title == Settings.__name__
    ):
        return USAGE, settings_problem(err)
    if isinstance(err, SettingError):
        return USAGE, str(err)
    if _known(err):
        return FAILED, str(err)
    text = " ".join(str(err).split()) or "(no message)"
    return FAILED, f"{type(err).__name__}: {text[:500]}"


def _known(err: BaseException) -> bool:
    """Failures whose message is the whole story (the setting to change is in it)."""
    from ag_ui_temporal.temporal_client import TemporalUnreachable

    return isinstance(err, TemporalUnreachable | SettingError)


def _say(command: str, line: str) -> None:
    prefix = "" if line.startswith("ag-ui-temporal") else f"ag-ui-temporal {command}: "
    print(prefix + line.rstrip(), file=sys.stderr, flush=True)


def settings_problem(err: ValidationError | SettingsError) -> str:
    """The settings that do not parse, each named as in the environment, with what each
    takes; a secret's value is never repeated."""
    if isinstance(err, SettingsError):  # pydantic-settings could not decode a JSON value
        found = re.search(r'field "(\w+)"', str(err))
        if found is None:
            return str(err)
        name = found[1]
        return f"{name.upper()} is not valid JSON: {_json_form(name)}"
    problems = []
    for error in err.errors(include_url=False):
        loc = error["loc"]
        message = str(error["msg"]).removeprefix("Value error, ")
        if not loc:  # the model's own check: its message names the settings
            problems.append(message)
            continue
        name = str(loc[0])
        shown = name.upper()
        value = error.get("input")
        if isinstance(value, str) and len(value) <= 80 and not _secret(name):
            shown = f"{shown}={value!r}"
        problems.append(f"{shown}: {message}")
    return "; ".join(problems)


def _secret(name: str) -> bool:
    field = Settings.model_fields.get(name)
    return field is None or "SecretStr" in repr(field.annotation) or field.annotation is SecretStr


def _json_form(name: str) -> str:
    field = Settings.model_fields.get(name)
    variable = name.upper()
    if field is not None and typing.get_origin(field.annotation) is dict:
        return f'an object is written as JSON, e.g. {variable}=\'{{"key": "value"}}\''
    if name == "agent_modules":
        return f'a list is written as JSON, e.g. {variable}=\'["my_agents", "team.support"]\''
    return f'a list is written as JSON, e.g. {variable}=\'["first", "second"]\''


@contextlib.contextmanager
def store_errors(settings: Settings) -> Iterator[None]:
    """A store that cannot be reached or opened in the block: SystemExit naming the setting
    that says where it is (`DATABASE_URL`, else `DATA_DIR`), the password hidden."""
    from sqlalchemy import make_url
    from sqlalchemy.exc import DBAPIError, SQLAlchemyError

    try:
        yield
    except (OSError, SQLAlchemyError) as err:
        setting = "DATABASE_URL" if settings.database_url is not None else "DATA_DIR"
        where = make_url(settings.store_url).render_as_string(hide_password=True)
        cause = err.orig if isinstance(err, DBAPIError) else err
        why = " ".join(str(cause).split())[:300] or type(cause).__name__
        raise SystemExit(f"the store at {where} ({setting}) cannot be used: {why}") from err
