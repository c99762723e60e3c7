"""Keys and card numbers shaped like one are removed wherever they sit in a line: the shape
patterns only run where a line holds a word long enough or digits enough, which every one of
them has."""

from __future__ import annotations

import pytest
from credentials_corpus import CREDENTIALS, ORDINARY

from flynn.credentials import REDACTED_SECRET, redact

SHAPED = [
    "Xk9mP2qR7vL4nB8wT3yZ6cF1",  # a generated key, 24 characters
    "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw",  # a Telegram bot token
    "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",  # an AWS secret access key
]


@pytest.mark.parametrize("secret", SHAPED)
def test_a_shaped_key_in_a_line_with_a_date_is_removed(secret: str) -> None:
    text, found = redact(f"On 2026-05-01 at 10:30 I used {secret} for the deploy")
    assert secret not in text
    assert REDACTED_SECRET in text
    assert found >= 1


def test_a_card_number_is_removed_with_or_without_spaces() -> None:
    for card in ("4111 1111 1111 1111", "4111-1111-1111-1111", "4111111111111111"):
        text, found = redact(f"my card is {card}, expires 12/27")
        assert card not in text
        assert found == 1


def test_lines_with_short_words_and_few_digits_are_left_alone() -> None:
    line = "Call Ana at 10:30 on 2026-05-01 about the 3 boxes"
    assert redact(line) == (line, 0)


@pytest.mark.parametrize(
    ("line", "kept"),
    [
        ("MY DOOR CODE IS 4711", "MY DOOR CODE IS "),
        ("CHANGE MY PIN TO 4821", "CHANGE MY PIN TO "),
        ("USE Hunter2x AS THE PASSWORD", "USE {} AS THE PASSWORD"),
        ("My Password's Hunter2x", "My Password's "),
        ("MY SEED PHRASE IS apple banana cherry dog", "MY SEED PHRASE IS "),
        (
            "MACHINE example.com LOGIN bob PASSWORD Hunter2x",
            "MACHINE example.com LOGIN bob PASSWORD ",
        ),
        ("PIN 4711", "PIN "),
        # 'ſ' is an 's' to a case-insensitive search, but not to str.lower().
        ("about the code: the ſecret is abc123def", "about the code: the ſecret is "),
    ],
)
def test_a_credentials_word_is_found_in_any_case(line: str, kept: str) -> None:
    """The announcing patterns are tried only where a credential's word stands, looked for in
    the lower-cased line: a line in capitals, or with a letter that only case-insensitive
    matching pairs with an ASCII one, is redacted all the same."""
    expected = kept.format(REDACTED_SECRET) if "{}" in kept else kept + REDACTED_SECRET
    assert redact(line) == (expected, 1)


def test_a_credentials_stem_inside_other_words_leaves_the_line_alone() -> None:
    line = "the barcode scanner in the spinning room prints keyboard codes: see the manual"
    assert redact(line) == (line, 0)


@pytest.mark.parametrize(
    ("line", "secret"),
    [
        # A recalled turn as the prompt shows it, stored by an install that kept credentials.
        ("- 2025-03-02 Sun, they said: pay with 4111 1111 1111 1111 please", "4111 1111 1111"),
        ("- 2025-03-02 Sun, they said: my pwd: Hunter22x", "Hunter22x"),
        ("- 2025-03-02 Sun, you said: run curl --user bob:s3cretpw https://x", "s3cretpw"),
        ("- 2025-03-02 Sun, they said: the door code is 4711", "4711"),
    ],
)
def test_a_credential_in_a_recalled_line_is_removed(line: str, secret: str) -> None:
    """``code``, ``pwd`` and ``--user`` are found by the shorter stems inside them, and a
    card's digits are counted with the date's."""
    text, found = redact(line)
    assert secret not in text
    assert found >= 1


def test_thirteen_digits_with_a_date_are_tried_as_a_card_and_twelve_are_not() -> None:
    assert redact("- 2025-03-02 Sun, they said: 4111 1111 1111 1111")[1] == 1
    # 8 + 4 digits: too few for any card, so no card pattern runs (a lone 4-digit number).
    assert redact("- 2025-03-02 Sun, they said: 4111 apples")[1] == 0


