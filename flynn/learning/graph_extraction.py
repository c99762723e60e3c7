"""Entities and relations in text: for every user message, rules that take only what is
unambiguous (e-mail addresses, URLs, paths, and capitalised names of unknown kind); and the model's
prompt with a defensive parser for the background path, which types them and relates them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from flynn.language import (
    EMAIL,
    MONTHS,
    SUPPOSING,
    WEEKDAYS,
    call_me,
    negates,
    without_code_or_quotes,
)
from flynn.learning.llm_extraction import format_transcript, json_objects, unit_confidence
from flynn.memory.fts import STOPWORDS
from flynn.memory.graph_names import GENERIC_TYPE, USER_ENTITY, name_key, type_name
from flynn.providers.base import ChatMessage, ChatRequest, Provider

PATTERN_CONFIDENCE = 0.9
"""E-mail addresses, URLs and file paths: exact strings, nothing to misread."""
NAME_CONFIDENCE = 0.5
"""Capitalised words with nothing said about them: probably a name, of unknown kind."""

MAX_SCANNED_CHARS = 4000
MAX_RULE_ENTITIES = 20
MAX_LLM_ENTITIES = 10
MAX_LLM_RELATIONS = 15
MAX_NAME_CHARS = 100
MAX_DESCRIPTION_CHARS = 300
MAX_NAME_WORDS = 4
"""A longer run of capitalised words is a heading or shouting, not a name."""


@dataclass(frozen=True, slots=True)
class ProposedEntity:
    """An entity found in text; ``confidence`` ``None`` leaves it to the ingesting caller."""

    name: str
    type: str
    description: str | None = None
    confidence: float | None = None


@dataclass(frozen=True, slots=True)
class ProposedRelation:
    """``source -type-> target`` between entity names (proposed or already stored)."""

    source: str
    type: str
    target: str
    confidence: float | None = None


@dataclass(frozen=True, slots=True)
class GraphProposal:
    entities: tuple[ProposedEntity, ...] = ()
    relations: tuple[ProposedRelation, ...] = ()

    @property
    def is_empty(self) -> bool:
        return not self.entities and not self.relations


class _Collected:
    """Entities by name key (a typed sighting upgrades a ``thing``) and relations, deduplicated."""

    def __init__(self, max_entities: int, max_relations: int) -> None:
        self._entities: dict[str, ProposedEntity] = {}
        self._relations: dict[tuple[str, str, str], ProposedRelation] = {}
        self._max_entities = max_entities
        self._max_relations = max_relations

    def entity(self, entity: ProposedEntity) -> bool:
        key = name_key(entity.name)
        if not key:
            return False
        old = self._entities.get(key)
        if old is None:
            if len(self._entities) >= self._max_entities:
                return False
            self._entities[key] = entity
        else:
            # The first spelling stays; a later sighting can only add what it knows.
            confidences = [c for c in (old.confidence, entity.confidence) if c is not None]
            self._entities[key] = ProposedEntity(
                old.name,
                entity.type if old.type == GENERIC_TYPE else old.type,
                old.description or entity.description,
                max(confidences) if confidences else None,
            )
        return True

    def relation(self, relation: ProposedRelation) -> None:
        source, target = name_key(relation.source), name_key(relation.target)
        key = (source, relation.type, target)
        if not source or not target or source == target or key in self._relations:
            return
        if len(self._relations) < self._max_relations:
            self._relations[key] = relation

    def proposal(self) -> GraphProposal:
        return GraphProposal(tuple(self._entities.values()), tuple(self._relations.values()))


# --- rules -----------------------------------------------------------------------------------

_EMAIL = re.compile(EMAIL)
_URL = re.compile(r"\bhttps?://[^\s<>\"'`]+", re.IGNORECASE)
_URL_TAIL = ".,;:!?)]}'\""
# Paths need a directory part (``~/notes``, ``./run.sh``, ``/etc/hosts``; one segment like
# ``/reset`` is a chat command) or a known file extension (``report.pdf``; not ``example.com``).
_EXTENSIONS = (
    "py|pyi|ts|tsx|jsx|go|rs|rb|java|kt|cpp|hpp|cc|cs|swift|php|sh|bash|zsh|sql|md|rst|txt|pdf"
    "|docx?|xlsx?|pptx?|odt|csv|tsv|json|ya?ml|toml|ini|cfg|conf|xml|html?|css|scss|png|jpe?g"
    "|gif|svg|webp|mp3|mp4|mov|wav|zip|tar|gz|tgz|log|db|sqlite|ipynb|lock"
)
_PATH = re.compile(
    r"(?<![\w/@.:~-])(?:(?:~|\.{1,2})(?:/[\w.+@-]+)+|(?:/[\w.+@-]+){2,}/?"
    rf"|(?:[\w.-]+/)*[\w-]+(?:\.[\w-]+)*\.(?:{_EXTENSIONS}))(?![\w/])"
)
_WORD = re.compile(r"[^\W_][\w&'.-]*")
_WORD_TAIL = ".'-"
_SENTENCE_BREAK = frozenset('.!?\n:;"“”()[]*•')

_CAP_STOPWORDS = (
    STOPWORDS
    | frozenset(
        """
    i i'm i've i'll i'd im ive ill yes no yeah yep nope ok okay sure thanks thank thx cheers hi
    hello hey dear please sorry well oh ah hmm lol haha omg wow btw fyi imo asap tbh idk pm am eod
    eta tldr ps nb also maybe perhaps actually anyway however still just really so then now
    today tomorrow yesterday tonight morning afternoon evening night week weekend month year
    tues thur thurs sept good nice cool awesome fine happy merry
    first last next birthday christmas easter god mr mrs ms miss dr prof sir mom
    mum dad let lets let's can could would should will shall might must yet it's that's there's
    what's here's we're we've they're you're he's she's don't can't won't isn't didn't doesn't
    """.split()
    )
    # The days and months, their plurals ("Mondays") and short forms ("Mon", "Jan").
    | frozenset(form for day in WEEKDAYS for form in (day, f"{day}s", day[:3]))
    | frozenset(form for month in MONTHS for form in (month, month[:3]))
)
# Capitalised only because they open a sentence ("Tell Maya ...", "Ask Bob ...").
_LEADING_VERBS = frozenset(
    """
    tell ask call remind email text message ping meet thank send help invite visit show give pay
    book cancel find check write say schedule add remove buy get see make take bring note
    remember forget update set move put
    """.split()
)
# Lower-case words that may sit inside a name: "Bank of America", "Ludwig van Beethoven".
_CONNECTORS = frozenset("of de van von der den la le du da di del al bin y".split())
# Words that make a cue hypothetical or someone else's claim ("if I lived in Paris").
_BLOCKING = SUPPOSING | frozenset("would could should might i'd".split())
# Verbs that make a name a supposition ("my name would be Bob", "my dog might be called Rex").
_DOUBTING = frozenset({"were", "would", "could", "might", "may"})
# An auxiliary right before a statement's subject turns it into a question ("is my name Carl").
_INVERTED = frozenset({"is", "was", "are", "were", "am", "isn't", "wasn't", "does", "did"})
_SENTENCE_END = re.compile(r"[.!?\n]")

_FLAGS = re.IGNORECASE
# What may stand between a naming phrase and the name: "is", "were", "would be", "is not" ...
_NAMING_VERBS = (
    r"(?P<verbs>(?:\s+(?:is|isn't|was|wasn't|were|weren't|would|wouldn't|could|might|may|will"
    r"|won't|be|been|not|never|actually|really|just|now|still|also|probably))*)"
)
# Naming statements; the name follows the match: "my name is X", "call me X", "I'm X". Only what
# they deny, doubt or ask about is acted on here (that name names nobody).
_MY_NAME = re.compile(rf"\bmy\s+name(?:'s)?{_NAMING_VERBS}\s+(?=\w)", _FLAGS)
_CALL_ME = re.compile(call_me(other_tenses=True) + r"(?=\w)", _FLAGS)
_I_AM = re.compile(rf"\b(?:i'm|i\s+am|i\s+was|i\s+were){_NAMING_VERBS}\s+(?=\w)", _FLAGS)


@dataclass(frozen=True, slots=True)
class _Word:
    text: str
    key: str
    start: int
    initial: bool
    """First word of a sentence, so capitalised whatever it is."""
    joined: bool
    """Separated from the previous word by spaces only (so may continue its name)."""
    possessive: bool


@dataclass(frozen=True, slots=True)
class _Run:
    name: str
    first: int
    last: int
    initial: bool


class _Text:
    """A message split into words, with the runs of capitalised words that may be names."""

    def __init__(self, prose: str) -> None:
        self.caps_free = not any(char.isupper() for char in prose)
        self.words = _words(prose)
        self.index_at = {word.start: index for index, word in enumerate(self.words)}
        self.runs = _runs(self.words)
        self.run_at = {run.first: run for run in self.runs}
        self.run_ending = {run.last: run for run in self.runs}

    def name_at(self, position: int, *, lower_ok: bool = False) -> _Run | None:
        """The name starting at character ``position``: a run of capitalised words, or (in a
        text written all in lower case, where the cue allows it) one word."""
        index = self.index_at.get(position)
        if index is None:
            return None
        run = self.run_at.get(index)
        if run is not None:
            return run
        word = self.words[index]
        if lower_ok and self.caps_free and word.key not in _CAP_STOPWORDS:
            return _Run(word.text, index, index, word.initial)
        return None


class RuleGraphExtractor:
    """Finds e-mail addresses, URLs and file paths (exact strings), and capitalised names of
    unknown kind, relating nothing: who is whose sister, who works or lives where, is the
    extraction model's to say (``LlmGraphExtractor``). Stateless; ``extract`` never raises for
    any text."""

    def extract(self, text: str) -> GraphProposal:
        text = text[:MAX_SCANNED_CHARS].replace("’", "'").replace("‘", "'")
        text = without_code_or_quotes(text)
        found = _Collected(MAX_RULE_ENTITIES, 0)
        prose = _take_patterns(text, found)
        words = _Text(prose)
        cued: set[int] = set()
        _cues(prose, words, cued)
        # Title Case or shouting makes every word look like a name; none is trusted then.
        in_names = sum(run.last - run.first + 1 for run in words.runs)
        shouting = not any(char.islower() for char in prose)
        if not shouting and (len(words.words) < 5 or in_names <= 0.6 * len(words.words)):
            for run in words.runs:
                if run.first in cued or (run.initial and run.first == run.last):
                    continue  # a lone capitalised word opening a sentence says nothing
                found.entity(ProposedEntity(run.name, GENERIC_TYPE, confidence=NAME_CONFIDENCE))
        return found.proposal()


def _take_patterns(text: str, found: _Collected) -> str:
    """Collects e-mail addresses, URLs and paths; returns the text with them blanked out, so
    their parts are not read as names."""
    spans: list[tuple[int, int]] = []
    # URLs first: one may hold an address (``https://user@host/``) or a path.
    if "://" in text:
        for match in _URL.finditer(text):
            url = match.group().rstrip(_URL_TAIL)
            found.entity(ProposedEntity(url, "url", confidence=PATTERN_CONFIDENCE))
            spans.append((match.start(), match.start() + len(url)))
    if "@" in text:
        for match in _EMAIL.finditer(_blank(text, spans)):
            found.entity(ProposedEntity(match.group(), "email", confidence=PATTERN_CONFIDENCE))
            spans.append(match.span())
    if "/" in text or "." in text:
        for match in _PATH.finditer(_blank(text, spans)):
            if not match.group().strip(" ./~"):
                continue
            found.entity(ProposedEntity(match.group(), "file_path", confidence=PATTERN_CONFIDENCE))
            spans.append(match.span())
    return _blank(text, spans)


def _blank(text: str, spans: list[tuple[int, int]]) -> str:
    if not spans:
        return text
    pieces = []
    position = 0
    for start, end in sorted(spans):
        if start < position:
            continue
        pieces.append(text[position:start])
        # A full stop keeps the words around it apart, as the removed text did.
        pieces.append(" " * (end - start - 1) + ".")
        position = end
    pieces.append(text[position:])
    return "".join(pieces)


def _words(prose: str) -> list[_Word]:
    words: list[_Word] = []
    previous_end = 0
    for match in _WORD.finditer(prose):
        raw = match.group().rstrip(_WORD_TAIL)
        if not raw:
            continue
        possessive = raw.endswith(("'s", "'S")) and len(raw) > 2
        text = raw[:-2] if possessive else raw
        gap = prose[previous_end : match.start()]
        words.append(
            _Word(
                text=text,
                key=text.casefold(),
                start=match.start(),
                initial=not words or any(char in _SENTENCE_BREAK for char in gap),
                joined=bool(words) and not gap.strip(" \t") and not words[-1].possessive,
                possessive=possessive,
            )
        )
        previous_end = match.start() + len(raw)
    return words


def _is_name_word(word: _Word) -> bool:
    return (
        word.text[0].isupper()
        and word.key not in _CAP_STOPWORDS
        and not (word.initial and word.key in _LEADING_VERBS)
        # "Q3", "H1", "V2": labels, not names.
        and not (len(word.text) <= 3 and word.text[1:].isdigit())
    )


def _runs(words: list[_Word]) -> list[_Run]:
    """Maximal runs of capitalised, non-common words (with connectors inside), as names."""
    runs: list[_Run] = []
    names = [_is_name_word(word) for word in words]
    index = 0
    while index < len(words):
        if not names[index]:
            index += 1
            continue
        first = last = index
        probe = index + 1
        while probe < len(words) and words[probe].joined:
            if names[probe]:
                last = probe
            elif not (
                words[probe].key in _CONNECTORS
                and probe + 1 < len(words)
                and names[probe + 1]
                and words[probe + 1].joined
            ):
                break
            probe += 1
        index = last + 1
        size = sum(1 for position in range(first, last + 1) if names[position])
        if size > MAX_NAME_WORDS:
            continue
        name = " ".join(word.text for word in words[first : last + 1])
        runs.append(_Run(name, first, last, words[first].initial))
    return runs


def _cues(prose: str, words: _Text, cued: set[int]) -> None:
    """A name that is only asked about, supposed or denied ("is my name Carl?", "if my name were
    Bob", "my name is not Dave") names nobody: its run goes to ``cued``, so it becomes no
    entity."""
    low = prose.lower()
    for pattern in (_MY_NAME, _CALL_ME, _I_AM):
        for match in pattern.finditer(prose):
            run = words.name_at(match.end())
            if run is not None and _is_unasserted_name(low, match):
                cued.add(run.first)


def _is_unasserted(low: str, position: int) -> bool:
    """Whether the sentence around ``position`` is a question or hypothetical, so states no
    relation (its names are still worth keeping)."""
    start = max(low.rfind(char, 0, position) for char in ".!?\n") + 1
    end = _SENTENCE_END.search(low, position)
    if end is not None and end.group() == "?":
        return True
    return not _BLOCKING.isdisjoint(low[start:position].split())


def _is_unasserted_name(low: str, match: re.Match[str]) -> bool:
    """Whether the naming phrase ``match`` is a question, a supposition or a denial."""
    if _is_unasserted(low, match.start()):
        return True
    verbs = (match.groupdict().get("verbs") or "").lower().split()
    if any(verb in _DOUBTING or negates(verb, bare_no=True) for verb in verbs):
        return True
    start = max(low.rfind(char, 0, match.start()) for char in ".!?\n,;") + 1
    before = low[start : match.start()].split()
    if before and before[-1] in _INVERTED:
        return True
    # Denied: "my name is not Dave", "don't call me Bob".
    return any(negates(word, bare_no=True) for word in before)


# --- LLM -------------------------------------------------------------------------------------

GRAPH_EXTRACTION_PROMPT = f"""\
Extract entities and relations from this conversation: the people, places, organisations,
projects, tools and ideas that matter to the user, and how they are connected.

Return only JSON, no prose:
{{"entities": [{{"name": "Flynn", "type": "project", "description": "Local-first AI assistant"}}],
 "relations": [{{"source": "Flynn", "target": "Go", "type": "uses"}}]}}

Types are short lower-case words: person, place, org, project, tool, language, concept, ...
Relation types too: uses, works_at, lives_in, depends_on, sister, friend, ...
Refer to the user as "{USER_ENTITY}". Descriptions are one short phrase, or omitted.
Only what is stated or strongly implied, and still true at the end of the conversation: leave out
what the user says has changed or ended ("I moved from Lisbon to Porto": lives_in Porto only).
Limit: {MAX_LLM_ENTITIES} entities, {MAX_LLM_RELATIONS} relations."""


def _string(raw: object, limit: int) -> str | None:
    if not isinstance(raw, str):
        return None
    text = " ".join(raw.split())[:limit].strip()
    return text or None


def parse_graph_extraction(text: str) -> GraphProposal:
    """Entities and relations from a model's (possibly broken) JSON answer.

    Every complete object that looks like an entity (``name``) or a relation (``source``,
    ``target``, ``type``) counts, wherever it sits, so a truncated answer keeps what arrived.
    Never raises.
    """
    found = _Collected(MAX_LLM_ENTITIES, MAX_LLM_RELATIONS)
    for item in json_objects(text):
        if "source" in item and "target" in item:
            source = _string(item["source"], MAX_NAME_CHARS)
            target = _string(item["target"], MAX_NAME_CHARS)
            raw_type = _string(item.get("type"), MAX_NAME_CHARS)
            kind = type_name(raw_type) if raw_type else ""
            if source and target and kind:
                confidence = unit_confidence(item.get("confidence"))
                found.relation(ProposedRelation(source, kind, target, confidence))
        elif "name" in item:
            name = _string(item["name"], MAX_NAME_CHARS)
            if not name:
                continue
            raw_type = _string(item.get("type"), MAX_NAME_CHARS)
            found.entity(
                ProposedEntity(
                    name,
                    (type_name(raw_type) if raw_type else "") or GENERIC_TYPE,
                    _string(item.get("description"), MAX_DESCRIPTION_CHARS),
                    unit_confidence(item.get("confidence")),
                )
            )
    return found.proposal()


class LlmGraphExtractor:
    """Runs the graph prompt on a provider. Raises ``ProviderError`` when the call fails."""

    def __init__(self, provider: Provider, *, max_tokens: int = 1024) -> None:
        self._provider = provider
        self._max_tokens = max_tokens

    async def extract(self, turns: Sequence[ChatMessage]) -> GraphProposal:
        if not turns:
            return GraphProposal()
        request = ChatRequest(
            system=GRAPH_EXTRACTION_PROMPT,
            messages=(ChatMessage("user", format_transcript(turns)),),
            task="extraction",
            max_tokens=self._max_tokens,
        )
        response = await self._provider.chat(request)
        return parse_graph_extraction(response.text)
