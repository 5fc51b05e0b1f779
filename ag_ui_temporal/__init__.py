"""ag-ui-temporal: durable AG-UI interrupts on Temporal."""
