"""What the gateway serves at `/agents`: the library's own `inbox`, then every agent the
process registered (those `AGENT_MODULES` register on import included), with what each can
do (`GET /agents/{agent}/capabilities`)."""

from __future__ import annotations

import importlib
import os
import sys
import traceback
from dataclasses import dataclass
from datetime import timedelta

from ag_ui_temporal.agents.registry import Served, all_served
from ag_ui_temporal.settings import SettingError, Settings
from ag_ui_temporal.workflows.contract import INBOX_AGENT


@dataclass(frozen=True)
class AgentCard:
    name: str
    description: str
    approve_with_edits: bool
    standing_approvals: timedelta | None = None


INBOX = AgentCard(
    INBOX_AGENT,
    "Delivers what other workflows offered or posted to the thread (no model, no tools).",
    approve_with_edits=False,
)
"""The library's own agent. It delivers what producers ask; their schemas, not tool calls,
say what an answer holds, so it promises no approve-with-edits."""


def import_agent_modules(settings: Settings) -> None:
    """Import each of `AGENT_MODULES`: its `register(...)` calls run on import. The working
    directory is searched first, as `uvicorn` and `celery` do: a console script's `sys.path`
    holds its own folder, not the one it runs in, where a team's modules are. One that cannot
    be imported is a `SettingError` naming it (what it raised is its `__cause__`)."""
    if not settings.agent_modules:
        return
    here = os.getcwd()
    if here not in sys.path and "" not in sys.path:
        # for good, not for the import alone: each workflow's sandbox imports them again
        sys.path.insert(0, here)
    for module in settings.agent_modules:
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as err:
            if err.name is None or not (module + ".").startswith(err.name + "."):
                raise _failed(module, err) from err  # the module is there; an import of its
            raise SettingError(
                f"AGENT_MODULES: no module {module!r} in the working directory ({here}) or the"
                " installed packages"
            ) from err
        except SettingError:
            raise  # another setting it read is wrong (`LLM_MODEL`): that one is named
        except Exception as err:  # its own code failed: where, in one line
            raise _failed(module, err) from err


def _failed(module: str, err: BaseException) -> SettingError:
    """A module of `AGENT_MODULES` that raised while imported: what, and where (its frame)."""
    frames = traceback.extract_tb(err.__traceback__)
    own = [f for f in frames if "importlib" not in f.filename] or frames
    where = f" ({own[-1].filename}, line {own[-1].lineno})" if own else ""
    return SettingError(
        f"AGENT_MODULES: importing {module!r} failed: {type(err).__name__}: {err}{where}"
    )


def catalog(settings: Settings) -> dict[str, AgentCard]:
    """Every agent name `POST /agents/{agent}` serves (imports `AGENT_MODULES`)."""
    import_agent_modules(settings)
    cards = {INBOX.name: INBOX}
    for name, entry in all_served().items():  # of every framework, in the order registered
        cards.setdefault(name, _card(name, entry))
    return cards


def _card(name: str, entry: Served) -> AgentCard:
    return AgentCard(name, entry.description, entry.approve_with_edits, entry.standing_approvals)
