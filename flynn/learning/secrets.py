"""Credentials are never memory: what looks like a password, a key, a token or a card number is
found here, so it is never stored as a fact (``is_secret``) and is redacted from stored messages
(``redact_secrets``). The value shapes are the vendors' own (``sk-``, ``ghp_``, ``AKIA``...);
the words that announce a secret ("password", "api key", "PIN") are a short list, since a
credential announced in words the list lacks is still caught by its shape when it has one."""

from __future__ import annotations

import re

REDACTED_SECRET = "[secret removed]"

_SECRET_WORDS = (
    r"pass(?:word|wd|phrase|code)s?|pins?(?:\s*codes?)?|api[\s_-]?keys?|access[\s_-]?keys?"
    r"|secret(?:[\s_-]?keys?)?|(?:auth|access|bearer|api|bot|refresh)?[\s_-]?tokens?"
    r"|private[\s_-]?keys?|ssh[\s_-]?keys?|credit[\s_-]?card(?:[\s_-]?numbers?)?"
    r"|card[\s_-]?numbers?|cvv|cvc|security[\s_-]?codes?|iban|social[\s_-]?security(?:[\s_-]?numbers?)?"
    r"|ssn|seed[\s_-]?phrases?|recovery[\s_-]?(?:codes?|phrases?|keys?)|otp|2fa[\s_-]?codes?"
    r"|credentials?|wi-?fi[\s_-]?(?:password|key)"
)
_SECRET_FIELD = re.compile(rf"^(?:[a-z0-9]+_)*(?:{_SECRET_WORDS})(?:_[a-z0-9]+)*$", re.IGNORECASE)
# "my password is hunter2", "the admin password: hunter2", "api key = sk-...": the value after.
_ANNOUNCED = re.compile(
    rf"\b(?P<what>{_SECRET_WORDS})\b(?:\s+(?:for|to|of|on|at)\s+(?:the\s+|my\s+|our\s+)?[\w.@-]+){{0,2}}"
    r"\s*(?:is|was|are|:|=|->)\s*(?:now\s+)?[\"'`]?(?P<value>[^\s\"'`,;]{3,200})",
    re.IGNORECASE,
)
_SHAPES = re.compile(
    r"\b(?:sk|pk|rk)[-_](?:live|test|proj|ant)?[-_]?[A-Za-z0-9_-]{16,}"
    r"|\bgh[pousr]_[A-Za-z0-9]{20,}|\bgithub_pat_[A-Za-z0-9_]{20,}"
    r"|\bxox[abposr]-[A-Za-z0-9-]{10,}"
    r"|\bAKIA[0-9A-Z]{16}\b|\bAIza[0-9A-Za-z_-]{30,}"
    r"|\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"
    r"|-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)"
    r"|\b\d{6,12}:[A-Za-z0-9_-]{30,}\b",  # a Telegram bot token
)
# A long run of letters and digits, mixed: a generated key. Hexadecimal runs (commit hashes,
# checksums) and UUIDs are ids people talk about, not secrets, and are left alone.
_TOKEN = re.compile(r"(?<![\w/.-])(?=[A-Za-z0-9_-]{24,}\b)(?=\S*\d)(?=\S*[A-Za-z])[A-Za-z0-9_-]+")
_NOT_A_KEY = re.compile(
    r"[0-9a-f]+|[0-9A-F]+|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
)
_CARD = re.compile(r"(?<!\d)(?:\d[ -]?){12,18}\d(?!\d)")


def is_secret(field: str | None, value: str) -> bool:
    """Whether a fact would store a credential: its field names one, or its value has one's
    shape (a vendor key, a token, a card number) or announces one."""
    if field and _SECRET_FIELD.match(field.replace(" ", "_")):
        return True
    return _has_secret(value)


def redact_secrets(text: str) -> tuple[str, int]:
    """``text`` with every credential replaced by ``REDACTED_SECRET``, and how many."""
    count = 0

    def announced(match: re.Match[str]) -> str:
        nonlocal count
        value = match["value"]
        if _is_ordinary_word(value):
            return match.group()
        count += 1
        start, end = match.span("value")
        whole = match.group()
        offset = match.start()
        return whole[: start - offset] + REDACTED_SECRET + whole[end - offset :]

    def shaped(match: re.Match[str]) -> str:
        nonlocal count
        count += 1
        return REDACTED_SECRET

    def generated(match: re.Match[str]) -> str:
        return match.group() if _NOT_A_KEY.fullmatch(match.group()) else shaped(match)

    text = _ANNOUNCED.sub(announced, text)
    text = _SHAPES.sub(shaped, text)
    text = _TOKEN.sub(generated, text)
    text = _CARD.sub(lambda match: shaped(match) if _luhn(match.group()) else match.group(), text)
    return text, count


def _has_secret(text: str) -> bool:
    if _SHAPES.search(text):
        return True
    if any(not _NOT_A_KEY.fullmatch(match.group()) for match in _TOKEN.finditer(text)):
        return True
    if any(_luhn(match.group()) for match in _CARD.finditer(text)):
        return True
    return any(not _is_ordinary_word(match["value"]) for match in _ANNOUNCED.finditer(text))


def _is_ordinary_word(value: str) -> bool:
    """'my password is wrong', 'the token is expired': a plain word after the announcement
    says something about the secret, not the secret itself."""
    return value.isalpha() and value.islower() and value in _STATES


_STATES = frozenset(
    """
    wrong incorrect invalid expired old new weak strong long short lost stolen leaked reset
    changed missing broken gone safe secure required needed here there the a an my your our
    their this that it not too very in on at for of to and or
    """.split()
)


def _luhn(candidate: str) -> bool:
    digits = [int(char) for char in candidate if char.isdigit()]
    if not 13 <= len(digits) <= 19:
        return False
    total = 0
    for index, digit in enumerate(reversed(digits)):
        if index % 2 == 1:
            digit *= 2
            if digit > 9:
                digit -= 9
        total += digit
    return total % 10 == 0
