"""The ``generated`` recall set: multi-session chats between two friends, built from event
templates, with questions that paraphrase the evidence (different words, as real benchmarks do).

Deterministic (seeded); it has no source file.

Each event is a short exchange: someone says something about their life, the friend reacts, and
details may follow. Questions name the person, rarely reuse the evidence's content words, and
fall in five categories: single-hop, multi-hop (evidence spread over sessions), temporal ("when"),
open-domain (an inference from what was said) and adversarial (the wrong person, a false premise).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import datetime, timedelta

SESSIONS = 14

SMALL_TALK = [
    "How has your week been?",
    "Pretty busy, honestly. Work keeps piling up.",
    "Haha, I know exactly what you mean.",
    "That's so good to hear!",
    "I've been okay, just tired most days.",
    "Did you end up getting any rest this weekend?",
    "Not really, the weekend flew by.",
    "Same here, time goes by so fast lately.",
    "Anyway, enough about me. What's new with you?",
    "Oh nothing much, the usual routine.",
    "I hope things calm down for you soon.",
    "Thanks, that means a lot.",
    "We should catch up more often like this.",
    "Totally agree, I always feel better after we talk.",
    "The weather has been so strange this week.",
    "Yeah, one day sunny and the next it pours.",
    "I made a huge pot of soup and ate it for three days.",
    "Ha, that sounds like something I would do.",
    "My phone has been acting up again.",
    "Ugh, technology always fails at the worst moment.",
    "I finally cleaned out the garage, it took all day.",
    "That's a satisfying feeling though.",
    "I've been trying to drink more water.",
    "Good call, I should do that too.",
    "Talk soon, take care!",
    "You too, bye for now!",
    "Have a great evening!",
    "Thanks, you as well!",
]


@dataclass
class Conversation:
    id: str
    people: tuple[str, str]
    sessions: list[dict[str, object]] = field(default_factory=list)
    questions: list[dict[str, object]] = field(default_factory=list)
    counter: int = 0

    def turn_id(self) -> str:
        self.counter += 1
        return f"t{self.counter}"


@dataclass
class Line:
    speaker: str
    text: str
    tag: str | None = None


Event = tuple[list[Line], list[tuple[str, list[str], str]]]
"""An event's lines, and its questions: (question, tags of the evidence lines, category)."""


def _pet(rng: random.Random, a: str, b: str, when: str) -> Event:
    pet_name = rng.choice(["Biscuit", "Pepper", "Luna", "Mochi", "Ziggy"])
    breed = rng.choice(["beagle", "corgi", "border collie", "greyhound"])
    lines = [
        Line(a, f"Big news, we brought home a little {breed} puppy {when}!", "pet"),
        Line(b, "No way! What did you call her?"),
        Line(a, f"Her name is {pet_name}. She already chewed one of my shoes.", "pet_name"),
        Line(b, "Ha, typical puppy behaviour. Send me pictures!"),
    ]
    questions = [
        (f"What did {a} name the new puppy?", ["pet_name"], "single-hop"),
        (f"When did {a} bring a dog home?", ["pet"], "temporal"),
        (f"What did {b} name the puppy?", ["pet_name"], "adversarial"),
    ]
    return lines, questions


def _job(rng: random.Random, a: str, b: str, when: str) -> Event:
    company = rng.choice(
        [
            "a solar energy startup",
            "the city library",
            "a children's hospital",
            "an architecture firm",
        ]
    )
    role = rng.choice(
        ["project coordinator", "data analyst", "graphic designer", "operations lead"]
    )
    lines = [
        Line(a, f"I accepted the offer {when}! I'm joining {company} as a {role}.", "job"),
        Line(b, "Congratulations!! You've been wanting a change for ages."),
        Line(a, "I'm nervous but mostly excited. First day is in two weeks.", "job_nerves"),
    ]
    questions = [
        (f"Which employer is {a} joining?", ["job"], "single-hop"),
        (f"How does {a} feel about the first day at the new job?", ["job_nerves"], "single-hop"),
        (f"When did {a} accept the job offer?", ["job"], "temporal"),
    ]
    return lines, questions


