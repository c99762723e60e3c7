"""Build bench/datasets/final.json from datasets/src/final_k1.txt and final_k2.txt.

Source format: `== 2023-05-08T13:56:00` starts a session; a turn is `X| text` or
`X#label| text` (X: one-letter speaker code, label: a name questions can cite).
Turn ids are s<session>t<turn>, counted in order. Stdlib only.
"""

import json
import re
from pathlib import Path

HERE = Path(__file__).resolve().parent
SRC = HERE / "datasets" / "src"
OUT = HERE / "datasets" / "final.json"

CONVERSATIONS = [
    ("k1", "final_k1.txt", {"C": "Corinne", "J": "Jonah"}),
    ("k2", "final_k2.txt", {"I": "Imogen", "B": "Bashir"}),
]

SH, MH, TE, OD, AD = "single-hop", "multi-hop", "temporal", "open-domain", "adversarial"

# (conversation, category, question, evidence labels)
QUESTIONS = [
    # ---- k1: Corinne (court interpreter, Albuquerque) and her brother Jonah (sommelier, Chicago)
    ("k1", SH, "What does Corinne do for a living?", ["trial0", "trial"]),
    ("k1", SH, "What old vehicle did Jonah pick up cheaply in early 2022?", ["moto_buy"]),
    ("k1", SH, "What shade was Jonah's Honda originally painted?", ["moto_color"]),
    ("k1", SH, "How much cash did Mabel get for her first lost tooth?", ["tooth_fairy"]),
    ("k1", SH, "Which coworker took Corinne to a bouldering gym?", ["boulder_start"]),
    ("k1", SH, "What mix-up embarrassed Jonah in front of his practice group?", ["tasting_group"]),
    ("k1", SH, "What does Theo do for work?", ["theo_promo"]),
    ("k1", SH, "Which seedlings that Dev planted did Pancho eat?", ["pancho_tomatoes"]),
    ("k1", SH, "How old is Pancho?", ["pancho_age"]),
    (
        "k1",
        SH,
        "Why was the owner of Jonah's steakhouse getting out of the business?",
        ["owner_selling"],
    ),
    (
        "k1",
        SH,
        "Which prehistoric creature did Mabel build a model of for school?",
        ["dino_project"],
    ),
    (
        "k1",
        SH,
        "What car did Corinne end up with after the Corolla died, and what model year?",
        ["car_buy", "car_year"],
    ),
    ("k1", SH, "What musical instrument does Dev play?", ["tuba"]),
    ("k1", SH, "What is the name of Ruth's physical therapist?", ["pt_gloria"]),
    ("k1", SH, "What did Ruth do with the kale salad from Jonah's meal delivery?", ["kale"]),
    ("k1", SH, "What is unusual about the appearance of Jonah's pet?", ["cat_adopt"]),
    ("k1", SH, "Why is Jonah's cat called Admiral?", ["cat_name"]),
    (
        "k1",
        SH,
        "What anecdote did Jonah share in his speech at Lenny's seventieth?",
        ["toast_story"],
    ),
    (
        "k1",
        SH,
        "What present did Lenny receive from his two children for his seventieth?",
        ["telescope_q", "telescope", "split_gift"],
    ),
    ("k1", SH, "Which section of the advanced sommelier exam did Jonah fail?", ["exam_result"]),
    ("k1", SH, "Who teaches Mabel in second grade?", ["second_grade"]),
    ("k1", SH, "Which bottle did Admiral knock off the counter?", ["barolo"]),
    (
        "k1",
        SH,
        "Which wine importer offered Jonah a sales job, and what wines does it carry?",
        ["importer_offer"],
    ),
    ("k1", SH, "How did Theo pop the question to Jonah?", ["engaged"]),
    ("k1", SH, "In which jar did Theo hide the ring?", ["ring_hide"]),
    ("k1", SH, "Where are Jonah and Theo holding their wedding?", ["venue"]),
    ("k1", SH, "What piece did Mabel play at her first recital?", ["recital_piece"]),
    ("k1", SH, "At which library did Jonah and Theo meet in 2017?", ["how_met"]),
    ("k1", SH, "What dishes did Jonah and Theo pick at their menu tasting?", ["menu_tasting"]),
    (
        "k1",
        MH,
        "What year was the port Jonah loved most in Portugal, and what else of his came from that same year?",
        ["best_wine", "moto_buy"],
    ),
    (
        "k1",
        MH,
        "What will the money from Jonah's motorcycle pay for, and where is that trip headed?",
        ["moto_sold", "honeymoon"],
    ),
    (
        "k1",
        MH,
        "Which wine that Jonah recommended for Corinne's anniversary trip later helped him become a top seller?",
        ["vv_rec", "sales_award"],
    ),
    (
        "k1",
        MH,
        "How much harder was the route Corinne finished in April 2023 than the one she fell from in 2022?",
        ["wrist", "v4"],
    ),
    (
        "k1",
        MH,
        "Which of the two siblings ended up earning the professional credential they were studying for?",
        ["exam_result", "retake_skip", "passed"],
    ),
    (
        "k1",
        MH,
        "Roughly how much has Admiral cost Jonah through breakage and vet bills combined?",
        ["barolo_cost", "admiral_teeth"],
    ),
    (
        "k1",
        MH,
        "How did Ruth's mobility progress from her hip operation to summer 2023?",
        ["surgery_went", "mom_cane", "mom_garden"],
    ),
    (
        "k1",
        MH,
        "In which cities did Corinne sit her certification test and then work her first official federal case?",
        ["oral_exam", "federal_work", "las_cruces"],
    ),
    (
        "k1",
        MH,
        "Which Portuguese city did both Corinne and Jonah visit?",
        ["porto_visit", "porto_stop"],
    ),
    ("k1", TE, "When did Mabel lose her first tooth?", ["tooth"]),
    ("k1", TE, "On what date was Ruth's hip replaced?", ["surgery_date"]),
    (
        "k1",
        TE,
        "How long was Corinne away in Tucson helping her mother after surgery?",
        ["surgery_date", "back_home"],
    ),
    ("k1", TE, "When did Jonah and Theo bring their cat home from the shelter?", ["cat_adopt"]),
    ("k1", TE, "When did Corinne fall off a climbing route and hurt her wrist?", ["wrist"]),
    ("k1", TE, "When did the Mount Lemmon celebration for Lenny take place?", ["party_when"]),
    ("k1", TE, "When did Jonah first ride his motorcycle around the block?", ["first_ride"]),
    (
        "k1",
        TE,
        "How long after taking up bouldering did Corinne get hurt?",
        ["boulder_start", "wrist"],
    ),
    (
        "k1",
        TE,
        "Which came first: Corinne getting home from Portugal or Jonah starting at Ferro Selections?",
        ["lisbon_recap", "importer_offer"],
    ),
    ("k1", TE, "When did Theo propose to Jonah on the roof?", ["engaged"]),
    (
        "k1",
        TE,
        "How long did Corinne wait between her oral exam and learning she had passed?",
        ["oral_exam", "passed"],
    ),
    (
        "k1",
        TE,
        "How long did Jonah own the motorcycle before selling it?",
        ["moto_buy", "moto_sold"],
    ),
    ("k1", TE, "When did Pancho escape under the fence?", ["pancho_escape"]),
    ("k1", OD, "Is Corinne fluent in more than one language?", ["trial", "exam_prep"]),
    (
        "k1",
        OD,
        "Would Mabel probably enjoy a trip to a natural history museum?",
        ["dino_project", "dino_model"],
    ),
    ("k1", OD, "Does Theo seem like an organized planner?", ["honeymoon"]),
    ("k1", OD, "Would Jonah be comfortable doing mechanical repairs himself?", ["carb_rebuild"]),
    ("k1", OD, "Would Admiral handle a long road trip well?", ["admiral_travel"]),
    (
        "k1",
        OD,
        "Would Lenny enjoy a night at a dark-sky stargazing park?",
        ["telescope", "jupiter"],
    ),
    ("k1", AD, "Why did Corinne choose a minivan as her new car?", ["wagon_won", "car_buy"]),
    ("k1", AD, "When did Jonah earn the advanced sommelier title?", ["exam_result", "retake_skip"]),
    ("k1", AD, "How did Corinne break her wrist?", ["wrist", "xray"]),
    (
        "k1",
        AD,
        "Why did Theo quit the library to work for a wine importer?",
        ["theo_promo", "importer_offer"],
    ),
    ("k1", AD, "What did Jonah name the tortoise he adopted?", ["cat_adopt", "cat_name"]),
    ("k1", AD, "Why did Jonah and Theo pick Japan for their honeymoon?", ["honeymoon"]),
    # ---- k2: Imogen (tugboat deckhand, Tacoma) and Bashir (GIS analyst, Sacramento), ex-copy-desk colleagues
    ("k2", SH, "What is Imogen's current occupation?", ["tug_job"]),
    ("k2", SH, "How many weeks on and off the boat does Imogen work?", ["schedule"]),
    ("k2", SH, "What kind of work does Bashir do for the local government?", ["gis_job"]),
    ("k2", SH, "What is the theme behind the names of Bashir's chickens?", ["hen_names"]),
    ("k2", SH, "How old is Imogen's parrot?", ["professor"]),
    ("k2", SH, "Which hen stopped laying in early 2023?", ["hen_stop"]),
    ("k2", SH, "What was Imogen's win-loss record at the Portland event?", ["portland_tourney"]),
    ("k2", SH, "Which short high-scoring word did Imogen play in Oregon, and what is it?", ["zax"]),
    ("k2", SH, "Who gave Bashir binoculars for his birthday?", ["birding_start"]),
    ("k2", SH, "What is Yara's profession?", ["yara_dentist"]),
    ("k2", SH, "Who is Imogen's brother marrying?", ["callum_engaged"]),
    ("k2", SH, "What bird did Bashir see at the wildlife refuge in April 2023?", ["count_112"]),
    ("k2", SH, "What did the vet blame for Professor's feather problem?", ["plucking", "crows"]),
    ("k2", SH, "What did the scan reveal about Imogen's leg?", ["diag", "meniscus"]),
    ("k2", SH, "How did Bashir and Yara learn they were expecting a daughter?", ["girl_cake"]),
    ("k2", SH, "What killed Oxford?", ["oxford_hawk"]),
    ("k2", SH, "Whose novels did Bashir mail to Imogen while she recovered?", ["books"]),
    ("k2", SH, "What position did Bashir win in summer 2023?", ["got_job"]),
    ("k2", SH, "What beep has Professor been imitating?", ["microwave"]),
    ("k2", SH, "What color did Bashir and Yara paint the nursery?", ["nursery"]),
    ("k2", SH, "What odd food pairing did Yara want while pregnant?", ["cravings"]),
    ("k2", SH, "What are the names of Bashir's two newest hens?", ["new_hens"]),
    ("k2", SH, "What kind of party followed Callum and Aoife's ceremony?", ["ceilidh"]),
    ("k2", SH, "What upside-down rice dish did Bashir's mother cook?", ["maqluba"]),
    (
        "k2",
        SH,
        "Which neighbor looks after Professor while Imogen is on the boat?",
        ["professor_sitter"],
    ),
    ("k2", SH, "How big was Leila when she was born?", ["birth"]),
    ("k2", SH, "What boat did Imogen buy for herself in 2024?", ["kayak_buy", "kayak_color"]),
    ("k2", SH, "What did Imogen win at the Scrabble tournament in Reno?", ["reno_win"]),
    ("k2", SH, "What wildlife did Imogen encounter near Vashon?", ["orcas"]),
    ("k2", SH, "Which town is Imogen thinking of moving to?", ["moving"]),
    ("k2", SH, "What is Bashir doing about his headaches?", ["glasses"]),
    (
        "k2",
        MH,
        "How did Bashir's species tally grow over the course of 2023?",
        ["count_112", "count_178", "final_count"],
    ),
    ("k2", MH, "Why did Imogen call her kayak Serial Comma?", ["kayak_name", "oxford_hawk"]),
    (
        "k2",
        MH,
        "What pushed Imogen's licensing test from summer to October?",
        ["surgery_june", "exam_postponed"],
    ),
    ("k2", MH, "How did Bashir's flock change during 2023?", ["oxford_hawk", "new_hens"]),
    (
        "k2",
        MH,
        "Which of Leila's grandparents met her first, and where did the other one meet her?",
        ["mother_arrives", "amman_recap"],
    ),
    (
        "k2",
        MH,
        "Which vessel would Imogen crew if she relocates up the coast?",
        ["hybrid_tug", "hybrid_move"],
    ),
    (
        "k2",
        MH,
        "What rank did Imogen reach after her exam, and what was her first tricky night in it?",
        ["mate_start", "first_trip_mate"],
    ),
    (
        "k2",
        MH,
        "How did Imogen's advice about Bashir's interview outfit play out?",
        ["blue_tie", "tie_worn"],
    ),
    (
        "k2",
        MH,
        "How did Imogen's tournament results improve between early 2023 and early 2024?",
        ["portland_tourney", "reno_win"],
    ),
    ("k2", TE, "When did Imogen play in the Portland tournament?", ["portland_tourney"]),
    ("k2", TE, "When was Bashir and Yara's baby expected?", ["pregnant"]),
    ("k2", TE, "When did Imogen's crew help dock a container ship in high winds?", ["storm"]),
    ("k2", TE, "On what date did Imogen have her knee operation?", ["surgery_june"]),
    ("k2", TE, "When did a Cooper's hawk kill Oxford?", ["oxford_hawk"]),
    ("k2", TE, "When did Bashir start leading the GIS team?", ["got_job"]),
    ("k2", TE, "When did Callum get married?", ["flight"]),
    ("k2", TE, "When was Leila born?", ["birth"]),
    (
        "k2",
        TE,
        "How long did Bashir's mother stay with them after Leila's birth?",
        ["mother_arrives", "mother_left"],
    ),
    ("k2", TE, "How old was Leila when she first walked?", ["birth", "first_steps"]),
    ("k2", TE, "Which came first for Leila: rolling over or crawling?", ["rolling", "crawling"]),
    ("k2", TE, "When did Imogen see a pod of orcas from her kayak?", ["orcas"]),
    (
        "k2",
        TE,
        "How long after her operation did Imogen return to work?",
        ["surgery_june", "light_duty"],
    ),
    ("k2", OD, "Would Imogen make a good proofreader?", ["copy_desk", "copyediting_timer"]),
    ("k2", OD, "Would Bashir enjoy a guided walk at a wildlife refuge?", ["big_year", "count_112"]),
    ("k2", OD, "Is Imogen prone to motion sickness on the water?", ["seasick"]),
    ("k2", OD, "Could Bashir's father fly to California to visit?", ["amman_plan"]),
    ("k2", OD, "Is Bashir likely to cook Jordanian dishes at home?", ["mansaf_try", "recipes"]),
    ("k2", OD, "Does Imogen tend to get emotional at big moments?", ["weepy", "cried_orcas"]),
    ("k2", AD, "Why did Imogen leave tugboats to become a GIS analyst?", ["tug_job", "gis_job"]),
    ("k2", AD, "What did Bashir and Yara name their son?", ["birth"]),
    ("k2", AD, "How did Imogen break her ankle?", ["diag", "meniscus"]),
    ("k2", AD, "Which Scrabble tournament did Bashir win in Reno?", ["reno_win"]),
    ("k2", AD, "When was Imogen's parrot killed by a hawk?", ["oxford_hawk", "bit_vet"]),
    ("k2", AD, "How did Imogen's father react when he met Leila?", ["amman_recap"]),
]

