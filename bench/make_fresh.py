"""Build bench/datasets/fresh.json from datasets/src/fresh_f1.txt and fresh_f2.txt.

Source format: `== 2023-05-08T13:56:00` starts a session; a turn is `X| text` or
`X#label| text` (X: one-letter speaker code, label: a name questions can cite).
Turn ids are s<session>t<turn>, counted in order. Stdlib only.
"""

import json
import re
from pathlib import Path

HERE = Path(__file__).resolve().parent
SRC = HERE / "datasets" / "src"
OUT = HERE / "datasets" / "fresh.json"

CONVERSATIONS = [
    ("f1", "fresh_f1.txt", {"N": "Ngozi", "W": "Wendell"}),
    ("f2", "fresh_f2.txt", {"A": "Augustin", "H": "Hana"}),
]

SH, MH, TE, OD, AD = "single-hop", "multi-hop", "temporal", "open-domain", "adversarial"

# (conversation, category, question, evidence labels)
QUESTIONS = [
    # ---- f1: Ngozi (pediatric pharmacist, Pittsburgh) and Wendell (bridge engineer, Boise), old college a cappella friends
    ("f1", SH, "What does Ngozi do for a living?", ["pharmacy_job", "water_advice"]),
    ("f1", SH, "What did Wendell name his sourdough starter?", ["starter_name"]),
    ("f1", SH, "Who did Ngozi hire to redo her kitchen, and who recommended him?", ["contractor"]),
    ("f1", SH, "How much did Ngozi originally budget for the kitchen?", ["kitchen_budget"]),
    ("f1", SH, "What position does Otis play on his hockey team?", ["otis_goalie"]),
    ("f1", SH, "Where does Marguerite work, and how did she and Wendell meet?", ["marguerite_job"]),
    (
        "f1",
        SH,
        "What did the contractor find behind the plaster, and how much did it add?",
        ["knob_tube"],
    ),
    ("f1", SH, "What happened to one of Rafael's kombucha jars before he moved in?", ["kombucha"]),
    ("f1", SH, "What was Ngozi's finishing time in the half marathon?", ["half_finish"]),
    (
        "f1",
        SH,
        "What is the name of Obinna's food truck, and what does it serve?",
        ["obinna_truck", "obinna_quit"],
    ),
    (
        "f1",
        SH,
        "What kind of pet did Otis get for his tenth birthday, and what did he call it?",
        ["otis_birthday_plan", "gecko_named"],
    ),
    (
        "f1",
        SH,
        "What color did Ngozi choose for her kitchen cabinets?",
        ["cabinets_delay", "cabinets_in"],
    ),
    ("f1", SH, "What are Ngozi's new countertops made of?", ["butcher_block"]),
    ("f1", SH, "What tile went on Ngozi's backsplash?", ["backsplash"]),
    ("f1", SH, "What name did Otis give the bison that blocked the road?", ["bison_jam"]),
    ("f1", SH, "Who won the rye category at the Western Idaho Fair?", ["fair_winner"]),
    ("f1", SH, "What was Pistachio called when she raced?", ["racing_name"]),
    ("f1", SH, "Who sits next to Wendell at his new office?", ["coworker_deb"]),
    (
        "f1",
        SH,
        "What did Marguerite say when Wendell told her he loved her?",
        ["said_love", "love_reply"],
    ),
    ("f1", SH, "How big was Wendell's kidney stone?", ["kidney_stone"]),
    ("f1", SH, "What did Ngozi read at Lupe's wedding?", ["neruda"]),
    ("f1", SH, "Which song did the Nightjars perform at Lupe's reception?", ["nightjars_sang"]),
    (
        "f1",
        SH,
        "How many mugs did Ngozi sell at the holiday market, and how much did she make?",
        ["mugs_sold"],
    ),
    ("f1", SH, "What was Wendell's accepted offer on the Garden City house?", ["offer_accepted"]),
    ("f1", SH, "What happened to Sergeant Pepper's tank during the move?", ["move_drama"]),
    ("f1", SH, "What honor did Rafael receive at his school?", ["rafael_award"]),
    ("f1", SH, "What did Marguerite ask when Wendell knelt down at the lake?", ["proposal_story"]),
    ("f1", SH, "Whose ring did Wendell propose with, and who gave it to him?", ["proposal_plan"]),
    ("f1", SH, "Which Pittsburgh sandwich impressed Wendell?", ["primanti"]),
    (
        "f1",
        MH,
        "How did the cost of Ngozi's kitchen renovation change from the original budget to the final bill?",
        ["kitchen_budget", "knob_tube", "budget_over", "kitchen_final"],
    ),
    (
        "f1",
        MH,
        "How did Wendell's job and pay change over the course of 2023?",
        ["bridge_job", "got_offer", "salary", "new_job_first"],
    ),
    (
        "f1",
        MH,
        "How did Obinna's working life change between spring 2023 and early 2024?",
        ["obinna_truck", "obinna_quit", "obinna_update"],
    ),
    (
        "f1",
        MH,
        "How did Ngozi's pottery progress from her first class to selling her work?",
        ["pottery_start", "pottery_wheel", "craft_market", "mugs_sold"],
    ),
    (
        "f1",
        MH,
        "How did Wendell and Marguerite's relationship develop from their first meeting to an engagement?",
        [
            "marguerite_job",
            "first_date",
            "said_love",
            "love_reply",
            "proposal_plan",
            "she_said_yes",
        ],
    ),
    (
        "f1",
        MH,
        "Which two weddings has Ngozi been asked to give a reading at?",
        ["lupe_engaged", "reading_ask"],
    ),
    (
        "f1",
        MH,
        "In what ways has Dottie helped Ngozi out?",
        ["contractor", "dottie_sitter", "pistachio_fine"],
    ),
    (
        "f1",
        MH,
        "What did Wendell predict about Ngozi's renovations, and how did those predictions turn out?",
        ["fifteen_pct", "budget_over", "bathroom_predict", "bathroom_joke"],
    ),
    (
        "f1",
        MH,
        "What pets live in Ngozi's home and in Wendell's home?",
        ["pistachio_adopt", "otis_birthday_plan", "gecko_named"],
    ),
    (
        "f1",
        MH,
        "How has Pistachio adjusted to life in Pittsburgh?",
        ["stairs", "pistachio_sofa", "pistachio_snow"],
    ),
    (
        "f1",
        MH,
        "How did Wendell's living situation change between December 2023 and February 2024?",
        ["house_hunt", "garden_city", "offer_accepted", "moved_in"],
    ),
    ("f1", TE, "When did demolition on Ngozi's kitchen start?", ["kitchen_plan"]),
    ("f1", TE, "When did Rafael move in with Ngozi?", ["rafael_movein"]),
    (
        "f1",
        TE,
        "On what date did Ngozi run the Pittsburgh half marathon?",
        ["half_training", "half_finish"],
    ),
    (
        "f1",
        TE,
        "When did Wendell start working at Halvorsen & Teague?",
        ["start_date", "start_sept5"],
    ),
    (
        "f1",
        TE,
        "Roughly how long did the kitchen renovation take from demolition to completion?",
        ["kitchen_plan", "kitchen_done"],
    ),
    ("f1", TE, "When did Wendell end up in the emergency room?", ["kidney_stone"]),
    (
        "f1",
        TE,
        "When did Ngozi start her job as clinical pharmacy manager?",
        ["promotion", "promotion_start"],
    ),
    (
        "f1",
        TE,
        "When did Wendell close on his house, and when did he move in?",
        ["offer_accepted", "moved_in"],
    ),
    (
        "f1",
        TE,
        "When did Wendell and Marguerite stay with Ngozi in Pittsburgh?",
        ["visit_dates", "primanti"],
    ),
    (
        "f1",
        TE,
        "How long had Wendell and Marguerite been together when he proposed?",
        ["first_date", "proposal_date", "she_said_yes"],
    ),
    (
        "f1",
        TE,
        "Which happened first: Marguerite meeting Otis or Marguerite meeting Ngozi?",
        ["otis_meets", "marguerite_kitchen"],
    ),
    (
        "f1",
        TE,
        "When did the Nightjars hold their reunion concert?",
        ["reunion_idea", "concert_recap"],
    ),
    (
        "f1",
        OD,
        "Would Ngozi be interested in a weekend ceramics workshop?",
        ["pottery_start", "pottery_wheel", "studio_nights", "pottery_wed"],
    ),
    (
        "f1",
        OD,
        "Would Wendell likely enjoy touring a historic bridge or railway?",
        ["bridge_job", "miss_outside", "incline_1877"],
    ),
    (
        "f1",
        OD,
        "Does Ngozi have a good memory for small details?",
        ["blue_shirt", "remember_all", "college_tea"],
    ),
    ("f1", OD, "Would Otis likely enjoy a nature camp?", ["otis_meets", "sagebrush"]),
    (
        "f1",
        OD,
        "Is Rafael a supportive partner?",
        ["rafael_living", "toenail", "back_gate", "stairs"],
    ),
    ("f1", OD, "Is Ngozi fluent in Spanish?", ["neruda", "reading_went"]),
    (
        "f1",
        AD,
        "What did Wendell name his retired racing greyhound?",
        ["pistachio_adopt", "gecko_named"],
    ),
    ("f1", AD, "How many races did Pistachio win at tracks in Texas?", ["racing_name"]),
    (
        "f1",
        AD,
        "Why did Ngozi leave the hospital to join Halvorsen & Teague?",
        ["got_offer", "promotion"],
    ),
    ("f1", AD, "What ribbon did Ngozi's rye bread win at the fair?", ["fair_result"]),
    ("f1", AD, "How did Rafael propose to Ngozi?", ["she_said_yes", "proposal_story"]),
    (
        "f1",
        AD,
        "What did Wendell think of the calenda parade at Lupe's wedding?",
        ["no_oaxaca", "nightjars_sang"],
    ),
    # ---- f2: Augustin (retired railroad signal maintainer, Duluth) and his daughter Hana (audio engineer, Austin, later Minneapolis)
    ("f2", SH, "What does Hana do for work?", ["studio_job"]),
    ("f2", SH, "What is Hana's roller derby name?", ["derby_name"]),
    (
        "f2",
        SH,
        "What role does Hana skate in roller derby, and what does it involve?",
        ["derby_practice", "jammer"],
    ),
    ("f2", SH, "What is the name of Augustin's curling team?", ["team_name"]),
    ("f2", SH, "What ruined Hana's microphone?", ["flood", "mic_ruined"]),
    (
        "f2",
        SH,
        "How much did Hana have to pay out of pocket to replace her microphone?",
        ["insurance"],
    ),
    ("f2", SH, "What did Maureen do for work before she retired?", ["maureen_bg"]),
    ("f2", SH, "Why was Rutabaga named after a vegetable?", ["rutabaga_name"]),
    ("f2", SH, "Where did Augustin decide to put Rutabaga's ashes?", ["ashes"]),
    ("f2", SH, "Where did Augustin work for a year in 1979?", ["long_distance", "winnipeg"]),
    ("f2", SH, "What was wrong with the tourtière Augustin made at Christmas?", ["tourtiere_fail"]),
    (
        "f2",
        SH,
        "What prize did the Hog Line Heroes get for winning the C event?",
        ["bonspiel", "trophy"],
    ),
    ("f2", SH, "What birthday present did Hana send her father?", ["present", "vest"]),
    ("f2", SH, "Which company bought the studio Hana worked for?", ["studio_bought"]),
    (
        "f2",
        SH,
        "Which exhibit at the train museum is Augustin's favorite?",
        ["first_tour", "snowplow"],
    ),
    ("f2", SH, "What does the name Sisu mean?", ["sisu_name"]),
    ("f2", SH, "What is the Marsh Light podcast about?", ["marsh_light"]),
    ("f2", SH, "What did Sisu chew up as a puppy?", ["broom"]),
    ("f2", SH, "How did Hana and Lucía meet?", ["lucia_met"]),
    ("f2", SH, "What animal is in Lucía's mural on the taquería?", ["lucia_mural"]),
    ("f2", SH, "How did the Hellcats do at the Denver tournament?", ["denver_result"]),
    ("f2", SH, "What happened to Maureen on the whale watch?", ["whale_watch"]),
    (
        "f2",
        SH,
        "What is the name of the audiobook Hana mixed, and how long is it?",
        ["audiobook", "audiobook_done"],
    ),
    (
        "f2",
        SH,
        "What new role did Augustin take on when curling resumed in fall 2023?",
        ["vice_skip"],
    ),
    ("f2", SH, "Which Minneapolis neighborhood did Hana and Lucía move to?", ["duplex"]),
    ("f2", SH, "How many breakfast tacos did Augustin eat in Austin?", ["breakfast_taco"]),
    ("f2", SH, "What is Tank's derby name?", ["dolly_smashin"]),
    ("f2", SH, "How many questions did Hana actually ask Maureen at Christmas?", ["maureen_liked"]),
    ("f2", SH, "Why can't Lucía start painting the library mural until May?", ["mural_spring"]),
    (
        "f2",
        MH,
        "How did Augustin's curling role and results progress across two seasons?",
        ["lead", "bonspiel", "vice_skip", "heroes_winning"],
    ),
    (
        "f2",
        MH,
        "How did Hana and Kwame's relationship come to an end?",
        ["kwame_program", "kwame_accepted", "not_moving", "breakup_when"],
    ),
    (
        "f2",
        MH,
        "What dogs has Augustin owned during the conversation?",
        ["rutabaga_age", "rutabaga_died", "sisu_home", "lapphund"],
    ),
    (
        "f2",
        MH,
        "Who has looked after Sisu when Augustin traveled?",
        ["sisu_maureen", "sisu_tyler", "tyler_car"],
    ),
    (
        "f2",
        MH,
        "How did Augustin's eyesight change after his cataract operations?",
        ["cataract_date", "eye_after", "left_eye"],
    ),
    (
        "f2",
        MH,
        "How much did Sisu grow between late May and November 2023?",
        ["sisu_size", "sisu_38"],
    ),
    (
        "f2",
        MH,
        "Which roller derby teams has Hana skated with?",
        ["derby_tryout", "derby_allstar", "north_star", "north_star_joined"],
    ),
    (
        "f2",
        MH,
        "How did Hana's career develop after she left Cedar Room?",
        ["gave_notice", "marsh_light", "audiobook", "freelance_going", "audiobook_out"],
    ),
    (
        "f2",
        MH,
        "Did Augustin's tourtière improve the second time he made it?",
        ["tourtiere_fail", "solange", "tourtiere_better"],
    ),
    (
        "f2",
        MH,
        "Where do Augustin's two children live now?",
        ["moving_mpls", "moved", "mathis_perth", "mathis_moved"],
    ),
    (
        "f2",
        MH,
        "Who finally asked Augustin about the railroad signals he spent his career maintaining?",
        ["nobody_asks", "met_lucia", "signals_asked"],
    ),
    ("f2", TE, "When did Augustin have his first cataract operation?", ["cataract_date"]),
    ("f2", TE, "When did Rutabaga die?", ["rutabaga_died"]),
    ("f2", TE, "When did Hana and Kwame break up?", ["breakup", "breakup_when"]),
    ("f2", TE, "When is Augustin's birthday, and how old did he turn in 2023?", ["birthday"]),
    ("f2", TE, "On what date did Augustin bring Sisu home?", ["sisu_date"]),
    ("f2", TE, "What was Hana's last day at Cedar Room?", ["gave_notice"]),
    ("f2", TE, "When did Hana meet Lucía?", ["lucia_met"]),
    (
        "f2",
        TE,
        "About how long was Augustin in Quebec for Gilles's bypass?",
        ["gilles_surgery", "drive_quebec", "home_date"],
    ),
    ("f2", TE, "When did Mathis's family arrive in Australia?", ["mathis_moved"]),
    ("f2", TE, "What day did Augustin fly to Austin for Thanksgiving?", ["thanksgiving_flight"]),
    ("f2", TE, "When did Hana move into the Minneapolis duplex?", ["moved"]),
    (
        "f2",
        TE,
        "Which came first: Mathis's move to Perth or Augustin's Nova Scotia trip?",
        ["mathis_moved", "nova_scotia_plan"],
    ),
    (
        "f2",
        OD,
        "Would Augustin enjoy a talk on railway history?",
        ["museum_volunteer", "nobody_asks", "snowplow"],
    ),
    (
        "f2",
        OD,
        "Is Hana bothered by getting knocked down and bruised?",
        ["derby_practice", "jammer", "bruises"],
    ),
    ("f2", OD, "Was Augustin quick to adopt new technology?", ["phone_gift", "bought_audiobook"]),
    ("f2", OD, "Would Maureen enjoy a deep-sea fishing trip?", ["lobster", "whale_watch"]),
    (
        "f2",
        OD,
        "Is Maureen an organized, detail-minded person?",
        ["eye_drops", "chart_credit", "maureen_liked"],
    ),
    (
        "f2",
        OD,
        "Does Augustin still think fondly of his late wife?",
        ["colette_fearless", "long_distance", "ashes", "first_flight"],
    ),
    ("f2", AD, "What breed is Hana's dog?", ["sisu_home", "lapphund"]),
    ("f2", AD, "Why did Hana move to Seattle with Kwame?", ["kwame_accepted", "not_moving"]),
    ("f2", AD, "How did Augustin recover from his triple bypass?", ["gilles_surgery", "gilles_ok"]),
    ("f2", AD, "How many points did Lucía score in the Denver bronze game?", ["denver_result"]),
    ("f2", AD, "Why did Maureen retire from nursing?", ["maureen_bg"]),
    ("f2", AD, "Who stole Hana's Neumann microphone?", ["flood", "mic_ruined"]),
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
