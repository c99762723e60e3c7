"""Team documents in: a Markdown or plain-text file cut into chunks of
about ``CHUNK_CHARS`` characters on paragraph boundaries, each under the nearest heading above
it; stored with ``flynn.memory.team``, its named entities put in the ``team`` graph (at most
``MAX_ENTITIES_PER_DOCUMENT`` of them), and its chunks embedded when embeddings are on.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Literal

from flynn.learning.graph_extraction import (
    GraphProposal,
    ProposedEntity,
    ProposedRelation,
    RuleGraphExtractor,
)
from flynn.learning.graph_ingest import GraphIngestor
from flynn.memory.graph_names import USER_ENTITY, name_key
from flynn.memory.team import (
    TEAM_NAMESPACE,
    NewChunk,
    SqlTeam,
    TeamDocument,
    safe_passage,
    storable_title,
)
from flynn.memory.vectors import SqlVectors, embed_each

CHUNK_CHARS = 1000
"""About how long a chunk is (a paragraph or two): a paragraph longer than this is cut at
sentence ends, and no chunk is cut mid-word."""
MAX_ENTITIES_PER_DOCUMENT = 50
MAX_RELATIONS_PER_DOCUMENT = 100
ENTITY_CONFIDENCE = 0.5
MAX_FILE_BYTES = 20 * 1024 * 1024
TEXT_SUFFIXES = frozenset({".md", ".markdown", ".mdown", ".txt", ".text", ".rst", ".org"})
_NOT_TEXT_SUFFIXES = frozenset({".pdf", ".doc", ".docx", ".odt", ".rtf", ".pages", ".epub"})
"""Names that promise a document format Flynn does not read, refused even when named alone."""
"""What a folder's files are read for; a file named on its own is read whatever its suffix,
when it is text."""

_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.+?)\s*#*\s*$")
_SETEXT = re.compile(r"^\s{0,3}(=+|-+)\s*$")
_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+")
_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)

Outcome = Literal["added", "replaced", "unchanged"]


class DocumentError(Exception):
    """A file that cannot be taken as a team document; the message says why, in a line."""


@dataclass(frozen=True, slots=True)
class Added:
    document: TeamDocument
    outcome: Outcome
    entities: int = 0


def chunk_text(text: str, *, size: int = CHUNK_CHARS) -> list[NewChunk]:
    """``text`` (Markdown or plain) as chunks of at most about ``size`` characters, each
    whole paragraphs where they fit, with the heading they fall under; a heading starts a new
    chunk once the current one is a third full."""
    chunks: list[NewChunk] = []
    heading = ""
    parts: list[str] = []
    length = 0
    chunk_heading = ""

    def flush() -> None:
        nonlocal parts, length
        if parts:
            chunks.append(NewChunk(chunk_heading, "\n\n".join(parts)))
        parts, length = [], 0

    for paragraph in _paragraphs(text):
        title = _heading_of(paragraph)
        if title is not None:
            if length >= size // 3:
                flush()
            heading = title
            if not parts:
                chunk_heading = heading
            else:  # a short section joins the chunk: its heading stays in the text
                parts.append(paragraph)
                length += len(paragraph) + 2
            continue
        for piece in _pieces(paragraph, size):
            if parts and length + len(piece) + 2 > size:
                flush()
            if not parts:
                chunk_heading = heading
            parts.append(piece)
            length += len(piece) + 2
    flush()
    return chunks


def _paragraphs(text: str) -> Iterator[str]:
    """Blank-line separated paragraphs; a heading line is a paragraph of its own."""
    lines: list[str] = []
    fenced = False
    for line in text.replace("\r\n", "\n").split("\n"):
        if line.lstrip().startswith("```"):
            fenced = not fenced
        if not fenced and _HEADING.match(line):
            if lines:
                yield "\n".join(lines).strip()
                lines = []
            yield line.strip()
            continue
        if not fenced and _SETEXT.match(line) and len(lines) == 1:
            yield "# " + lines[0].strip()  # "Title\n=====" is a heading too
            lines = []
            continue
        if not fenced and not line.strip():
            if lines:
                yield "\n".join(lines).strip()
                lines = []
            continue
        lines.append(line)
    if lines:
        yield "\n".join(lines).strip()


def _heading_of(paragraph: str) -> str | None:
    match = _HEADING.match(paragraph)
    return match.group(2).strip() if match and "\n" not in paragraph else None


def _pieces(paragraph: str, size: int) -> Iterator[str]:
    """The paragraph, or, when longer than ``size``, its sentences gathered up to ``size``
    (a sentence longer than that is cut at a space)."""
    if len(paragraph) <= size:
        yield paragraph
        return
    current = ""
    for sentence in _SENTENCE_END.split(paragraph):
        while len(sentence) > size:
            cut = sentence.rfind(" ", 0, size)
            cut = cut if cut > size // 2 else size
            if current:
                yield current
                current = ""
            yield sentence[:cut].rstrip()
            sentence = sentence[cut:].lstrip()
        if current and len(current) + 1 + len(sentence) > size:
            yield current
            current = ""
        current = f"{current} {sentence}" if current else sentence
    if current:
        yield current


def read_document(path: Path) -> str:
    """The file's text; ``DocumentError`` when it is not a readable UTF-8 text file."""
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise DocumentError(f"{path} is {size:,} bytes; the limit is {MAX_FILE_BYTES:,}")
        raw = path.read_bytes()
    except OSError as exc:
        raise DocumentError(f"cannot read {path}: {exc.strerror or exc}") from None
    if raw.startswith(b"%PDF-"):
        raise DocumentError(f"{path} is a PDF; Flynn reads Markdown and plain text only")
    if path.suffix.lower() in _NOT_TEXT_SUFFIXES:
        # Whatever it holds, the name promises a format Flynn does not read: a ".pdf" of
        # text is refused as well, so a folder of exports means the same thing every time.
        raise DocumentError(
            f"{path} is named as {path.suffix.lower()[1:].upper()}, which Flynn does not read "
            "(Markdown and plain text only); rename it if it is text"
        )
    if b"\0" in raw[:8192]:
        raise DocumentError(f"{path} is not a text file (Markdown or plain text are)")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise DocumentError(f"{path} is not UTF-8 text") from None


