"""Sessions: the per-conversation orchestrator, prompt assembly and compaction."""
