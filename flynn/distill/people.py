"""Whose notes are distilled on the schedule, and where a finished distillation is announced."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

from flynn.memory.store import History
from flynn.messages import SessionKey
from flynn.schedule.jobs import Target
from flynn.schedule.routes import chat_target, notify_target
from flynn.settings import Settings

RECENT_DAYS = 90
"""How far back the chat a person last talked in is looked for."""


def people(settings: Settings, timezone: Callable[[str], str]) -> dict[str, str]:
    """Each person's namespace and timezone name: everyone in ``users:``, else the single
    owner (``memory.user_namespace``); nobody when memory is kept per session."""
    if settings.users:
        namespaces = [f"users/{name}" for name in settings.users]
    elif settings.memory.user_namespace:
        namespaces = [settings.memory.user_namespace]
    else:
        namespaces = []
    return {namespace: timezone(namespace) for namespace in namespaces}


def notice_target(
    settings: Settings, history: History, clock: Callable[[], datetime]
) -> Callable[[str], Target | None] | None:
    """With ``distill.notify``: where a person hears that their notes were rewritten: their
    ``notify`` channel, else the chat they last talked in that Flynn can write to unprompted
    (not ``flynn chat``); ``None`` when announcing is off."""
    if not settings.distill.notify:
        return None

    def target(namespace: str) -> Target | None:
        name = namespace.removeprefix("users/") if namespace.startswith("users/") else None
        chosen = notify_target(name, settings.users.get(name) if name else None)
        if chosen is not None:
            return chosen
        now = clock()
        recent = history.between(namespace, now - timedelta(days=RECENT_DAYS), now, limit=200)
        for message in recent:
            try:
                key = SessionKey.parse(message.session)
            except ValueError:
                continue
            chosen = chat_target(key)
            if chosen is not None:
                return chosen
        return None

    return target
