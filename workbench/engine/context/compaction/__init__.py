"""Compaction dry runs: what each kind of compaction would keep, summarise, clear and restore
(spec 04 §9.6–9.13). Nothing here writes or calls a model."""
