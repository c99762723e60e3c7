"""``candidate_keys`` is remembered for recent texts: the same text gives the same keys, which
no caller can change for the next."""

from __future__ import annotations

import pytest

from flynn.memory.graph_names import candidate_keys, name_key


def test_the_same_text_gives_the_same_keys_and_they_cannot_be_changed() -> None:
    first = candidate_keys("Maya met Ana in Lisbon")
    assert first["maya"] is True
    assert "lisbon" in first
    with pytest.raises(TypeError):
        first["bob"] = True  # type: ignore[index]
    again = candidate_keys("Maya met Ana in Lisbon")
    assert dict(again) == dict(first)
    assert "bob" not in again


def test_a_different_text_gives_its_own_keys() -> None:
    assert "maya" in candidate_keys("Maya is here")
    assert "maya" not in candidate_keys("Ana is here")
    assert candidate_keys("maya is here")["maya"] is False


def test_name_keys_are_the_same_however_often_asked() -> None:
    assert name_key(" MAYA. ") == name_key("maya") == "maya"
