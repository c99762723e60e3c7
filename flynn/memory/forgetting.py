"""Forgetting for real, beyond a whole namespace: a field, one fact's chain, or a span of time,
with what was derived from it (index rows, embeddings, graph rows, session summaries, working
memory, and the value's mentions in messages and documents, which are redacted). The logic once
(``SqlForgetting``), on SQLite (``SQLITE_FORGETTING``) and on PostgreSQL (its dialect in
``flynn.postgres.memory``), with the same counts.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

from flynn.memory.database import Database, encode_time
from flynn.memory.fact_keys import RETRACTION_PREFIX, observation_key
from flynn.memory.graph_names import candidate_keys, name_key
from flynn.memory.namespaces import namespace_scope, scope_params
from flynn.memory.sql import NamedRow, TransactionalSql
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
_ONE_CHAIN = _CHAINS.format(seeds="SELECT {chain_id}")
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
_RANGE_SESSIONS = (
    f"SELECT DISTINCT session FROM messages WHERE {_IN_RANGE} AND summarized = {{true}}"
)
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
SELECT nullif({{least}}(
    coalesce((SELECT min(id) FROM messages
              WHERE session = m.session AND summarized = {{false}} AND id > m.id), {_NONE}),
    coalesce((SELECT min(id) FROM messages
              WHERE session = m.session AND summarized = {{true}} AND id > m.id), {_NONE})
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


_STATEMENTS = {
    "chain_rows": _CHAIN_ROWS,
    "documents": _DOCUMENTS,
    "drop_summary": _DROP_SUMMARY,
    "field_values": _FIELD_VALUES,
    "forget_document": _FORGET_DOCUMENT,
    "forget_documents": _FORGET_DOCUMENTS,
    "forget_embeddings": _FORGET_EMBEDDINGS,
    "forget_empty_session": _FORGET_EMPTY_SESSION,
    "forget_entity": _FORGET_ENTITY,
    "forget_field": _FORGET_FIELD,
    "forget_mention": _FORGET_MENTION,
    "forget_message_embedding": _FORGET_MESSAGE_EMBEDDING,
    "forget_next_embedding": _FORGET_NEXT_EMBEDDING,
    "forget_one_chain": _FORGET_ONE_CHAIN,
    "forget_range_entities": _FORGET_RANGE_ENTITIES,
    "forget_range_facts": _FORGET_RANGE_FACTS,
    "forget_range_messages": _FORGET_RANGE_MESSAGES,
    "forget_range_next_embeddings": _FORGET_RANGE_NEXT_EMBEDDINGS,
    "forget_range_relations": _FORGET_RANGE_RELATIONS,
    "forget_unreferenced": _FORGET_UNREFERENCED,
    "mentioned": _MENTIONED,
    "messages": _MESSAGES,
    "range_sessions": _RANGE_SESSIONS,
    "range_touched": _RANGE_TOUCHED,
    "set_document": _SET_DOCUMENT,
    "set_message": _SET_MESSAGE,
    "set_summary": _SET_SUMMARY,
    "set_tool_steps": _SET_TOOL_STEPS,
    "summaries": _SUMMARIES,
    "tool_steps": _TOOL_STEPS,
}


@dataclass(frozen=True, slots=True)
class ForgettingDialect:
    """The statements above as one backend runs them (``forgetting_dialect``), how it writes
    times, and how it rewrites a message's text (its full-text index with it)."""

    statements: dict[str, str]
    time: Callable[[datetime], object]
    rewrite: Callable[[TransactionalSql, int, str], object]


def forgetting_dialect(
    parameters: Callable[[str], str],
    *,
    true: str,
    false: str,
    least: str,
    chain_id: str,
    time: Callable[[datetime], object],
    rewrite: Callable[[TransactionalSql, int, str], object],
) -> ForgettingDialect:
    """The statements, written once in SQLite's form, with the backend's booleans, its
    two-argument minimum (``least``), the chain's id parameter (``chain_id``), turned into its
    parameters by ``parameters``."""
    words = {"true": true, "false": false, "least": least, "chain_id": chain_id}
    return ForgettingDialect(
        {name: parameters(value.format(**words)) for name, value in _STATEMENTS.items()},
        time,
        rewrite,
    )


def _sqlite_rewrite(db: TransactionalSql, message_id: int, content: str) -> object:
    # ``messages_fts`` follows by trigger.
    return db.execute(_SET_MESSAGE, (content, message_id))


SQLITE_FORGETTING = forgetting_dialect(
    lambda statement: statement,
    true="1",
    false="0",
    least="min",
    chain_id=":id",
    time=encode_time,
    rewrite=_sqlite_rewrite,
)


