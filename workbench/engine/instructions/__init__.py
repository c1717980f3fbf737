"""The instruction files Claude Code loads: CLAUDE.md sources, rules, imports, in load order.

`engine.instructions.report()` answers which files load, in what order, at what token cost,
which rules wait for a matching file, and every way a file fails to load.
"""
