"""The memory agents: the memory prompt, extraction, session-memory updates, daily logs, dream."""
