"""Starting an approval chain from a client or an activity (not from workflow code)."""

from __future__ import annotations

from temporalio.client import Client
from temporalio.common import WorkflowIDConflictPolicy, WorkflowIDReusePolicy
from temporalio.exceptions import WorkflowAlreadyStartedError

from ag_ui_temporal.workflows.chains.definitions import ChainInput
from ag_ui_temporal.workflows.contract import TASK_QUEUE
from ag_ui_temporal.workflows.contract.chains import APPROVAL_CHAIN_WORKFLOW


async def start_chain(client: Client, chain: ChainInput, *, task_queue: str = TASK_QUEUE) -> bool:
    """Start `chain` as an `ApprovalChain` with the id `chain.chain_id`, at most once.

    True when the chain runs now (this call started it, or an earlier one did and it has
    not finished); False when a chain with that id has already finished: the id is never
    reused, so a retried activity cannot start the same approval twice. `task_queue` is
    the thread workers' (the chain runs on them)."""
    try:
        await client.start_workflow(
            APPROVAL_CHAIN_WORKFLOW,
            chain,
            id=chain.chain_id,
            task_queue=task_queue,
            id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE,
            id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
        )
    except WorkflowAlreadyStartedError:
        return False
    return True
