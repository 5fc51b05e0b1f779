"""`ApprovalChain`'s own state: steps, seats, audit trail, reminders (internal, carried on).

Private to the workflow: the `chain` query and the workflow's result are the
contract's `ChainView` (`chain_view`), so this state may change without changing
the wire. It is carried across continue-as-new in `ChainInput.carried`; a field
added here needs a default, or parked chains would not load it.
"""

from __future__ import annotations

from pydantic import Field

from ag_ui_temporal.workflows.contract.chains import (
    AuditEntryView,
    ChainView,
    ReminderView,
    SlotView,
    StepView,
)


class Slot(SlotView):
    """One approver's seat in a step (the view's fields; internal ones would go here)."""


# The lists below hold the internal subclasses (pydantic validates carried state into
# them); mypy sees a list override as unsafe (lists are invariant), hence the ignores.


class StepState(StepView):
    slots: list[Slot] = Field(default_factory=list)  # type: ignore[assignment]


class AuditEntry(AuditEntryView):
    pass


class Reminder(ReminderView):
    pass


class ChainState(ChainView):
    steps: list[StepState] = Field(default_factory=list)  # type: ignore[assignment]
    audit: list[AuditEntry] = Field(default_factory=list)  # type: ignore[assignment]
    reminders: list[Reminder] = Field(default_factory=list)  # type: ignore[assignment]
    audit_written: int = 0
    """How many of `audit`'s first lines the store's audit trail holds (`chains._audit`)."""


def chain_view(state: ChainState) -> ChainView:
    """The state as the contract shows it (the two agree field for field, so the dump of one
    parses as the other; the state may grow fields the wire does not show)."""
    return ChainView.model_validate(state.model_dump())
