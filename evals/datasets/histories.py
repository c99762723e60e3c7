"""Histories of a person and their assistant: the generator behind the ``assistant`` sets
(``assistant.py``, ``assistant_small.py``, ``assistant_sealed.py``). Not a set itself.

A *pool* (``Pool``) holds everything a set is written from: the people's names, the requests a
person makes and the long answers the assistant gives (``Task``), and the things a person says in
passing that questions are later asked about (``Preference``, ``Update``, ``Fact``, ``Event``,
``Series``), plus questions about things never said (``Absent``). ``generate`` turns a pool into
one conversation per person, each person seeded on their own (``Random(f"{seed}:{index}")``), so
the first N people of a set do not depend on how many are built.

One conversation is one person's history with their assistant: about fifty dated sessions over a
year or so (gaps of a day to a month and more), each of one to four *episodes*: the person asks
for something (a recipe, an itinerary, a script, a plan), the assistant answers at length (an
introduction, a numbered list, sometimes a code block, a closing paragraph), and sometimes a
follow-up exchange or thanks. Speakers are ``user`` (the person, always the first speaker of every
session, hence of the conversation: ``evals/recall.py`` takes the first speaker as the person) and
``assistant``.

What questions are asked about is said in passing, inside a request: "I'm vegetarian by the way"
appended to a question about dinner, "Big news: I started at ... this week" before a question
about spreadsheets; the assistant's answer then opens with a word about it (``Pool.acks``) and goes
on with the request. A ``single-session-assistant`` question is about one line (``Item.ask``) of
one long answer; that line is kept out of every other answer of the same person.

Categories:

- ``preference``: stated once in passing; the question is a request whose answer depends on it,
  worded so that it shares few words with the statement.
- ``knowledge-update``: a value said, then changed once or twice in later sessions; the question
  asks for the current value, and its evidence is the latest statement only (the earlier ones are
  distractors: they answer the question as it stood then).
- ``temporal``: when something happened, how long ago, which of two things came first, how long
  between them, or which of two occurrences of the same kind of thing happened in a given month
  (the other occurrence is a distractor).
- ``multi-session``: counts, sums, lists and comparisons over two to four sessions.
- ``single-session-user``: a detail the person said once.
- ``single-session-assistant``: a detail in one line of one long assistant answer.
- ``abstention``: about something this person never said (empty evidence; checked against the
  person's whole history for the question's probe words).
"""

from __future__ import annotations

import random
import re
import statistics
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from itertools import pairwise
from typing import TypeVar

Json = dict[str, object]

CATEGORIES = (
    "preference",
    "knowledge-update",
    "temporal",
    "multi-session",
    "single-session-user",
    "single-session-assistant",
    "abstention",
)
PERSON = "user"
ASSISTANT = "assistant"

_SLOT = re.compile(r"\{([a-z_0-9]+)\}")


def fill(template: str, slots: Mapping[str, str]) -> str:
    """``template`` with each ``{name}`` replaced by ``slots[name]`` (a ``KeyError`` names a
    missing one); other braces (code) are left alone unless they look like a slot."""
    return _SLOT.sub(lambda match: slots[match.group(1)], template)


@dataclass(frozen=True, slots=True)
class Item:
    """One line of a long answer; ``ask`` (when set) is a later question about this line."""

    text: str
    ask: str = ""


@dataclass(frozen=True, slots=True)
class Task:
    """A request and its long answer: ``intro``, ``count`` of ``items`` (each item's ``{pick}``
    takes a fresh name from ``names``), ``code`` when given, ``outro``. ``slots`` are chosen once
    an answer (a destination, a dish) and may appear anywhere, including ``Item.ask``."""

    key: str
    topic: str
    ask: tuple[str, ...]
    intro: tuple[str, ...]
    items: tuple[Item, ...]
    outro: tuple[str, ...]
    slots: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    names: tuple[str, ...] = ()
    count: tuple[int, int] = (4, 6)
    code: tuple[str, ...] = ()
    label: str = "{i}."
    follow: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class Preference:
    """Said once in passing (``say``, inside a request of ``topic`` when the pool has one); asked
    about as a request that depends on it (``ask``)."""

    key: str
    say: tuple[str, ...]
    ask: tuple[str, ...]
    topic: str = ""


