"""What the memory page shows of one person, and forgetting from it: the
gateway's ``MemoryBrowser`` over the stores, the person's folder and the schedule. A client is
whoever ``Identity`` says its gateway account is; nothing of anyone else's memory is read.

The stores are synchronous SQLite on the event loop's thread (each read here is bounded and
indexed, a few milliseconds); reading the person's files and placing facts on the map run in a
worker thread.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Protocol

import structlog

from flynn.errors import FileChanged, UnreadableFile
from flynn.identity import Identity, MemoryScope
from flynn.memory.browse import MemoryBrowsing
from flynn.memory.graph_names import USER_ENTITY
from flynn.memory.graph_store import Entity, Graph, Relation
from flynn.memory.overview import FactHistory, fact_history
from flynn.memory.person_facts import person_namespaces
from flynn.memory.store import Documents, Fact, Facts
from flynn.memory.working import parse_working_memory
from flynn.memory_map import Projection, dense_projection, sparse_projection, tfidf_rows
from flynn.messages import ChannelAccount, SessionKey
from flynn.people.store import (
    MEMORY_FILES,
    REMINDERS_FILE,
    USER_FILE,
    PersonFiles,
    redacted,
)
from flynn.people.tasks import load_tasks
from flynn.persona import clean_file_text
from flynn.schedule.jobs import Job, Schedule
from flynn.schedule.listing import job_when, local_next

if TYPE_CHECKING:
    from flynn.memory.vectors import Matrix

log = structlog.get_logger(__name__)

CHANNEL = "gateway"
FACTS_SHOWN = 500
"""The newest active facts listed (and placed on the map); the page says how many there are."""
ENTITIES_LISTED = 60
GRAPH_RELATIONS = 24
"""Relations of the chosen entity drawn; each of its first ``GRAPH_FAR`` neighbours adds up
to ``GRAPH_FAR_RELATIONS`` of its own."""
GRAPH_FAR = 8
GRAPH_FAR_RELATIONS = 4
REMINDERS_SHOWN = 100
TASKS_SHOWN = 200
FILE_MAX_CHARS = 20_000
FILES = (
    USER_FILE,
    MEMORY_FILES["short"],
    MEMORY_FILES["mid"],
    MEMORY_FILES["long"],
    REMINDERS_FILE,
)
_CHAIN_MAX = 200
_MAPS_KEPT = 16
_VECTORS_KEPT = 5_000

Embed = Callable[[Sequence[str]], "Matrix"]
"""Embeds texts (blocking, run in a thread): the recall's embedding model."""
OnForgotten = Callable[[str, Mapping[str, int]], Awaitable[None]]
"""Called with a memory root and what was forgotten under it (re-embedding, live sessions)."""


class MemoryStores(Protocol):
    """The stores the page reads, and forgetting (``flynn.memory.stores.SqliteMemory``)."""

    @property
    def documents(self) -> Documents: ...

    @property
    def facts(self) -> Facts: ...

    @property
    def graph(self) -> Graph: ...

    def forget_chain(self, prefix: str, fact_id: int) -> dict[str, int] | None: ...


@dataclass(frozen=True, slots=True)
class Embeddings:
    """How the map places facts when ``memory.embeddings`` is on."""

    model: str
    embed: Embed
    ready: Callable[[], bool] = lambda: True
    """Whether ``embed`` can run (false while the model loads: the map uses TF-IDF)."""


