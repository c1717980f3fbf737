"""Living beside Claude Code: the hooks it runs, the MCP server it talks to, and the setup
that wires both (and the status line) into its settings.

These are front ends over the one engine facade, like the CLI and the app. Nothing here is
imported on the CLI's start-up path: each command imports its module when it runs.
"""
