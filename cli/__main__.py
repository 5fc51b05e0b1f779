"""`python -m cli ...`: the same as the `ag-ui-temporal` console script."""

from cli import main

main()
