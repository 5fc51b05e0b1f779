"""Fixtures of the real provider path: a loopback endpoint replaying recorded OpenAI streams.

Other test folders get them the same way: import both names into their module or conftest."""

from tests.llm.openai_replay import openai_replay, openai_replay_server

__all__ = ["openai_replay", "openai_replay_server"]
