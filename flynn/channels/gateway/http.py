"""Plain HTTP on the gateway's port: the health and readiness probes, the web chat page and the
memory page, whose assets (``flynn/channels/web/``) are read once and served from memory.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from http import HTTPStatus
from importlib import resources

import structlog
from websockets.datastructures import Headers
from websockets.http11 import Request, Response

log = structlog.get_logger(__name__)

SOCKET_PATH = "/ws"
_ASSETS = {
    "/": ("index.html", "text/html; charset=utf-8"),
    "/app.js": ("app.js", "text/javascript; charset=utf-8"),
    "/app.css": ("app.css", "text/css; charset=utf-8"),
    "/connection.js": ("connection.js", "text/javascript; charset=utf-8"),
    "/memory": ("memory.html", "text/html; charset=utf-8"),
    "/memory.js": ("memory.js", "text/javascript; charset=utf-8"),
    "/memory-draw.js": ("memory-draw.js", "text/javascript; charset=utf-8"),
    "/memory.css": ("memory.css", "text/css; charset=utf-8"),
}
_PAGES = frozenset({"/", "/memory"})
"""The HTML pages, which get the Content-Security-Policy."""
# What may go verbatim into the CSP header: a host name or IP literal with an optional port.
_HOST = re.compile(r"[A-Za-z0-9.\-]+(:[0-9]{1,5})?|\[[0-9A-Fa-f:.]+\](:[0-9]{1,5})?")


class GatewayHttp:
    """Answers ``GET /healthz``, ``/readyz``, the chat page (``/``, ``/app.js``, ``/app.css``),
    the memory page (``/memory``, ``/memory.js``, ``/memory-draw.js``, ``/memory.css``) and the
    connection script both pages load (``/connection.js``).

    ``readiness()`` is the daemon's view: ``{"ready": bool, "channels": {name: status}}``; the
    probe answers 200 when ``ready`` is true (without a ``ready`` key: when every channel's
    ``connected`` is true) and 503 otherwise, with that mapping as the JSON body.
    """

    def __init__(self, readiness: Callable[[], Mapping[str, object]]) -> None:
        self._readiness = readiness
        web = resources.files("flynn.channels").joinpath("web")
        self._assets = {
            path: (web.joinpath(name).read_bytes(), kind) for path, (name, kind) in _ASSETS.items()
        }

    def respond(self, request: Request) -> Response | None:
        """The response to ``request``; None for ``GET /ws``, which goes on to the WebSocket
        handshake."""
        path = request.path.partition("?")[0]
        if request.method != "GET":
            return _response(HTTPStatus.METHOD_NOT_ALLOWED, b"GET only\n", extra=[("Allow", "GET")])
        if path == SOCKET_PATH:
            return None
        if path == "/healthz":
            return _response(HTTPStatus.OK, b'{"status":"ok"}', "application/json")
        if path == "/readyz":
            return self._readyz()
        asset = self._assets.get(path)
        if asset is None:
            return _response(HTTPStatus.NOT_FOUND, b"not found\n")
        body, content_type = asset
        extra = [("Cache-Control", "no-cache")]
        if path in _PAGES:
            extra.append(("Content-Security-Policy", _csp(request.headers.get("Host"))))
        return _response(HTTPStatus.OK, body, content_type, extra)

    def _readyz(self) -> Response:
        try:
            state = self._readiness()
            body = json.dumps(state, default=str).encode()
        except Exception:  # a probe must answer, not fail the request
            log.exception("gateway.readiness_failed")
            state, body = {}, b'{"ready":false}'
        status = HTTPStatus.OK if _is_ready(state) else HTTPStatus.SERVICE_UNAVAILABLE
        return _response(status, body, "application/json")


def _is_ready(state: Mapping[str, object]) -> bool:
    ready = state.get("ready")
    if isinstance(ready, bool):
        return ready
    channels = state.get("channels")
    return (
        isinstance(channels, Mapping)
        and bool(channels)
        and all(
            isinstance(channel, Mapping) and channel.get("connected") is True
            for channel in channels.values()
        )
    )


def _csp(host: str | None) -> str:
    # 'self' covers ws(s) to the same host in CSP 3; the explicit entries help older engines.
    sockets = f" ws://{host} wss://{host}" if host and _HOST.fullmatch(host) else ""
    return (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        f"connect-src 'self'{sockets}; base-uri 'none'; form-action 'none'; "
        "frame-ancestors 'none'"
    )


def _response(
    status: HTTPStatus,
    body: bytes,
    content_type: str = "text/plain; charset=utf-8",
    extra: list[tuple[str, str]] | None = None,
) -> Response:
    headers = Headers(
        [
            ("Connection", "close"),
            ("Content-Length", str(len(body))),
            ("Content-Type", content_type),
            ("X-Content-Type-Options", "nosniff"),
            ("Referrer-Policy", "no-referrer"),
            *(extra or ()),
        ]
    )
    return Response(status.value, status.phrase, headers, body)