@dataclass(frozen=True, slots=True)
class Update:
    """A value said (``first``), then changed in later sessions (``later``, with ``{old}``);
    ``ask`` asks for the current one."""

    key: str
    values: tuple[str, ...]
    first: tuple[str, ...]
    later: tuple[str, ...]
    ask: tuple[str, ...]
    mood: str = "neutral"
    topic: str = ""


@dataclass(frozen=True, slots=True)
class Fact:
    """A detail said once (``say`` with ``{v}``); ``ask`` asks for it."""

    key: str
    values: tuple[str, ...]
    say: tuple[str, ...]
    ask: tuple[str, ...]
    mood: str = "neutral"
    topic: str = ""


@dataclass(frozen=True, slots=True)
class Event:
    """Something that happened on the day of a session (``say``), named in questions by ``noun``.
    With ``values`` it can happen twice (two values), and ``which`` (with ``{month}``) asks which
    value belongs to that month."""

    key: str
    say: tuple[str, ...]
    noun: tuple[str, ...]
    values: tuple[str, ...] = ()
    which: tuple[str, ...] = ()
    mood: str = "neutral"
    topic: str = ""


@dataclass(frozen=True, slots=True)
class Series:
    """A recurring thread: ``say`` with ``{v}`` in two to four sessions, ``values`` taken in order;
    ``ask`` needs them all (a count, a sum, a list, a comparison)."""

    key: str
    values: tuple[str, ...]
    say: tuple[str, ...]
    ask: tuple[str, ...]
    count: tuple[int, int] = (2, 4)
    mood: str = "neutral"
    topic: str = ""


@dataclass(frozen=True, slots=True)
class Absent:
    """A question about something never said; none of ``probe`` may occur in the history."""

    question: str
    probe: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Pool:
    """Everything a set is written from (see the module docstring)."""

    prefix: str
    names: tuple[str, ...]
    profile: Mapping[str, tuple[str, ...]]
    """Per-person slots (``partner``, ``city``, ...): one value each, usable in any template."""
    tasks: tuple[Task, ...]
    preferences: tuple[Preference, ...]
    updates: tuple[Update, ...]
    facts: tuple[Fact, ...]
    events: tuple[Event, ...]
    series: tuple[Series, ...]
    absent: tuple[Absent, ...]
    openers: tuple[str, ...]
    """Put before the first request of a session (``""`` for none)."""
    postscripts: tuple[str, ...]
    """Put after a request, half the time."""
    bridges: tuple[str, ...]
    """Between something said in passing and the request that follows it."""
    acks: Mapping[str, tuple[str, ...]]
    """The assistant's first words after something said in passing, by its mood."""
    asides: Mapping[str, tuple[str, ...]]
    """A paragraph of context an answer of that topic may carry before its last words."""
    offers: tuple[str, ...]
    """An answer's last line, sometimes: an offer to go further."""
    follows: tuple[tuple[str, str], ...]
    """Generic follow-up exchanges (the person, then the assistant)."""
    closings: tuple[tuple[str, str], ...]
    """A session's last exchange (thanks, and a short reply)."""
    when: tuple[str, ...]
    ago: tuple[str, ...]
    order: tuple[str, ...]
    gap: tuple[str, ...]
    """Temporal question frames: ``{a}`` (and ``{b}``) are events' nouns."""
    start: tuple[datetime, datetime]
    """The first session of each person falls between these."""


_T = TypeVar("_T", Preference, Update, Fact, Event, Series)


@dataclass
class _Beat:
    """Something the person says in passing in one session: ``text`` goes into a request."""

    text: str
    mood: str = "neutral"
    topic: str = ""
    turn: str = ""


@dataclass
class _Reserved:
    """A single-session-assistant question's answer line: built into one episode only."""

    task: Task
    item: int
    slots: dict[str, str]
    turn: str = ""


