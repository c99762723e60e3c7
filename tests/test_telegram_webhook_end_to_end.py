"""Telegram in webhook mode through the daemon as people run it: a real ``flynn run`` sets the
webhook on the fake Bot API, a real HTTP client posts updates to its listener as Telegram does
(a retry among them), SIGTERM leaves the webhook set, and a start without ``webhook_url``
deletes it before polling again."""

from __future__ import annotations

import json
import socket
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from e2e_daemon import Daemon, free_port, run_flynn
from fakes.fake_telegram import OWNER_ID, TOKEN, FakeTelegram

from flynn.channels.telegram_webhook import SECRET_HEADER, webhook_secret
from flynn.settings import TelegramSettings

URL = "https://bot.example.com/telegram"


@pytest.fixture
async def telegram() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram() as server:
        yield server


def _config(tmp_path: Path, telegram: FakeTelegram, webhook: str = "") -> Path:
    """The offline model, Telegram alone; ``webhook``: lines to add to its section."""
    path = tmp_path / "config.yaml"
    path.write_text(
        f"""
data_dir: {tmp_path / "data"}
llm: {{provider: offline}}
memory: {{embeddings: false}}
logging: {{level: info, format: json}}
channels:
  gateway: {{enabled: false}}
  telegram:
    enabled: true
    token: "{TOKEN}"
    base_url: {telegram.base_url}
    allowed_users: [{OWNER_ID}]
{webhook}"""
    )
    return path


async def test_each_posted_update_is_answered_once_and_polling_takes_over_after(
    tmp_path: Path, telegram: FakeTelegram
) -> None:
    port = free_port()
    config = _config(
        tmp_path,
        telegram,
        f"    webhook_url: {URL}\n    webhook_listen: 127.0.0.1:{port}\n",
    )
    secret = webhook_secret(TelegramSettings(token=TOKEN))  # type: ignore[arg-type]
    daemon = Daemon(config, tmp_path)
    try:
        await daemon.start()
        [set_webhook] = await telegram.wait_for_calls("setWebhook")
        await telegram.wait_for_calls("setMyCommands")
        assert set_webhook.params["url"] == URL
        assert set_webhook.params["secret_token"] == secret

        async with httpx.AsyncClient(
            base_url=f"http://127.0.0.1:{port}", headers={SECRET_HEADER: secret}, timeout=20
        ) as client:
            first = telegram.update_body(telegram.queue_private("hello by webhook"))
            assert (await client.post("/telegram", json=first)).status_code == 200
            [reply] = await telegram.wait_for_sent(1)
            assert reply.chat_id == OWNER_ID
            # Telegram's retry of the same update, then another message as a barrier: the
            # session answers in order, so a second answer to the first would come before it.
            assert (await client.post("/telegram", json=first)).status_code == 200
            second = telegram.update_body(telegram.queue_private("and a second one"))
            assert (await client.post("/telegram", json=second)).status_code == 200
            await telegram.wait_for_sent(2)
            forbidden = await client.post(
                "/telegram", json=second, headers={SECRET_HEADER: "a-guess"}
            )
            assert forbidden.status_code == 403
        assert await daemon.stop() == 0
    finally:
        await daemon.kill()

    assert len(telegram.sent) == 2
    assert telegram.calls_to("getUpdates") == []
    assert telegram.calls_to("deleteWebhook") == []  # the other workers keep serving it
    assert telegram.webhook_url == URL
    logged = json.dumps(daemon.events) + "\n".join(daemon.other_lines)
    assert TOKEN not in logged and secret not in logged

    polling = Daemon(_config(tmp_path, telegram), tmp_path)
    try:
        await polling.start()
        telegram.queue_private("polled again")
        await telegram.wait_for_sent(3)
        assert await polling.stop() == 0
    finally:
        await polling.kill()
    methods = [call.method for call in telegram.calls]
    assert methods.index("deleteWebhook") < methods.index("getUpdates")


async def test_a_taken_webhook_port_stops_flynn_with_exit_3_naming_the_key(
    tmp_path: Path, telegram: FakeTelegram
) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        webhook = f"    webhook_url: {URL}\n    webhook_listen: 127.0.0.1:{port}\n"
        result = await run_flynn(
            "run", "--config", str(_config(tmp_path, telegram, webhook)), home=tmp_path
        )
    assert result.code == 3, result.stderr
    [line] = [line for line in result.stderr.splitlines() if line.startswith("flynn: ")]
    assert f"127.0.0.1:{port}" in line and "channels.telegram.webhook_listen" in line
    assert telegram.calls_to("setWebhook") == []
