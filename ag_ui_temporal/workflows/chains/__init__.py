"""Approval chains: sequential steps, quorum, reminders, expiry and escalation, on producers.

`definitions` holds a chain's definition (pure data, loadable from YAML or JSON);
`workflow.ApprovalChain` runs one, offering each seat to its approver's inbox thread;
`starting.start_chain` starts one from a client or an activity.

Nothing is imported here: the sandbox loads this package for every chain it starts.
"""
