"""Approvals that reach people: who they are, the channels that tell them, the links they
decide from. Host code (I/O): the worker's activities and the gateway use it; workflows only
name who is told (`workflows.contract.notices`)."""
