"""``storage.url``: the setting refused with one line naming it (never its password), and the
composition root on PostgreSQL: ``App.open`` keeps everything in the database (nothing in
``data_dir``), two apps on one database are two workers that see each other's memory, and a
server nobody answers stops ``flynn run`` with one line and exit 4."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest
from e2e_daemon import free_port, run_flynn

from flynn.app import App, build_service
from flynn.errors import ConfigError
from flynn.gateway_token import token_digest
from flynn.messages import ChannelAccount, SessionKey
from flynn.people.documents import DocumentsPersonFiles
from flynn.settings import Settings, load_settings

PASSWORD = "s3cret-pw"


def _settings(tmp_path: Path, url: str) -> Settings:
    return load_settings(
        {
            "data_dir": str(tmp_path / "data"),
            "llm": {"provider": "offline"},
            "memory": {"user_namespace": "user", "embeddings": False},
            "channels": {"gateway": {"port": 0}},
            "storage": {"url": url},
        },
        env={},
    )


@pytest.mark.parametrize(
    ("url", "said"),
    [
        (f"mysql://flynn:{PASSWORD}@db.internal/flynn", "must be a PostgreSQL URL"),
        (f"sqlite:///{PASSWORD}/flynn.db", "must be a PostgreSQL URL"),
        (f"flynn:{PASSWORD}@db.internal/flynn", "must be a PostgreSQL URL"),
        ("", "must not be empty"),
        ("   ", "must not be empty"),
    ],
)
def test_a_storage_url_that_is_no_postgresql_url_is_refused_by_name(url: str, said: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_settings({"storage": {"url": url}}, env={})
    (problem,) = caught.value.problems
    assert problem.key == "storage.url"
    assert said in problem.message
    assert PASSWORD not in str(caught.value)


@pytest.mark.parametrize(
    "url",
    [
        f"postgresql://flynn:{PASSWORD}@db.internal:5432/flynn",
        f"postgres://flynn:{PASSWORD}@db.internal/flynn",
        "postgresql:///flynn?host=/run/postgresql",
        "POSTGRESQL://db.internal/flynn",
    ],
)
def test_postgresql_urls_are_taken_and_kept_secret(url: str) -> None:
    settings = load_settings({"storage": {"url": url}}, env={})
    assert settings.storage.url is not None
    assert settings.storage.url.get_secret_value() == url
    assert PASSWORD not in repr(settings) and PASSWORD not in str(settings.model_dump())


async def test_the_variable_is_named_and_one_line_exits_2_without_the_password(
    tmp_path: Path,
) -> None:
    url = f"mysql://flynn:{PASSWORD}@db.internal/flynn"
    done = await run_flynn("doctor", "--no-network", home=tmp_path, env={"FLYNN_STORAGE__URL": url})
    assert done.code == 2
    assert PASSWORD not in done.stderr + done.stdout
    (line,) = done.stderr.splitlines()
    assert "FLYNN_STORAGE__URL (storage.url): must be a PostgreSQL URL" in line


async def test_a_server_nobody_answers_stops_flynn_run_with_one_line_and_exit_4(
    tmp_path: Path,
) -> None:
    port = free_port()  # nobody listens there
    url = f"postgresql://flynn:{PASSWORD}@127.0.0.1:{port}/flynn"
    env = {"FLYNN_STORAGE__URL": url, "FLYNN_CHANNELS__GATEWAY__PORT": "0"}
    done = await run_flynn("run", home=tmp_path, env=env)
    assert done.code == 4, done.stderr
    assert PASSWORD not in done.stderr + done.stdout
    (line,) = done.stderr.splitlines()
    assert line.startswith(f"flynn: cannot open database postgresql://flynn:***@127.0.0.1:{port}")


async def test_app_open_on_postgresql_keeps_everything_in_the_database(
    tmp_path: Path, postgres_url: str
) -> None:
    settings = _settings(tmp_path, postgres_url)
    key, account = SessionKey("cli", "ana"), ChannelAccount("cli", "ana")
    first = App.open(settings, {})
    try:
        assert first.storage.shared
        files = first.services.person.files
        assert files is not None and isinstance(files.files, DocumentsPersonFiles)
        service = build_service(first)
        assert service.checkpointer is None  # SQLite's write-ahead log has no place here
        reply = await first.sessions.orchestrator(key, account).handle("My name is Ana.")
        assert "Noted" in reply.text
        files.files.write("user", "USER.md", "# About me\n\nI take the night train on Fridays.\n")
    finally:
        await first.aclose()
    # Another worker (its own process, machine and data dir) reads the same memory and files;
    # its recall runs in worker threads on the one pooled database.
    settings = _settings(tmp_path / "elsewhere", postgres_url)
    second = App.open(settings, {})
    try:
        reply = await second.sessions.orchestrator(key, account).handle("what is my name?")
        assert "Ana" in reply.text
        other = second.services.person.files
        assert other is not None
        assert "night train" in other.files.read("user", "USER.md")
    finally:
        await second.aclose()
    for data_dir in (tmp_path / "data", tmp_path / "elsewhere" / "data"):
        assert not (data_dir / "flynn.db").exists()
        assert not (data_dir / "user").exists()  # no person folder: the files are documents
    with psycopg.connect(postgres_url) as connection:
        row = connection.execute("SELECT count(*) FROM facts WHERE value = 'Ana'").fetchone()
        assert row is not None and row[0] >= 1


async def test_the_gateway_token_is_generated_once_and_kept_as_its_digest(
    tmp_path: Path, postgres_url: str
) -> None:
    first = App.open(_settings(tmp_path / "one", postgres_url), {})
    second = App.open(_settings(tmp_path / "two", postgres_url), {})
    try:
        made = [build_service(app).welcome(True) for app in (first, second)]
    finally:
        await first.aclose()
        await second.aclose()
    shown = [line for line in made if line is not None and "#token=..." not in line]
    (line,) = shown  # the first worker prints it; the second says where it is kept
    token = line.split("#token=", 1)[1]
    other = next(line for line in made if line is not None and line not in shown)
    assert "flynn gateway token --rotate" in other
    with psycopg.connect(postgres_url) as connection:
        rows = connection.execute("SELECT digest FROM gateway_token").fetchall()
    assert rows == [(token_digest(token),)]
    assert not (tmp_path / "one" / "data" / "gateway-token").exists()


async def test_flynn_gateway_token_rotates_the_data_dirs_token_on_sqlite(tmp_path: Path) -> None:
    env = {"FLYNN_DATA_DIR": str(tmp_path / "data")}
    none_yet = await run_flynn("gateway", "token", home=tmp_path, env=env)
    assert none_yet.code == 1 and "no gateway token yet" in none_yet.stderr
    rotated = await run_flynn("gateway", "token", "--rotate", home=tmp_path, env=env)
    assert rotated.code == 0, rotated.stderr
    token = rotated.stdout.strip()
    assert (tmp_path / "data" / "gateway-token").read_text().strip() == token
    assert "restart flynn run" in rotated.stderr
    shown = await run_flynn("gateway", "token", home=tmp_path, env=env)
    assert (shown.code, shown.stdout.strip()) == (0, token)


async def test_a_configured_gateway_token_is_not_rotated(tmp_path: Path) -> None:
    env = {"FLYNN_DATA_DIR": str(tmp_path / "data"), "FLYNN_CHANNELS__GATEWAY__TOKEN": "x" * 32}
    done = await run_flynn("gateway", "token", "--rotate", home=tmp_path, env=env)
    assert done.code == 2
    (line,) = done.stderr.splitlines()
    assert "channels.gateway.token: is set" in line and "x" * 32 not in line