class MemoryView:
    """The gateway's ``MemoryBrowser``: one person's memory, by their gateway client id."""

    def __init__(
        self,
        stores: MemoryStores,
        browser: MemoryBrowsing,
        identity: Identity,
        *,
        files: PersonFiles,
        clock: Callable[[], datetime],
        schedule: Schedule | None = None,
        embeddings: Embeddings | None = None,
        on_forgotten: OnForgotten | None = None,
    ) -> None:
        self._stores = stores
        self._browser = browser
        self._identity = identity
        self._files = files
        self._clock = clock
        self._schedule = schedule
        self._embeddings = embeddings
        self._on_forgotten = on_forgotten
        self._maps: OrderedDict[tuple[str, tuple[int, int]], dict[str, object]] = OrderedDict()
        self._vectors: dict[int, list[float]] = {}

    def scope(self, client_id: str) -> MemoryScope:
        """Whose memory the gateway client ``client_id`` sees: as for its chat session."""
        return self._identity.resolve(
            ChannelAccount(CHANNEL, client_id), SessionKey(CHANNEL, client_id)
        )

    async def overview(self, client_id: str) -> dict[str, object]:
        scope = self.scope(client_id)
        now = self._clock()
        newest = self._browser.newest_facts(_fact_namespaces(scope), limit=FACTS_SHOWN)
        entities = self._browser.entities(scope.root, limit=ENTITIES_LISTED)
        reminders = self._reminders(scope.root)
        # On the loop's thread, like a turn's reads of them: a store's connection (SQLite's)
        # may serve only the thread that opened it.
        files, tasks = _read_files(self._files, scope.root)
        return {
            "who": _who(scope),
            "facts": [_fact_json(fact, scope) for fact in newest.facts],
            "facts_total": newest.total,
            "facts_limit": FACTS_SHOWN,
            "working": self._working(scope, now),
            "files": files,
            "reminders": reminders,
            "tasks": tasks,
            "entities": [_entity_json(entity) for entity in entities],
            "map_method": "embeddings" if self._embeddings is not None else "tfidf",
        }

    async def history(self, client_id: str, fact_id: int) -> dict[str, object] | None:
        scope = self.scope(client_id)
        fact = self._stores.facts.get(fact_id)
        if fact is None or not _within(fact.namespace, scope.root):
            return None
        if fact.field is not None:
            history = fact_history(self._stores, scope, fact.field)
        else:
            history = FactHistory(scope, fact.value, tuple(self._chain(fact)))
        return {"fact": fact_id, **history.as_json()}

    async def graph(self, client_id: str, entity_id: int | None) -> dict[str, object] | None:
        scope = self.scope(client_id)
        if entity_id is None:
            centre = self._stores.graph.find(scope.root, USER_ENTITY)
            if centre is None:
                listed = self._browser.entities(scope.root, limit=1)
                centre = listed[0] if listed else None
            if centre is None:
                return {"centre": None, "nodes": [], "edges": []}
        else:
            centre = self._browser.entity(entity_id)
            if centre is None or not _within(centre.namespace, scope.root):
                return None
        return self._around(centre)

    async def map(self, client_id: str) -> dict[str, object]:
        scope = self.scope(client_id)
        generation = self._stores.facts.generation()
        key = (scope.root, generation)
        kept = self._maps.get(key)
        if kept is not None:
            self._maps.move_to_end(key)
            return kept
        newest = self._browser.newest_facts(_fact_namespaces(scope), limit=FACTS_SHOWN)
        facts = newest.facts
        texts = [_fact_text(fact) for fact in facts]
        method, model = "tfidf", None
        projection: Projection | None = None
        if self._embeddings is not None and self._embeddings.ready() and facts:
            try:
                projection = await self._embedded_projection(facts, texts)
                method, model = "embeddings", self._embeddings.model
            except Exception:  # the model failed to load or run: words still place them
                log.exception("memory_view.map_embeddings_failed")
        if projection is None:
            projection = await asyncio.to_thread(_tfidf_projection, texts)
        drawn: dict[str, object] = {
            "method": method,
            "model": model,
            "explained": round(projection.explained, 4),
            "total": newest.total,
            "limit": FACTS_SHOWN,
            "points": [
                {"id": fact.id, "kind": fact.kind, "text": text, "x": x, "y": y}
                for fact, text, (x, y) in zip(facts, texts, projection.points, strict=True)
            ],
        }
        self._maps[key] = drawn
        while len(self._maps) > _MAPS_KEPT:
            self._maps.popitem(last=False)
        return drawn

    async def forget(self, client_id: str, fact_id: int) -> dict[str, object] | None:
        """``flynn memory forget --fact``: the fact's whole chain and its values' mentions, and
        the person's distilled notes; then ``on_forgotten`` (messages embedded anew, live
        sessions dropping what they loaded). ``None`` when the fact is not the person's."""
        scope = self.scope(client_id)
        counts = self._stores.forget_chain(scope.root, fact_id)
        if counts is None:
            return None
        counts["distilled notes"] = self._files.forget_distilled(scope.root)
        if self._on_forgotten is not None:
            await self._on_forgotten(scope.root, counts)
        return {"fact": fact_id, "forgotten": counts}

    async def file(self, client_id: str, name: str) -> dict[str, object]:
        """The person's own file ``name`` whole, as kept (guidance comments too), to edit."""
        scope = self.scope(client_id)
        text = self._files.read(scope.root, name)
        return {"name": name, "text": text, "base": text_digest(text)}

    async def save_file(
        self, client_id: str, name: str, text: str, base: str | None = None
    ) -> dict[str, object]:
        """Replaces the person's own file ``name`` whole (credentials redacted on write);
        answers with what was kept (and its ``base``, to save again from), and whether a
        credential was taken out. With ``base`` (``file``'s digest of the text the edit
        started from), raises ``FileChanged`` and writes nothing when the file is no longer
        that text: a tool, the distiller or another editor wrote it meanwhile. A file that
        holds the text being saved already (the same save sent again after the connection
        dropped before its answer, or from another tab) is answered as saved."""
        scope = self.scope(client_id)
        if base is not None:
            current = self._files.read(scope.root, name)
            # Written only over the text compared, atomically against another process or
            # worker that writes it between this read and the write.
            if text_digest(current) != base or not self._files.write(
                scope.root, name, text, expected=current
            ):
                found = self._files.read(scope.root, name)
                if found != redacted(name, text):
                    raise FileChanged(name, found, text_digest(found))
        else:
            self._files.write(scope.root, name, text)
        kept = self._files.read(scope.root, name)
        return {"name": name, "text": kept, "base": text_digest(kept), "redacted": kept != text}

    def _chain(self, fact: Fact) -> list[Fact]:
        """An observation's supersession chain through ``fact``, oldest first."""
        chain = [fact]
        while chain[-1].supersedes is not None and len(chain) < _CHAIN_MAX:
            older = self._stores.facts.get(chain[-1].supersedes)
            if older is None or older.namespace != fact.namespace:
                break
            chain.append(older)
        return chain[::-1]

    def _working(self, scope: MemoryScope, now: datetime) -> dict[str, object] | None:
        document = self._stores.documents.read(scope.working)
        working = parse_working_memory(document.content) if document is not None else None
        if working is None:
            return None
        return {
            "content": working.content,
            "updated_at": _iso(working.updated_at),
            "expires_at": _iso(working.expires_at),
            "expired": working.is_expired(now),
        }

    def _reminders(self, root: str) -> dict[str, object]:
        if self._schedule is None:
            return {"items": [], "more": False}
        jobs = self._schedule.jobs(root, kind="reminder", limit=REMINDERS_SHOWN + 1)
        return {
            "items": [_job_json(job) for job in jobs[:REMINDERS_SHOWN]],
            "more": len(jobs) > REMINDERS_SHOWN,
        }

    def _around(self, centre: Entity) -> dict[str, object]:
        """The centre, its relations, and a few of its neighbours' relations."""
        graph = self._stores.graph
        relations: dict[int, Relation] = {}
        for relation in graph.relations_of(centre.id, limit=GRAPH_RELATIONS):
            relations[relation.id] = relation
        near = list(dict.fromkeys(_other_end(r, centre.id) for r in relations.values()))
        ring = {centre.id: 0, **dict.fromkeys(near, 1)}
        for neighbour in near[:GRAPH_FAR]:
            for relation in graph.relations_of(neighbour, limit=GRAPH_FAR_RELATIONS):
                relations.setdefault(relation.id, relation)
                ring.setdefault(_other_end(relation, neighbour), 2)
        nodes = []
        for entity_id, distance in ring.items():
            entity = centre if entity_id == centre.id else self._browser.entity(entity_id)
            if entity is not None:
                nodes.append({**_entity_json(entity), "ring": distance})
        return {
            "centre": _entity_json(centre),
            "nodes": nodes,
            "edges": [
                {
                    "id": relation.id,
                    "source": relation.source_id,
                    "target": relation.target_id,
                    "type": relation.type.replace("_", " "),
                    "confidence": round(relation.confidence, 2),
                }
                for relation in relations.values()
            ],
        }

    async def _embedded_projection(self, facts: Sequence[Fact], texts: list[str]) -> Projection:
        """The facts' embeddings' principal components; each fact is embedded once (a fact
        never changes: a new value is a new row)."""
        assert self._embeddings is not None
        missing = [(fact.id, text) for fact, text in zip(facts, texts, strict=True)]
        missing = [(fact_id, text) for fact_id, text in missing if fact_id not in self._vectors]
        if missing:
            if len(self._vectors) + len(missing) > _VECTORS_KEPT:
                self._vectors.clear()
            embedded = await asyncio.to_thread(
                self._embeddings.embed, [text for _, text in missing]
            )
            for (fact_id, _), vector in zip(missing, embedded, strict=True):
                self._vectors[fact_id] = [float(value) for value in vector]
        rows = [self._vectors[fact.id] for fact in facts]
        return await asyncio.to_thread(dense_projection, rows)


