"""The credential corpus (issue 22, item 6) is redacted phrasing by phrasing, and redacting is
idempotent; ordinary sentences survive untouched; orders hidden in text are caught and their
look-alikes are not; JSON arguments lose their credentials and keep their shape."""

from __future__ import annotations

import json

import pytest
from credentials_corpus import CREDENTIALS, NOT_ORDERS, ORDERS, ORDINARY

from flynn.credentials import (
    REDACTED_SECRET,
    REMEMBERED_LINE_CHARS,
    _redact_lines,
    _redact_remembered,
    is_secret,
    is_secret_name,
    redact,
    redact_json,
)
from flynn.orders import is_injection


def test_the_corpora_are_as_large_as_the_issue_asks() -> None:
    assert len(CREDENTIALS) >= 60
    assert len({text for text, _ in CREDENTIALS}) == len(CREDENTIALS)


@pytest.mark.parametrize(("text", "secret"), CREDENTIALS, ids=[t[:40] for t, _ in CREDENTIALS])
def test_every_credential_phrasing_is_redacted(text: str, secret: str) -> None:
    redacted, count = redact(text)
    assert secret not in redacted
    assert count >= 1
    assert REDACTED_SECRET in redacted
    assert redact(redacted) == (redacted, 0)  # a second pass finds nothing more


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_sentences_survive_untouched(text: str) -> None:
    assert redact(text) == (text, 0)
    assert not is_injection(text)


@pytest.mark.parametrize("text", ORDERS)
def test_orders_hidden_in_text_are_caught(text: str) -> None:
    assert is_injection(text)


@pytest.mark.parametrize("text", NOT_ORDERS)
def test_the_same_words_without_an_order_are_not_one(text: str) -> None:
    assert not is_injection(text)


def test_json_arguments_lose_credentials_and_keep_their_shape() -> None:
    refused = json.dumps({"field": "password", "text": "hunter2"})
    cleaned, count = redact_json(refused)
    assert count == 1 and "hunter2" not in cleaned
    assert json.loads(cleaned) == {"field": "password", "text": REDACTED_SECRET}

    nested = json.dumps([{"calls": [["c1", "remember", json.dumps({"text": "my PIN is 4821"})]]}])
    cleaned, count = redact_json(nested)
    assert count == 1 and "4821" not in cleaned
    assert json.loads(json.loads(cleaned)[0]["calls"][0][2]) == {
        "text": f"my PIN is {REDACTED_SECRET}"
    }

    plain = json.dumps({"text": "buy milk", "when": "tomorrow 9:00"})
    assert redact_json(plain) == (plain, 0)  # unchanged JSON comes back byte for byte
    assert redact_json("not json, pw=abc123") == (f"not json, pw={REDACTED_SECRET}", 1)


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        ("DB_PASSWORD", True),
        ("apiKey", True),
        ("bank pin", True),
        ("door_code", True),
        ("client_secret", True),
        ("max_tokens", False),
        ("PASSWORD_MIN_LENGTH", False),
        ("token_url", False),
        ("zip_code", False),
        ("favorite_color", False),
    ],
)
def test_names_of_credentials(name: str, secret: bool) -> None:
    assert is_secret_name(name) is secret
    assert is_secret(name, "x") is secret


def test_redacting_lines_again_gives_what_redacting_them_anew_does() -> None:
    """Recent lines are redacted once (a message is redacted where it arrives, where it is
    stored and where it is sent; a system prompt repeats most of its lines turn after turn):
    what comes back is what redacting from scratch gives, through evictions too, and a line too
    long to remember is redacted in full each time."""
    credentials = [text for text, _ in CREDENTIALS if "-----BEGIN" not in text]
    texts = credentials + list(ORDINARY)
    texts += [f"note {n}: the api key is sk-live-{n:04d}4f9d8a7b6c5e4d3c2b" for n in range(300)]
    prompt = "\n".join(texts[:40])  # many lines, each seen before on its own
    long = " ".join(credentials) * 3
    assert len(long) > REMEMBERED_LINE_CHARS
    texts += [prompt, long, prompt + "\n" + long]
    _redact_remembered.cache_clear()
    fresh = [_from_scratch(text) for text in texts]
    for _ in range(2):  # the second round after the first's lines were evicted
        assert [redact(text) for text in texts] == fresh
    hits = _redact_remembered.cache_info().hits
    assert redact(prompt) == _from_scratch(prompt)
    assert _redact_remembered.cache_info().hits == hits + 40
    assert redact(long)[1] >= len(credentials)


def _from_scratch(text: str) -> tuple[str, int]:
    """``redact`` without anything remembered, for text without a private key block."""
    lines = text.split("\n")
    count = _redact_lines(lines, remember=False)
    return "\n".join(lines), count


@pytest.mark.parametrize(
    "text",
    ["password: `hunter2`", "my PIN:\n`4711`", "DB_PASSWORD=`s3cret`", "token = `abc` and `x`"],
)
def test_a_value_in_backticks_keeps_them_and_stays_redacted(text: str) -> None:
    # Its opening backtick was once taken as part of the value and redacted again with the
    # mark inside: "password: [secret removed] removed]`".
    redacted, count = redact(text)
    assert count >= 1 and f"`{REDACTED_SECRET}`" in redacted
    assert "removed] removed]" not in redacted
    assert redact(redacted) == (redacted, 0)


def test_json_keeps_its_layout_when_a_credential_is_taken_out() -> None:
    value = {"tasks": [{"text": "my password is hunter2x", "done": False}]}
    cleaned = {"tasks": [{"text": f"my password is {REDACTED_SECRET}", "done": False}]}
    for indent in (2, 4, "\t"):
        text = json.dumps(value, indent=indent) + "\n"
        assert redact_json(text) == (json.dumps(cleaned, indent=indent) + "\n", 1)
    # On one line (tool arguments), compact, as before.
    assert redact_json(json.dumps(value)) == (
        json.dumps(cleaned, separators=(",", ":")),
        1,
    )
