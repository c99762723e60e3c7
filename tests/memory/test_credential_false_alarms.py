"""What REDACTION_VERSION 3's rules took from ordinary chat and files that held no credential
(t-review7): an id after a word for several credentials, a sentence under a credential's name,
and a JSON file's other content when it could not be written back as it was read. Every such
redaction is content lost for good, so each case here is one a person would hit."""

from __future__ import annotations

import json

import pytest

from flynn.credentials import REDACTED_SECRET, redact, redact_file


@pytest.mark.parametrize(
    "line",
    [
        "credential 4471-XK refers to the order, not a login",
        "credentials v2.3.1 release notes are out",
        "Login details COVID19-test portal are in my email",
        "passwords 2FA-enabled on all accounts now",
        "credentials AWS_PROFILE=dev in the shell",
        "Zugangsdaten A320neo-Schulung im Wiki",
    ],
)
def test_an_id_after_a_word_for_several_credentials_is_left_alone(line: str) -> None:
    # Only a password's own word is followed bare by one ('wifi password GuestNet2024').
    assert redact(line) == (line, 0)


@pytest.mark.parametrize(
    ("line", "secret"),
    [
        ("wifi password GuestNet2024", "GuestNet2024"),
        ("Passwort Tr0ub4dor&3", "Tr0ub4dor&3"),
        ("credentials: bob / Winter2023!", "Winter2023!"),
        ("my login details are Winter2023!", "Winter2023!"),
    ],
)
def test_a_credential_after_its_own_word_is_still_removed(line: str, secret: str) -> None:
    kept, found = redact(line)
    assert secret not in kept and found == 1


@pytest.mark.parametrize(
    "text",
    [
        "Passwords:\n  Remember to rotate them in Q3 2025",
        "passwords:\n  - rotate every 90 days\n  - never reuse",
        "passwords:\n  - work laptop\n  - bank card 2",
        "password =\n  see keepass, entry Bank2024\nhost = db1",
    ],
)
def test_a_sentence_under_a_credentials_name_is_left_alone(text: str) -> None:
    # Notes under a heading, not YAML: each line's first word was taken for the value.
    assert redact(text) == (text, 0)


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("password:\n  S3cr3tValue!  # prod", "S3cr3tValue!"),
        ('password:\n  "correct horse battery staple"', "correct horse battery staple"),
        ("credentials:\n  - bob / Winter2023!", "Winter2023!"),
        ("passwords:\n  - hunter22x\n  - trombone", "trombone"),
    ],
)
def test_a_value_under_a_credentials_name_is_still_removed(text: str, secret: str) -> None:
    kept, found = redact(text)
    assert secret not in kept and found >= 1, kept


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        # json.loads keeps the last of two equal keys: the first note went with the secret.
        ('{"note": "call Ana", "note": "buy milk", "password": "hunter22x"}', "call Ana"),
        # Beyond a float: written back as 1.2345678901234567e+19.
        ('{"order": 12345678901234567890.125, "password": "hunter22x"}', "890.125"),
        # Beyond a float's range: written back as Infinity, which is no JSON.
        ('{"limit": 1e400, "password": "hunter22x"}', "1e400"),
    ],
)
def test_json_that_cannot_be_written_back_as_read_keeps_everything_else(
    text: str, kept: str
) -> None:
    for name in ("notes.json", "TASKS.json"):
        redacted, found = redact_file(name, text)
        assert found == 1 and "hunter22x" not in redacted and REDACTED_SECRET in redacted
        assert kept in redacted, redacted


def test_json_read_faithfully_is_still_redacted_by_its_keys() -> None:
    text = '{"price": 19.90, "pin": "4711", "big": 123456789012345678901234567890}'
    redacted, found = redact_file("order.json", text)
    assert found == 1
    assert json.loads(redacted) == {
        "price": 19.9,
        "pin": REDACTED_SECRET,
        "big": 123456789012345678901234567890,
    }


@pytest.mark.parametrize(
    "text",
    [
        "- Wifi password:\n  - ask the host\n- Likes: green tea",
        "the wifi password is\nwritten on the router, ask Ana",
        "Wifi password:\nsee the sticker under the router",
    ],
)
def test_a_sentence_below_a_credentials_words_is_left_alone(text: str) -> None:
    assert redact(text) == (text, 0)