def _tfidf_projection(texts: Sequence[str]) -> Projection:
    return sparse_projection(tfidf_rows(texts))


def _read_files(
    person: PersonFiles, namespace: str
) -> tuple[list[dict[str, object]], dict[str, object]]:
    """The person's notes as Flynn reads them (guidance comments left out), and their tasks."""
    files: list[dict[str, object]] = []
    have = {file.name for file in person.list_files(namespace)}
    for name in FILES:
        try:
            raw = person.read(namespace, name)
        except UnreadableFile as exc:
            files.append({"name": name, "exists": True, "error": str(exc)})
            continue
        text = clean_file_text(name, raw)
        files.append(
            {
                "name": name,
                "exists": name in have,
                "text": text[:FILE_MAX_CHARS],
                "cut": len(text) > FILE_MAX_CHARS,
                "guidance_only": bool(raw.strip()) and not text,
            }
        )
    try:
        tasks = load_tasks(person, namespace)
    except UnreadableFile as exc:
        return files, {"items": [], "more": False, "error": str(exc)}
    shown = [task.as_json() for task in tasks[:TASKS_SHOWN]]
    return files, {"items": shown, "more": len(tasks) > TASKS_SHOWN}


def text_digest(text: str) -> str:
    """A file text's short digest (the first 16 hex digits of its SHA-256): the ``base`` a
    save names to say which text its edit started from."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def _fact_namespaces(scope: MemoryScope) -> tuple[str, str, str]:
    return person_namespaces(scope)


def _who(scope: MemoryScope) -> dict[str, object]:
    if not scope.shared:
        kind = "session"
    elif scope.root.startswith("users/"):
        kind = "person"
    else:
        kind = "owner"
    return {"namespace": scope.root, "person": scope.user, "kind": kind}


def _fact_json(fact: Fact, scope: MemoryScope) -> dict[str, object]:
    section = fact.namespace.rsplit("/", 1)[-1]
    return {
        "id": fact.id,
        "section": section if fact.namespace.startswith(scope.root + "/") else "facts",
        "kind": fact.kind,
        "field": fact.field,
        "value": fact.value,
        "confidence": round(fact.confidence, 2),
        "source": fact.source,
        "learnt_at": _iso(fact.created_at),
        "channel": fact.channel,
        "has_history": fact.supersedes is not None,
    }


def _fact_text(fact: Fact) -> str:
    return f"{fact.field.replace('_', ' ')}: {fact.value}" if fact.field else fact.value


def _entity_json(entity: Entity) -> dict[str, object]:
    return {
        "id": entity.id,
        "name": entity.name,
        "type": entity.type,
        "mentions": entity.mentions,
    }


def _job_json(job: Job) -> dict[str, object]:
    when = local_next(job)
    return {
        "id": job.id,
        "number": job.number,  # what the person sees and cancels by (``/reminders cancel N``)
        "text": job.text,
        "next_at": None if when is None else when.isoformat(),
        "when": job_when(job),  # shown as is: written as chat and ``flynn reminders`` write it
        "timezone": job.timezone,
        "repeat": job.repeat,
    }


def _other_end(relation: Relation, entity_id: int) -> int:
    return relation.target_id if relation.source_id == entity_id else relation.source_id


def _within(namespace: str, root: str) -> bool:
    return namespace == root or namespace.startswith(root.rstrip("/") + "/")


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