def _race(rng: random.Random, a: str, b: str, when: str) -> Event:
    race = rng.choice(["half marathon", "10k trail race", "charity 5k"])
    lines = [
        Line(a, f"I ran the {race} {when} and finished in under two hours!", "race"),
        Line(b, "That's incredible, all that training paid off."),
        Line(a, "My legs are still sore, but I'm already eyeing the next one.", "race_next"),
    ]
    questions = [
        (f"Which race did {a} finish?", ["race"], "single-hop"),
        (f"When did {a} run the race?", ["race"], "temporal"),
        (f"Is {a} likely to sign up for another race?", ["race_next"], "open-domain"),
    ]
    return lines, questions


def _trip(rng: random.Random, a: str, b: str, when: str) -> Event:
    place = rng.choice(["Lisbon", "Kyoto", "the Scottish Highlands", "Vancouver Island"])
    highlight = rng.choice(
        [
            "a tiny seafood restaurant by the harbour",
            "an old temple garden at dawn",
            "hiking to a foggy waterfall",
            "kayaking with seals",
        ]
    )
    lines = [
        Line(a, f"We just got back from {place} {when}.", "trip"),
        Line(b, "Oh I'm so jealous. What was the best part?"),
        Line(a, f"Honestly {highlight}. I could have stayed forever.", "trip_best"),
    ]
    questions = [
        (f"Where did {a} go on the trip?", ["trip"], "single-hop"),
        (f"What was the best part of {a}'s time in {place}?", ["trip_best"], "single-hop"),
        (f"When did {a} get back from {place}?", ["trip"], "temporal"),
    ]
    return lines, questions


def _hobby(rng: random.Random, a: str, b: str, when: str) -> Event:
    hobby, detail = rng.choice(
        [
            ("pottery", "my first bowl came out lopsided but I love it"),
            ("salsa dancing", "I stepped on my partner's feet about a hundred times"),
            ("watercolor painting", "I painted the view from my balcony"),
            ("rock climbing", "I made it to the top of the beginner wall"),
        ]
    )
    lines = [
        Line(a, f"I signed up for a {hobby} class {when}.", "hobby"),
        Line(b, "That sounds fun! How was the first lesson?"),
        Line(a, f"So good, {detail}.", "hobby_detail"),
    ]
    questions = [
        (f"What class did {a} sign up for?", ["hobby"], "single-hop"),
        (f"How did {a}'s first {hobby} lesson go?", ["hobby_detail"], "single-hop"),
        (f"When did {a} start learning {hobby}?", ["hobby"], "temporal"),
    ]
    return lines, questions


def _family(rng: random.Random, a: str, b: str, when: str) -> Event:
    relative = rng.choice(["sister", "brother", "cousin"])
    news = rng.choice(["had a baby boy", "got engaged", "moved back from abroad"])
    lines = [
        Line(a, f"My {relative} {news} {when}, the whole family is thrilled.", "family"),
        Line(b, "Aww, please pass on my congratulations!"),
    ]
    questions = [
        (f"What news did {a} share about the {relative}?", ["family"], "single-hop"),
        (f"When did {a}'s {relative} announce the family news?", ["family"], "temporal"),
    ]
    return lines, questions


def _health(rng: random.Random, a: str, b: str, when: str) -> Event:
    injury = rng.choice(["sprained my ankle", "hurt my back", "broke my wrist"])
    cause = rng.choice(["slipping on the stairs", "moving a couch", "falling off my bike"])
    lines = [
        Line(a, f"I {injury} {when} after {cause}.", "injury"),
        Line(b, "Oh no! Are you okay? Did you see a doctor?"),
        Line(a, "Yes, they said rest and ice for a few weeks. So annoying.", "injury_care"),
    ]
    questions = [
        (f"How did {a} get injured?", ["injury"], "single-hop"),
        (f"What did the doctor tell {a} to do?", ["injury_care"], "single-hop"),
        (f"When did {a} have the accident?", ["injury"], "temporal"),
    ]
    return lines, questions


