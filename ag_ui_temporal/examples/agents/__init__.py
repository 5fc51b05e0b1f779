"""pydantic-ai agents of your own, served in threads (docs/agents.md walks through `support`)."""
