"""structlog set-up: JSON lines for machines, readable lines on a terminal; to stderr, or to the
stream a command hands over (``flynn chat`` on a terminal logs to a file, not into the talk).
Every line, our libraries' too, is redacted (``LogRedaction``)."""

from __future__ import annotations

import logging
import sys
import traceback
from collections.abc import Iterable, Mapping
from typing import Literal, TextIO

import structlog

from flynn.credentials import REDACTED_SECRET, is_secret_name, redact

Level = Literal["debug", "info", "warning", "error"]

SECRET_MIN_CHARS = 8
"""The shortest secret of the install struck by value: a shorter one (a database password
``flynn``) would strike ordinary words of every line; the credential gate still reads it."""


def configure_logging(
    level: Level,
    fmt: Literal["auto", "console", "json"],
    stream: TextIO | None = None,
    *,
    secrets: Iterable[str] = (),
) -> None:
    """Configures structlog (and the stdlib loggers of our libraries) once for the process, to
    write to ``stream`` (stderr when ``None``); ``auto`` is readable lines when it is a terminal,
    JSON lines otherwise (a file, a pipe, the journal). ``secrets``: the install's own (its keys,
    tokens, database URL), struck from every line whatever their shape."""
    stream = sys.stderr if stream is None else stream
    redaction = LogRedaction(secrets)
    numeric = getattr(logging, level.upper())
    as_json = fmt == "json" or (fmt == "auto" and not stream.isatty())
    renderer: structlog.typing.Processor = (
        structlog.processors.JSONRenderer()
        if as_json
        else structlog.dev.ConsoleRenderer(
            colors=stream.isatty(), exception_formatter=redaction.write_traceback
        )
    )
    processors: list[structlog.typing.Processor] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    if as_json:
        # The console renderer formats tracebacks itself (and warns if they arrive pre-formatted).
        processors.append(structlog.processors.format_exc_info)
    processors.append(redaction.event)
    structlog.configure(
        processors=[*processors, renderer],
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        logger_factory=structlog.PrintLoggerFactory(file=stream),
        cache_logger_on_first_use=False,
    )
    logging.basicConfig(level=max(numeric, logging.WARNING), stream=stream, force=True)
    for handler in logging.getLogger().handlers:
        handler.addFilter(redaction.record)
    # The HTTP clients log request URLs at INFO; keep them quiet so nothing sensitive leaks.
    for noisy in ("httpx", "httpcore", "anthropic", "openai"):
        logging.getLogger(noisy).setLevel(logging.WARNING)


def named_credentials(values: Mapping[str, str]) -> list[str]:
    """The values whose name is a credential's (an environment's ``OPENAI_API_KEY``, an MCP
    server's ``GITHUB_TOKEN``), for ``configure_logging``'s ``secrets``."""
    return [value for name, value in values.items() if is_secret_name(name)]


class LogRedaction:
    """What a log line's text goes through: the install's own secrets struck by value (a key a
    server echoed in its error, quoted in a traceback's cause, looks like no known vendor's),
    then the credential gate. For structlog's events and tracebacks and the stdlib's records
    (python-telegram-bot, the MCP client, asyncio log there)."""

    def __init__(self, secrets: Iterable[str]) -> None:
        # Longest first, so a secret holding another is struck whole.
        kept = {secret for secret in secrets if len(secret) >= SECRET_MIN_CHARS}
        self._secrets = sorted(kept, key=len, reverse=True)

    def text(self, value: str) -> str:
        for secret in self._secrets:
            if secret in value:
                value = value.replace(secret, REDACTED_SECRET)
        return redact(value)[0]

    def event(
        self, logger: object, method: str, event: structlog.typing.EventDict
    ) -> structlog.typing.EventDict:
        """Every text field of the event (a refused tool call's reason, an error's message, a
        formatted traceback)."""
        for key, value in event.items():
            if isinstance(value, str) and value:
                event[key] = self.text(value)
        return event

    def write_traceback(self, out: TextIO, exc_info: structlog.typing.ExcInfo) -> None:
        """The console's traceback, formatted after the event's fields were redacted."""
        out.write("\n" + self.text("".join(traceback.format_exception(*exc_info))).rstrip("\n"))

    def record(self, record: logging.LogRecord) -> bool:
        """A stdlib record's message and traceback, formatted here and redacted."""
        record.msg, record.args = self.text(record.getMessage()), None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = self.text(record.exc_text)
        if record.stack_info:
            record.stack_info = self.text(record.stack_info)
        return True
