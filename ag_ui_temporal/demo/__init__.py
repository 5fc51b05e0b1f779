"""The demo: the `assistant` agent, its tools, its sentences and its offline model.

The library never imports this room; the worker and the CLI serve the demo from it.
"""
