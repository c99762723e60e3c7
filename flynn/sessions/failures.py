"""What the person is told when the model fails a turn: a reply cut off mid-stream, or a provider
error by its type (never by its message text)."""

from __future__ import annotations

import structlog

from flynn.errors import (
    AuthFailed,
    BadRequest,
    ContextTooLong,
    EmptyAnswer,
    ProviderError,
    ProviderTimeout,
    RateLimited,
)
from flynn.sessions.result import TurnResult
from flynn.sessions.tool_loop import ReplyCut

log = structlog.get_logger(__name__)


def cut_reply(cut: ReplyCut, *, saved: bool) -> TurnResult:
    """What the person saw, marked as cut off; ``saved``: their message is stored."""
    log.warning(
        "turn.reply_cut",
        error=type(cut.error).__name__,
        provider=cut.error.provider,
        chars=len(cut.partial),
    )
    note = (
        "(My reply was cut off here: the language model stopped answering. Ask again for "
        "the whole answer." + (" Your message is saved." if saved else "") + ")"
    )
    return TurnResult(f"{cut.partial.rstrip()}\n\n{note}", "llm_unavailable")


def provider_failure(exc: ProviderError, *, saved: bool) -> TurnResult:
    """The answer to a turn the model could not take; ``saved``: the message is stored."""
    log.warning("turn.provider_failed", error=type(exc).__name__, provider=exc.provider)
    kept = " Your message is saved." if saved else ""
    if isinstance(exc, RateLimited):
        return TurnResult(
            "The language model is rate-limiting me right now; please try again in a minute."
            + kept,
            "rate_limited",
        )
    if isinstance(exc, AuthFailed):
        return TurnResult(
            "The language model refused my API key, so I can't answer. Check the key in the "
            "configuration (or the ANTHROPIC_API_KEY / OPENAI_API_KEY variable)." + kept,
            "llm_unavailable",
        )
    if isinstance(exc, ProviderTimeout):
        return TurnResult(
            "The language model did not answer in time; please try again shortly." + kept,
            "llm_unavailable",
        )
    if isinstance(exc, EmptyAnswer):
        return TurnResult(
            "The language model answered with nothing at all; please ask again." + kept,
            "llm_unavailable",
        )
    if isinstance(exc, ContextTooLong | BadRequest):
        return TurnResult(
            "The language model refused this request (it may be too long)." + kept,
            "bad_request",
        )
    return TurnResult(
        "I couldn't reach the language model just now; please try again shortly." + kept,
        "llm_unavailable",
    )
