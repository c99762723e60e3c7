"""Credentials are never kept nor passed on: a password, a key, a token, a one-time or backup code,
a PIN or a door code is found here and replaced by ``REDACTED_SECRET`` (``redact``; ``redact_json``
for JSON such as tool arguments), and ``is_secret`` says whether a fact would store one.

Found by announcement ('my password is ...', 'Passwort: ...', 'change my PIN to ...', '4711 is the
door code', 'wifi password GuestNet2024' when the value looks made up), in the words of
``flynn.credential_words``, every value of a list ('passwords: a1b2c3, d4e5f6'); by assignment in
pasted config and shell lines (``DB_PASSWORD=...``, ``"password": "..."``, ``mysql -p...``,
``curl -u user:...``, ``Authorization: Bearer ...``), the value on the line below or indented
under its name (YAML, INI, ``secret: |``); in URLs (``postgres://app:...@host``); and by the
value's own shape (vendor keys, JWTs, private key blocks, long generated tokens, card numbers
that pass Luhn). JSON (tool arguments, a JSON file) by its keys too (``redact_json``).

Deliberately left alone: phone numbers, commit hashes, checksums and UUIDs (ids people talk
about, never a login), e-mail addresses and user names, and a credential's word used about it
('my password is wrong', 'the token expired', 'PIN it to the wall').
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable

from flynn.credential_words import (
    CHANGED_TO,
    CHANGES,
    CODES,
    COPULAS,
    KEYS,
    NOW,
    ORDINARY,
    OWNERS,
    PASSWORDS,
    PLACEHOLDERS,
    QUALIFIERS,
    SEVERAL,
)
from flynn.json_text import dumped_like, faithful_loads
from flynn.language import EMAIL

REDACTED_SECRET = "[secret removed]"

REDACTION_VERSION = 4
"""The stamp of these rules. Bump it with every change that redacts something more (a new
pattern, word or shape; ``flynn.credential_words`` too): a store stamped older is redacted again,
every stored row, once, after the next start (``flynn.memory.redaction``; docs/security.md).
1: the rules before the stamp existed; 2: a value on the line below its words; 3: a password
right after its word ('wifi password GuestNet2024'), every value of a list, a value indented
under its name (YAML, INI) or in a block scalar, a JSON file by its keys; 4: a code written in
spaced digits ('my PIN is 4 8 2 1', 'PIN 4 8 2 1'), Slack's and Discord's webhook URLs."""

_WHAT = rf"(?:(?P<pw>{PASSWORDS})|(?P<code>{CODES})|(?P<key>{KEYS}))"
_VALUE = r"(?P<value>\"[^\"\n]{1,200}\"|'[^'\n]{1,200}'|`[^`\n]{1,200}`|[^\s\"'`,;]{1,200})"
# A further value in a list after the first ('passwords: hunter22x, Tr0ub4dor&3, 9f8e7d6c'):
# after a comma, a semicolon or a slash, a word with a digit or a symbol; not a name and its
# own value ('Password=S3cret;Host=db1' names the host).
_LISTED = (
    r"[ \t]*[,;/][ \t]*(?=[^\s,;/=:]*[\d!@#$%^&*+?~|])[^\s\"'`,;/=:]{3,100}"
    r"(?=[\s,;/\"'`)\]}]|$)"
)
# Further values after the first: listed, or after a space ('backup codes: 1234-5678
# 8765-4321 ...') words with a digit, or the digits of a code written spaced ('my PIN is
# 4 8 2 1').
_MORE = (
    rf"(?P<more>(?:{_LISTED}|[ \t]+\d{{1,2}}(?![\w-])"
    rf"|[ \t]+(?=[\w-]*\d)[\w-]{{3,40}}(?![\w-])){{0,20}})"
)
_FURTHER = re.compile(rf"(?:{_LISTED})+")
_QUALIFIED = rf"(?:\s+(?:{QUALIFIERS})\s+(?:(?:{OWNERS})\s+)?[\w.@'-]+){{0,2}}"

# "my password is hunter2", "the admin password: hunter2", "Passwort lautet ...", "PIN = 4711".
_ANNOUNCED = re.compile(
    rf"(?<![\w-]){_WHAT}(?![\w-]){_QUALIFIED}"
    rf"(?:\s+(?:{COPULAS})(?:\s*:)?\s+|\s*(?:[:=]|->|=>)\s*)"
    rf"(?:(?:{NOW})\s+)?{_VALUE}{_MORE}",
    re.IGNORECASE,
)
# "change my password to X", "ändere mein Passwort auf X", "cambia mi contraseña a X".
_CHANGED = re.compile(
    rf"\b(?:{CHANGES})\b[^\n.?!]{{0,40}}?(?<![\w-]){_WHAT}(?![\w-]){_QUALIFIED}"
    rf"\s+(?:{CHANGED_TO})\s+(?:(?:{NOW})\s+)?{_VALUE}",
    re.IGNORECASE,
)
# "hunter2 is my password", "4711 is the door code", "1234 ist meine PIN".
_NAMED_AFTER = re.compile(
    rf"(?<![\w-])(?P<value>[^\s\"'`,;:]{{3,100}})\s+(?:{COPULAS})\s+(?:{OWNERS})\s+"
    rf"(?:(?:new|old|current|actual|real|neue\w*|nouveau|nouvelle|nuev[oa]|nuov[oa]|nov[oa]"
    rf"|nieuwe)\s+)?{_WHAT}(?=\s*$|\s*[^\w\s-]|\s+(?:{QUALIFIERS})\b)",
    re.IGNORECASE | re.MULTILINE,
)
# "door code 4711", "PIN 1234", "Türcode 4711#": a code right after its word, no verb.
_CODE_BARE = re.compile(
    rf"(?<![\w-])(?:(?P<code>(?!pins?\b(?![\s-]*(?:codes?|numbers?|nummer)\b))(?:{CODES}))"
    r"|(?P<pin>(?-i:PIN)))(?![\w-])"
    r"\s+(?P<value>[#*]?\d[\w#*-]{2,40}|\d{1,2}(?:[ \t]\d{1,2}){2,11})(?![\w-])",
    re.IGNORECASE,
)
# "wifi password GuestNet2024", "Passwort Tr0ub4dor&3": a password right after its word, no verb,
# when it looks made up (``_looks_made_up``): 'password manager', 'the password policy' and
# 'change the wifi password tomorrow' name something about it.
_PASSWORD_BARE = re.compile(
    rf"(?<![\w-])(?P<word>{PASSWORDS})(?![\w-])[ \t]+(?P<value>[^\s\"'`,;]{{6,200}})",
    re.IGNORECASE,
)
_NAMES_SEVERAL = re.compile(SEVERAL, re.IGNORECASE)
# "my password's hunter2", "my PIN's 4821": the contraction, only before a value with a digit
# ("the password's length is..." says something about it).
_CONTRACTED = re.compile(
    rf"(?<![\w-]){_WHAT}(?![\w-])['’]s\s+(?P<value>(?=[^\s\"'`,;]*\d)[^\s\"'`,;]{{3,200}})",
    re.IGNORECASE,
)
# "use hunter2 as the password", "nimm 4711 als PIN".
_USE_AS = re.compile(
    rf"\b(?:use|using|try|nimm|utilise|usa|gebruik)\s+(?P<value>[^\s\"'`,;]{{3,100}})\s+"
    rf"(?:as|als|comme|como|come)\s+(?:(?:{OWNERS})\s+)?(?:new\s+)?{_WHAT}(?![\w-])",
    re.IGNORECASE,
)
# A .netrc line: "machine host login bob password hunter2".
_NETRC = re.compile(r"\bmachine\s+\S+\s+login\s+\S+\s+password\s+(?P<value>\S+)", re.I)
# "bob@x.com / hunter2", "bob@gmail.com pass hunter22": an address and what unlocks it, when
# that holds a digit (a word after a slash is usually just a word).
_EMAIL_LOGIN = re.compile(
    rf"{EMAIL}\s*(?:/|\s(?:pass|pw|pwd|password|passwort|pwd:|pw:|pass:))"
    r"\s*(?P<value>(?=[^\s\"'`,;]*\d)[^\s\"'`,;]{3,100})",
    re.IGNORECASE,
)
# "my seed phrase is apple banana cherry ...": a wallet's words, all of them.
_PHRASE = re.compile(
    rf"\b(?:seed|recovery|mnemonic|backup|wallet)[\s_-]?(?:phrases?|words)\b{_QUALIFIED}"
    rf"(?:\s+(?:{COPULAS})(?:\s*:)?\s+|\s*[:=]\s*)(?P<value>[^\W\d_]+(?:[ \t,]+[^\W\d_]+){{2,23}})",
    re.IGNORECASE,
)
# DB_PASSWORD=..., "password": "...", api_key: ..., ?access_token=...&, --password=...
_ASSIGNED = re.compile(
    r"(?<![\w$])(?P<quote>[\"']?)(?P<name>[A-Za-z_][\w.-]{0,60})(?P=quote)"
    r"\s*(?::=|=>|=|:)\s*"
    # The value is looked at, not taken: "note: DB_PASSWORD=..." finds the name after "note:".
    # A value in backticks is one too (markdown's `hunter2`): else its opening backtick is
    # taken with it, which redacts "`[secret removed]`" again (redacting must be idempotent).
    r"(?=(?P<value>\"(?:[^\"\\\n]|\\.){0,300}\"|'[^'\n]{0,300}'|`[^`\n]{1,300}`"
    r"|[^\s\"',;&<>]+))"
)
# postgres://app:S3cret@db, https://user:pass@host, redis://:pass@host
_URL_LOGIN = re.compile(r"\b[a-z][a-z0-9+.-]{1,20}://[^\s:/@]*:(?P<value>[^\s@/]+)@", re.I)
_SHELL = re.compile(
    r"\b(?:mysql|mysqldump|mysqladmin|mariadb|mariadb-dump)\b[^\n|;&]*?\s-p(?P<p>[^\s-]\S*)"
    r"|(?:^|\s)(?:-u\s*|--user[=\s]+)[^\s:/@]+:(?P<u>[^\s@]+)(?=\s|$)"
    r"|\bauthorization\s*:\s*(?:(?:bearer|basic|token|digest|bot)\s+)?(?P<a>[^\s\"',]+)"
    r"|\bbearer\s+(?P<b>(?=[\w.~+/=-]*\d)[\w.~+/=-]{16,})"
    r"|--(?:password|passwd|pass|token|secret|api-key|apikey|access-token|auth-token)\s+"
    r"(?P<f>[^\s-]\S*)",
    re.IGNORECASE | re.MULTILINE,
)
_SHAPES = re.compile(
    r"\b(?:sk|pk|rk)[-_](?:live|test|proj|ant)?[-_]?[A-Za-z0-9_-]{16,}"
    r"|\bgh[pousr]_[A-Za-z0-9]{20,}|\bgithub_pat_[A-Za-z0-9_]{20,}|\bglpat-[A-Za-z0-9_-]{20,}"
    r"|\bxox[abposr]-[A-Za-z0-9-]{10,}|\bnpm_[A-Za-z0-9]{30,}|\bhf_[A-Za-z0-9]{30,}"
    r"|\b(?:AKIA|ASIA)[0-9A-Z]{16}\b|\bAIza[0-9A-Za-z_-]{30,}|\bSG\.[\w-]{16,}\.[\w-]{16,}"
    r"|\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"
    # Webhook URLs, whose path is the secret: whoever has one posts as the integration.
    r"|\bhttps?://hooks\.slack\.com/(?:services|workflows|triggers)/[\w/-]{20,}"
    r"|\bhttps?://(?:[a-z]+\.)?discord(?:app)?\.com/api/webhooks/\d+/[\w-]{20,}"
)
_BOT_TOKEN = re.compile(r"\b\d{6,12}:[A-Za-z0-9_-]{30,}\b")  # a Telegram bot token
_PRIVATE_KEY = re.compile(
    r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)"
)
# What a line must hold for each family of patterns to be worth trying there.
# A stem holding another (``--user``, ``code``, ``pwd``) is left out: the other finds it.
_SHELL_STEMS = ("mysql", "mariadb", "-u", "authorization", "bearer", "--")
_SHAPE_STEMS = tuple(
    "sk- sk_ pk- pk_ rk- rk_ ghp_ gho_ ghu_ ghs_ ghr_ github_pat glpat- xox npm_ hf_ akia asia "
    "aiza sg. eyj hooks.slack.com /api/webhooks/".split()
)
_WORD_STEMS = (
    "pass",
    "pw",
    "pin",
    "cod",
    "códig",
    "key",
    "token",
    "secret",
    "credential",
    "otp",
    "cvv",
    "cvc",
    "combination",
    "kennw",
    "mdp",
    "contrase",
    "senha",
    "wachtw",
    "sleutel",
    "schlüssel",
    "clé",
    "clave",
    "chiave",
    "chave",
    "iban",
    "ssn",
    "social",
    "card",
    "phrase",
    "words",
    "login",
    "zugangsdaten",
    "auth",
    "sas",
    "geheimzahl",
    "parola",
    "mot de",
)
_DIGIT = re.compile(r"\d")
_DIGITS = b"0123456789"
# A long run of letters and digits, mixed: a generated key. Hexadecimal runs (commit hashes,
# checksums) and UUIDs are ids people talk about, not secrets, and are left alone.
_TOKEN = re.compile(
    r"(?<![\w/.-])(?=[A-Za-z0-9_-]{24,}\b)(?=[\w-]*\d)(?=[\w-]*[A-Za-z])[A-Za-z0-9_-]+"
)
# An AWS secret access key and its kind: 40 characters of base64, mixed case and digits.
_BASE64_40 = re.compile(
    r"(?<![\w/+=])(?=\S*\d)(?=\S*[a-z])(?=\S*[A-Z])[A-Za-z0-9/+]{40}(?![\w/+=])"
)
_NOT_A_KEY = re.compile(
    r"[0-9a-f]+|[0-9A-F]+|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
)
_CARD = re.compile(r"(?<!\d)(?:\d[ -]?){12,18}\d(?!\d)")
_NAME_PARTS = re.compile(r"[_.\-\s]+|(?<=[a-z])(?=[A-Z])")
_SECRET_PARTS = frozenset(
    "password passwords passwd passwort kennwort passphrase pass pwd pw secret token apikey "
    "credential credentials pin otp mdp contrasena contraseña senha wachtwoord privatekey "
    "accesskey secretkey authtoken accesstoken sas".split()
)
_KEY_OWNERS = frozenset(
    "api access private secret signing encryption master license client".split()
)
# A name ending in one of these is about the credential, not it: PASSWORD_MIN_LENGTH,
# max_tokens, token_url, password_file.
_ABOUT_PARTS = frozenset(
    "file path url uri endpoint env name type count length len limit max min tokens policy "
    "expiry expires ttl prompt hint field manager reset required enabled rotation format "
    "hash_algorithm id".split()
)
_FIELD_NAMES = frozenset("field key name kind type label what attribute".split())
"""The JSON keys whose value says what the other values of the object are."""
_SUFFIXES = ("password", "passwd", "passwort", "token", "secret")
_TRAILING = ".,!?;:)]}"


REMEMBERED_LINE_CHARS = 2_000
"""Lines up to this long are redacted once while they stay among the last ``_REMEMBERED``."""
_REMEMBERED = 4_096


def redact(text: str) -> tuple[str, int]:
    """``text`` with every credential replaced by ``REDACTED_SECRET``, and how many. Text
    already redacted stays as it is (redacting twice changes nothing).

    The same lines come by again and again: a turn's message is redacted where it arrives,
    where each store keeps it and where the request sends it (each path redacts on its own),
    and every request's system prompt repeats the persona, the session context and much of
    what recall found the turn before. A line's redaction depends on the line only, so a
    recent one is redacted once and its result given again."""
    count = 0
    if "-----BEGIN" in text:
        text, count = _PRIVATE_KEY.subn(REDACTED_SECRET, text)
    # Line by line, each pattern only where a cheap look finds what it needs: a prompt of
    # 60,000 characters is redacted in a few milliseconds, not in a fifth of a second.
    lines = text.split("\n")
    count += _redact_lines(lines)
    return "\n".join(lines), count


def _redact_lines(lines: list[str], *, remember: bool = True) -> int:
    """Redacts ``lines`` in place, each on its own (``remember``: a line seen lately gives its
    result again), then each value announced at the end of one line and written at the start
    of the next ('my password is' / 'hunter2', a wiki's 'Wifi password:' above its value) as
    the one line the two stand for; how many credentials. Not a line indented deeper than the
    one above it: that is a block under it (code's ``if not token:``), unless the line above
    is a credential's name alone (``_UNDER_A_NAME``: YAML's ``password:``, an INI file's
    ``password =``), whose values may be indented under it, or a block scalar (``secret: |``),
    whose every line indented under it is the value."""
    count, opened = 0, _OPENS_NOTHING
    under: tuple[str, int, int] | None = None  # a name's line, its indent, what it opens
    for index, line in enumerate(lines):
        deeper = under is not None and len(line) - len(line.lstrip()) > under[1]
        if under is not None and under[2] == _OPENS_BLOCK and (deeper or not line.strip()):
            count += _redact_block_line(lines, index)  # taken whole: not read on its own
            continue
        opens = _OPENS_NOTHING
        if len(line) >= 3:
            if remember and len(line) <= REMEMBERED_LINE_CHARS:
                lines[index], found, opens = _redact_remembered(line)
            else:
                lines[index], found, opens = _redact_whole_line(line)
            count += found
        if under is not None:
            if not line.strip():
                continue  # a blank line within what is under the name
            taken = _redact_under(lines, index, under[0], remember) if deeper else None
            if taken is not None:
                count += taken
                opened = _OPENS_NOTHING
                continue
            under = None
        if opened:
            head, below = lines[index - 1].rstrip(), lines[index]
            marker = _LINE_MARKER.match(below).group()  # type: ignore[union-attr]
            value = below[len(marker) :]
            indent = len(below) - len(below.lstrip())
            # Deeper, only an item of a list under it ('- Wifi password:' / '  - GuestNet2024');
            # never a name and its own value (YAML's empty 'password:' above 'host: db1').
            if (
                value
                and (indent <= len(head) - len(head.lstrip()) or marker.strip())
                and not _KEY_SHAPED.match(value)
            ):
                redacted, found = _below(head, value, remember)
                lines[index] = marker + redacted
                count += found
        if opens in (_OPENS_NAMED, _OPENS_BLOCK):
            under = (lines[index].rstrip(), len(line) - len(line.lstrip()), opens)
        opened = opens
    return count


def _below(head: str, value: str, remember: bool) -> tuple[str, int]:
    """``value``, a line below ``head`` (a credential's words or name), redacted as the rest of
    ``head``'s line. A sentence is left as it is: its first word alone was taken for the value
    (notes under a heading, 'Passwords:' / '  Remember to rotate them', '- Wifi password:' /
    '  - ask the host'), and a value of several unquoted words would not be taken whole."""
    if remember and len(head) + len(value) < REMEMBERED_LINE_CHARS:
        redacted, found = _redact_below_remembered(head, value)
    else:
        redacted, found = _redact_below(head, value)
    first, space, rest = value.partition(" ")
    words = space and rest.strip() and not rest.lstrip().startswith("#")
    if words and first.isalpha() and redacted == REDACTED_SECRET + value[len(first) :]:
        return value, 0
    return redacted, found


def _redact_block_line(lines: list[str], index: int) -> int:
    """Redacts ``lines[index]``, a line of a block scalar's value under a credential's name
    (``secret: |``), whole; one credential a block, however many lines it takes."""
    line = lines[index]
    value = line.strip()
    if not value or value == REDACTED_SECRET:
        return 0
    lines[index] = line[: len(line) - len(line.lstrip())] + REDACTED_SECRET
    above = lines[index - 1].strip()
    return 0 if above == REDACTED_SECRET else 1


def _redact_under(lines: list[str], index: int, head: str, remember: bool) -> int | None:
    """Redacts ``lines[index]``, indented under ``head``, a credential's name alone: a value
    or a list's item, read as the rest of ``head``'s line (a comment is passed over); how
    many credentials that took. None for a mapping (the name is a section's: 'password:' /
    '  min_length: 8'), which ends what is under the name; a sentence is left (``_below``)."""
    line = lines[index]
    marker = _LINE_MARKER.match(line).group()  # type: ignore[union-attr]
    value = line[len(marker) :]
    if value.startswith("#"):
        return 0
    if _KEY_SHAPED.match(value):
        return None
    redacted, found = _below(head, value, remember)
    lines[index] = marker + redacted
    return found


_OPENS_NOTHING, _OPENS_VALUE, _OPENS_NAMED, _OPENS_BLOCK = range(4)
"""What a line's end opens: nothing; a value at the start of the next line; a credential's
name alone (``password:``), whose values may also be indented under it; a block scalar under a
credential's name (``secret: |``), whose lines indented under it are all its value."""
# A name alone and its colon or equals sign, perhaps a list's item or quoted, perhaps opening
# a block scalar: YAML's 'password:' and 'secret: |', an INI file's 'password =', '"token":'.
_UNDER_A_NAME = re.compile(
    r"[ \t]*(?:[-*][ \t]+)?[\"']?(?P<name>[A-Za-z_][\w.-]{0,60})[\"']?[ \t]*[:=][ \t]*"
    r"(?P<block>[|>][-+]?[1-9]?[-+]?)?"
)
_BLOCK_INDICATOR = re.compile(r"[|>][-+]?[1-9]?[-+]?")
_KEY_SHAPED = re.compile(r"[\"']?[\w.-]+[\"']?[ \t]*[:=](?:[ \t]|$)")


def _opening(line: str) -> int:
    """What ``line``'s end opens (``_OPENS_NOTHING`` ...)."""
    head = line.rstrip()
    if head and (
        head[-1] in ":=|>" or (head[-1] in "+-123456789" and ("|" in head or ">" in head))
    ):
        named = _UNDER_A_NAME.fullmatch(head)
        if named and is_secret_name(named["name"]):
            return _OPENS_BLOCK if named["block"] else _OPENS_NAMED
    return _OPENS_VALUE if _opens_a_value(line) else _OPENS_NOTHING


# What starts a line before its words: an indent, a quote's '>' (an e-mail's, a chat's), a
# list's bullet: kept in place when the rest is the value announced on the line above.
_LINE_MARKER = re.compile(r"[ \t]*(?:[>|][ \t]*|[-*•+][ \t]+)*")


# A line that ends where a credential's value would begin ("my password is", "PIN:", "change
# my password to", "alarm code"): its value may stand at the start of the next line.
_OPEN_ENDED = re.compile(
    rf"(?<![\w-]){_WHAT}(?![\w-]){_QUALIFIED}(?:['’]s)?"
    rf"(?:[ \t]+(?:{COPULAS}|{CHANGED_TO}|{NOW}))*[ \t]*(?::|=|->|=>)?[ \t]*$",
    re.IGNORECASE,
)
_CLOSING = frozenset(".!?,;)]}\"'`")
"""How most lines end (a sentence, a call, a quotation), never where a value begins."""
_A_STEM = re.compile("|".join(map(re.escape, _WORD_STEMS)))
# The last words of a line that may be followed by a credential's value on the next line.
_OPENING_WORDS = frozenset(
    word.split("\\s+")[-1] for word in f"{COPULAS}|{CHANGED_TO}|{NOW}".split("|")
)


def _opens_a_value(line: str) -> bool:
    """Whether ``line`` ends where a credential's value would begin: with a name and its
    colon ('clientSecret:', a JSON '"password":') or a credential's word and what may follow
    it ('my password is', 'the alarm code', 'the code for the gate is')."""
    head = line.rstrip()
    if not head or head[-1] in _CLOSING:
        return False
    last = head[head.rfind(" ") + 1 :].lower()
    if _A_STEM.search(last):
        if head[-1] in ":=":
            return True  # the name of what follows: 'clientSecret:', '"password":'
    elif (last not in _OPENING_WORDS and head[-1] not in ":=>") or not _A_STEM.search(head.lower()):
        return False  # most lines, cheaply
    # The words of a credential before the line's end: 'my password is', 'alarm code'.
    return _OPEN_ENDED.search(head, max(0, len(head) - 200)) is not None


@functools.lru_cache(maxsize=_REMEMBERED)
def _redact_below_remembered(head: str, value: str) -> tuple[str, int]:
    return _redact_below(head, value)


def _redact_below(head: str, value: str) -> tuple[str, int]:
    """``value``, the line below ``head`` (its indent taken off), redacted as the rest of
    ``head``'s line, and how many credentials that took out of it."""
    redacted, found = _redact_line(f"{head} {value}")
    if not found or not redacted.startswith(f"{head} "):
        return value, 0
    return redacted[len(head) + 1 :], found


@functools.lru_cache(maxsize=_REMEMBERED)
def _redact_remembered(line: str) -> tuple[str, int, int]:
    return _redact_whole_line(line)


def _redact_whole_line(line: str) -> tuple[str, int, int]:
    """The line redacted, how many credentials, and what its end opens (``_opening``)."""
    redacted, found = _redact_line(line)
    return redacted, found, _opening(line)


def _redact_line(text: str) -> tuple[str, int]:
    count = 0

    def value_replacer(group: str, keep: Callable[[re.Match[str], str], bool]) -> _Sub:
        def replace(match: re.Match[str]) -> str:
            nonlocal count
            start, end = match.span(group)
            if start < 0:
                return match.group()
            value = match.group(group)
            bare, start, end = _unwrap(value, start, end)
            if (
                not bare
                or _within_mark(match.string, start)
                or _within_mark(match.string, end - 1)
                or keep(match, bare)
            ):
                return match.group()
            if group == "value" and "more" in match.groupdict() and match["more"]:
                end = match.start("more") + len(match["more"].rstrip(_TRAILING))
            count += 1
            whole, offset = match.group(), match.start()
            return whole[: start - offset] + REDACTED_SECRET + whole[end - offset :]

        return replace

    def shaped(match: re.Match[str]) -> str:
        nonlocal count
        count += 1
        return REDACTED_SECRET

    lowered = text.lower()
    if "://" in text:
        text = _URL_LOGIN.sub(value_replacer("value", _keep_nothing), text)
    if "@" in text:
        text = _EMAIL_LOGIN.sub(value_replacer("value", _keep_nothing), text)
    if any(stem in lowered for stem in _SHELL_STEMS):
        for group in ("p", "u", "a", "b", "f"):
            text = _SHELL.sub(value_replacer(group, _keep_quiet), text)
    if any(stem in lowered for stem in _WORD_STEMS):
        # A stem is often part of another word ("code", "spinning", "keyboard"): the patterns
        # that need a credential's own word are tried only where one stands (``_named``).
        ascii_text = text.isascii()
        if not ascii_text or "phrase" in lowered or "words" in lowered:
            text = _PHRASE.sub(value_replacer("value", _keep_nothing), text)
        named = _named(text, ascii_text)
        if named:
            text = _CHANGED.sub(value_replacer("value", _keep_announced), text)
            text = _ANNOUNCED.sub(value_replacer("value", _keep_announced), text)
            text = _CONTRACTED.sub(value_replacer("value", _keep_announced), text)
            text = _USE_AS.sub(value_replacer("value", _keep_announced), text)
            text = _PASSWORD_BARE.sub(value_replacer("value", _keep_bare), text)
        if not ascii_text or "machine" in lowered:
            text = _NETRC.sub(value_replacer("value", _keep_nothing), text)
            named = named or _named(text, ascii_text)
        if named:
            text = _NAMED_AFTER.sub(value_replacer("value", _keep_announced), text)
        if ":" in text or "=" in text:
            text, assigned = _redact_assigned(text)
            count += assigned
            named = named or (assigned > 0 and _named(text, ascii_text))
        if named:
            text = _CODE_BARE.sub(value_replacer("value", _keep_nothing), text)
    if any(stem in lowered for stem in _SHAPE_STEMS):
        text = _SHAPES.sub(shaped, text)
    if _DIGIT.search(text):
        # Each pattern only where the line holds what any match needs: most lines with a digit
        # (a date, a time) hold no word long enough for a key, nor thirteen digits for a card.
        # A run of key characters holds no whitespace, so it lies within one word of split().
        longest = max(map(len, text.split()), default=0)
        if ":" in text and longest >= 37:
            text = _BOT_TOKEN.sub(shaped, text)
        if longest >= 24:
            text = _TOKEN.sub(lambda m: shaped(m) if _is_generated(m.group()) else m.group(), text)
        if longest >= 40:
            text = _BASE64_40.sub(shaped, text)
        # An ASCII line's digits counted by deleting them from its bytes: one pass in C.
        if not text.isascii() or len(text) - len(text.encode().translate(None, _DIGITS)) >= 13:
            text = _CARD.sub(lambda m: shaped(m) if _luhn(m.group()) else m.group(), text)
        if REDACTED_SECRET in text:
            # The rest of a code written spaced, where a gate before version 3 cut it after
            # its first digits ('my PIN is [secret removed] 8 2 1'): a stored row loses it too.
            text = _MARK_TAIL.sub(REDACTED_SECRET, text)
    return text, count


_MARK_TAIL = re.compile(re.escape(REDACTED_SECRET) + r"(?:[ \t]+\d{1,2}(?![\w-]))+")


_Sub = Callable[[re.Match[str]], str]

# A credential's word standing alone, as every announcing pattern above but ``_NETRC`` needs
# one: searched case-sensitively in the lower-cased line, which for an ASCII line is the same
# as a case-insensitive search of the line and many times cheaper (a case-sensitive search
# skips each alternative at the first letter that differs; the word lists are lower case).
_CREDENTIAL_WORD = re.compile(rf"(?<![\w-]){_WHAT}(?![\w-])")


def _named(text: str, ascii_text: bool) -> bool:
    """Whether ``text`` may hold a credential's word standing alone (``_CREDENTIAL_WORD``);
    a line that is not ASCII always may (case-insensitive matching pairs letters such as 'ſ'
    and 's' that ``str.lower`` keeps apart). ``REDACTED_SECRET`` holds one ("secret"), so a
    line redacted by an earlier pattern is always tried by the later ones."""
    return not ascii_text or _CREDENTIAL_WORD.search(text.lower()) is not None


def _redact_assigned(text: str) -> tuple[str, int]:
    """``name = value`` and ``name: value`` forms whose name is a credential's."""
    pieces: list[str] = []
    done = count = 0
    for match in _ASSIGNED.finditer(text):
        start, end = match.span("value")
        if start < done:
            continue
        bare, start, end = _unwrap(match["value"], start, end)
        if (
            not bare
            or _within_mark(text, start)
            or _within_mark(text, end - 1)
            or _keep_assigned(match, bare)
        ):
            continue
        if end == match.end("value") and (further := _FURTHER.match(text, end)):
            end += len(further.group().rstrip(_TRAILING))  # 'API_PINS=4711,0815'
        pieces += [text[done:start], REDACTED_SECRET]
        done = end
        count += 1
    return "".join(pieces) + text[done:], count


def redact_json(text: str) -> tuple[str, int]:
    """JSON ``text`` (tool arguments, stored tool rounds) with every credential in its strings
    redacted, and how many: a value under a credential's name (``{"password": "..."}``), the
    values beside a field that names one (``{"field": "password", "text": "..."}``), and any
    string that holds one; JSON nested in a string is read too. Text that is not JSON is
    redacted as text. Unchanged JSON comes back byte for byte; changed, in the layout it had
    (``dumped_like``). JSON that would not be written back as it was read (``faithful_loads``:
    a key given twice, a number no float holds) is redacted as text too, which keeps the rest."""
    try:
        value = faithful_loads(text)
    except (ValueError, RecursionError):
        return redact(text)
    cleaned, count = _redact_value(value)
    if not count:
        return text, 0
    return dumped_like(cleaned, text), count


def redact_file(name: str, text: str) -> tuple[str, int]:
    """The text of a file called ``name`` with every credential redacted, and how many: a
    JSON file's as JSON (``redact_json``: by its keys too, still JSON, in its layout), any
    other's as text."""
    if name.lower().endswith(".json"):
        return redact_json(text)
    return redact(text)


def is_secret(field: str | None, value: str) -> bool:
    """Whether a fact would store a credential: its field names one, or its value holds
    one, or held one (already redacted: 'my PIN is [secret removed]' is no fact worth
    keeping either)."""
    if field and is_secret_name(field):
        return True
    return REDACTED_SECRET in value or redact(value)[1] > 0


def is_secret_name(name: str) -> bool:
    """Whether ``name`` (a config key, a fact's field, a JSON key) names a credential:
    ``DB_PASSWORD``, ``apiKey``, ``bank pin``, ``door_code``; not ``max_tokens``,
    ``password_min_length`` or ``token_url``."""
    parts = [part.lower() for part in _NAME_PARTS.split(name.strip()) if part]
    if not parts or len(parts) > 8 or parts[-1] in _ABOUT_PARTS:
        return False
    for index, part in enumerate(parts):
        if part in _SECRET_PARTS or part.endswith(_SUFFIXES):
            return True
        if part in ("key", "keys") and index and parts[index - 1] in _KEY_OWNERS:
            return True
        if (
            part in ("code", "codes")
            and index
            and _CODE_NAME.fullmatch(" ".join(parts[: index + 1]))
        ):
            return True
    return bool(_CODE_NAME.fullmatch(" ".join(parts)))


_CODE_NAME = re.compile(rf"(?:\w+\s+)*(?:{CODES})", re.IGNORECASE)


def _redact_value(value: object) -> tuple[object, int]:
    if isinstance(value, str):
        stripped = value.lstrip()
        if stripped[:1] in ("{", "[") and len(value) > 1:
            return redact_json(value)
        return redact(value)
    if isinstance(value, list):
        items = [_redact_value(item) for item in value]
        return [item for item, _ in items], sum(count for _, count in items)
    if isinstance(value, dict):
        # {"field": "password", "text": "hunter2"}: the field names what the text is.
        named = any(
            isinstance(item, str) and str(name).lower() in _FIELD_NAMES and is_secret_name(item)
            for name, item in value.items()
        )
        kept: dict[str, object] = {}
        total = 0
        for name, item in value.items():
            if isinstance(item, str) and item and not item.startswith(REDACTED_SECRET):
                if is_secret_name(str(name)) and not _is_placeholder(item):
                    kept[name], total = REDACTED_SECRET, total + 1
                    continue
                if named and not is_secret_name(item) and len(item) <= 2000:
                    kept[name], total = REDACTED_SECRET, total + 1
                    continue
            kept[name], count = _redact_value(item)
            total += count
        return kept, total
    return value, 0


def _is_generated(run: str) -> bool:
    """Whether a long run of letters and digits is a generated key: mixed case, or lower case
    without the dashes and underscores of a slug or a name (``claude-sonnet-4-5-20250929``,
    ``test_step_2_of_the_long_migration``); never hexadecimal or a UUID."""
    if _NOT_A_KEY.fullmatch(run):
        return False
    if run.lower() != run and run.upper() != run:
        return True
    return len(run) >= 32 and "-" not in run and "_" not in run


def _within_mark(text: str, position: int) -> bool:
    """Whether ``position`` is in a ``REDACTED_SECRET`` already there."""
    window = len(REDACTED_SECRET)
    around = text.find(REDACTED_SECRET, max(position - window + 1, 0), position + window)
    return around != -1 and around <= position < around + window


def _unwrap(value: str, start: int, end: int) -> tuple[str, int, int]:
    """The value without its quotes or the punctuation that ends its sentence, and its span."""
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'`":
        return value[1:-1], start + 1, end - 1
    bare = value.rstrip(_TRAILING)
    return bare, start, start + len(bare)


def _keep_nothing(match: re.Match[str], value: str) -> bool:
    return False


def _keep_quiet(match: re.Match[str], value: str) -> bool:
    return _is_placeholder(value) or _is_ordinary(value)


def _keep_assigned(match: re.Match[str], value: str) -> bool:
    """A name that is no credential's, or a value that holds none (``password: null``,
    ``token: ${TOKEN}``, 'Password: wrong again')."""
    return not is_secret_name(match["name"]) or _is_placeholder(value) or _is_ordinary(value)


def _keep_announced(match: re.Match[str], value: str) -> bool:
    """After a word that announces a credential, what is not one: an ordinary word ('my
    password is wrong'), and for codes and keys, what holds no digit and looks no generated
    ('the pin is bent', 'the secret is patience')."""
    if _is_ordinary(value) or _is_placeholder(value):
        return True
    if match["pw"]:
        return False
    has_digit = any(char.isdigit() for char in value)
    if match["code"]:
        return not has_digit
    return not has_digit and (len(value) < 12 or " " in value)


def _keep_bare(match: re.Match[str], value: str) -> bool:
    return _NAMES_SEVERAL.fullmatch(match["word"]) is not None or not _looks_made_up(value)


_SYMBOLS = frozenset("!@#$%^&*+=?~|§€£")


def _looks_made_up(value: str) -> bool:
    """Whether a value standing bare after a credential's word, with no verb or colon to say
    it is one, looks like one: six characters or more, and digits only, letters mixed with
    digits, or letters with a symbol. Not a dictionary word ('password manager'), not a
    lower-case slug ('a 12-character password'), not an address; judged without the marks
    of emphasis around it ('Password Manager**:')."""
    value = value.strip("*_~")
    if len(value) < 6 or _is_ordinary(value) or _is_placeholder(value) or "://" in value:
        return False
    if "-" in value and value.lower() == value:
        return False
    if value.isdigit():
        return True
    has_letter = any(char.isalpha() for char in value)
    if not has_letter:
        return False
    return any(char.isdigit() or char in _SYMBOLS for char in value)


def _is_ordinary(value: str) -> bool:
    return value.isalpha() and value.lower() in ORDINARY


def _is_placeholder(value: str) -> bool:
    lowered = value.strip().lower()
    return (
        not lowered
        or lowered in PLACEHOLDERS
        or _BLOCK_INDICATOR.fullmatch(lowered) is not None  # 'secret: |', its value below
        or lowered.startswith(("$", "{{", "<", "%(", "***", "process.env", "os.environ", "env("))
        or set(lowered) <= {"*", "x", "."}
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
