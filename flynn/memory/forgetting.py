"""Forgetting for real in SQLite, beyond a whole namespace: a field, one fact's chain, or a span of
time, with what was derived from it (index rows, embeddings, graph rows, session summaries,
working memory, and the value's mentions in messages and documents, which are redacted).
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Sequence
from datetime import datetime

from flynn.memory.database import Database, encode_time
from flynn.memory.fact_keys import RETRACTION_PREFIX, observation_key
from flynn.memory.graph_names import candidate_keys, name_key
from flynn.memory.namespaces import namespace_scope, scope_params
from flynn.memory.store import DerivedRelations

REDACTED = "(forgotten)"
"""What a forgotten value becomes where a message or document mentions it."""
MIN_REDACTED_CHARS = 3
"""Shorter values ("no", "42") would redact unrelated words; the fact rows still go."""

_SCOPE = namespace_scope("namespace")
_FIELD_VALUES = f"SELECT namespace, field, value FROM facts WHERE {_SCOPE} AND field = ?"
_FORGET_FIELD = f"DELETE FROM facts WHERE {_SCOPE} AND field = ?"
# The chains (lines: a fact is superseded at most once) through every seed fact, both ways.
_CHAINS = """
WITH RECURSIVE
    seeds(id) AS ({seeds}),
    older(id, supersedes) AS (
        SELECT id, supersedes FROM facts WHERE id IN (SELECT id FROM seeds)
        UNION SELECT f.id, f.supersedes FROM facts AS f JOIN older ON f.id = older.supersedes
    ),
    newer(id) AS (
        SELECT id FROM seeds
        UNION SELECT f.id FROM facts AS f JOIN newer ON f.supersedes = newer.id
    )