@dataclass
class _Question:
    text: str
    category: str
    beats: Sequence[_Beat | _Reserved]


@dataclass
class _Session:
    time: datetime
    episodes: int
    beats: list[_Beat] = field(default_factory=list)
    reserved: list[_Reserved] = field(default_factory=list)


MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)


def _dates(rng: random.Random, pool: Pool) -> list[datetime]:
    first, last = pool.start
    moment = first + (last - first) * rng.random()
    moment = moment.replace(hour=rng.randint(7, 22), minute=rng.randint(0, 59), second=0)
    dates = [moment]
    for _ in range(rng.randint(46, 54) - 1):
        roll = rng.random()
        if roll < 0.45:
            days = rng.randint(1, 4)
        elif roll < 0.80:
            days = rng.randint(5, 10)
        elif roll < 0.95:
            days = rng.randint(11, 21)
        else:
            days = rng.randint(25, 45)
        day = dates[-1] + timedelta(days=days)
        dates.append(day.replace(hour=rng.randint(7, 23), minute=rng.randint(0, 59)))
    return dates


def _month(day: datetime, dates: Sequence[datetime], rng: random.Random) -> str:
    """How a person names the month of ``day``: with its year when the history has that month
    in another year too, sometimes "early"/"late"."""
    name = MONTHS[day.month - 1]
    if any(d.month == day.month and d.year != day.year for d in dates):
        name = f"{name} {day.year}"
    roll = rng.random()
    if day.day <= 10 and roll < 0.3:
        return f"early {name}"
    if day.day >= 21 and roll < 0.3:
        return f"late {name}"
    return name


