"""Distillation: each person's MEMORY_SHORT/MID/LONG.md, rewritten from
their messages, facts and working memory, on the durable schedule or with ``flynn distill``."""
