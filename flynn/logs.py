"""structlog set-up: JSON lines for machines, readable lines on a terminal; stderr either way."""

from __future__ import annotations

import logging
import sys
from typing import Literal

import structlog

Level = Literal["debug", "info", "warning", "error"]


def configure_logging(level: Level, fmt: Literal["auto", "console", "json"]) -> None:
    """Configures structlog (and the stdlib loggers of our libraries) once for the process."""
    numeric = getattr(logging, level.upper())
    as_json = fmt == "json" or (fmt == "auto" and not sys.stderr.isatty())
    renderer: structlog.typing.Processor = (
        structlog.processors.JSONRenderer()
        if as_json
        else structlog.dev.ConsoleRenderer(colors=sys.stderr.isatty())
    )
    processors: list[structlog.typing.Processor] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    if as_json:
        # The console renderer formats tracebacks itself (and warns if they arrive pre-formatted).
        processors.append(structlog.processors.format_exc_info)
    structlog.configure(
        processors=[*processors, renderer],
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=False,
    )
    logging.basicConfig(level=max(numeric, logging.WARNING), stream=sys.stderr, force=True)
    # The HTTP clients log request URLs at INFO; keep them quiet so nothing sensitive leaks.
    for noisy in ("httpx", "httpcore", "anthropic", "openai"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
