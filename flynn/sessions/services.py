"""What the sessions of one process share, built once by ``flynn.app``: a few facades (the
memory stores, the model, learning, the person's own context), recall, the turn settings and the
clock."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime

from flynn.attachments import FileStore
from flynn.learning.model_learning import FactLearner
from flynn.learning.turns import MemoryWriter
from flynn.memory.costs import Spending
from flynn.memory.store import Documents, Facts, Forgetter, History
from flynn.persona import Persona
from flynn.providers.base import Provider
from flynn.recall.recall import Recall
from flynn.recall.synthesis import EpisodicSynthesis
from flynn.recall.worker import RecallWorker
from flynn.sessions.compaction import Compactor
from flynn.sessions.personal import PersonalFiles
from flynn.tools.base import ToolRegistry


@dataclass(frozen=True, slots=True)
class TurnConfig:
    context_window: int
    reserve_tokens: int
    max_output_tokens: int
    stream: bool
    recall_max_tokens: int
    proactive_greeting: bool
    inject_datetime: bool
    timezone: str | None
    max_tool_steps: int = 8
    idle_restart_hours: float = 6.0
    turn_timeout_seconds: float = 120.0
    max_tier: int = 4
    """The highest context tier a session may choose (``/tier``, ``persona.max_tier``)."""
    profile_max_tokens: int = 400
    vision: bool = False
    """Whether the chat model is shown pictures (``llm.vision``, see ``sees_images``)."""


@dataclass(frozen=True, slots=True)
class SessionMemory:
    """The stores a session reads and writes, and forgetting across them."""

    documents: Documents
    facts: Facts
    history: History
    forgetter: Forgetter
    costs: Spending | None = None
    """What the model calls cost (``/status``); ``None`` says nothing of spend."""


@dataclass(frozen=True, slots=True)
class SessionModel:
    """The language model that answers, and the compactor that summarises for it."""

    chat: Provider
    compactor: Compactor


@dataclass(frozen=True, slots=True)
class SessionLearning:
    """What the sessions keep from a conversation."""

    writer: MemoryWriter
    """Persists turns and what they teach (rules, graph, embeddings)."""
    learner: FactLearner | None = None
    """LLM extraction + reconciliation, run in the background; ``None`` turns it off."""
    every_turns: int = 0
    """Learn after this many of the person's messages (0: only at compaction)."""


@dataclass(frozen=True, slots=True)
class PersonContext:
    """Who the assistant is, and the person's own files and tools."""

    persona: Persona
    files: PersonalFiles | None = None
    """The person's folder, timezone and the personal files their prompt loads."""
    tools: ToolRegistry | None = None
    """What the model may call; ``None`` (or ``tools.enabled: false``) offers none."""
    file_store: FileStore | None = None
    """Keeps the pictures and files the person sends (``files.*``); ``None`` keeps none."""


class TurnsInFlight:
    """How many turns of this process's sessions are under way (each from taking its session's
    lock to its result), counted on the event loop. A turn that is ``alone`` has no other reply
    streaming beside it: its recall by words may run on the loop (``TurnPreparation.recall``),
    which spares it the hand-over to a recall thread and back."""

    def __init__(self) -> None:
        self._count = 0

    @contextmanager
    def running(self) -> Iterator[None]:
        """Counts one turn in flight for the duration of the block."""
        self._count += 1
        try:
            yield
        finally:
            self._count -= 1

    @property
    def alone(self) -> bool:
        """Whether at most one turn (the caller's) is under way."""
        return self._count <= 1


@dataclass(frozen=True, slots=True)
class SessionServices:
    """Everything the orchestrators of one process share."""

    memory: SessionMemory
    model: SessionModel
    recall: Recall
    learning: SessionLearning
    person: PersonContext
    config: TurnConfig
    clock: Callable[[], datetime]
    synthesis: EpisodicSynthesis | None = None
    """Condenses each turn's recalled memory with a model (``memory.synthesis: model``)."""
    recall_worker: RecallWorker | None = None
    """Runs each turn's recall (``recall``'s, over connections of its own) in worker threads;
    ``None`` runs it on the event loop, but for the query's embedding."""
    turns: TurnsInFlight = field(default_factory=TurnsInFlight)
    """The turns under way across the sessions (``TurnsInFlight``)."""