def _value_on_the_next_line(phrase: str, secret: str) -> str | None:
    """``phrase`` with the line broken before its secret ('my password is\nhunter2'), as a
    person presses Enter or a wiki page sets a value under its label; ``None`` where no word
    comes before the secret."""
    before, _, after = phrase.partition(secret)
    quote = before[-1:] if before[-1:] in ("'", '"') else ""
    label = before.removesuffix(quote)
    if not label.endswith(" ") or not label.strip():
        return None
    return f"{label.rstrip()}\n{quote}{secret}{after}"


# Written on one line only: a command, a header, a login with its address, "use X as".
ONE_LINE_FORMS = ("curl ", "Authorization", "psql ", "@", "use ", "credentials: bob /")

ON_TWO_LINES = [
    (two_lines, secret)
    for phrase, secret in CREDENTIALS
    if not any(form in phrase for form in ONE_LINE_FORMS)
    and "\n" not in phrase  # on several lines already (YAML, a block scalar)
    and (two_lines := _value_on_the_next_line(phrase, secret)) is not None
]


@pytest.mark.parametrize(("two_lines", "secret"), ON_TWO_LINES)
def test_a_credential_announced_at_a_lines_end_is_removed_from_the_next(
    two_lines: str, secret: str
) -> None:
    # As typed, among other lines, indented, quoted (an e-mail's or a chat's '>'), as a list.
    for start in ("", "  ", "> ", "- "):
        text = f"Notes\n{start}{two_lines.replace(chr(10), chr(10) + start)}\nthanks"
        kept, found = redact(text)
        assert secret not in kept, text
        assert found >= 1
        assert redact(kept) == (kept, 0)
        assert kept.split("\n")[2].startswith(start)  # the quote or the bullet stays


@pytest.mark.parametrize("sentence", ORDINARY)
def test_an_ordinary_sentence_over_two_lines_is_left_alone(sentence: str) -> None:
    for word in (" is ", ": ", " = "):
        if word in sentence:
            two_lines = sentence.replace(word, word.rstrip() + "\n", 1)
            assert redact(two_lines) == (two_lines, 0)


def test_a_block_under_a_credentials_name_is_left_alone() -> None:
    code = (
        "if not token:\n    return None\n"
        "for password in passwords:\n    text = text.replace(password, HIDDEN)"
    )
    assert redact(code) == (code, 0)


def test_a_value_in_a_list_under_its_credential_is_removed() -> None:
    # USER.md as a person writes it on the memory page: the value an item under its label.
    text = "- Wifi password:\n  - GuestNet2024\n- Likes: green tea"
    assert redact(text) == ("- Wifi password:\n  - [secret removed]\n- Likes: green tea", 1)


@pytest.mark.parametrize(
    ("line", "secret"),
    [
        ("wifi password GuestNet2024", "GuestNet2024"),
        ("the guest wifi password GuestNet2024 for the weekend", "GuestNet2024"),
        ("Passwort Tr0ub4dor&3", "Tr0ub4dor&3"),
        ("router password 48213377.", "48213377"),
        ("my password P@ssword!", "P@ssword!"),
    ],
)
def test_a_password_right_after_its_word_is_removed(line: str, secret: str) -> None:
    kept, found = redact(line)
    assert secret not in kept and found == 1
    assert redact(kept) == (kept, 0)


@pytest.mark.parametrize(
    "line",
    [
        "password reset link",
        "password manager",
        "the password is long",
        "my password policy",
        "change the wifi password tomorrow",
        "a password 12-character minimum",
        "the password https://example.com/reset2 page",
        "passwords protected with bcrypt",
        "my password 2024",
        "4. **Apple Passwords / Google Password Manager**: fine on one platform",
    ],
)
def test_a_word_after_a_password_that_is_no_password_is_left_alone(line: str) -> None:
    assert redact(line) == (line, 0)


