"""What a message asks of memory: its content words, the names in it, the time it points at
("yesterday", "last week", "in May"), whether it asks *when* something happened, and how deep
recall should look for it (``depth``: how much memory this message calls for).

Pure functions of the text and the clock; recall ranks with what this finds.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from flynn.language import MONTHS, NUMBER_WORDS, WEEKDAYS, folded, holds_any
from flynn.memory.fts import STOPWORDS
from flynn.recall.comparison import parts
from flynn.recall.related_words import Related, RelatedWords
from flynn.recall.time_window import TimeWindow, time_window

# Words that shape a question without saying what it is about ("can you remember what she said
# about ..."): searching for them only finds other questions.
QUESTION_WORDS = frozenset(
    """
    tell remember recall recalled mention mentioned mentions say said says talk talked talking
    ever kind type thing things something anything everything know knew ask asked please also
    would could might shall may must us anyone someone one ones get got go going went happen
    happened lot lots much many like well yes yeah oh hey hi okay ok really actually just
    """.split()
)
_CALENDAR_WORDS = frozenset(MONTHS) | frozenset(WEEKDAYS)
# Words that make "how" ask for a measure the answer rarely says in that word ("how long ago",
# "how far", "how often"); "how old" and "how tall" stay searched: "five years old", "2 m tall".
_HOW_WORDS = frozenset("long far often soon".split())
# Words that only place the question in time; the window carries them.
_TIME_WORDS = frozenset(
    """
    yesterday today tonight recently lately ago last past previous week weeks weekend month
    months year years day days night
    """.split()
)
# English verbs whose past forms the stemmer cannot reach ("ran" is not "run"): a question asks
# "when did she run" of a turn that says "I ran". Base, past and participle; regular forms and
# "-ing"/"-s" are left to the index's stemmer.
_IRREGULAR_VERBS = """
    arise arose arisen; awake awoke awoken; bear bore born; beat beat beaten; become became;
    begin began begun; bend bent; bet bet; bite bit bitten; bleed bled; blow blew blown;
    break broke broken; breed bred; bring brought; build built; burn burnt; buy bought;
    catch caught; choose chose chosen; cling clung; creep crept; deal dealt; dig dug;
    draw drew drawn; dream dreamt; drink drank drunk; drive drove driven; eat ate eaten;
    fall fell fallen; feed fed; feel felt; fight fought; find found; flee fled; fly flew flown;
    forbid forbade forbidden; forget forgot forgotten; forgive forgave forgiven;
    freeze froze frozen;
    give gave given; grind ground; grow grew grown; hang hung; hear heard; hide hid hidden;
    hold held; hurt hurt; keep kept; kneel knelt; lay laid; lead led; lean leant; leap leapt;
    learn learnt; leave left; lend lent; lie lay lain; light lit; lose lost; make made;
    mean meant; meet met; pay paid; ride rode ridden; ring rang rung; rise rose risen; run ran;
    see saw seen; seek sought; sell sold; send sent; shake shook shaken; shine shone; shoot shot;
    show showed shown; shrink shrank shrunk; sing sang sung; sink sank sunk; sit sat; sleep slept;
    slide slid; speak spoke spoken; speed sped; spell spelt; spend spent; spin spun;
    spit spat; spring sprang sprung; stand stood; steal stole stolen; stick stuck; sting stung;
    stink stank; strike struck; swear swore sworn; sweep swept; swim swam swum; swing swung;
    take took taken; teach taught; tear tore torn; think thought; throw threw thrown;
    understand understood; wake woke woken; wear wore worn; weave wove woven; weep wept;
    win won; wind wound; write wrote written
