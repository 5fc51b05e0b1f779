"""The demo: the `assistant` agent, its tools, its sentences and its offline model.

The library never imports this room; the worker and the CLI serve the demo from it.
`workflow_agent.AssistantAgent` is the assistant's workflow side, with `legacy` and
`scripted_model` for the threads parked on the scripted assistant (`LLM_ASSISTANT_PATCH`).
"""
