"""Channels: Telegram, Discord and the WebSocket gateway behind one Protocol (see ``base``)."""