"""
_VERB_FORMS: dict[str, tuple[str, ...]] = {}
for _entry in _IRREGULAR_VERBS.replace("\n", " ").split(";"):
    _forms = tuple(dict.fromkeys(_entry.split()))
    for _form in _forms:
        _VERB_FORMS.setdefault(_form, _forms)
_WORD = re.compile(r"[^\W_](?:[^\W_]|['’-])*")
_NOT_NAMES = (
    frozenset({"i", "i'm", "i've", "i'd", "i'll"}) | _CALENDAR_WORDS | STOPWORDS | QUESTION_WORDS
)

_WHEN = re.compile(
    r"\b(?:when|what\s+(?:date|day|month|year|time)|which\s+(?:date|day|month|year|week)"
    r"|how\s+long\s+ago|since\s+when|how\s+long\s+(?:has|have|had|did|was|were))\b",
    re.IGNORECASE,
)
# Who a question asks about, in a conversation between a person and their assistant: what the
# assistant said ("What did you say to ...", "according to your recipe"), or the person
# themselves ("How many countries have I been to?").
_ASKS_ASSISTANT = re.compile(
    r"\b(?:(?:did|had)\s+you|you\s+(?:said|told|suggested|recommended|mentioned"
    r"|gave|listed|warned|called|wrote|advised|proposed|described|explained|showed|shared"
    r"|provided|put|named)|your\s+(?:recipe|list|plan|advice|suggestions?|recommendations?"
    r"|answer|tips?|steps|instructions|template|draft|outline|script|method|routine))\b",
    re.IGNORECASE,
)
# "you" having done something ("the recipe you sent", "the hotel you were suggesting", "your
# itinerary"), not in a request: about the assistant's words in a way the list above does not
# know, so no lean. "what I've told you" is about the person.
_YOU = re.compile(
    r"\byou\s+(?:were\s+\w+ing|\w+(?:ed|ent|ought|ew|ade|ose|ound|ook|ame|ave|ote|old))\b"
    r"|\bwere\s+you\s+\w+ing\b|\byour\s+\w+",
    re.IGNORECASE,
)
_REQUEST = re.compile(
    r"\b(?:can|could|would|will|won't|should|do|are|thank)\s+you\b"
    r"|\byou\s+(?:think|reckon|know|recommend|suggest)\b",
    re.IGNORECASE,
)
# The first person; "US" in capitals is the country.
_FIRST_PERSON = re.compile(
    r"\b(?:i|i'm|i've|i'd|i'll|me|my|mine|we|we're|we've|our|(?-i:us|Us))\b", re.IGNORECASE
)
# Questions over many occasions ("How many ...", "Which countries have I been to?"): each
# occasion is one turn of its own conversation, so breadth beats depth.
_ACROSS = re.compile(
    r"\b(?:how\s+many|in\s+total|altogether|so\s+far|all\s+(?:the|my|our)|different"
    r"|(?:which|what|who|where)\b[^?.!]*\b(?:have|has)\s+(?:i|we))\b",
    re.IGNORECASE,
)
# Questions that want a number, a place or a person, and what a turn holding one looks like: the
# classic answer-type prior of question answering, a hint about which matching turn answers.
_ASKS_NUMBER = re.compile(
    r"\bhow\s+(?:many|much|long|far|old|often|fast|big|tall|heavy)\b"
    r"|\bwhat\s+(?:percentage|percent|number|amount|age|size|score|price)\b",
    re.IGNORECASE,
)
_ASKS_PLACE = re.compile(
    r"\bwhere\b|\b(?:which|what)\s+(?:city|country|town|place|restaurant|shop|street"
    r"|neighbourhood|neighborhood|island|beach|park|museum|venue|hotel)\b",
    re.IGNORECASE,
)
_ASKS_PERSON = re.compile(r"\bwho(?:m|se)?\b|\bwhat\s+is\s+the\s+name\b", re.IGNORECASE)
_NUMBER_WORDS = NUMBER_WORDS | frozenset(
    """
    fifteen twenty thirty forty fifty hundred thousand million dozen half couple once twice
    """.split()
)
_TIME_MENTIONS = (
    frozenset(
        """
    yesterday today tonight tomorrow ago recently lately last next weekend morning afternoon
    evening week weeks month months year years since birthday anniversary
    """.split()
    )
    | _CALENDAR_WORDS
)
_TIME_NUMBER = re.compile(r"\b(?:(?:19|20)\d\d|\d{1,2}(?:st|nd|rd|th))\b", re.IGNORECASE)
_DIGIT = re.compile(r"\d")
_LETTERS = re.compile(r"[a-z]+")
# A capitalised word after a preposition ("in Porto", "at the Alfama"): a named place.
_PLACE = re.compile(r"\b(?:in|at|to|from|near|around|of)\s+(?:the\s+)?[A-Z][\w'-]+")
# A capitalised word inside a sentence (not its first word): most likely a name.
_PERSON = re.compile(r"[a-z,]\s+[A-Z][a-z]+")

AnswerKind = Literal["time", "number", "place", "person"]
Depth = Literal["full", "light"]
"""How hard recall looks: ``full`` for what asks something of memory, ``light`` for the rest."""

# A sentence that opens with a question word or an inverted auxiliary ("did we ...", "is it ...")
# asks something even without its question mark; a few openers may come first ("so what ...").
_ASKS = re.compile(
    r"(?:^|[.!?\n]\s*)(?:(?:and|but|so|ok|okay|oh|hey|hi|well|also|btw|then|wait)\W+)*"
    r"(?:what|what's|when|where|who|whom|whose|which|why|how|do|does|did|don't|doesn't|didn't"
    r"|is|isn't|are|aren't|was|wasn't|were|am|can|can't|could|would|will|won't|should|shall"
    r"|have|haven't|has|hasn't|had|may|might|any|anything)\b",
    re.IGNORECASE,
)
# Words that point at what was said or done before.
_POINTS_BACK = re.compile(
    r"\b(?:remember\w*|recall\w*|remind\w*|forg[eo]t\w*|mention\w*|told\s+(?:you|me)"
    r"|(?:you|i|we)\s+said|we\s+(?:decided|agreed|discussed|talked|planned|settled|chose)"
    r"|last\s+time|the\s+other\s+day|earlier|previously|again|as\s+usual)\b",
    re.IGNORECASE,
)

# What a match of each holds, in lower case (at least one word).
_WHEN_WORDS = ("when", "what", "which", "how")
_ACROSS_WORDS = ("how", "total", "altogether", "far", "all", "different", "have", "has")
_POINTS_BACK_WORDS = (
    "remember", "recall", "remind", "forgot", "forget", "mention", "told", "said", "decided",
    "agreed", "discussed", "talked", "planned", "settled", "chose", "last", "other", "earlier",
    "previously", "again", "usual",
)  # fmt: skip


def mentions(kind: AnswerKind, text: str) -> bool:
    """Whether ``text`` holds the kind of thing a question wants, as far as its surface tells:
    a time ("yesterday", "in May", "the 22nd"), a number, a named place or a person's name.
    Word lists are looked up in a set: one regex alternation of them costs ten times more."""
    if kind == "time":
        words = _LETTERS.findall(text.lower())
        return not _TIME_MENTIONS.isdisjoint(words) or _TIME_NUMBER.search(text) is not None
    if kind == "number":
        if _DIGIT.search(text):
            return True
        return not _NUMBER_WORDS.isdisjoint(_LETTERS.findall(text.lower()))
    if kind == "place":
        return _PLACE.search(text) is not None
    return _PERSON.search(text) is not None


@dataclass(frozen=True, slots=True)
class QueryAnalysis:
    """``terms`` are lower-case content words in order; ``names`` the capitalised ones (people,
    places, projects) among them."""

    text: str
    terms: tuple[str, ...]
    names: tuple[str, ...]
    window: TimeWindow | None
    asks_when: bool
    about: Literal["person", "assistant"] | None = None
    """Whose turns answer it when the conversation is a person's with their assistant: the
    assistant's when it asks what "you" said, the person's when it asks about "I" or "we"."""
    asks_across: bool = False
    """Whether it asks over many occasions (``_ACROSS``) rather than when: sums, counts, lists."""
    variants: tuple[str, ...] = ()
    """Other forms of its irregular verbs ("ran" for "run"), to search for as well."""
    expects: AnswerKind | None = None
    """What kind of answer the question wants, when its words say."""
    depth: Depth = "full"
    """How deep recall looks for this message (``recall_depth``)."""
    topic_text: str = ""
    """The message without the names it mentions ("What did Caroline research?" becomes "What
    did research?"), to search by meaning for what it is about; empty when it names nobody,
    or says nothing else."""
    related: tuple[Related, ...] = ()
    """Words related to its topic words ("dogs" for "pets"), to search for too, weighed less."""
    parts: tuple[str, ...] = ()
    """The two things a comparing question asks about (``flynn.recall.comparison``)."""

    @property
    def topic_terms(self) -> tuple[str, ...]:
        """Content words that are not names: what the message is about."""
        names = set(self.names)
        return tuple(term for term in self.terms if term not in names)


def analyse(text: str, *, now: datetime) -> QueryAnalysis:
    """Splits ``text`` into what recall searches for. Never raises for any text."""
    terms: list[str] = []
    names: list[str] = []
    seen: set[str] = set()
    spans: list[tuple[int, int, str]] = []  # every word (a possessive included) as analysed
    sentence_start = True
    previous = ""
    for match in _WORD.finditer(text):
        raw = match.group().replace("’", "'")
        word = raw.lower()
        possessive = word.endswith("'s")
        if possessive:
            raw, word = raw[:-2], word[:-2]
        word = word.strip("'-")
        spans.append((match.start(), match.end(), word))
        capitalised = raw[:1].isupper()
        at_start = sentence_start
        following = text[match.end() : match.end() + 2]
        sentence_start = following[:1] in {".", "?", "!"}
        after_how = previous == "how"
        previous = "" if sentence_start else word
        if len(word) < 2 or word in STOPWORDS or word in QUESTION_WORDS:
            continue
        if after_how and word in _HOW_WORDS:
            continue  # "how long ago" asks for a time, "how far" a distance: not about "long"
        if word in _CALENDAR_WORDS or word in _TIME_WORDS or word.isdigit():
            continue  # time words are handled as a window, not as search words
        if word in seen:
            continue
        seen.add(word)
        terms.append(word)
        # A capital at the start of a sentence says nothing, unless it is a possessive.
        if capitalised and word not in _NOT_NAMES and (not at_start or possessive):
            names.append(word)
    variants: set[str] = set()
    for term in terms:
        base = _base_form(term)
        forms = verb_forms(term)
        # The stemmer already finds the base form from "-ing" and "-s" forms.
        skip = forms[:1] if forms and base == forms[0] else ()
        variants.update(form for form in forms if form not in seen and form not in skip)
    window = time_window(text, now=now)
    topic = _without(text, spans, frozenset(names)) if names and len(names) < len(terms) else ""
    # Each pattern is searched only where a word it needs is (``holds_any``).
    lowered = folded(text)
    asks_when = holds_any(lowered, _WHEN_WORDS) and _WHEN.search(text) is not None
    return QueryAnalysis(
        text=text,
        terms=tuple(terms),
        names=tuple(names),
        window=window,
        asks_when=asks_when,
        about=_about(text, lowered),
        asks_across=not asks_when
        and holds_any(lowered, _ACROSS_WORDS)
        and _ACROSS.search(text) is not None,
        variants=tuple(sorted(variants)),
        expects=_expects(text, lowered),
        depth=recall_depth(text, names=names, window=window, lowered=lowered),
        topic_text=topic,
        parts=parts(text) or (),
        related=tuple(
            each
            for each in RelatedWords.shipped().expand(
                (term for term in terms if term not in names), also=variants
            )
            if _searchable(each.word)
        ),
    )


def _about(text: str, lowered: str | None) -> Literal["person", "assistant"] | None:
    you = holds_any(lowered, ("you",))  # _ASKS_ASSISTANT and _YOU need "you" or "your"
    if you and _ASKS_ASSISTANT.search(text):
        return "assistant"
    if you and _YOU.search(text) and not _REQUEST.search(text):
        return None  # about something the assistant did, in words the list does not know
    return "person" if _FIRST_PERSON.search(text) else None


def _searchable(word: str) -> bool:
    """Whether ``analyse`` would search for ``word`` (a related word that is a question or
    time word, "said" for "told", would only find other questions)."""
    return not (
        word in STOPWORDS
        or word in QUESTION_WORDS
        or word in _TIME_WORDS
        or word in _CALENDAR_WORDS
    )


def _without(text: str, spans: Sequence[tuple[int, int, str]], names: frozenset[str]) -> str:
    """``text`` without every occurrence of ``names`` (each span is a word, with its
    possessive, and the word as analysed)."""
    kept, start = [], 0
    for begin, end, word in spans:
        if word in names:
            kept.append(text[start:begin])
            start = end
    kept.append(text[start:])
    return re.sub(r"\s+([?!.,;:])", r"\1", " ".join("".join(kept).split()))


def recall_depth(
    text: str,
    *,
    names: Sequence[str],
    window: TimeWindow | None,
    lowered: str | None,
) -> Depth:
    """``full`` when the message asks something or points at memory, else ``light``.

    Full depth for: a question (a question mark, or a sentence opening with a question word or
    an inverted auxiliary: "what did we ...", "did Sam ...", "is the ..."); a name (a capitalised
    word inside a sentence: people, places and projects are what memory is asked about); a time
    it points at ("yesterday", "last week", "in May"); words pointing back ("remember", "we
    decided", "last time", "you said", "again"). The ranker also looks deep when the graph knows
    an entity the message names. Everything else is a plain statement ("the deploy went fine"),
    for which recall stays light: background for the reply, not an answer the person waits for.
    ``lowered`` is ``flynn.language.folded(text)``.
    """
    if "?" in text or names or window is not None:
        return "full"
    if _ASKS.search(text) or (holds_any(lowered, _POINTS_BACK_WORDS) and _POINTS_BACK.search(text)):
        return "full"
    return "light"


def _expects(text: str, lowered: str | None) -> AnswerKind | None:
    if holds_any(lowered, ("how", "what")) and _ASKS_NUMBER.search(text):
        return "number"
    if holds_any(lowered, ("where", "which", "what")) and _ASKS_PLACE.search(text):
        return "place"
    if holds_any(lowered, ("who", "what")) and _ASKS_PERSON.search(text):
        return "person"
    return None


def verb_forms(word: str) -> tuple[str, ...]:
    """The forms of the irregular verb ``word`` is a form of ("take", "took", "taken" for
    "taken" or "taking"), or none."""
    return _VERB_FORMS.get(word) or _VERB_FORMS.get(_base_form(word), ())


def _base_form(word: str) -> str:
    """``word`` without an "-ing" or "-s" ("running" -> "run", "swims" -> "swim"), to look up
    an irregular verb by."""
    if word.endswith("ing") and len(word) > 5:
        word = word[:-3]
        return word[:-1] if len(word) > 2 and word[-1] == word[-2] else word
    if word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word
