"""The notify protocol over a real datagram socket, and the unit file's promises."""

from __future__ import annotations

import asyncio
import configparser
import re
import socket
from pathlib import Path

from flynn.cli import EXIT_CONFIG, EXIT_LOCKED, EXIT_STORAGE
from flynn.systemd import SystemdNotifier

ROOT = Path(__file__).resolve().parent.parent


def test_notify_sends_plain_datagrams(tmp_path: Path) -> None:
    path = tmp_path / "notify.sock"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as server:
        server.bind(str(path))
        notifier = SystemdNotifier.from_environment(
            {"NOTIFY_SOCKET": str(path), "WATCHDOG_USEC": "2000000"}
        )
        assert notifier.enabled and notifier.watchdog_interval == 1.0
        assert notifier.notify("READY=1")
        assert notifier.notify("STOPPING=1")
        assert server.recv(64) == b"READY=1"
        assert server.recv(64) == b"STOPPING=1"


def test_without_systemd_every_call_is_a_no_op() -> None:
    notifier = SystemdNotifier.from_environment({})
    assert not notifier.enabled
    assert not notifier.notify("READY=1")


def test_a_vanished_socket_is_logged_not_raised(tmp_path: Path) -> None:
    assert not SystemdNotifier(str(tmp_path / "gone.sock")).notify("READY=1")


async def test_watchdog_pings_until_cancelled(tmp_path: Path) -> None:
    path = tmp_path / "notify.sock"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as server:
        server.bind(str(path))
        server.setblocking(False)
        notifier = SystemdNotifier(str(path), watchdog_usec=20_000)
        task = asyncio.create_task(notifier.run_watchdog())
        loop = asyncio.get_running_loop()
        first = await asyncio.wait_for(loop.sock_recv(server, 64), 2)
        second = await asyncio.wait_for(loop.sock_recv(server, 64), 2)
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
    assert first == second == b"WATCHDOG=1"


def _unit(name: str) -> configparser.ConfigParser:
    parser = configparser.ConfigParser(strict=False, interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read_string((ROOT / "systemd" / name).read_text())
    return parser


def test_the_system_unit_is_notify_with_watchdog_hardening_and_no_restart_it_cannot_mend() -> None:
    service = _unit("flynn.service")["Service"]
    assert service["Type"] == "notify"
    assert int(service["WatchdogSec"]) > 0
    assert service["Restart"] == "on-failure"
    assert service["RestartPreventExitStatus"] == f"{EXIT_CONFIG} {EXIT_STORAGE} {EXIT_LOCKED}"
    assert service["NoNewPrivileges"] == "yes"
    assert service["ProtectSystem"] == "strict"
    assert "/var/lib/flynn" in service["ReadWritePaths"]
    assert service["User"] == "flynn"
    assert service["EnvironmentFile"].endswith("secrets.env")
    assert "StartLimitBurst" in _unit("flynn.service")["Unit"]


def test_the_user_unit_runs_the_same_way() -> None:
    service = _unit("flynn-user.service")["Service"]
    assert service["Type"] == "notify"
    assert service["RestartPreventExitStatus"] == f"{EXIT_CONFIG} {EXIT_STORAGE} {EXIT_LOCKED}"


def test_the_documentation_a_unit_names_is_a_file_its_install_makes() -> None:
    named = 0
    for unit in sorted((ROOT / "systemd").glob("*.service")):
        text = unit.read_text(encoding="utf-8")
        install = "\n".join(line for line in text.splitlines() if line.startswith("#"))
        for line in text.splitlines():
            if line.startswith("Documentation=file://"):
                named += 1
                path = line.removeprefix("Documentation=file://")
                copied = re.search(rf"install -m 0644 (\S+) {re.escape(path)}\b", install)
                assert copied, (unit.name, path)
                assert (ROOT / copied[1]).is_file(), (unit.name, copied[1])  # from the checkout
    assert named >= 2  # the README and docs/operations.md