SELECT id FROM older UNION SELECT id FROM newer
"""
_ONE_CHAIN = _CHAINS.format(seeds="SELECT :id")
_CHAIN_ROWS = f"SELECT namespace, field, value FROM facts WHERE id IN ({_ONE_CHAIN})"
_FORGET_ONE_CHAIN = f"DELETE FROM facts WHERE id IN ({_ONE_CHAIN})"
_IN_RANGE = f"{_SCOPE} AND created_at >= ? AND created_at < ?"
# Facts written in the span, and facts taken from a message written in it (``message_id``,
# recorded from migration 6 on), whenever they were written.
_RANGE_SEEDS = (
    f"SELECT id FROM facts WHERE {_IN_RANGE} "
    f"UNION SELECT f.id FROM facts AS f JOIN messages AS m ON m.id = f.message_id "
    f"WHERE {namespace_scope('m.namespace')} AND m.created_at >= ? AND m.created_at < ?"
)
_FORGET_RANGE_FACTS = f"DELETE FROM facts WHERE id IN ({_CHAINS.format(seeds=_RANGE_SEEDS)})"
_RANGE_SESSIONS = f"SELECT DISTINCT session FROM messages WHERE {_IN_RANGE} AND summarized = 1"
_FORGET_RANGE_MESSAGES = f"DELETE FROM messages WHERE {_IN_RANGE}"
_RANGE_TOUCHED = f"SELECT DISTINCT session FROM messages WHERE {_IN_RANGE}"
_DROP_SUMMARY = "UPDATE sessions SET summary = NULL WHERE key = ?"
_FORGET_EMPTY_SESSION = (
    "DELETE FROM sessions WHERE key = ? AND NOT EXISTS (SELECT 1 FROM messages WHERE session = ?)"
)
_FORGET_RANGE_RELATIONS = f"DELETE FROM relations WHERE {_IN_RANGE}"
# Entities first seen in the span that no remaining message mentions (mentions went with the
# messages); their relations go with them (ON DELETE CASCADE).
_FORGET_RANGE_ENTITIES = (
    f"DELETE FROM entities WHERE {_IN_RANGE} "
    "AND NOT EXISTS (SELECT 1 FROM entity_mentions WHERE entity_id = entities.id)"
)
_FORGET_DOCUMENTS = f"DELETE FROM documents WHERE {_SCOPE}"
_FORGET_DOCUMENT = "DELETE FROM documents WHERE namespace = ?"
_FORGET_EMBEDDINGS = f"DELETE FROM embeddings WHERE {_SCOPE}"
_MESSAGES = f"SELECT id, content FROM messages WHERE {_SCOPE}"
_SET_MESSAGE = "UPDATE messages SET content = ? WHERE id = ?"
# The tool calls and results stored with a reply ("remember: location = Lisbon") repeat values too.
_TOOL_STEPS = (
    "SELECT t.message_id, t.steps FROM message_tools AS t JOIN messages AS m "
    f"ON m.id = t.message_id WHERE {namespace_scope('m.namespace')}"
)
_SET_TOOL_STEPS = "UPDATE message_tools SET steps = ? WHERE message_id = ?"
_DOCUMENTS = f"SELECT namespace, content FROM documents WHERE {_SCOPE}"
_SET_DOCUMENT = "UPDATE documents SET content = ? WHERE namespace = ?"
_SUMMARIES = f"SELECT key, summary FROM sessions WHERE {_SCOPE} AND summary IS NOT NULL"
_SET_SUMMARY = "UPDATE sessions SET summary = ? WHERE key = ?"
_FORGET_MESSAGE_EMBEDDING = "DELETE FROM embeddings WHERE kind = 'message' AND ref_id = ?"
# A message's vector embeds the message before it too (``flynn.memory.vectors.in_context``): when
# a message is redacted or deleted, the vector of the one after it goes as well.
# Two probes of the (session, summarized, id) index, each answered from its end: one ``min`` over
# the session would scan all of it, for every message forgotten. (``_NONE`` stands for no row.)
_NONE = 2**63 - 1
_NEXT_IN_SESSION = f"""
SELECT nullif(min(
    coalesce((SELECT min(id) FROM messages
              WHERE session = m.session AND summarized = 0 AND id > m.id), {_NONE}),
    coalesce((SELECT min(id) FROM messages
              WHERE session = m.session AND summarized = 1 AND id > m.id), {_NONE})
), {_NONE})
"""
_FORGET_NEXT_EMBEDDING = (
    "DELETE FROM embeddings WHERE kind = 'message' "
    f"AND ref_id = (SELECT ({_NEXT_IN_SESSION}) FROM messages AS m WHERE m.id = ?)"
)
_FORGET_RANGE_NEXT_EMBEDDINGS = (
    "DELETE FROM embeddings WHERE kind = 'message' AND ref_id IN "
    f"(SELECT ({_NEXT_IN_SESSION}) FROM messages AS m WHERE {namespace_scope('m.namespace')} "
    "AND m.created_at >= ? AND m.created_at < ?)"
)
_FORGET_ENTITY = f"DELETE FROM entities WHERE {_SCOPE} AND name_key = ?"
_MENTIONED = (
    "SELECT m.entity_id, e.name_key FROM entity_mentions AS m "
    "JOIN entities AS e ON e.id = m.entity_id WHERE m.message_id = ?"
)
_FORGET_MENTION = "DELETE FROM entity_mentions WHERE entity_id = ? AND message_id = ?"
# An entity no message mentions and no relation holds was learnt only from what was forgotten.
_FORGET_UNREFERENCED = (
    "DELETE FROM entities WHERE id = ? "
    "AND NOT EXISTS (SELECT 1 FROM entity_mentions WHERE entity_id = entities.id) "
    "AND NOT EXISTS (SELECT 1 FROM relations WHERE source_id = entities.id) "
    "AND NOT EXISTS (SELECT 1 FROM relations WHERE target_id = entities.id)"
)


def redactable(value: str) -> str | None:
    """The part of a fact's value that mentions of it would contain verbatim: the object of a
    keyed observation ("prefers green tea" -> "green tea"), else the value; ``None`` if too short
    to redact safely."""
    value = value.removeprefix(RETRACTION_PREFIX)
    key = observation_key(value)
    text = " ".join((key[1] if key is not None else value).split())
    return text if len(text) >= MIN_REDACTED_CHARS else None


class SqliteForgetting:
    """Each method is one transaction: everything it names goes, or nothing does. Counts per
    kind of row are returned; ``ValueError`` for an empty prefix, ``StoreError`` on failure.

    ``relations`` retires the graph relations forgotten facts stated (``FactRelations``); it
    must write to this database, so that it shares the transaction.
    """

    def __init__(self, db: Database, relations: DerivedRelations) -> None:
        self._db = db
        self._relations = relations

    def forget_field(self, prefix: str, field: str) -> dict[str, int]:
        """Every row ever stored for ``field`` under ``prefix``, and its values wherever a message,
        summary or document under ``prefix`` mentions them."""
        scope = scope_params(prefix)
        with self._db.transaction():
            rows = self._db.fetchall(_FIELD_VALUES, (*scope, field))
            facts = self._db.execute(_FORGET_FIELD, (*scope, field))
            return {"facts": facts, **self._redact(prefix, rows)}

    def forget_chain(self, prefix: str, fact_id: int) -> dict[str, int] | None:
        """The fact's whole supersession chain and its values' mentions under ``prefix``;
        ``None`` (nothing done) when the fact does not exist or its chain leaves ``prefix``."""
        with self._db.transaction():
            rows = self._db.fetchall(_CHAIN_ROWS, {"id": fact_id})
            if not rows or not all(_within(row["namespace"], prefix) for row in rows):
                return None
            facts = self._db.execute(_FORGET_ONE_CHAIN, {"id": fact_id})
            return {"facts": facts, **self._redact(prefix, rows)}

    def forget_range(self, prefix: str, *, since: datetime, until: datetime) -> dict[str, int]:
        """Everything under ``prefix`` written in ``[since, until)``: messages (with their index
        rows, graph mentions and vectors), the whole chains of facts written then or taken
        from those messages, and graph rows first seen then. Summaries and working memory cannot
        be edited surgically: when a message goes, the summaries of sessions it was summarised
        into, the working memory document and the cached session contexts go too
        (``documents`` counts them)."""
        span = (*scope_params(prefix), encode_time(since), encode_time(until))
        with self._db.transaction():
            summarised = [row[0] for row in self._db.fetchall(_RANGE_SESSIONS, span)]
            touched = [row[0] for row in self._db.fetchall(_RANGE_TOUCHED, span)]
            facts = self._db.execute(_FORGET_RANGE_FACTS, (*span, *span))
            self._db.execute(_FORGET_RANGE_NEXT_EMBEDDINGS, span)
            messages = self._db.execute(_FORGET_RANGE_MESSAGES, span)
            for session in summarised:
                self._db.execute(_DROP_SUMMARY, (session,))
            sessions = sum(self._db.execute(_FORGET_EMPTY_SESSION, (s, s)) for s in touched)
            documents = 0
            if messages:
                documents = self._db.execute(_FORGET_DOCUMENT, (f"{prefix.rstrip('/')}/working",))
                documents += self._db.execute(
                    _FORGET_DOCUMENTS, scope_params(f"{prefix.rstrip('/')}/context")
                )
            relations = self._db.execute(_FORGET_RANGE_RELATIONS, span)
            entities = self._db.execute(_FORGET_RANGE_ENTITIES, span)
        return {
            "messages": messages,
            "facts": facts,
            "summaries": len(summarised),
            "sessions": sessions,
            "documents": documents,
            "entities": entities,
            "relations": relations,
        }

    def forget_embeddings(self, prefix: str) -> int:
        """Vectors stored under ``prefix`` (those of deleted messages and facts go with them, by
        trigger, wherever they are stored)."""
        return self._db.execute(_FORGET_EMBEDDINGS, scope_params(prefix))

    def _redact(self, prefix: str, facts: Sequence[sqlite3.Row]) -> dict[str, int]:
        """Replaces each of the forgotten ``facts``' values, as a whole word in any case, with
        ``REDACTED`` in messages, session summaries and documents under ``prefix``; a redacted
        message loses its vector and the graph mentions of names no longer in it. The graph
        relation each fact stated goes, and so does an entity named after a value, or left with
        neither mention nor relation."""
        relations = sum(
            self._relations.retire(fact["namespace"], fact["field"], fact["value"])
            for fact in facts
            if not fact["value"].startswith(RETRACTION_PREFIX)
        )
        values = [fact["value"] for fact in facts]
        texts = sorted({text for value in values if (text := redactable(value))}, key=len)
        counts = {
            "redacted_messages": 0,
            "redacted_tool_steps": 0,
            "redacted_summaries": 0,
            "redacted_documents": 0,
            "entities": 0,
            "relations": relations,
            "embeddings": 0,
        }
        if not texts:
            return counts
        # Longest first, so "green tea" is redacted before "tea" could split it.
        pattern = re.compile(
            "|".join(rf"(?<!\w){re.escape(text)}(?!\w)" for text in reversed(texts)),
            re.IGNORECASE,
        )
        scope = scope_params(prefix)
        unmentioned: set[int] = set()
        for message_id, content in self._changed(_MESSAGES, scope, pattern):
            self._db.execute(_SET_MESSAGE, (content, message_id))
            counts["embeddings"] += self._db.execute(_FORGET_MESSAGE_EMBEDDING, (message_id,))
            counts["embeddings"] += self._db.execute(_FORGET_NEXT_EMBEDDING, (message_id,))
            counts["redacted_messages"] += 1
            unmentioned |= self._forget_stale_mentions(message_id, content)
        for row in self._db.fetchall(_TOOL_STEPS, scope):
            # Redacted in the decoded strings: in the JSON text a value with a quote, a
            # backslash or a line break is escaped, and would not match.
            steps = _redacted_json(str(row[1]), pattern)
            if steps is not None:
                self._db.execute(_SET_TOOL_STEPS, (steps, row[0]))
                counts["redacted_tool_steps"] += 1
        for key, summary in self._changed(_SUMMARIES, scope, pattern):
            self._db.execute(_SET_SUMMARY, (summary, key))
            counts["redacted_summaries"] += 1
        for namespace, content in self._changed(_DOCUMENTS, scope, pattern):
            self._db.execute(_SET_DOCUMENT, (content, namespace))
            counts["redacted_documents"] += 1
        for text in texts:
            if key := name_key(text):
                counts["entities"] += self._db.execute(_FORGET_ENTITY, (*scope, key))
        for entity_id in sorted(unmentioned):
            counts["entities"] += self._db.execute(_FORGET_UNREFERENCED, (entity_id,))
        return counts

    def _forget_stale_mentions(self, message_id: object, content: str) -> set[int]:
        """Drops the message's links to entities it no longer names ("my dog is called
        (forgotten)" names no Pixel); returns those entities."""
        keys = candidate_keys(content)
        stale = set()
        for row in self._db.fetchall(_MENTIONED, (message_id,)):
            if row["name_key"] not in keys:
                self._db.execute(_FORGET_MENTION, (row["entity_id"], message_id))
                stale.add(int(row["entity_id"]))
        return stale

    def _changed(
        self, sql: str, scope: tuple[str, str, str], pattern: re.Pattern[str]
    ) -> list[tuple[object, str]]:
        changed = []
        for row in self._db.fetchall(sql, scope):
            text = row[1]
            redacted = pattern.sub(REDACTED, text)
            if redacted != text:
                changed.append((row[0], redacted))
        return changed


def _redacted_json(text: str, pattern: re.Pattern[str]) -> str | None:
    """``text`` (JSON) with ``pattern`` redacted in every string in it; None if nothing
    changed. Unreadable JSON is redacted as text."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        redacted = pattern.sub(REDACTED, text)
        return redacted if redacted != text else None

    def walk(value: object) -> object:
        if isinstance(value, str):
            return pattern.sub(REDACTED, value)
        if isinstance(value, list):
            return [walk(item) for item in value]
        if isinstance(value, dict):
            return {key: walk(item) for key, item in value.items()}
        return value

    walked = walk(data)
    if walked == data:
        return None
    return json.dumps(walked, ensure_ascii=False, separators=(",", ":"))


def _within(namespace: str, prefix: str) -> bool:
    prefix = prefix.rstrip("/")
    return namespace == prefix or namespace.startswith(prefix + "/")
