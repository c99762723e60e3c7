"""Attacks on recall by meaning (issue 25's work) through a running daemon: what a model that
fails mid-call and a credential typed in a turn do to the turn and to what is embedded."""

from __future__ import annotations

from pathlib import Path

from fakes.embedder import FailingEmbedder, RecordingEmbedder
from gateway_daemon import gateway_settings, say, serving

from evals.scripted_provider import ScriptedProvider


async def test_a_model_failing_on_the_question_still_answers_the_turn_by_words(
    tmp_path: Path,
) -> None:
    provider = ScriptedProvider(default="noted")
    embedder = FailingEmbedder("Porto?")
    async with serving(gateway_settings(tmp_path / "data"), provider, embedder) as port:
        await say(port, "first", "My sister Lena moved to Porto for a robotics job.")
        # On main: {'type': 'error', 'code': 'internal', 'message': 'Something went wrong...'}
        assert (await say(port, "second", "Did Lena like Porto?"))["type"] == "reply"
        assert "robotics" in repr(provider.requests[-1])  # recalled by words
        assert (await say(port, "third", "Where does Lena work?"))["type"] == "reply"


async def test_a_credential_typed_in_a_turn_is_never_embedded(tmp_path: Path) -> None:
    # A guard (it passes on main): the question, its topic and the stored turn are embedded
    # as stored, redacted, and so is the next turn's context.
    embedder = RecordingEmbedder()
    provider = ScriptedProvider(default="noted")
    async with serving(gateway_settings(tmp_path / "data"), provider, embedder) as port:
        await say(port, "first", "My sister Lena moved to Porto for a robotics job.")
        frame = await say(port, "second", "my bank password is Zq8#tLw0vRx, where is Lena?")
        assert frame["type"] == "reply"
        await say(port, "third", "and what does Lena do?")
    assert any("where is Lena" in text for text in embedder.texts)
    assert not [text for text in embedder.texts if "Zq8#tLw0vRx" in text]
