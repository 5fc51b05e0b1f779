"""Producers: any Temporal workflow pauses in an AG-UI chat thread and hears the answer.

`ask_in_thread` and `offer_in_thread` are called from the producer's own workflow code;
`owner` keeps what a producer heard and promised across continue-as-new;
`thread_signals.ThreadSignals` is the activity that reaches the thread (the worker plugin
registers it).
"""

from ag_ui_temporal.workflows._interrupt import INVALID_OFFER, INVALID_REASON
from ag_ui_temporal.workflows.producers._producer import (
    InterruptOutcome,
    ThreadInterrupt,
    ask_in_thread,
    offer_in_thread,
    post_to_thread,
)
from ag_ui_temporal.workflows.schema import INVALID_RESPONSE_SCHEMA

__all__ = [
    "INVALID_OFFER",
    "INVALID_REASON",
    "INVALID_RESPONSE_SCHEMA",
    "InterruptOutcome",
    "ThreadInterrupt",
    "ask_in_thread",
    "offer_in_thread",
    "post_to_thread",
]
