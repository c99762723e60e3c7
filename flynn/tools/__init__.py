"""Flynn's tools: what the model may do, not only say (DESIGN.md section 13)."""
