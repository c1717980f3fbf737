"""The team sync client: config, keys, the wire protocol and transport, local state, and the
client that pushes and pulls the team folder (models.py: what the front ends render)."""
