"""One plain-text reply from a provider for one task: the ``complete`` seam of callers that may
not import the provider layer (recall's episodic synthesis types it for itself)."""

from __future__ import annotations

from flynn.providers.base import ChatMessage, ChatRequest, Provider, Task


class TaskCompletion:
    """Asks ``provider`` for ``task``: one user message under a system prompt, no tools. The
    provider's metering records the call under ``task``."""

    def __init__(self, provider: Provider, task: Task) -> None:
        self._provider = provider
        self._task = task

    async def complete(self, system: str, text: str, *, max_tokens: int) -> str:
        """The reply's text. Raises ``ProviderError`` as the provider does."""
        request = ChatRequest(
            system=system,
            messages=(ChatMessage("user", text),),
            task=self._task,
            max_tokens=max_tokens,
        )
        response = await self._provider.chat(request)
        return response.text