class _Person:
    """One person's history, built in three steps: plan the questions (placing what is said in
    passing into sessions), write the sessions, then pick abstention questions."""

    def __init__(self, pool: Pool, index: int, seed: int, name: str) -> None:
        self.pool = pool
        self.rng = random.Random(f"{seed}:{index}")
        self.id = f"{pool.prefix}{index + 1:03d}"
        rng = self.rng
        self.slots = {key: rng.choice(values) for key, values in pool.profile.items()}
        self.slots["name"] = name
        dates = _dates(rng, pool)
        self.sessions = [
            _Session(day, rng.choices((1, 2, 3, 4), weights=(35, 40, 20, 5))[0]) for day in dates
        ]
        topics = sorted({task.topic for task in pool.tasks})
        self.interests = set(rng.sample(topics, k=min(len(topics), rng.randint(5, 7))))
        self.keys: set[str] = set()
        self.questions: list[_Question] = []
        self.counter = 0
        self.recent: list[str] = []
        """The tasks of the last few episodes, not asked again so soon."""

    # -- planning ---------------------------------------------------------------------------

    def _free(self, index: int) -> bool:
        session = self.sessions[index]
        return len(session.beats) + len(session.reserved) < 2

    def _places(self, count: int, *, spread: int = 1, months: bool = False) -> list[int] | None:
        """``count`` sorted session indices with room for a beat, at least ``spread`` apart
        (and in different months with ``months``), or None."""
        free = [i for i in range(len(self.sessions)) if self._free(i)]
        for _ in range(40):
            if len(free) < count:
                return None
            chosen = sorted(self.rng.sample(free, count))
            if any(b - a < spread for a, b in pairwise(chosen)):
                continue
            if months:
                days = [self.sessions[i].time for i in chosen]
                if any((b - a).days < 45 for a, b in pairwise(days)):
                    continue
            return chosen
        return None

    def _put(self, index: int, beat: _Beat, topic: str = "") -> _Beat:
        """``beat`` said in session ``index``: most often (when ``topic`` is given) inside a
        request of that topic, otherwise inside any request."""
        if topic and self.rng.random() < 0.6:
            beat.topic = topic
        self.sessions[index].beats.append(beat)
        return beat

    def _fresh(self, options: Sequence[_T], want: int = 1) -> list[_T]:
        """Up to ``want`` templates whose keys this person has not used yet (then used)."""
        shuffled = list(options)
        self.rng.shuffle(shuffled)
        chosen: list[_T] = []
        for option in shuffled:
            if len(chosen) == want:
                break
            if option.key not in self.keys:
                chosen.append(option)
                self.keys.add(option.key)
        return chosen

    def _say(self, templates: Sequence[str], **extra: str) -> str:
        """One of ``templates`` filled in, as a sentence (capitalised)."""
        said = self._phrase(templates, **extra)
        return said[:1].upper() + said[1:]

    def _phrase(self, templates: Sequence[str], **extra: str) -> str:
        values = {key: fill(value, self.slots) for key, value in extra.items()}
        return fill(self.rng.choice(templates), {**self.slots, **values})

    def plan(self) -> None:
        rng = self.rng
        quota = Counter(
            {
                "preference": 1,
                "knowledge-update": 1,
                "temporal": 2,
                "multi-session": 2,
                "single-session-user": 1,
                "single-session-assistant": 1,
            }
        )
        for extra in rng.choices(
            (
                "preference",
                "knowledge-update",
                "temporal",
                "multi-session",
                "single-session-user",
                "single-session-assistant",
            ),
            weights=(2, 3, 3, 2, 2, 3),
            k=2,
        ):
            quota[extra] += 1
        for _ in range(quota["knowledge-update"]):
            self._update()
        for _ in range(quota["multi-session"]):
            self._series()
        for _ in range(quota["temporal"]):
            self._temporal()
        for _ in range(quota["preference"]):
            self._preference()
        for _ in range(quota["single-session-user"]):
            self._fact()
        for _ in range(quota["single-session-assistant"]):
            self._assistant_line()

    def _update(self) -> None:
        for update in self._fresh(self.pool.updates):
            steps = 3 if self.rng.random() < 0.3 and len(update.values) >= 3 else 2
            places = self._places(steps, spread=3)
            if places is None:
                return
            values = self.rng.sample(update.values, steps)
            beats = [
                self._put(places[0], _Beat(self._say(update.first, v=values[0])), update.topic)
            ]
            for index, (old, new) in zip(places[1:], pairwise(values), strict=True):
                beats.append(
                    self._put(
                        index,
                        _Beat(self._say(update.later, v=new, old=old), update.mood),
                        update.topic,
                    )
                )
            # Evidence is the latest statement; the earlier ones are distractors (they answer
            # the question as it stood before the change).
            self.questions.append(_Question(self._say(update.ask), "knowledge-update", beats[-1:]))

    def _series(self) -> None:
        for series in self._fresh(self.pool.series):
            low, high = series.count
            count = self.rng.randint(low, min(high, len(series.values)))
            places = self._places(count, spread=2)
            if places is None:
                return
            # In the pool's order: times that improve, amounts that add up.
            values = [
                series.values[i] for i in sorted(self.rng.sample(range(len(series.values)), count))
            ]
            beats = [
                self._put(index, _Beat(self._say(series.say, v=value), series.mood), series.topic)
                for index, value in zip(places, values, strict=True)
            ]
            self.questions.append(_Question(self._say(series.ask), "multi-session", beats))

    def _temporal(self) -> None:
        pool, rng = self.pool, self.rng
        kind = rng.choices(("which", "when", "ago", "order", "gap"), weights=(3, 3, 2, 3, 1))[0]
        if kind == "which":
            candidates = [event for event in pool.events if event.values and event.which]
            for event in self._fresh(candidates):
                places = self._places(2, spread=2, months=True)
                if places is None:
                    return
                values = rng.sample(event.values, 2)
                beats = [
                    self._put(index, _Beat(self._say(event.say, v=value), event.mood), event.topic)
                    for index, value in zip(places, values, strict=True)
                ]
                asked = rng.randrange(2)
                month = _month(
                    self.sessions[places[asked]].time, [s.time for s in self.sessions], rng
                )
                # The other occurrence is a distractor: same kind of thing, another month.
                question = self._say(event.which, month=month)
                self.questions.append(_Question(question, "temporal", [beats[asked]]))
            return
        count = 2 if kind in ("order", "gap") else 1
        events = self._fresh(pool.events, count)
        if len(events) < count:
            return
        places = self._places(count, spread=3)
        if places is None:
            return
        rng.shuffle(places)
        said: list[_Beat] = []
        nouns: list[str] = []
        for event, index in zip(events, places, strict=True):
            value = rng.choice(event.values) if event.values else ""
            said.append(
                self._put(index, _Beat(self._say(event.say, v=value), event.mood), event.topic)
            )
            nouns.append(self._phrase(event.noun, v=value))
        frames = {"when": pool.when, "ago": pool.ago, "order": pool.order, "gap": pool.gap}[kind]
        question = fill(rng.choice(frames), {"a": nouns[0], "b": nouns[-1]})
        self.questions.append(_Question(question[0].upper() + question[1:], "temporal", said))

    def _preference(self) -> None:
        for preference in self._fresh(self.pool.preferences):
            places = self._places(1)
            if places is None:
                return
            beat = _Beat(self._say(preference.say))
            self._put(places[0], beat, preference.topic)
            self.questions.append(_Question(self._say(preference.ask), "preference", [beat]))

    def _fact(self) -> None:
        for fact in self._fresh(self.pool.facts):
            places = self._places(1)
            if places is None:
                return
            value = self.rng.choice(fact.values)
            beat = self._put(places[0], _Beat(self._say(fact.say, v=value), fact.mood), fact.topic)
            self.questions.append(_Question(self._say(fact.ask), "single-session-user", [beat]))

    def _assistant_line(self) -> None:
        rng = self.rng
        askable = [
            (task, index)
            for task in self.pool.tasks
            if task.key not in self.keys
            for index, item in enumerate(task.items)
            if item.ask
        ]
        if not askable:
            return
        task, index = rng.choice(askable)
        places = self._places(1)
        if places is None:
            return
        self.keys.add(task.key)
        slots = {key: rng.choice(values) for key, values in task.slots.items()}
        reserved = _Reserved(task, index, slots)
        self.sessions[places[0]].reserved.append(reserved)
        question = fill(task.items[index].ask, {**self.slots, **slots})
        self.questions.append(_Question(question, "single-session-assistant", [reserved]))

    # -- writing ----------------------------------------------------------------------------

    def _turn_id(self) -> str:
        self.counter += 1
        return f"t{self.counter}"

    def _reserved_items(self) -> dict[str, set[int]]:
        held: dict[str, set[int]] = {}
        for session in self.sessions:
            for reserved in session.reserved:
                held.setdefault(reserved.task.key, set()).add(reserved.item)
        return held

    def _answer(
        self, task: Task, slots: Mapping[str, str], must: int | None, held: set[int]
    ) -> str:
        rng = self.rng
        low, high = task.count
        high = max(high, len(task.items) - 1)
        others = [i for i in range(len(task.items)) if i != must and i not in held]
        # (``held``: other questions' answer lines, never repeated in another answer)
        count = min(rng.randint(low, high), len(others) + (must is not None))
        chosen = rng.sample(others, count - (must is not None))
        if must is not None:
            chosen.append(must)
        chosen.sort()  # the pool's order: steps stay in sequence
        names = rng.sample(task.names, min(len(task.names), len(chosen)))
        lines = []
        for position, item in enumerate(chosen):
            pick = names[position] if position < len(names) else ""
            label = fill(task.label, {"i": str(position + 1)})
            lines.append(f"{label} {fill(task.items[item].text, {**slots, 'pick': pick})}")
        blocks = [fill(rng.choice(task.intro), slots), "\n".join(lines)]
        if task.code:
            blocks.insert(1, fill(rng.choice(task.code), slots))
        asides = list(self.pool.asides.get(task.topic, ()))
        rng.shuffle(asides)
        for aside in asides[: rng.choices((0, 1, 2), weights=(2, 5, 3))[0]]:
            blocks.append(fill(aside, slots))
        blocks.append(fill(rng.choice(task.outro), slots))
        if self.pool.offers and rng.random() < 0.6:
            blocks.append(fill(rng.choice(self.pool.offers), slots))
        return "\n\n".join(blocks)

    def _task(self, topic: str) -> Task:
        pool, rng = self.pool, self.rng
        if topic:
            matching = [task for task in pool.tasks if task.topic == topic]
        elif rng.random() < 0.6:
            matching = [task for task in pool.tasks if task.topic in self.interests]
        else:
            matching = list(pool.tasks)
        fresh = [task for task in matching if task.key not in self.recent]
        task = rng.choice(fresh or matching or list(pool.tasks))
        self.recent = [*self.recent[-7:], task.key]
        return task

    def write(self) -> Json:
        """The conversation: every session, its episodes written in turn."""
        held = self._reserved_items()
        sessions: list[Json] = [
            {
                "id": f"s{number}",
                "time": session.time.strftime("%Y-%m-%dT%H:%M:%S"),
                "turns": self._session(session, held),
            }
            for number, session in enumerate(self.sessions, start=1)
        ]
        return {"id": self.id, "sessions": sessions}

    def _add(self, turns: list[Json], speaker: str, text: str) -> str:
        turn_id = self._turn_id()
        turns.append({"id": turn_id, "speaker": speaker, "text": text})
        return turn_id

    def _session(self, session: _Session, held: Mapping[str, set[int]]) -> list[Json]:
        pool, rng = self.pool, self.rng
        turns: list[Json] = []
        plans: list[_Beat | _Reserved | None] = [*session.beats, *session.reserved]
        plans += [None] * max(0, session.episodes - len(plans))
        rng.shuffle(plans)
        for position, plan in enumerate(plans):
            if isinstance(plan, _Reserved):
                task, slots, must = plan.task, {**self.slots, **plan.slots}, plan.item
                self.recent = [*self.recent[-7:], task.key]
            else:
                task = self._task(plan.topic if plan is not None else "")
                slots = {**self.slots}
                slots.update({key: rng.choice(values) for key, values in task.slots.items()})
                must = None
            request = fill(rng.choice(task.ask), slots)
            if pool.postscripts and rng.random() < 0.5:
                request = f"{request} {rng.choice(pool.postscripts)}"
            answer = self._answer(task, slots, must, held.get(task.key, set()))
            parts = [rng.choice(pool.openers) if position == 0 else ""]
            if isinstance(plan, _Beat):
                if rng.random() < 0.5:
                    parts += [plan.text, rng.choice(pool.bridges), request]
                else:
                    parts += [request, plan.text]
                if plan.mood != "neutral":
                    answer = f"{fill(rng.choice(pool.acks[plan.mood]), slots)}\n\n{answer}"
            else:
                parts.append(request)
            user_turn = self._add(turns, PERSON, " ".join(part for part in parts if part))
            assistant_turn = self._add(turns, ASSISTANT, answer)
            if isinstance(plan, _Beat):
                plan.turn = user_turn
            elif isinstance(plan, _Reserved):
                plan.turn = assistant_turn
            if rng.random() < 0.3:
                person, reply = rng.choice([*task.follow, *pool.follows])
                self._add(turns, PERSON, fill(person, slots))
                self._add(turns, ASSISTANT, fill(reply, slots))
        if rng.random() < 0.25:
            person, reply = rng.choice(pool.closings)
            self._add(turns, PERSON, fill(person, self.slots))
            self._add(turns, ASSISTANT, fill(reply, self.slots))
        return turns

    def ask(self, conversation: Json, absent: int) -> list[Json]:
        questions: list[Json] = [
            {
                "conversation": self.id,
                "question": question.text,
                "evidence": [beat.turn for beat in question.beats],
                "category": question.category,
            }
            for question in self.questions
        ]
        if absent:
            said = " ".join(
                str(turn["text"]).lower()
                for session in _list(conversation["sessions"])
                for turn in _list(session["turns"])
            )
            words = set(re.findall(r"[a-z]+", said))

            def mentioned(probe: str) -> bool:
                if " " in probe:
                    return probe in said
                return any(word.startswith(probe) for word in words)

            options = [
                option
                for option in self.pool.absent
                if not any(mentioned(probe) for probe in option.probe)
            ]
            for option in self.rng.sample(options, min(absent, len(options))):
                question = fill(option.question, self.slots)
                questions.append(
                    {
                        "conversation": self.id,
                        "question": question,
                        "evidence": [],
                        "category": "abstention",
                    }
                )
        self.rng.shuffle(questions)
        return questions


