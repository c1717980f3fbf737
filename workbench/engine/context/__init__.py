"""Claude Code's view of the context window: transcripts, token counts, thresholds,
compaction previews and session memory (spec 04, spec 02 §5)."""