def document_files(path: Path, *, private: Path | None = None) -> list[Path]:
    """``path`` itself when it is a file, else the text files under it (hidden ones skipped),
    in a stable order; never anything under ``private`` (Flynn's data dir: people's own files
    are no team's knowledge). ``DocumentError`` when there is nothing to read there."""
    guarded = private.expanduser().resolve() if private is not None else None
    if guarded is not None and _within(path.expanduser().resolve(), guarded):
        raise DocumentError(
            f"{path} is inside Flynn's data dir ({guarded}), which holds people's own memory"
        )
    if path.is_file():
        if guarded is not None:
            _refuse_private_files([path], guarded)
        return [path]
    if not path.is_dir():
        raise DocumentError(f"{path} does not exist")
    found = sorted(
        file
        for file in path.rglob("*")
        if file.is_file()
        and file.suffix.lower() in TEXT_SUFFIXES
        and not any(part.startswith(".") for part in file.relative_to(path).parts)
        and (guarded is None or not _within(file.resolve(), guarded))
    )
    if not found:
        suffixes = ", ".join(sorted(TEXT_SUFFIXES))
        raise DocumentError(f"{path} holds no text files ({suffixes})")
    if guarded is not None:
        _refuse_private_files(found, guarded)
    return found


def _refuse_private_files(files: list[Path], private: Path) -> None:
    """``DocumentError`` for a file that is one of ``private``'s under another name: a hard
    link or a bind mount of a person's file (USER.md, MEMORY_*.md, TASKS.json...). Compared by
    device and inode, which a path cannot disguise."""
    if not private.is_dir():
        return
    held: dict[tuple[int, int], Path] = {}
    for folder, _, names in os.walk(private):
        for name in names:
            own = Path(folder, name)
            with contextlib.suppress(OSError):
                info = own.stat()
                held[(info.st_dev, info.st_ino)] = own
    for file in files:
        try:
            info = file.stat()
        except OSError:
            continue  # reading it says why, in its own words
        same = held.get((info.st_dev, info.st_ino))
        if same is not None:
            raise DocumentError(
                f"{file} is {same.relative_to(private)} in Flynn's data dir under another name "
                "(a hard link or a mount): people's own memory is no team document"
            )