def _list(value: object) -> list[Json]:
    assert isinstance(value, list)
    return value


def generate(pool: Pool, *, people: int, seed: int) -> Json:
    """The set: ``people`` conversations (one person each) and their questions."""
    names = list(pool.names)
    random.Random(seed).shuffle(names)
    conversations: list[Json] = []
    questions: list[Json] = []
    for index in range(people):
        name = names[index % len(names)]
        person = _Person(pool, index, seed, name)
        person.plan()
        conversation = person.write()
        conversations.append(conversation)
        absent = 1 if person.rng.random() < 0.6 else 0
        questions.extend(person.ask(conversation, absent))
    return {"conversations": conversations, "questions": questions}


# -- description --------------------------------------------------------------------------------

_STOP = frozenset(
    """a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers him his how i if in into is it its itself just
    me more most my myself no nor not now of off on once only or other our ours out over own
    same she should so some such than that the their them then there these they this those
    through to too under until up very was we were what when where which while who whom why
    will with would you your yours i'm i've it's that's don't didn't what's you'd you're
    again also ever got get getting going one ok okay really still there's we're we've let's
    any anything something thing things way much many well yeah maybe back don didn doesn
    isn wasn aren ve ll re""".split()
)


def content_words(text: str) -> set[str]:
    """The words of ``text`` that carry meaning: lower case, no stop words, a plural ``s``
    dropped (used to say how many words a question shares with its evidence)."""
    words = set()
    for word in re.findall(r"[a-z0-9]+", text.lower()):
        if len(word) < 2 or word in _STOP:
            continue
        if len(word) > 4 and word.endswith("s") and not word.endswith("ss"):
            word = word[:-1]
        words.add(word)
    return words


