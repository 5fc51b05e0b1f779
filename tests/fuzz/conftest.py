"""Shared by the fuzz and race tests: the gateway tests' gated worker stack, and the
hypothesis settings (`HYPOTHESIS_PROFILE=thorough` for many more examples on demand)."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

from tests.gateway.conftest import gated, stack

__all__ = ["FUZZ", "gated", "stack"]

settings.register_profile(
    "fuzz",
    max_examples=40,
    derandomize=True,  # `make test` runs the same examples every time: no flaky CI
    deadline=None,  # each example is a round trip to a real Temporal server
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
settings.register_profile(
    "thorough", settings.get_profile("fuzz"), max_examples=1000, derandomize=False
)
FUZZ = settings.get_profile(os.environ.get("HYPOTHESIS_PROFILE", "fuzz"))
"""Applied per test (`@FUZZ`), so other test packages keep hypothesis' own defaults."""
