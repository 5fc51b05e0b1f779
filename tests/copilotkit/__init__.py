"""CopilotKit against the gateway: its real `useInterrupt`, runtime and browser page (issue 39)."""
