"""Team documents for ``flynn bench recall --docs N``: about N chunks of generated Markdown
pages, ingested through the real path (``flynn.learning.documents``: chunking, the full-text
index, the team graph), so each question's recall also searches the team's documents, as a known
person's turn does. Reports the ingest rate; the latency figures then include team search."""

from __future__ import annotations

import random
import tempfile
import time
from pathlib import Path

from flynn.app import App, utc_now
from flynn.learning.documents import DocumentIngestor, chunk_text
from flynn.learning.graph_extraction import RuleGraphExtractor
from flynn.learning.graph_ingest import GraphIngestor
from flynn.recall.embeddings import load_embedder

PARAGRAPHS_PER_PAGE = 30
"""About ten chunks a page (three paragraphs of ~300 characters to a chunk)."""
_TOPICS = (
    "billing", "deploy", "onboarding", "security", "backups", "pricing", "support", "travel",
    "expenses", "hiring", "roadmap", "incident", "database", "network", "storage", "releases",
)  # fmt: skip
_VERBS = ("reviews", "approves", "documents", "monitors", "schedules", "owns", "audits")
_PEOPLE = ("Maria Lopez", "Tom Baker", "Aiko Tanaka", "Joao Silva", "Priya Nair", "Lena Berg")


def store_docs(app: App, chunks: int, *, seed: int = 7) -> dict[str, object]:
    """Writes pages totalling about ``chunks`` chunks and ingests them; the figures."""
    rng = random.Random(seed)
    memory = app.memory
    settings = app.settings.memory
    vectors = (
        app.storage.vectors(load_embedder(settings.embeddings_model))
        if settings.embeddings
        else None
    )
    ingestor = DocumentIngestor(
        memory.team,
        GraphIngestor(memory.graph, RuleGraphExtractor()),
        vectors=vectors,
        clock=utc_now,
    )
    pages = 0
    with tempfile.TemporaryDirectory(prefix="flynn-bench-docs-") as tmp:
        paths = []
        written = 0
        while written < chunks:
            text = _page(rng, pages)
            written += len(chunk_text(text))
            path = Path(tmp) / f"page{pages:05d}.md"
            path.write_text(text, encoding="utf-8")
            paths.append(path)
            pages += 1
        started = time.perf_counter()
        for path in paths:
            ingestor.add(path)
        seconds = time.perf_counter() - started
    stored = memory.team.count()
    return {
        "pages": pages,
        "chunks": stored,
        "ingest_s": round(seconds, 2),
        "chunks_per_s": round(stored / seconds, 1) if seconds else 0.0,
        "pages_per_s": round(pages / seconds, 1) if seconds else 0.0,
    }


def _page(rng: random.Random, number: int) -> str:
    topic = rng.choice(_TOPICS)
    lines = [f"# {topic.title()} handbook, part {number}"]
    for n in range(PARAGRAPHS_PER_PAGE):
        if n % 10 == 0:
            lines.append(f"## {rng.choice(_TOPICS).title()} {n // 10 + 1}")
        person = rng.choice(_PEOPLE)
        other = rng.choice(_TOPICS)
        lines.append(
            f"{person} {rng.choice(_VERBS)} the {topic} work for the {other} team. Requests "
            f"about {other} go through the {topic} queue, reviewed weekly; item {number}-{n} "
            f"covers the {other} checklist, its owners and the steps to escalate."
        )
    return "\n\n".join(lines) + "\n"
