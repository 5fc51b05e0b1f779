"""The model behind the agents, chosen by settings (`LLM_MODEL`).

`LLM_MODEL` is a pydantic-ai model string; unset, each agent says what runs instead (the
demo and the examples run their offline `FunctionModel`s: no key, no network).
In pydantic-ai 2.x `openai:` is the Responses API and
`openai-chat:` the Chat Completions API, which OpenAI-compatible servers (vLLM,
llama.cpp's server, ...) speak: point `OPENAI_BASE_URL` at one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic_ai.models import Model, infer_model
from pydantic_ai.providers import Provider, infer_provider

from ag_ui_temporal.settings import SettingError, Settings

if TYPE_CHECKING:
    from pydantic_ai.providers.openai import OpenAIProvider

OPENAI_PROVIDERS = frozenset({"openai", "openai-chat", "openai-responses"})
"""Model prefixes served by `OpenAIProvider`, which takes `OPENAI_BASE_URL` / `OPENAI_API_KEY`
from the settings (so a `.env` file works as well as the environment)."""


def resolve_model(settings: Settings) -> Model:
    """The model `LLM_MODEL` names; a string pydantic-ai cannot build is a `SettingError`
    naming the setting, so the worker refuses to start with a readable reason."""
    name = settings.llm_model
    if not name:
        raise SettingError("LLM_MODEL is not set: name a model (e.g. openai-chat:gpt-4.1-mini)")
    if not name.rpartition(":")[2].strip():
        raise SettingError(f"LLM_MODEL={name!r} names no model (e.g. openai-chat:gpt-4.1-mini)")

    def provider(provider_name: str) -> Provider[Any]:
        if provider_name in OPENAI_PROVIDERS:
            return _openai_provider(settings)
        return infer_provider(provider_name)

    try:
        return infer_model(name, provider_factory=provider)
    except (RuntimeError, ValueError, ImportError) as error:  # UserError is a RuntimeError
        raise SettingError(f"LLM_MODEL={name!r} cannot be used: {error}") from error


def _openai_provider(settings: Settings) -> OpenAIProvider:
    # the OpenAI SDK only when a model asks for it: its import is a tenth of a worker's start
    from pydantic_ai.providers.openai import OpenAIProvider

    key = settings.openai_api_key
    return OpenAIProvider(
        base_url=settings.openai_base_url,
        api_key=key.get_secret_value() if key is not None else None,
    )