def _volunteer(rng: random.Random, a: str, b: str, when: str) -> Event:
    place = rng.choice(
        ["an animal shelter", "a food bank", "a community garden", "a literacy program"]
    )
    lines = [
        Line(a, f"I started volunteering at {place} {when}.", "volunteer"),
        Line(b, "That's really kind of you. What do you do there?"),
        Line(
            a,
            "Mostly sorting donations and helping new people settle in. It's rewarding.",
            "volunteer_tasks",
        ),
    ]
    questions = [
        (f"Where does {a} volunteer?", ["volunteer"], "single-hop"),
        (f"What does {a} do as a volunteer?", ["volunteer_tasks"], "single-hop"),
        (f"Does {a} care about giving back to the community?", ["volunteer"], "open-domain"),
    ]
    return lines, questions


def _book(rng: random.Random, a: str, b: str, when: str) -> Event:
    title = rng.choice(["The Overstory", "Piranesi", "Project Hail Mary", "Educated"])
    lines = [
        Line(a, f"I finished reading {title} {when}, it completely wrecked me.", "book"),
        Line(b, "I've heard so much about it. Would you recommend it?"),
        Line(a, "Absolutely, I'll lend you my copy next time.", "book_lend"),
    ]
    questions = [
        (f"Which book did {a} finish recently?", ["book"], "single-hop"),
        (f"What did {a} offer to lend {b}?", ["book_lend"], "single-hop"),
    ]
    return lines, questions


def _move(rng: random.Random, a: str, b: str, when: str) -> Event:
    where = rng.choice(
        ["a flat near the river", "a small house with a garden", "an apartment downtown"]
    )
    lines = [
        Line(a, f"We signed the lease {when}, we're moving into {where}!", "move"),
        Line(b, "Finally! Do you need help carrying boxes?"),
        Line(a, "Yes please, the big day is the last Saturday of the month.", "move_day"),
    ]
    questions = [
        (f"What kind of place is {a} moving into?", ["move"], "single-hop"),
        (f"When is {a}'s moving day?", ["move_day"], "temporal"),
        (f"Did {b} offer to help {a}?", ["move", "move_day"], "multi-hop"),
    ]
    return lines, questions


EVENTS = [_pet, _job, _race, _trip, _hobby, _family, _health, _volunteer, _book, _move]
WHENS = ["yesterday", "last weekend", "last week", "two weeks ago", "on Tuesday", "this morning"]

# Recurring threads: the same subject comes back in several sessions (multi-hop evidence).
THREADS = [
    (
        "garden",
        [
            "I planted tomatoes and basil on the balcony, fingers crossed.",
            "The tomatoes are finally turning red, I'm so proud.",
            "We had the first salad from my own plants tonight!",
        ],
        "How did {a}'s vegetable growing project progress over time?",
    ),
    (
        "kids",
        [
            "The kids are obsessed with dinosaurs at the moment.",
            "Took the kids to the science museum, they loved the fossil hall.",
            "My youngest wants a T-rex cake for his birthday, of course.",
        ],
        "What are {a}'s children interested in?",
    ),
    (
        "guitar",
        [
            "I dusted off my old guitar and practised for an hour.",
            "I can finally play a full song on the guitar without stopping.",
            "I'm playing two songs at the open mic night at the cafe!",
        ],
        "How has {a}'s music practice developed?",
    ),
]


