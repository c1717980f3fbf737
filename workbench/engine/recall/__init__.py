"""Recall: which memories the agent would be shown for a prompt, and why (spec 02 §3).

`RecallService` (reached as `engine.recall`) runs either Claude Code's model selector or the
offline BM25 ranker and explains the result: reasons, near misses, freshness and exactly
what would be injected.
"""