class SqlForgetting:
    """Each method is one transaction: everything it names goes, or nothing does. Counts per
    kind of row are returned; ``ValueError`` for an empty prefix, ``StoreError`` on failure.

    ``relations`` retires the graph relations forgotten facts stated (``FactRelations``); it
    must write to this database, so that it shares the transaction.
    """

    def __init__(
        self, db: TransactionalSql, relations: DerivedRelations, dialect: ForgettingDialect
    ) -> None:
        self._db = db
        self._relations = relations
        self._dialect = dialect
        self._sql = dialect.statements

    def forget_field(self, prefix: str, field: str) -> dict[str, int]:
        """Every row ever stored for ``field`` under ``prefix``, and its values wherever a message,
        summary or document under ``prefix`` mentions them."""
        scope = scope_params(prefix)
        with self._db.transaction():
            rows = self._db.fetchall(self._sql["field_values"], (*scope, field))
            facts = self._db.execute(self._sql["forget_field"], (*scope, field))
            return {"facts": facts, **self._redact(prefix, rows)}

    def forget_chain(self, prefix: str, fact_id: int) -> dict[str, int] | None:
        """The fact's whole supersession chain and its values' mentions under ``prefix``;
        ``None`` (nothing done) when the fact does not exist or its chain leaves ``prefix``."""
        with self._db.transaction():
            rows = self._db.fetchall(self._sql["chain_rows"], {"id": fact_id})
            if not rows or not all(_within(row["namespace"], prefix) for row in rows):
                return None
            facts = self._db.execute(self._sql["forget_one_chain"], {"id": fact_id})
            return {"facts": facts, **self._redact(prefix, rows)}

    def forget_range(self, prefix: str, *, since: datetime, until: datetime) -> dict[str, int]:
        """Everything under ``prefix`` written in ``[since, until)``: messages (with their index
        rows, graph mentions and vectors), the whole chains of facts written then or taken
        from those messages, and graph rows first seen then. Summaries and working memory cannot
        be edited surgically: when a message goes, the summaries of sessions it was summarised
        into, the working memory document and the cached session contexts go too
        (``documents`` counts them)."""
        span = (*scope_params(prefix), self._dialect.time(since), self._dialect.time(until))
        with self._db.transaction():
            summarised = [
                row["session"] for row in self._db.fetchall(self._sql["range_sessions"], span)
            ]
            touched = [
                row["session"] for row in self._db.fetchall(self._sql["range_touched"], span)
            ]
            facts = self._db.execute(self._sql["forget_range_facts"], (*span, *span))
            self._db.execute(self._sql["forget_range_next_embeddings"], span)
            messages = self._db.execute(self._sql["forget_range_messages"], span)
            for session in summarised:
                self._db.execute(self._sql["drop_summary"], (session,))
            sessions = sum(
                self._db.execute(self._sql["forget_empty_session"], (s, s)) for s in touched
            )
            documents = 0
            if messages:
                documents = self._db.execute(
                    self._sql["forget_document"], (f"{prefix.rstrip('/')}/working",)
                )
                documents += self._db.execute(
                    self._sql["forget_documents"], scope_params(f"{prefix.rstrip('/')}/context")
                )
            relations = self._db.execute(self._sql["forget_range_relations"], span)
            entities = self._db.execute(self._sql["forget_range_entities"], span)
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
        return self._db.execute(self._sql["forget_embeddings"], scope_params(prefix))

    def _redact(self, prefix: str, facts: Sequence[NamedRow]) -> dict[str, int]:
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
        for message_id, content in self._changed(
            self._sql["messages"], ("id", "content"), scope, pattern
        ):
            assert isinstance(message_id, int)
            self._dialect.rewrite(self._db, message_id, content)
            counts["embeddings"] += self._db.execute(
                self._sql["forget_message_embedding"], (message_id,)
            )
            counts["embeddings"] += self._db.execute(
                self._sql["forget_next_embedding"], (message_id,)
            )
            counts["redacted_messages"] += 1
            unmentioned |= self._forget_stale_mentions(message_id, content)
        for row in self._db.fetchall(self._sql["tool_steps"], scope):
            # Redacted in the decoded strings: in the JSON text a value with a quote, a
            # backslash or a line break is escaped, and would not match.
            steps = _redacted_json(str(row["steps"]), pattern)
            if steps is not None:
                self._db.execute(self._sql["set_tool_steps"], (steps, row["message_id"]))
                counts["redacted_tool_steps"] += 1
        for key, summary in self._changed(
            self._sql["summaries"], ("key", "summary"), scope, pattern
        ):
            self._db.execute(self._sql["set_summary"], (summary, key))
            counts["redacted_summaries"] += 1
        for namespace, content in self._changed(
            self._sql["documents"], ("namespace", "content"), scope, pattern
        ):
            self._db.execute(self._sql["set_document"], (content, namespace))
            counts["redacted_documents"] += 1
        for text in texts:
            if key := name_key(text):
                counts["entities"] += self._db.execute(self._sql["forget_entity"], (*scope, key))
        for entity_id in sorted(unmentioned):
            counts["entities"] += self._db.execute(self._sql["forget_unreferenced"], (entity_id,))
        return counts

    def _forget_stale_mentions(self, message_id: object, content: str) -> set[int]:
        """Drops the message's links to entities it no longer names ("my dog is called
        (forgotten)" names no Pixel); returns those entities."""
        keys = candidate_keys(content)
        stale = set()
        for row in self._db.fetchall(self._sql["mentioned"], (message_id,)):
            if row["name_key"] not in keys:
                self._db.execute(self._sql["forget_mention"], (row["entity_id"], message_id))
                stale.add(int(row["entity_id"]))
        return stale

    def _changed(
        self,
        sql: str,
        columns: tuple[str, str],
        scope: tuple[str, str, str],
        pattern: re.Pattern[str],
    ) -> list[tuple[object, str]]:
        """The rows ``sql`` reads (a key and a text, named by ``columns``) whose text
        ``pattern`` changes, with the redacted text."""
        changed = []
        key_column, text_column = columns
        for row in self._db.fetchall(sql, scope):
            key, text = row[key_column], row[text_column]
            redacted = pattern.sub(REDACTED, text)
            if redacted != text:
                changed.append((key, redacted))
        return changed


class SqliteForgetting(SqlForgetting):
    """Forgetting in SQLite."""

    def __init__(self, db: Database, relations: DerivedRelations) -> None:
        super().__init__(db, relations, SQLITE_FORGETTING)


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
