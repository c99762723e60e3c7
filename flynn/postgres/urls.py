"""A database URL as it may be shown: its password (``user:pw@``, ``?password=``, or
``password=`` in a key/value string) replaced, and the same password struck from any text (a
driver's error may quote the connection string it could not parse). A string libpq cannot parse
is never shown at all: where its password is, nobody can say."""

from __future__ import annotations

import re
from urllib.parse import unquote

import psycopg
from psycopg.conninfo import conninfo_to_dict

HIDDEN = "***"
UNPARSABLE = "(a database URL that cannot be parsed)"
SLASHED = "(a database URL whose password holds a '/': write it as %2F)"
AT_SIGNED = "(a database URL whose password holds an '@': write it as %40)"

# The password of a URL: after ``scheme://user:`` up to the ``@`` that ends the user part.
_URL_PASSWORD = re.compile(r"(?P<head>^[a-z][a-z0-9+.-]*://[^:/?#@]*:)(?P<secret>[^@/?#]*)(?=@)")
# A password with a "/" left unencoded (base64 passwords hold them): libpq ends the host part at
# the "/", so it sees no password at all, and its errors may quote the pieces as a port or a
# database name. No "?" before the "@", so an "@" in a query (``?user=ana@corp``) is no password.
_SLASHED_PASSWORD = re.compile(r"^[a-z][a-z0-9+.-]*://[^:/?#@]*:(?P<secret>[^@?]*/[^@?]*)@")
# A password with an "@" left unencoded ("Tr0ub@dor3"): libpq ends the password at the first
# "@" and takes the rest for the host, which its errors quote ("failed to resolve host
# 'dor3@db'"). Everything between ``user:`` and the last "@" before the path is the password.
_AT_SIGNED_PASSWORD = re.compile(r"^[a-z][a-z0-9+.-]*://[^:/?#@]*:(?P<secret>[^/?#]*@[^/?#]*)@")
# ``password=...`` in a URL's query or in a libpq key/value string, quoted or not; also the
# client key's ``sslpassword``.
_KEY_PASSWORD = re.compile(
    r"(?P<head>\b(?:ssl)?password\s*=\s*)(?P<secret>'(?:[^'\\]|\\.)*'|[^\s&]*)"
)


def passwords_in(url: str) -> tuple[str, ...]:
    """Every password ``url`` carries, as written and as decoded; longest first, so striking
    them from a text never leaves a piece of one behind."""
    found: set[str] = set()
    for pattern in (_URL_PASSWORD, _KEY_PASSWORD):
        for match in pattern.finditer(url):
            written = match["secret"]
            if written.startswith("'") and written.endswith("'") and len(written) > 1:
                written = written[1:-1]
            found.update({written, unquote(written)})
    slashed = _SLASHED_PASSWORD.match(url)
    if slashed is not None:
        written = slashed["secret"]
        found.update({written, unquote(written), *written.split("/")})
    at_signed = _AT_SIGNED_PASSWORD.match(url)
    if at_signed is not None:
        written = at_signed["secret"]
        found.update({written, unquote(written), *written.split("@")})
    try:
        password = conninfo_to_dict(url).get("password")
    except psycopg.Error:
        found.add(url)  # unparsable: a password may be anywhere in it
    else:
        found.add(str(password or ""))
    found.discard("")
    return tuple(sorted(found, key=len, reverse=True))


def shown_url(url: str) -> str:
    """``url`` with every password replaced by ``***``: safe in logs and errors."""
    if url in passwords_in(url):
        return UNPARSABLE
    if _SLASHED_PASSWORD.match(url):
        return SLASHED
    if _AT_SIGNED_PASSWORD.match(url):
        return AT_SIGNED
    shown = _URL_PASSWORD.sub(lambda match: match["head"] + HIDDEN, url)
    shown = _KEY_PASSWORD.sub(lambda match: match["head"] + HIDDEN, shown)
    return strike(shown, passwords_in(url))


def strike(text: str, passwords: tuple[str, ...]) -> str:
    """``text`` with each of ``passwords`` (from ``passwords_in``) replaced by ``***``."""
    for password in passwords:
        text = text.replace(password, HIDDEN)
    return text
