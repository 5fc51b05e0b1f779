"""The thread: one workflow per AG-UI thread, owner of its transcript and its interrupts.

`workflow.ThreadWorkflow` is the workflow; its rules live in the private modules beside it
(`_runs`, `_resume`, `_window`, `_offers`, `_settlement`, `_delivery`, `_log`). What other
rooms build on is public: `turn` (what an agent can do during a run), `state` (the records
it carries), `tool_calls` and `tool_errors` (tools run as activities), `archive` (the
activities that keep what leaves the thread), and `agents` (the agents that talk in it).

Nothing is imported here: the sandbox loads this package for every thread it starts.
"""
