"""The WebSocket gateway, one concept per module: the channel and its connections (``channel``),
the protocol's frames (``protocol``), what a ``hello`` token proves (``auth``), connections
before ``hello`` (``admission``), plain HTTP on the same port (``http``), the ``history`` and
``memory`` frames' answers (``history``, ``memory``) and Markdown as safe HTML (``markdown``).
"""

from flynn.channels.gateway.channel import CHANNEL, CLOSE_BAD_HELLO, Acknowledged, GatewayChannel

__all__ = ["CHANNEL", "CLOSE_BAD_HELLO", "Acknowledged", "GatewayChannel"]