SESSION_RE = re.compile(r"^==\s*(\d{4}-\d\d-\d\dT\d\d:\d\d(?::\d\d)?)\s*$")
TURN_RE = re.compile(r"^([A-Z])(?:#([\w-]+))?\|\s*(.+)$")


def parse(path, speakers):
    sessions, labels = [], {}
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = line.strip()
        if not line:
            continue
        m = SESSION_RE.match(line)
        if m:
            sessions.append({"id": f"s{len(sessions) + 1}", "time": m.group(1), "turns": []})
            continue
        m = TURN_RE.match(line)
        if not m or not sessions:
            raise SystemExit(f"{path.name}:{n}: cannot parse: {line!r}")
        code, label, text = m.groups()
        if code not in speakers:
            raise SystemExit(f"{path.name}:{n}: unknown speaker {code!r}")
        s = sessions[-1]
        tid = f"{s['id']}t{len(s['turns']) + 1}"
        s["turns"].append({"id": tid, "speaker": speakers[code], "text": text})
        if label:
            if label in labels:
                raise SystemExit(f"{path.name}:{n}: duplicate label {label!r}")
            labels[label] = tid
    return sessions, labels


def main():
    conversations, labels = [], {}
    for cid, fname, speakers in CONVERSATIONS:
        sessions, labels[cid] = parse(SRC / fname, speakers)
        conversations.append({"id": cid, "sessions": sessions})
    questions, seen = [], set()
    for cid, category, question, evidence in QUESTIONS:
        if (cid, question) in seen:
            raise SystemExit(f"duplicate question: {question}")
        seen.add((cid, question))
        missing = [e for e in evidence if e not in labels[cid]]
        if missing:
            raise SystemExit(f"{cid}: unknown labels {missing} in {question!r}")
        questions.append(
            {
                "conversation": cid,
                "question": question,
                "evidence": [labels[cid][e] for e in evidence],
                "category": category,
            }
        )
    OUT.write_text(
        json.dumps(
            {"conversations": conversations, "questions": questions}, indent=1, ensure_ascii=False
        )
        + "\n",
        encoding="utf-8",
    )
    n_sessions = sum(len(c["sessions"]) for c in conversations)
    n_turns = sum(len(s["turns"]) for c in conversations for s in c["sessions"])
    print(f"wrote {OUT}: {n_sessions} sessions, {n_turns} turns, {len(questions)} questions")


if __name__ == "__main__":
    main()
