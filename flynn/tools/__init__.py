"""Flynn's tools: what the model may do, not only say."""
