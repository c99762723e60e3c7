"""The weights of the hybrid recall ranker (``flynn.recall.ranking``), and the lighter recall
used for plain statements."""

from __future__ import annotations

from dataclasses import dataclass, replace


@dataclass(frozen=True, slots=True)
class Tuning:
    """Weights of the hybrid score; the defaults were tuned on ``evals/datasets``."""

    candidates: int = 120
    semantic_candidates: int = 300
    words: int = 0
    """Most words searched for, the rarest (0: as many as the search budget holds)."""
    rrf_k: float = 20.0
    lexical: float = 1.0
    fused: float = 0.6
    fused_semantic: float = 1.4
    """``fused`` when ranking with embeddings (the reciprocal ranks of four lists, not two)."""
    lexical_semantic: float = 0.7
    """``lexical`` when ranking with embeddings. A turn's word strength saturates at 1.0 as
    soon as it holds the searched words about as often as an ideal turn would, which a long
    reply does with the question's common words ("much", "going", "away") and a related word
    ("keeping" for "saving") when the question's own word is in no turn; by meaning, the turn
    that answers may share no word at all. 0.7 since t-recall7 (docs/recall-performance.md), with
    ``coverage_semantic`` 0.3: at 10 turns +.004 assistant_next, +.005 heldout, +.008
    generated and assistant_small, +.030 handwritten; nothing more than .005 lower (heldout
    session@5 -.0045, generated at 20 turns -.0039)."""
    coverage_semantic: float = 0.3
    """``coverage`` when ranking with embeddings (``lexical_semantic`` says why it is lower
    than without them)."""
    semantic: float = 1.6
    semantic_topic: float = 1.5
    """Reciprocal-rank weight of the turns nearest the question's topic without its names."""
    semantic_rrf: float = 1.0
    """Reciprocal-rank weight of the turns nearest the question (in ``fused``). Without it (and
    the topic's, ``fused_semantic`` at ``fused``'s 0.6) heldout falls .089 at 10 turns,
    generated .031, handwritten .006 (issue 25, with ``neighbour_semantic`` at 0.4)."""
    related: float = 0.5
    """Weight of a related word ("dogs" for "pets") against the asked word, times their
    similarity (``flynn.recall.related_words``); 0 searches none."""
    coverage: float = 0.5
    absent: float = 0.0
    """What an asked word found in no turn (``Postings.absent``; not one left out as too
    common for the search's budget) weighs in the ideal turn a word strength is measured
    against (``QueryWords.ideal``), times the idf of a word in no turn; 0 leaves it out. It
    keeps a long reply holding the question's common words from full strength when the word
    that matters ("kitty") is in no turn. 0 since t-recall8 (docs/recall-performance.md): by
    words alone 0.15-0.5 gained on assistant_next, handwritten and generated but cost heldout
    .009 at 25 and 35 turns and session@5 (counted in the whole question's list only, .008 on
    assistant_small at 10 turns instead)."""
    absent_semantic: float = 0.25
    """``absent`` when ranking with embeddings. 0.25 since t-recall8 (docs/recall-performance.md):
    at 10 turns +.016 handwritten, +.018 generated, +.017 assistant_small, level on
    assistant_next, -.0045 heldout; session@5 up on all five sets (+.0006 to +.012); it costs
    heldout .0135 at 20 turns (one question of 111, its evidence from 19th to 20th) and
    assistant_small .003 at 35. No value or form tried (0.1-1.0, the whole question's list only,
    the heaviest found word's weight) kept heldout at 20 turns within .005; the lead took the
    trade for the gains elsewhere."""
    name: float = 0.25
    time_window: float = 0.6
    when: float = 0.25
    answer: float = 0.15
    graph: float = 0.0
    """Bonus of a turn the graph links to an entity the question names. 0 since issue 15's
    ablations (``evals/README.md``): 0.15 earned nothing on the person-and-assistant sets and
    cost turn@10 on heldout, final and fresh (the graph's own lines are still recalled,
    ``items.graph_items``)."""
    recency: float = 0.0
    """Weight of a turn's newness (decaying over ``recency_days``). 0 since issue 15's
    ablations: without it turn@10 rose on five of the seven dev sets (fell on one)."""
    recency_days: float = 180.0
    speaker: float = 0.6
    """Bonus of the person's own turns in play when a question asks in the first person ("How
    many countries have I been to?", "What did Caroline tell me?", ``QueryAnalysis.about``);
    none for a question about what the assistant said ("What did you say to ...?") or one
    without "I", "me", "my", "we" or "our". A neighbour pulled in next to a hit gets it too:
    the person's answer to the assistant's question often shares no word with the question
    (only turns that share one: `inj` -.007 and -.013 on the person-and-assistant sets). 0.6
    since issue 15 round 3 (``evals/README.md``); the same bonus for the assistant's turns
    lost what it asked."""
    neighbours_of: int = 10
    neighbour: float = 0.4
    neighbour_semantic: float = 0.25
    """``neighbour`` when ranking with embeddings. A turn is embedded after the end of the one
    before it (``memory.vectors.in_context``), so the reply next to a hit already carries its
    share of the question's meaning; inheriting 0.4 of the hit as well counted it twice. 0.25
    since issue 25 (``evals/README.md``): at 10 turns +.038 handwritten, +.055 generated,
    +.036 heldout, +.018 assistant_small over 0.4, at or above the words-only ranker and the
    plain BM25 + vector baseline at 10/20/25/35 turns and session@5 on the four sets (0.2
    level with it, 0.3 a little lower)."""
    neighbour_radius: int = 2
    neighbour_decay: float = 0.7
    across: bool = True
    """For a question over many occasions (``QueryAnalysis.asks_across``: "How many ...",
    "Which countries have I been to?") no session signals and no exchanges, so each
    occasion's own turn gets a place. On since issue 15 round 3 (``evals/README.md``)."""
    session: float = 0.2
    session_top: int = 3
    session_cover: float = 0.2
    session_words: float = 0.2
    """Weight of a session's bm25 as one text (``ranking._session_words``)."""
    session_support: float = 0.0
    """Weight of how well a session backs up its best turn: the sum of its next best
    ``session_top - 1`` turns' own scores, before a neighbour's share
    (``ranking._session_support``), so that a conversation with two good turns on the question
    outranks one with a single lucky match. 0 by words alone since t-recall9
    (docs/recall-performance.md): 0.1 cost assistant_small .008 at 10 and 20 turns and heldout
    .018 at 25."""
    session_support_semantic: float = 0.1
    """``session_support`` when ranking with embeddings. 0.1 since t-recall9
    (docs/recall-performance.md): +.016 generated at 10 turns, +.009 heldout at 20, session@5
    up on three sets and level on two; assistant_next -.002 to -.004 at the turn budgets."""
    across_repeat: float = 0.0
    """For a question over many occasions (``across``), how much lower a past turn ranks for
    each better turn of the same conversation (``ranking._spread``): each occasion's best turn
    before a second turn of one already shown. 0 keeps the order by score; 0 by words alone
    since t-recall9 (docs/recall-performance.md): 1.0 cost handwritten .012 at 10 turns."""
    across_repeat_semantic: float = 1.0
    """``across_repeat`` when ranking with embeddings. 1.0 since t-recall9
    (docs/recall-performance.md): at 10/20/25/35 turns +.005/+.002/+.003/+.005 assistant_next,
    +0/+.010/+.010/+.003 assistant_small, the friend chats level (they hardly ask so)."""
    facts: int = 10
    fact: float = 0.9
    summaries: int = 50
    summary: float = 0.6
    window_candidates: int = 150
    exchange_before: int = 0
    """Turns before a hit shown with it. 0 since issue 15 round 2 (1 before): an answer's request
    took the place of other hits at every number of turns shown, on every dev set."""
    exchange_after: int = 1
    exchange_by_role: bool = True
    """Shape an exchange by its turn's role (``items.exchanges``): a person's turn with the reply
    after it when ``exchange_reply``, an assistant's turn with ``exchange_before`` turns before
    it, and the person's answer after it only when it asks. On since issue 15 round 2
    (``evals/README.md``)."""
    passage_words: int = 80
    """For a question about what the assistant said (``QueryAnalysis.about``), a turn longer
    than this many words is weighed by bm25 as if it were this long: the answer is one line of
    a long reply, and the rest of the reply should not count against it. 80 since issue 15
    round 3 (``evals/README.md``); 0 weighs every turn at its length."""
    exchange_reply: bool = False
    """Whether a person's turn is shown with the reply after it. Off since issue 15 round 3:
    once the person's own turns rank first for questions about them (``speaker``), the
    replies took the places of other hits at every number of turns shown on six of the seven
    dev sets (``evals/README.md``). An assistant's question still comes with the answer."""
    parts: bool = True
    """Whether a question comparing two events ("Which came first, A or B?") is also ranked
    by each event on its own, the rankings merged (``flynn.recall.comparison``). On since
    issue 15 round 4 (``evals/README.md``)."""
    exchanges: int = 5
    """The best turns shown as exchanges; the rest are shown alone, to keep the budget. 5 since
    issue 15 round 2 (15 before): an exchange's neighbours took the place of other hits."""


