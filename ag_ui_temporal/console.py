"""The `ag-ui-temporal` console script.

The core install carries it (a wheel's scripts cannot depend on an extra), but every command
runs or talks to the server's parts. Without the `server` extra it says so in one line and
exits 2, the way a process that cannot start does (cli/reasons.py), not with a traceback.
"""

import sys

EXTRA = "server"


def main() -> None:
    try:
        from ag_ui_temporal.cli import main as run
    except ModuleNotFoundError as missing:
        if (missing.name or "").partition(".")[0] == "ag_ui_temporal":
            raise  # our own module missing is a broken install, not a missing extra
        sys.stderr.write(
            f"ag-ui-temporal: the command line needs the `{EXTRA}` extra "
            f"(pip install 'ag-ui-temporal[{EXTRA}]'): {missing.name} is not installed\n"
        )
        raise SystemExit(2) from None
    run()
