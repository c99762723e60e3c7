"""Forgetting a person on both backends: their facts, graph and intake under the prefix go in one
call, counted as on SQLite; a namespace that only starts alike is kept."""

from __future__ import annotations

from datetime import UTC, datetime

from memory.conftest import Stores

from flynn.memory.store import NewFact
from flynn.messages import InboundMessage

T0 = datetime(2026, 2, 25, 11, 30, tzinfo=UTC)


def test_forgetting_a_person_takes_their_facts_graph_and_intake(stores: Stores) -> None:
    for number, root in enumerate(("users/alice", "users/alicea")):
        stores.facts.add(NewFact(namespace=f"{root}/profile", kind="profile", value="tea"), now=T0)
        maya = stores.graph.upsert_entity(root, "Maya", "person", confidence=0.5, now=T0)
        acme = stores.graph.upsert_entity(root, "Acme", "org", confidence=0.5, now=T0)
        stores.graph.relate(root, maya.id, acme.id, "works_at", confidence=0.5, now=T0)
        message = InboundMessage(
            channel="telegram",
            chat_id=str(number),
            sender_id="7",
            text=f"hello from {root}",
            message_id="1",
            received_at=T0,
        )
        stores.inbound.accept(message, f"telegram:{number}", root, keep_text=True, now=T0)
    counts = stores.forget_namespace("users/alice")
    assert (counts["facts"], counts["entities"]) == (1, 2)
    assert stores.facts.search("users/alice", "tea", limit=5) == []
    assert stores.graph.entities_in("users/alice", "Maya", limit=5) == []
    assert [u.message.text for u in stores.inbound.unfinished()] == ["hello from users/alicea"]
    assert len(stores.facts.search("users/alicea", "tea", limit=5)) == 1
    assert len(stores.graph.entities_in("users/alicea", "Maya Acme", limit=5)) == 2
