"""The notify protocol over a real datagram socket, and the unit file's promises."""

from __future__ import annotations

import asyncio
import configparser
import re
import shlex
import shutil
import socket
import subprocess
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


def test_the_worker_template_gives_worker_n_its_own_ports_and_data_dir(tmp_path: Path) -> None:
    text = (ROOT / "systemd" / "flynn@.service").read_text(encoding="utf-8")
    service = _unit("flynn@.service")["Service"]
    assert service["Type"] == "notify"
    assert service["RestartPreventExitStatus"] == f"{EXIT_CONFIG} {EXIT_STORAGE} {EXIT_LOCKED}"
    assert service["Environment"] == "FLYNN_DATA_DIR=/var/lib/flynn/%i"
    assert service["StateDirectory"] == "flynn/%i"
    assert service["ReadWritePaths"] == "/var/lib/flynn/%i"
    assert (service["ProtectSystem"], service["User"]) == ("strict", "flynn")
    # Not optional: a worker without the shared database's URL would keep memory of its own.
    assert "\nEnvironmentFile=/etc/flynn/storage.env\n" in text
    assert "systemctl daemon-reload && sudo systemctl enable --now flynn@{1..3}" in text
    # The command as systemd hands it to the shell for worker 3, flynn swapped for `env`.
    command = service["ExecStart"].replace("%i", "3").replace("$$", "$")
    argv = shlex.split(command)
    assert argv[:2] == ["/bin/sh", "-c"]
    script = argv[2].replace("/opt/flynn/bin/flynn run --config /etc/flynn/config.yaml", "env")
    assert script != argv[2]
    shown = subprocess.run(["/bin/sh", "-c", script], capture_output=True, text=True, check=True)
    assert "FLYNN_CHANNELS__GATEWAY__PORT=8703" in shown.stdout.splitlines()
    assert "FLYNN_CHANNELS__TELEGRAM__WEBHOOK_LISTEN=127.0.0.1:8803" in shown.stdout.splitlines()
    wrong = shlex.split(service["ExecStart"].replace("%i", "web").replace("$$", "$"))[2]
    assert (
        subprocess.run(["/bin/sh", "-c", wrong], capture_output=True, check=False).returncode == 2
    )
    analyze = shutil.which("systemd-analyze")
    if analyze is not None:
        (tmp_path / "flynn@.service").write_text(text, encoding="utf-8")
        verified = subprocess.run(
            [analyze, "verify", "--man=no", str(tmp_path / "flynn@1.service")],
            capture_output=True,
            text=True,
            check=False,
        )
        assert (verified.returncode, verified.stderr.strip()) == (0, ""), verified.stderr


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
