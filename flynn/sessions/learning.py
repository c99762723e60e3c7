"""A session's background learning: LLM extraction and reconciliation from its turns, a batch
every few of the person's messages, off the reply path (``flynn.learning.model_learning`` does the
learning; this decides when, and keeps track of what was learnt from)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import structlog

from flynn.errors import ProviderError
from flynn.learning.model_learning import FactLearner
from flynn.memory.store import StoredMessage

log = structlog.get_logger(__name__)


class BackgroundLearning:
    """At most one batch in flight. Messages up to ``learnt_through`` (an id) were learnt from,
    here or by a compaction; ``every`` of the person's messages since start the next batch
    (0, or no ``learner``: only compaction learns)."""

    def __init__(
        self,
        learner: FactLearner | None,
        every: int,
        *,
        root: str,
        session: str,
        channel: str,
        graph_namespace: str | None = None,
    ) -> None:
        self._learner = learner
        self._every = every
        self._root = root
        self._graph_namespace = graph_namespace
        self._session = session
        self._channel = channel
        self._task: asyncio.Task[int] | None = None
        self._unlearnt = 0
        self.learnt_through = 0

    def counted(self) -> None:
        """One more of the person's messages was stored."""
        self._unlearnt += 1

    def learnt(self, through_id: int) -> None:
        """Messages up to ``through_id`` were learnt from elsewhere (by a compaction)."""
        self.learnt_through = max(self.learnt_through, through_id)

    def start(self, turns: Sequence[StoredMessage]) -> None:
        """Starts learning from the ``turns`` (in the order stored) not yet learnt from, once
        enough arrived; never a second batch while one runs (the next turn tries again, with a
        bigger batch)."""
        learner = self._learner
        if learner is None or self._every <= 0 or self._unlearnt < self._every:
            return
        if self._task is not None and not self._task.done():
            return
        # Turns are in the order they were stored: the unlearnt ones are the last few, found
        # from the end without reading the whole session each time.
        first = len(turns)
        while first > 0 and turns[first - 1].id > self.learnt_through:
            first -= 1
        batch = list(turns[first:])
        if not batch:
            return
        self._unlearnt = 0
        self._task = asyncio.create_task(
            self._learn(learner, batch), name=f"learning:{self._session}"
        )

    async def wait(self) -> None:
        """Returns once no batch is in flight."""
        task, self._task = self._task, None
        if task is not None:
            await task  # ``_learn`` never raises except on cancellation

    async def _learn(self, learner: FactLearner, batch: list[StoredMessage]) -> int:
        """One batch; a task boundary, so failures are logged here and never raised. On a
        provider failure the batch stays unlearnt and the next one includes it."""
        try:
            changed = await learner.learn(
                batch,
                self._root,
                session=self._session,
                channel=self._channel,
                graph_namespace=self._graph_namespace,
            )
        except ProviderError as exc:
            log.info("learning.skipped", error=type(exc).__name__)
            return 0
        except Exception:
            log.exception("learning.crashed")
            return 0
        self.learnt(batch[-1].id)
        log.info("learning.completed", messages=len(batch), facts=changed)
        return changed