@pytest.mark.parametrize(
    ("line", "secrets"),
    [
        ("passwords: hunter22x, Tr0ub4dor&3, 9f8e7d6c", ("hunter22x", "Tr0ub4dor", "&3", "9f8e")),
        ("my backup codes are A1B2C3,D4E5F6; G7H8I9.", ("A1B2C3", "D4E5F6", "G7H8I9")),
        ("DB_PASSWORDS=abc123,def456", ("abc123", "def456")),
        ("`DB_PASSWORDS=abc123,def456`: in backticks", ("abc123", "def456")),
        ("API_PINS: 4711, 0815", ("4711", "0815")),
    ],
)
def test_every_value_of_a_list_under_one_name_is_removed(
    line: str, secrets: tuple[str, ...]
) -> None:
    kept, found = redact(line)
    assert not any(secret in kept for secret in secrets), kept
    assert found == 1
    assert redact(kept) == (kept, 0)


def test_a_list_ends_where_its_values_stop_looking_made_up() -> None:
    assert redact("my password is hunter22x, thanks") == (
        "my password is [secret removed], thanks",
        1,
    )
    # A connection string's other names and values are not the password's.
    assert redact("Password=S3cret1;Host=db1;Port=5432") == (
        "Password=[secret removed];Host=db1;Port=5432",
        1,
    )


@pytest.mark.parametrize(
    ("text", "secrets"),
    [
        ("password:\n    S3cr3tValue!", ("S3cr3tValue",)),
        ("db:\n  password:\n    S3cr3tValue!\n  host: db1", ("S3cr3tValue",)),
        ("[db]\nhost = db1\npassword =\n    S3cr3tValue!\nport = 5432", ("S3cr3tValue",)),
        ("DB_PASSWORD=\n  S3cr3tValue!", ("S3cr3tValue",)),
        ("passwords:\n  - hunter22x\n  - Tr0ub4dor&3\nnext: 1", ("hunter22x", "Tr0ub4dor")),
        ("password:\n  # the database's\n  hunter22x", ("hunter22x",)),
        ("secret: |\n  line1abc9\n\n  line2xyz8\nother: 1", ("line1abc9", "line2xyz8")),
        ("client_secret: >-\n    folded Secret\n    over lines\n", ("folded", "over lines")),
    ],
)
def test_a_value_indented_under_its_credentials_name_is_removed(
    text: str, secrets: tuple[str, ...]
) -> None:
    # YAML, an INI or .env block pasted into chat: the value on the lines under its name.
    kept, found = redact(text)
    assert not any(secret in kept for secret in secrets), kept
    assert found >= 1
    assert redact(kept) == (kept, 0)
    assert len(kept.split("\n")) == len(text.split("\n"))


@pytest.mark.parametrize(
    "text",
    [
        "password:\n  min_length: 12\n  max_age: 90d",
        "description: |\n  my text\n  over lines",
        "if not token:\n    return None",
        "for token in tokens:\n    count += 1",
    ],
)
def test_what_is_indented_under_a_name_that_holds_no_credential_is_left_alone(
    text: str,
) -> None:
    assert redact(text) == (text, 0)


def test_a_block_scalars_indicator_is_no_value() -> None:
    # It used to be taken for the value ('secret: [secret removed]'), and the block kept.
    assert redact("secret: |\n  Abc123xyz") == ("secret: |\n  [secret removed]", 1)


def test_a_mark_in_json_read_as_text_is_not_taken_for_a_value() -> None:
    # A tool's JSON output is read again as text: 'is\\n[secret' is no password.
    text = '{"note":"our wifi password is\\n[secret removed]"}'
    assert redact(text) == (text, 0)


def test_a_value_that_runs_into_a_mark_is_not_redacted_over_it() -> None:
    # config.example.yaml's comment: the URL's password went first, then 'password:' took
    # everything up to the mark's middle ('[secret removed] removed]@db.internal').
    line = "# the password: FLYNN_STORAGE__URL=postgresql://flynn:PASSWORD@db.internal/flynn."
    assert redact(line) == (line.replace(":PASSWORD@", f":{REDACTED_SECRET}@"), 1)


def test_a_name_with_its_own_value_below_an_empty_password_is_left_alone() -> None:
    # YAML with the password left empty: the next key is no password ('host: [secret removed]').
    for text in (
        "password:\nhost: db1",
        "- password:\n- host: db1",
        "db:\n  password:\n  port: 5432",
    ):
        assert redact(text) == (text, 0)
