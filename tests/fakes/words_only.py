"""Settings for a daemon run inside the test process: recall by words unless the test asks for
embeddings itself."""

from __future__ import annotations

from flynn.settings import Settings


def words_only(settings: Settings) -> Settings:
    """``settings`` with ``memory.embeddings`` off, unless the test set it: on by default, an
    in-process daemon would load the model in a thread of the test process (a second or more of
    CPU per test, the thread outliving the daemon) and recall would change mid-test when it
    lands. The tests of a real ``flynn run`` (``e2e_daemon``) keep the default and wait for it."""
    if "embeddings" in settings.memory.model_fields_set:
        return settings
    memory = settings.memory.model_copy(update={"embeddings": False})
    return settings.model_copy(update={"memory": memory})