def describe(data: Json) -> dict[str, object]:
    """Sizes of a built set: people, sessions, turns, questions by category, the assistant's
    mean turn length, and how many questions share at most one content word with their
    evidence (the evidence turns taken together)."""
    conversations = _list(data["conversations"])
    questions = _list(data["questions"])
    texts: dict[tuple[str, str], str] = {}
    assistant_lengths: list[int] = []
    session_turns: list[int] = []
    for conversation in conversations:
        for session in _list(conversation["sessions"]):
            turns = _list(session["turns"])
            session_turns.append(len(turns))
            for turn in turns:
                texts[(str(conversation["id"]), str(turn["id"]))] = str(turn["text"])
                if turn["speaker"] == ASSISTANT:
                    assistant_lengths.append(len(str(turn["text"])))
    low_overlap = 0
    with_evidence = 0
    for question in questions:
        evidence = question["evidence"]
        assert isinstance(evidence, list)
        if not evidence:
            continue
        with_evidence += 1
        said = " ".join(texts[(str(question["conversation"]), str(turn))] for turn in evidence)
        shared = content_words(str(question["question"])) & content_words(said)
        low_overlap += len(shared) <= 1
    return {
        "people": len(conversations),
        "sessions": len(session_turns),
        "turns": len(texts),
        "turns_per_session_mean": round(statistics.fmean(session_turns), 1),
        "questions": len(questions),
        "by_category": dict(sorted(Counter(str(q["category"]) for q in questions).items())),
        "assistant_chars_mean": round(statistics.fmean(assistant_lengths)),
        "assistant_chars_median": round(statistics.median(assistant_lengths)),
        "share_at_most_one_word": round(low_overlap / max(with_evidence, 1), 3),
    }