def lighter(tuning: Tuning) -> Tuning:
    """``tuning`` for a light recall: the three rarest words searched for, a third of the
    candidates, no related words, no neighbour expansion (turns ranked alone, not as exchanges),
    half the facts and no lean to the person's own turns (a statement in the first person asks
    nothing about them); the other weights stay as tuned."""
    return replace(
        tuning,
        words=3,
        candidates=max(1, tuning.candidates // 3),
        semantic_candidates=max(1, tuning.semantic_candidates // 3),
        related=0.0,
        neighbours_of=0,
        exchange_before=0,
        exchange_after=0,
        facts=max(1, tuning.facts // 2),
        speaker=0.0,
    )


def with_vectors(tuning: Tuning) -> Tuning:
    """``tuning`` as the ranker weighs it when ranking with embeddings: the weights that have
    their own value then (``fused_semantic``, ``neighbour_semantic``, ``lexical_semantic``,
    ``coverage_semantic``, ``absent_semantic``, ``session_support_semantic``,
    ``across_repeat_semantic``) take their place."""
    return replace(
        tuning,
        fused=tuning.fused_semantic,
        neighbour=tuning.neighbour_semantic,
        lexical=tuning.lexical_semantic,
        coverage=tuning.coverage_semantic,
        absent=tuning.absent_semantic,
        session_support=tuning.session_support_semantic,
        across_repeat=tuning.across_repeat_semantic,
    )