def _conversation(
    conv_id: str, people: tuple[str, str], start: datetime, rng: random.Random
) -> Conversation:
    conversation = Conversation(conv_id, people)
    a, b = people
    events = [(event, speaker) for event in EVENTS for speaker in (a, b)]
    rng.shuffle(events)
    threads = [(name, lines, question, rng.choice(people)) for name, lines, question in THREADS]
    thread_sessions = {
        name: sorted(rng.sample(range(SESSIONS), len(lines))) for name, lines, _, _ in threads
    }
    thread_tags: dict[str, list[str]] = {name: [] for name, *_ in threads}
    when_time = start
    for index in range(SESSIONS):
        when_time += timedelta(days=rng.randint(6, 20), hours=rng.randint(-3, 3))
        lines: list[Line] = []
        opener = rng.choice(people)
        other = b if opener == a else a
        lines.append(
            Line(
                opener,
                rng.choice(
                    [
                        "Hey! How are you doing?",
                        "Hi! Long time no talk.",
                        "Hey you, got a minute to chat?",
                    ]
                ),
            )
        )
        lines.append(Line(other, rng.choice(SMALL_TALK[:8])))
        chosen = [events.pop() for _ in range(2) if events]
        pending_questions: list[tuple[str, list[str], str]] = []
        for event, speaker in chosen:
            friend = b if speaker == a else a
            event_lines, questions = event(rng, speaker, friend, rng.choice(WHENS))
            for line in event_lines:
                if line.tag is not None:
                    line.tag = f"{speaker}:{line.tag}"
            questions = [(q, [f"{speaker}:{t}" for t in tags], c) for q, tags, c in questions]
            for _ in range(rng.randint(1, 3)):
                small = rng.choice(SMALL_TALK)
                lines.append(Line(rng.choice(people), small))
            lines.extend(event_lines)
            pending_questions.extend(rng.sample(questions, k=min(len(questions), 2)))
        for name, thread_lines, _, owner in threads:
            if index in thread_sessions[name]:
                step = thread_sessions[name].index(index)
                tag = f"{name}{step}"
                lines.insert(rng.randint(2, len(lines)), Line(owner, thread_lines[step], tag))
                thread_tags[name].append(tag)
        for _ in range(rng.randint(2, 4)):
            lines.insert(
                rng.randint(2, len(lines)), Line(rng.choice(people), rng.choice(SMALL_TALK))
            )
        lines.append(Line(opener, rng.choice(SMALL_TALK[-4:])))
        tag_to_id: dict[str, str] = {}
        turns = []
        for line in lines:
            turn_id = conversation.turn_id()
            if line.tag is not None:
                tag_to_id[line.tag] = turn_id
            turns.append({"id": turn_id, "speaker": line.speaker, "text": line.text})
        conversation.sessions.append(
            {"id": f"s{index + 1}", "time": when_time.strftime("%Y-%m-%dT%H:%M:%S"), "turns": turns}
        )
        for question, tags, category in pending_questions:
            conversation.questions.append(
                {
                    "conversation": conv_id,
                    "question": question,
                    "evidence": [tag_to_id[tag] for tag in tags],
                    "category": category,
                }
            )
        for name in thread_tags:
            for tag in thread_tags[name]:
                if tag in tag_to_id:
                    thread_tags[name][thread_tags[name].index(tag)] = tag_to_id[tag]
    for name, _, question, owner in threads:
        conversation.questions.append(
            {
                "conversation": conv_id,
                "question": question.format(a=owner),
                "evidence": thread_tags[name],
                "category": "multi-hop",
            }
        )
    return conversation


def build() -> dict[str, object]:
    rng = random.Random(2024)
    pairs = [("Nora", "Sam"), ("Priya", "Leo"), ("Hana", "Marcus")]
    conversations = []
    questions: list[dict[str, object]] = []
    for index, people in enumerate(pairs):
        built = _conversation(f"g{index + 1}", people, datetime(2023, 1, 10 + index, 18, 0), rng)
        conversations.append({"id": built.id, "sessions": built.sessions})
        questions.extend(built.questions)
    return {"conversations": conversations, "questions": questions}
