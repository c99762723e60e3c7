"""What a turn asks the model with: the session-start context, the memory recalled for the
message, and the prompt assembled from them in the prompt's order."""

from __future__ import annotations

from datetime import datetime, tzinfo

from flynn.identity import MemoryScope
from flynn.memory.vectors import QueryVectorsLater
from flynn.memory.working import read_working_memory
from flynn.messages import SessionKey
from flynn.persona import system_block
from flynn.recall.recall import RecalledMemory
from flynn.sessions.conversation import Conversation
from flynn.sessions.profile import ProfileCache
from flynn.sessions.prompt import Prompt, assemble, build_session_context
from flynn.sessions.services import SessionServices


class TurnPreparation:
    """Prepares the prompts of one session's turns."""

    def __init__(
        self,
        key: SessionKey,
        scope: MemoryScope,
        services: SessionServices,
        profile: ProfileCache,
    ) -> None:
        self._key = key
        self._scope = scope
        self._services = services
        self._profile = profile
        self.tier: int | None = None
        """The context tier the session chose (``/tier``); ``None``: ``persona.tier``."""

    def session_context(self) -> str:
        """Built once per session key and kept, so a second orchestrator for the same key (after
        eviction or a restart) reuses it rather than re-injecting; ``reset`` clears it."""
        if not self._scope.shared:
            return ""
        memory = self._services.memory
        key = self._scope.session_context(self._key)
        stored = memory.documents.read(key)
        if stored is not None:
            return stored.content
        now = self._services.clock()
        working = read_working_memory(memory.documents, self._scope.working, now=now)
        context = build_session_context(
            list(self._profile.current().lines),
            working,
            proactive_greeting=self._services.config.proactive_greeting,
            profile_max_tokens=self._services.config.profile_max_tokens,
        )
        memory.documents.replace(key, context, now=now)
        return context

    def embed_early(self, text: str, now: datetime) -> QueryVectorsLater | None:
        """Starts embedding ``text`` for the turn's ``recall`` (pass it back as
        ``query_vectors``, with the same ``now``) and returns at once, so that the embedding
        runs beside the rest of the turn's preparation; ``None`` when recall will not embed it
        (embeddings off or not loaded, no recall budget, no recall worker). ``text`` must have
        passed the credential gate (``redact_secrets``): what is embedded is what is stored."""
        services = self._services
        worker = services.recall_worker
        if worker is None or services.config.recall_max_tokens <= 0:
            return None
        if not services.recall.reads_vectors:
            return None
        return worker.embed_question(services.recall, text, now=now)

    async def recall(
        self,
        text: str,
        now: datetime,
        *,
        skip_lines: list[str],
        query_vectors: QueryVectorsLater | None = None,
    ) -> RecalledMemory:
        """The memory recalled for ``text`` within the recall budget, from this person's other
        sessions and stores, condensed by synthesis when it is on; ``skip_lines`` are already
        in the prompt. ``query_vectors``: ``text``'s embeddings ``embed_early`` started."""
        services = self._services
        budget = services.config.recall_max_tokens
        # In a recall thread whenever the loop has someone else to serve: another turn may be
        # streaming its reply, and an embedding and vector search take tens of milliseconds.
        # A turn alone, recalling by words, recalls on the loop: no stream to hold up, and no
        # thread to wake and wait for (under load, that hand-over cost more than the recall).
        on_loop = (
            services.turns.alone and not services.recall.reads_vectors and query_vectors is None
        )
        if services.recall_worker is not None and not on_loop:
            recalled = await services.recall_worker.recall(
                self._scope.root,
                text,
                now=now,
                budget_tokens=budget,
                exclude_session=str(self._key),
                skip_lines=skip_lines,
                team=self._scope.shared,
                query_vectors=query_vectors,
            )
        else:
            # The embedding model runs in a worker thread, not on the event loop.
            vectors = await services.recall.query_vectors(text, now=now) if budget > 0 else None
            recalled = services.recall.recall(
                self._scope.root,
                text,
                now=now,
                budget_tokens=budget,
                exclude_session=str(self._key),
                skip_lines=skip_lines,
                query_vectors=vectors,
                team=self._scope.shared,
            )
        if services.synthesis is None:
            return recalled
        synthesis = await services.synthesis.synthesise(recalled, text, now=now)
        return synthesis.recalled

    def prompt(
        self, conversation: Conversation, text: str, recalled: RecalledMemory, now: datetime
    ) -> Prompt:
        """The whole prompt for ``text``: system block, persona, session context, recalled
        memory, summary, the conversation's turns, then the message."""
        services = self._services
        config = services.config
        turns = conversation.prompt_turns()
        return assemble(
            system_block=system_block(
                now,
                timezone=self._zone(),
                inject_datetime=config.inject_datetime,
                off_the_record=conversation.off_the_record,
            ),
            persona=services.person.persona.render(self._personal_files(now), tier=self.tier),
            session_context=conversation.session_context or "",
            recalled=recalled,
            summary=conversation.summary,
            turns=turns,
            message=text,
        )

    def _zone(self) -> tzinfo | str | None:
        """The person's own zone (their fact, else ``persona.timezone``, else the host's),
        looked up each turn: a timezone learnt in the conversation applies from the next."""
        files = self._services.person.files
        if files is None:
            return self._services.config.timezone
        return files.timezone_of(self._scope.root).zone

    def _personal_files(self, now: datetime) -> dict[str, str] | None:
        person = self._services.person
        if person.files is None:
            return None
        files = person.persona.files_at(self.tier)
        return person.files.prompt_files(self._scope.root, files, now=now)
