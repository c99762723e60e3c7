"""structlog set-up: JSON lines for machines, readable lines on a terminal; to stderr, or to the
stream a command hands over (``flynn chat`` on a terminal logs to a file, not into the talk)."""

from __future__ import annotations

import logging
import sys
from typing import Literal, TextIO

import structlog

from flynn.credentials import redact

Level = Literal["debug", "info", "warning", "error"]


def configure_logging(
    level: Level, fmt: Literal["auto", "console", "json"], stream: TextIO | None = None
) -> None:
    """Configures structlog (and the stdlib loggers of our libraries) once for the process, to
    write to ``stream`` (stderr when ``None``); ``auto`` is readable lines when it is a terminal,
    JSON lines otherwise (a file, a pipe, the journal)."""
    stream = sys.stderr if stream is None else stream
    numeric = getattr(logging, level.upper())
    as_json = fmt == "json" or (fmt == "auto" and not stream.isatty())
    renderer: structlog.typing.Processor = (
        structlog.processors.JSONRenderer()
        if as_json
        else structlog.dev.ConsoleRenderer(colors=stream.isatty())
    )
    processors: list[structlog.typing.Processor] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    if as_json:
        # The console renderer formats tracebacks itself (and warns if they arrive pre-formatted).
        processors.append(structlog.processors.format_exc_info)
    processors.append(redact_event)
    structlog.configure(
        processors=[*processors, renderer],
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        logger_factory=structlog.PrintLoggerFactory(file=stream),
        cache_logger_on_first_use=False,
    )
    logging.basicConfig(level=max(numeric, logging.WARNING), stream=stream, force=True)
    # The HTTP clients log request URLs at INFO; keep them quiet so nothing sensitive leaks.
    for noisy in ("httpx", "httpcore", "anthropic", "openai"):
        logging.getLogger(noisy).setLevel(logging.WARNING)


def redact_event(
    logger: object, method: str, event: structlog.typing.EventDict
) -> structlog.typing.EventDict:
    """A log line never holds a credential: every text field of the event is redacted (a
    refused tool call's reason, an error's message, a formatted traceback)."""
    for key, value in event.items():
        if isinstance(value, str) and value:
            event[key] = redact(value)[0]
    return event