def _within(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def document_text(raw: str) -> str:
    """What of a file is knowledge: without HTML comments (notes for whoever edits it),
    credentials (a wiki's password, a pasted key) and lines that give an assistant orders
    ("ignore previous instructions", "Assistant: from now on ..."), since passages reach
    prompts and names reach the graph."""
    return safe_passage(_COMMENT.sub("", raw))


def title_of(text: str, path: Path) -> str:
    """The document's first heading, else its file name without the suffix."""
    for paragraph in _paragraphs(text[:20_000]):
        heading = _heading_of(paragraph)
        if heading:
            return heading[:200]
    return path.stem or path.name


class DocumentIngestor:
    """Adds files to the team's knowledge; one transaction per document."""

    def __init__(
        self,
        team: SqlTeam,
        graph: GraphIngestor,
        *,
        vectors: SqlVectors | None,
        clock: Callable[[], datetime],
        extractor: RuleGraphExtractor | None = None,
    ) -> None:
        self._team = team
        self._graph = graph
        self._vectors = vectors
        self._clock = clock
        self._extractor = extractor or RuleGraphExtractor()

    def add(self, path: Path, *, title: str | None = None) -> Added:
        """Adds (or replaces, when it changed) the document at ``path``. Raises
        ``DocumentError`` for a file that cannot be read as text, ``StoreError`` when the
        database cannot be written."""
        resolved = path.expanduser().resolve()
        raw = read_document(resolved)
        digest = hashlib.sha256(raw.encode("utf-8")).hexdigest()
        text = document_text(raw)
        # The title as stored (a credential in it redacted), so that it is what the chunks'
        # vectors are made of too, and an unchanged file with such a title stays unchanged.
        name = storable_title(title or title_of(text, resolved))
        known = self._team.by_path(str(resolved))
        if known is not None and known.digest == digest and known.title == name:
            self._embed_missing(known)
            return Added(known, "unchanged")
        chunks = chunk_text(text)
        if not chunks:
            raise DocumentError(f"{resolved} has no text (headings and comments only)")
        now = self._clock()
        # Stored without its digest until its names and vectors are written too: a run cut
        # short (a crash, a failing embedder) leaves it to be done again, not "unchanged".
        document, replaced = self._team.put(
            path=str(resolved),
            title=name,
            digest="",
            chars=len(text),
            chunks=chunks,
            now=now,
        )
        entities = self._graph.ingest_proposal(
            TEAM_NAMESPACE,
            self._proposal(chunks),
            None,
            now=now,
            confidence=ENTITY_CONFIDENCE,
        )
        self._team.link_entities(document.id, (entity.id for entity in entities))
        if self._vectors is not None:
            ids = self._team.chunk_ids(document.id)
            rows = [
                (chunk_id, TEAM_NAMESPACE, f"{document.title}: {chunk.heading}\n{chunk.content}")
                for chunk_id, chunk in zip(ids, chunks, strict=True)
            ]
            for start in range(0, len(rows), 64):
                self._vectors.add("chunk", rows[start : start + 64])
        self._team.set_digest(document.id, digest)
        return Added(document, "replaced" if replaced else "added", len(entities))

    def _embed_missing(self, known: TeamDocument) -> None:
        """Embeds the chunks of the stored (unchanged) document that have no vector: all of
        them when it was stored before embeddings were turned on, or those the model failed on
        (``SqlVectors.add``), tried again. Not the document stored again: that embedded every
        chunk anew at every add, and said "replaced" of an unchanged file."""
        vectors = self._vectors
        if vectors is None or not self._team.unembedded(known.id, vectors.model):
            return
        have = vectors.ids(TEAM_NAMESPACE, "chunk")
        rows = [
            (chunk.id, TEAM_NAMESPACE, f"{known.title}: {chunk.heading}\n{chunk.content}")
            for chunk in self._team.chunks(self._team.chunk_ids(known.id))
            if chunk.id not in have
        ]
        for start in range(0, len(rows), 64):
            try:
                kept, made = embed_each(vectors.embed, rows[start : start + 64])
            except Exception:  # noqa: BLE001 - the model's errors, of no common type
                continue  # refused again, each alone: those chunks are found by their words
            vectors.store("chunk", kept, made)

    def _proposal(self, chunks: list[NewChunk]) -> GraphProposal:
        """What the chunks name, at most the per-document limits; never the person ("User"):
        a document's "I" or "my" is its author's, not anyone Flynn talks with."""
        entities: dict[str, ProposedEntity] = {}
        relations: dict[tuple[str, str, str], ProposedRelation] = {}
        for chunk in chunks:
            proposal = self._extractor.extract(chunk.content)
            for entity in proposal.entities:
                key = name_key(entity.name)
                if entity.name == USER_ENTITY or key in entities:
                    continue
                if len(entities) < MAX_ENTITIES_PER_DOCUMENT:
                    entities[key] = entity
            for relation in proposal.relations:
                ends = (name_key(relation.source), name_key(relation.target))
                if USER_ENTITY in (relation.source, relation.target):
                    continue
                if not all(end in entities for end in ends):
                    continue
                if len(relations) < MAX_RELATIONS_PER_DOCUMENT:
                    relations.setdefault((*ends, relation.type), relation)
        return GraphProposal(tuple(entities.values()), tuple(relations.values()))
