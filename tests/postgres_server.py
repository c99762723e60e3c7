"""A real PostgreSQL for the tests: Debian's server (``make test`` installs the ``postgresql``
package), a cluster made by ``initdb`` in a temporary directory and started once per test run, and
a fresh schema for each test.

``initdb`` refuses to run as root, so as root the cluster belongs to a system user made for it
(``flynn-test``); otherwise it is the current user's. The server listens on 127.0.0.1 on a free
port, with its socket in the temporary directory. Over TCP it asks for a password (scram), so every
test connects with a URL that carries one, as a deployment would. Its collation is ICU's
``en-US``, as a server set up for people would have, not bytewise ``C``: a query that orders or
compares namespaces without ``COLLATE "C"`` shows here.
"""

from __future__ import annotations

import os
import pwd
import re
import secrets
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import count
from pathlib import Path
from urllib.parse import quote

import psycopg

BINARIES = Path("/usr/lib/postgresql")
USER = "flynn-test"
"""The system user that owns the cluster when the tests run as root."""
SUPERUSER = "flynn"

# Durability buys nothing for a cluster deleted at the end of the run.
_FAST = "-c fsync=off -c synchronous_commit=off -c full_page_writes=off"


def server_binaries() -> Path | None:
    """The newest installed server's ``bin`` directory (``/usr/lib/postgresql/15/bin``)."""
    found = [path.parent for path in BINARIES.glob("*/bin/initdb")]
    versions = [path for path in found if path.parent.name.isdigit()]
    return max(versions, key=lambda path: int(path.parent.name), default=None)


MISSING = (
    "PostgreSQL's server is not installed (/usr/lib/postgresql/*/bin/initdb): `make test` "
    "installs Debian's postgresql package when it runs as root or with sudo"
)


@dataclass(frozen=True, slots=True)
class PostgresServer:
    """A started cluster: ``url(schema)`` connects as its superuser with a password."""

    directory: Path
    port: int
    password: str
    seconds_to_start: float
    _schemas: Iterator[int]

    def url(self, schema: str | None = None, database: str = "postgres") -> str:
        base = f"postgresql://{SUPERUSER}:{quote(self.password, safe='')}@127.0.0.1:{self.port}"
        options = "" if schema is None else f"?options={quote(f'-c search_path={schema}')}"
        return f"{base}/{database}{options}"

    def stop(self) -> None:
        """Stops the server as an operator would (``pg_ctl stop -m fast``): every connection
        is told to end and cut, and nothing answers on the port until ``start``. For a
        cluster of the test's own (``running_server``), not the shared one."""
        binaries = server_binaries()
        assert binaries is not None
        _run(
            _owner(), binaries / "pg_ctl", "stop", "-D", str(self.directory / "data"), "-m", "fast"
        )

    def start(self) -> None:
        """Starts a stopped server again, on the same port, and waits until it answers."""
        binaries = server_binaries()
        assert binaries is not None
        _pg_ctl_start(_owner(), binaries, self.directory, self.port)

    @contextmanager
    def fresh_schema(self) -> Iterator[str]:
        """A URL whose connections see only a new, empty schema (``search_path``), dropped with
        everything in it afterwards: as isolated as a database of its own, at a thousandth of
        the cost (CREATE DATABASE takes 0.1 to 0.6 s here, CREATE SCHEMA under a millisecond)."""
        schema = f"test_{next(self._schemas)}"
        with psycopg.connect(self.url(), autocommit=True) as connection:
            connection.execute(f"CREATE SCHEMA {schema}")
        try:
            yield self.url(schema)
        finally:
            with psycopg.connect(self.url(), autocommit=True) as connection:
                connection.execute(f"DROP SCHEMA {schema} CASCADE")


@contextmanager
def running_server() -> Iterator[PostgresServer]:
    """Makes, starts and finally stops and deletes a cluster. Raises ``RuntimeError`` with the
    server's own words when it cannot start (the binaries must exist: see ``server_binaries``)."""
    binaries = server_binaries()
    if binaries is None:
        raise RuntimeError(MISSING)
    started = time.monotonic()
    directory = Path(tempfile.mkdtemp(prefix="flynn-pg-"))
    owner = _owner()
    try:
        password = secrets.token_urlsafe(18)
        password_file = directory / "password"
        password_file.write_text(password + "\n")
        if owner is not None:
            os.chown(directory, owner.pw_uid, owner.pw_gid)
            os.chown(password_file, owner.pw_uid, owner.pw_gid)
        _run(
            owner,
            binaries / "initdb",
            f"--pgdata={directory / 'data'}",
            f"--username={SUPERUSER}",
            f"--pwfile={password_file}",
            "--auth-local=trust",
            "--auth-host=scram-sha-256",
            "--encoding=UTF8",
            "--locale=C.UTF-8",
            "--locale-provider=icu",
            "--icu-locale=en-US",
            "--no-sync",
            "--no-instructions",
        )
        password_file.unlink()
        try:
            port = _start(owner, binaries, directory)
            yield PostgresServer(directory, port, password, time.monotonic() - started, count(1))
        finally:
            # Also when interrupted while starting: a server may be up that no one yet knew of.
            if (directory / "data" / "postmaster.pid").exists():
                data = str(directory / "data")
                _run(owner, binaries / "pg_ctl", "stop", "-D", data, "-m", "fast")
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def _start(owner: pwd.struct_passwd | None, binaries: Path, directory: Path) -> int:
    # A port free a moment ago may be taken before the server binds it (other test runs share
    # the machine): then it says so in its log, and another port is tried.
    for _attempt in range(3):
        port = _free_port()
        try:
            _pg_ctl_start(owner, binaries, directory, port)
        except RuntimeError:
            log = (directory / "server.log").read_text(errors="replace")
            if re.search(r"could not bind|Address already in use", log):
                continue
            raise RuntimeError(f"PostgreSQL did not start:\n{log[-2000:]}") from None
        return port
    raise RuntimeError("PostgreSQL found no free port in three tries")


def _pg_ctl_start(
    owner: pwd.struct_passwd | None, binaries: Path, directory: Path, port: int
) -> None:
    options = f"-c listen_addresses=127.0.0.1 -p {port} -k {directory} {_FAST}"
    data, log = str(directory / "data"), str(directory / "server.log")
    _run(
        owner, binaries / "pg_ctl", "start", "-D", data, "-l", log, "-w", "-t", "120", "-o", options
    )


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _owner() -> pwd.struct_passwd | None:
    """``None`` when not root (the current user runs the server); else ``flynn-test``, made as a
    system user without a home or a shell the first time."""
    if os.geteuid() != 0:
        return None
    try:
        return pwd.getpwnam(USER)
    except KeyError:
        pass
    made = subprocess.run(
        ["useradd", "--system", "--no-create-home", "--home-dir", "/nonexistent", USER],
        capture_output=True,
        text=True,
        check=False,
    )
    try:
        # Another test run may have made it in the meantime (useradd then fails): fine.
        return pwd.getpwnam(USER)
    except KeyError:
        raise RuntimeError(f"cannot create the user {USER}: {made.stderr.strip()}") from None


def _run(owner: pwd.struct_passwd | None, program: Path, *arguments: str) -> None:
    command = [str(program), *arguments]
    if owner is not None:
        command = ["runuser", "-u", owner.pw_name, "--", *command]
    done = subprocess.run(command, capture_output=True, text=True, check=False, cwd="/")
    if done.returncode != 0:
        raise RuntimeError(f"{program.name} failed ({done.returncode}): {done.stderr.strip()}")
