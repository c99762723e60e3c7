"""The gateway's ``memory`` frames (docs/memory.md, "The memory page"): what Flynn remembers
of the person a client is, read and forgotten through a narrow seam, and sent back to the tab
that asked.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

import structlog

from flynn.channels.gateway.protocol import MemoryRequest, error_frame, memory_frame
from flynn.errors import FileChanged

log = structlog.get_logger(__name__)

MemoryData = Mapping[str, object]
"""What the page shows, as JSON (the implementation's ``as_json``)."""


class MemoryBrowser(Protocol):
    """A person's memory as the page sees it (``flynn.memory_view.MemoryView``). Each call is
    for the person the gateway client ``client_id`` is (a client listed under a person in
    ``users:``, the owner with ``memory.user_namespace``, else that client's own session) and
    reaches nothing of anyone else's. ``None`` means the fact or entity is not theirs, or no
    longer there."""

    async def overview(self, client_id: str) -> MemoryData:
        """Facts, working memory, files, reminders, tasks and the graph's entities."""
        ...

    async def history(self, client_id: str, fact_id: int) -> MemoryData | None:
        """Every value the fact's field (an observation: its chain) ever had, oldest first."""
        ...

    async def graph(self, client_id: str, entity_id: int | None) -> MemoryData | None:
        """The knowledge graph around one entity."""
        ...

    async def map(self, client_id: str) -> MemoryData:
        """Each fact placed on a 2-D map (principal components)."""
        ...

    async def forget(self, client_id: str, fact_id: int) -> MemoryData | None:
        """Forgets the fact's whole chain, as ``flynn memory forget --fact`` does."""
        ...

    async def file(self, client_id: str, name: str) -> MemoryData:
        """The person's own file ``name`` (USER.md, REMINDERS.md) whole, as kept."""
        ...

    async def save_file(
        self, client_id: str, name: str, text: str, base: str | None = None
    ) -> MemoryData:
        """Replaces the person's own file ``name`` with ``text`` (credentials redacted), as
        ``flynn memory file edit`` does. With ``base`` (the ``file`` answer's), raises
        ``FileChanged`` and writes nothing when the file changed since."""
        ...


_NOT_THERE = {
    "history": "There is no fact {fact} in your memory.",
    "forget": "There is no fact {fact} in your memory (it may have been forgotten already).",
    "graph": "There is no entity {entity} in your memory's graph.",
}
_FAILED = {
    "overview": "Your memory could not be read; try again.",
    "history": "That fact's history could not be read; try again.",
    "graph": "The graph could not be read; try again.",
    "map": "The map could not be drawn; try again.",
    "forget": "That fact could not be forgotten; nothing changed. Try again.",
    "file": "The file could not be read; try again.",
    "save_file": "The file could not be saved; it is as it was. Try again.",
}


async def answer_memory(
    browser: MemoryBrowser | None, client_id: str, request: MemoryRequest
) -> str:
    """The frame answering ``request`` for ``client_id``: a ``memory`` frame, or an error frame
    (``bad_request`` for a fact or entity that is not the person's, ``internal`` for a failure,
    logged with its traceback). Never raises but on cancellation."""
    if browser is None:
        return error_frame("internal", "This gateway has no memory to show.", request.id)
    data: MemoryData | None
    try:
        if request.op == "overview":
            data = await browser.overview(client_id)
        elif request.op == "map":
            data = await browser.map(client_id)
        elif request.op == "graph":
            data = await browser.graph(client_id, request.entity)
        elif request.op in ("file", "save_file"):
            assert request.name is not None, "parse_frame checks a file request names one"
            if request.op == "file":
                data = await browser.file(client_id, request.name)
            else:
                assert request.text is not None, "parse_frame checks a save has its text"
                data = await browser.save_file(client_id, request.name, request.text, request.base)
        else:
            assert request.fact is not None, "parse_frame checks history and forget have one"
            if request.op == "history":
                data = await browser.history(client_id, request.fact)
            else:
                data = await browser.forget(client_id, request.fact)
    except FileChanged as changed:
        log.info("gateway.memory_file_conflict", client=client_id, file=request.name)
        message = (
            f"{changed.name} changed since you opened it (Flynn or another editor wrote it), "
            "so nothing was saved. Make your change to its current text and save again."
        )
        current = {"name": changed.name, "text": changed.text, "base": changed.base}
        return error_frame("conflict", message, request.id, current)
    except Exception:  # per-frame boundary: answer, keep the connection
        log.exception("gateway.memory_failed", client=client_id, op=request.op)
        return error_frame("internal", _FAILED[request.op], request.id)
    if data is None:
        message = _NOT_THERE[request.op].format(fact=request.fact, entity=request.entity)
        return error_frame("bad_request", message, request.id)
    if request.op == "forget":
        log.info("gateway.memory_forgot", client=client_id, fact=request.fact)
    if request.op == "save_file":
        log.info("gateway.memory_file_saved", client=client_id, file=request.name)
    return memory_frame(request.op, data, request.id)
