"""`python -m ag_ui_temporal.cli ...`: the same as the `ag-ui-temporal` console script."""

from ag_ui_temporal.cli import main

main()
