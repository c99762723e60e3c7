"""systemd's notify protocol with no extra dependency: plain datagrams to ``$NOTIFY_SOCKET``.

``READY=1`` once serving, ``WATCHDOG=1`` at half of ``$WATCHDOG_USEC``, ``STOPPING=1`` on shutdown.
Outside systemd (no socket) every call is a no-op.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Mapping

import structlog

log = structlog.get_logger(__name__)


class SystemdNotifier:
    def __init__(self, socket_path: str | None, watchdog_usec: int | None = None) -> None:
        self._address: str | bytes | None = None
        if socket_path:
            # A leading '@' names a socket in the abstract namespace.
            self._address = (
                b"\0" + socket_path[1:].encode() if socket_path.startswith("@") else socket_path
            )
        self.watchdog_interval = watchdog_usec / 2_000_000 if watchdog_usec else None

    @classmethod
    def from_environment(cls, env: Mapping[str, str]) -> SystemdNotifier:
        usec = env.get("WATCHDOG_USEC", "")
        return cls(env.get("NOTIFY_SOCKET"), int(usec) if usec.isdigit() else None)

    @property
    def enabled(self) -> bool:
        return self._address is not None

    def notify(self, state: str) -> bool:
        """Sends one state line; ``False`` (logged) if the datagram could not be sent."""
        if self._address is None:
            return False
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
                sock.connect(self._address)
                sock.sendall(state.encode())
        except OSError as exc:
            log.warning("systemd.notify_failed", state=state, error=exc.__class__.__name__)
            return False
        return True

    async def run_watchdog(self) -> None:
        """Pings the watchdog until cancelled; returns at once when no watchdog is configured.

        The ping comes from the event loop itself, so a wedged loop stops pinging and systemd
        restarts the process.
        """
        if self._address is None or self.watchdog_interval is None:
            return
        while True:
            self.notify("WATCHDOG=1")
            await asyncio.sleep(self.watchdog_interval)
