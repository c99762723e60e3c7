"""The one exception tree for flynn; SDK and library errors are mapped onto it at the edges.

FlynnError
├── ConfigError              invalid configuration; carries every problem with its key path
├── StoreError               the memory store failed (database unreadable, migration refused)
│   ├── StorageUnusable      the database cannot be used at all: empty, corrupt, read-only
│   └── StoreUnreachable     the database server does not answer now; later it may
├── DataDirLocked            another flynn daemon holds the data dir; ``pid`` names it
├── CopyRefused              ``flynn storage copy``: the target holds another install's rows
├── UnreadableFile           a person's file (``TASKS.json``) does not hold what it should
├── FileChanged              a save of a person's file refused: it changed since it was opened
├── FileBusy                 a change to a person's file met another writer at every attempt
├── EmbeddingFailed          the embedding model, loaded, failed on a text; recall goes on by words
├── ProviderError            a language-model call failed; retry and fallback branch on the type
│   ├── RateLimited          429; ``retry_after`` seconds when the server said so
│   ├── Unavailable          5xx, connection refused or reset, overloaded
│   │   ├── ProviderTimeout  no answer within ``llm.timeout_seconds``
│   │   └── MalformedResponse  the server answered, but not in a shape we can read
│   │       └── EmptyAnswer  the model's answer to a turn says nothing and did nothing
│   ├── ContextTooLong       the prompt does not fit the model's window
│   ├── AuthFailed           the key was refused (401/403); retrying will not help
│   └── BadRequest           the request itself was refused (400/404/422)
├── SessionBusy              a session's inbox is full
└── DeliveryFailed           a channel could not deliver a reply after the retries it allows
"""

from __future__ import annotations

from dataclasses import dataclass


class FlynnError(Exception):
    """Base of every error flynn raises on purpose."""


@dataclass(frozen=True, slots=True)
class ConfigProblem:
    """One thing wrong with the configuration, named by its dotted key path."""

    key: str
    message: str

    def __str__(self) -> str:
        return f"{self.key}: {self.message}"


class ConfigError(FlynnError):
    """The configuration is invalid; ``problems`` lists each key at fault."""

    def __init__(self, problems: list[ConfigProblem], source: str | None = None) -> None:
        self.problems = problems
        self.source = source
        where = f" in {source}" if source else ""
        if len(problems) == 1:
            # One problem, one line: what systemd's journal and a terminal show in full.
            super().__init__(f"invalid configuration{where}: {problems[0]}")
            return
        lines = "\n".join(f"  {p}" for p in problems)
        super().__init__(f"invalid configuration{where}:\n{lines}")


class StoreError(FlynnError):
    """The memory store could not do what was asked; nothing was half-written."""


class StorageUnusable(StoreError):
    """The database cannot be used at all (an empty or corrupt file, one that cannot be written):
    nothing will work until a person acts, so a daemon refuses to start rather than restart."""


def postgres_driver_missing(key: str) -> StorageUnusable:
    """``key`` names PostgreSQL but its driver, the optional extra, is not installed (``make run``
    installs Flynn without it): one line saying what to install, not a traceback."""
    return StorageUnusable(
        f"{key}: PostgreSQL needs its driver, which is not installed: "
        "pip install 'flynn[postgresql]' (in a checkout: .venv/bin/pip install -e '.[postgresql]')"
    )


class StoreUnreachable(StoreError):
    """The database server does not answer now (stopped, restarting, out of reach): nothing was
    done, and the same work may succeed once it answers again."""


class DataDirLocked(FlynnError):
    """Another process (``pid``, 0 when it could not be read) holds the data dir's lock file."""

    def __init__(self, lock_file: str, pid: int) -> None:
        holder = f"process {pid}" if pid else "another process"
        super().__init__(
            f"{holder} already runs flynn on this data dir (it holds {lock_file}); "
            "stop it first, or give this one another data_dir"
        )
        self.lock_file = lock_file
        self.pid = pid


class CopyRefused(FlynnError):
    """``flynn storage copy``: the target database holds rows that are not a copy of this
    install."""


class UnreadableFile(FlynnError):
    """A file in a person's folder cannot be read as what it should hold; the message says why in
    words for the person (who may edit it by hand), and the file is left as it is."""


class FileChanged(FlynnError):
    """A save of a person's file refused: the file is no longer the text the edit started from
    (a tool, the distiller or another editor wrote it meanwhile). Nothing was written; ``text``
    is the file as it is now and ``base`` its digest, to edit from again."""

    def __init__(self, name: str, text: str, base: str) -> None:
        super().__init__(f"{name} changed since it was opened; nothing was saved.")
        self.name = name
        self.text = text
        self.base = base


class FileBusy(FlynnError):
    """A change to a person's file not written: other writers changed the file between each
    of its reads and its write (``flynn.people.store.update_file``)."""


class EmbeddingFailed(FlynnError):
    """The embedding model, loaded, raised while embedding (ONNX Runtime out of memory, the
    tokenizer refusing a text): the caller goes on without vectors (recall by words, the message
    left to a catch-up)."""


class ProviderError(FlynnError):
    """A language-model call failed. ``provider`` names the backend, never a key or URL secret."""

    retriable: bool = False

    def __init__(self, message: str, *, provider: str = "") -> None:
        super().__init__(message)
        self.provider = provider


class RateLimited(ProviderError):
    """The provider asked us to slow down."""

    retriable = True

    def __init__(
        self, message: str, *, provider: str = "", retry_after: float | None = None
    ) -> None:
        super().__init__(message, provider=provider)
        self.retry_after = retry_after


class Unavailable(ProviderError):
    """The provider could not be reached or failed on its side."""

    retriable = True


class ProviderTimeout(Unavailable):
    """The provider did not answer in time."""


class MalformedResponse(Unavailable):
    """The provider answered with something that is not a valid response."""


class EmptyAnswer(MalformedResponse):
    """The model ended a turn without a word, and without a tool that did anything."""


class ContextTooLong(ProviderError):
    """The prompt is larger than the model's context window."""


class AuthFailed(ProviderError):
    """The provider refused our credentials."""


class BadRequest(ProviderError):
    """The provider refused the request as malformed or unsupported."""


class SessionBusy(FlynnError):
    """A session already has as many messages waiting as it accepts."""


class DeliveryFailed(FlynnError):
    """A reply, or a part of it, was not delivered after the retries its failure allowed.
    ``send`` raises it rather than return, so that nobody counts the message answered.
    ``sent`` holds the ids of the parts that did arrive; ``may_have_arrived`` is True when the
    failing part may have reached the chat anyway (the connection broke after it went out, so
    retrying could have sent it twice); ``permanent`` when the chat service refused it for good
    (the chat or topic is gone, the bot was blocked): sending it again cannot help."""

    def __init__(
        self,
        reason: str,
        *,
        sent: tuple[str, ...] = (),
        may_have_arrived: bool = False,
        permanent: bool = False,
    ) -> None:
        super().__init__(reason)
        self.sent = sent
        self.may_have_arrived = may_have_arrived
        self.permanent = permanent
