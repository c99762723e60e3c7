"""The ``heldout`` recall set, from ``src/heldout_h1.txt`` and ``heldout_h2.txt`` (labelled chat
logs, ``labelled.py``).

Written by someone who had not seen the ranker, and never used to tune it.
"""

from evals.datasets.labelled import Json, QuestionSpec, labelled_dataset

CONVERSATIONS = [
    ("h1", "heldout_h1.txt", {"I": "Ingrid", "T": "Tobias"}),
    ("h2", "heldout_h2.txt", {"K": "Keiko", "R": "Rafael"}),
]

# Questions by conversation: (category, question, evidence labels)
Q = {
    "h1": [
        ("single-hop", "What does Tobias do for a living?", ["job1", "job1b"]),
        ("single-hop", "What subject does Ingrid teach?", ["quizzes", "chemteacher"]),
        ("single-hop", "What did Ingrid's doctor say that made her start running?", ["bp"]),
        ("single-hop", "What old van did Tobias buy?", ["van"]),
        ("single-hop", "What nickname did Tobias's partner give the camper?", ["vanname"]),
        ("single-hop", "What breed is Ingrid's dog?", ["dogadopt"]),
        ("single-hop", "Whose engine hoist did Tobias use to pull the engine out?", ["engine"]),
        ("single-hop", "What gift idea did Ingrid come up with for Felix?", ["jazz"]),
        ("single-hop", "How much funding did Ingrid secure for her class outing?", ["grant"]),
        (
            "single-hop",
            "Where did Tobias and Felix eat before the show on Felix's birthday?",
            ["felixbday"],
        ),
        ("single-hop", "What is Tobias's dad getting replaced?", ["dadhip"]),
        ("single-hop", "What did Ingrid's PT say was causing her knee pain?", ["itband"]),
        ("single-hop", "What instrument does Tobias play?", ["bandname"]),
        ("single-hop", "What is the name of the cover band Tobias joined?", ["bandname"]),
        ("single-hop", "Which tram did Felix recommend Ingrid take in Lisbon?", ["tram"]),
        (
            "single-hop",
            "How long did it take Ingrid to complete her first half marathon?",
            ["racetime"],
        ),
        (
            "single-hop",
            "What was written on the poster Ingrid's sister held at the race?",
            ["sign"],
        ),
        ("single-hop", "What did Ingrid eat every day in Portugal?", ["portugalreview"]),
        ("single-hop", "What color is Ingrid's cat?", ["biscuit"]),
        ("single-hop", "What did Tobias and Felix see on the second night of camping?", ["aurora"]),
        ("single-hop", "What class does Ingrid take on Tuesday nights?", ["pottery"]),
        ("single-hop", "What's the name of Felix's sourdough culture?", ["starter"]),
        ("single-hop", "Who flies the aircraft on Tobias's crew?", ["rosa"]),
        (
            "single-hop",
            "What position did Ingrid's principal offer her for next year?",
            ["depthead"],
        ),
        ("multi-hop", "What pets does Ingrid have now?", ["dogadopt", "biscuit"]),
        (
            "multi-hop",
            "How did Tobias's practice test scores improve?",
            ["practice62", "practice79"],
        ),
        (
            "multi-hop",
            "How did Tobias rebuild Marigold's engine?",
            ["engine", "compression", "kit", "vanstarts"],
        ),
        (
            "multi-hop",
            "How far did Ingrid's student Deshawn get in the Olympiad?",
            ["deshawn", "studycamp"],
        ),
        (
            "multi-hop",
            "Who looked after Ingrid's dog during her vacation, and how did that go?",
            ["dogsit", "pepperstay"],
        ),
        (
            "multi-hop",
            "Which races has Ingrid completed, and with what times?",
            ["racetime", "10ktime"],
        ),
        (
            "multi-hop",
            "How has Tobias's father recovered since his operation?",
            ["surgery", "dadgolf", "carve"],
        ),
        ("multi-hop", "What gigs has Tobias's band played so far?", ["gigdone", "weddinggig"]),
        ("temporal", "When did Ingrid adopt her retired racing greyhound?", ["dogadopt"]),
        ("temporal", "When was Tobias's dad's hip replacement?", ["dadhip"]),
        (
            "temporal",
            "When did Tobias and Felix relocate to their new apartment?",
            ["movedate", "movedone"],
        ),
        ("temporal", "When did Tobias's band perform for the first time?", ["gigdone"]),
        ("temporal", "When was Ingrid's first long-distance race?", ["missed", "racetime"]),
        ("temporal", "When did Ingrid travel to Lisbon and Porto?", ["portugalplan"]),
        ("temporal", "When did Marigold's rebuilt motor first fire up?", ["vanstarts"]),
        ("temporal", "When did Tobias sit his certification test?", ["examdate", "passed"]),
        ("temporal", "When was Ingrid's niece born?", ["astrid"]),
        ("temporal", "When did Tobias begin training for his new helicopter job?", ["training"]),
        (
            "temporal",
            "Which happened first: Ingrid adopting her cat or Marigold breaking down?",
            ["cat", "breakdown"],
        ),
        (
            "temporal",
            "How long after registering did Ingrid run the Duluth race?",
            ["halfsignup", "racetime"],
        ),
        (
            "open-domain",
            "Is Tobias likely to stay composed in a high-pressure emergency?",
            ["icecall", "calm"],
        ),
        (
            "open-domain",
            "Would Felix probably want a dog of his own?",
            ["felixdog", "pepperstay", "springdog"],
        ),
        (
            "open-domain",
            "Does Ingrid seem invested in her students' success?",
            ["grant", "deshawn", "studycamp"],
        ),
        ("open-domain", "Is Ingrid likely to attempt a full 26-mile race soon?", ["nomarathon"]),
        ("open-domain", "Has running helped Ingrid's blood pressure?", ["bp", "bpnormal"]),
        ("adversarial", "What breed is Tobias's dog?", ["dogadopt", "springdog"]),
        ("adversarial", "When did Ingrid's dad get his hip replaced?", ["dadhip"]),
        ("adversarial", "What instrument does Ingrid play in The Night Shift?", ["bandname"]),
        ("adversarial", "What is the name of Tobias's cat?", ["allergic"]),
        ("adversarial", "What is Tobias's niece called?", ["astrid"]),
        ("adversarial", "Why did Ingrid's camper van break down near Two Harbors?", ["breakdown"]),
    ],
    "h2": [
        ("single-hop", "What kind of animal is Keiko's pet Mochi?", ["mochi"]),
        (
            "single-hop",
            "What client was Keiko doing freelance design work for at the start of the fall?",
            ["tea"],
        ),
        ("single-hop", "What building is Rafael's seismic retrofit project for?", ["retrofit"]),
        ("single-hop", "Where did Rafael pop the question to Yesenia?", ["proposal"]),
        ("single-hop", "Which company is putting out Keiko's picture book?", ["title"]),
        ("single-hop", "What is the title of Keiko's book?", ["title"]),
        ("single-hop", "Who gives Keiko feedback at the publishing house?", ["editor"]),
        ("single-hop", "Who is Rafael's manager?", ["gwen"]),
        ("single-hop", "What vocal range does Keiko sing?", ["choir"]),
        (
            "single-hop",
            "Which vineyard did Rafael and Yesenia pick as their wedding venue?",
            ["weddingdate"],
        ),
        (
            "single-hop",
            "What did the hand specialist say was wrong with Keiko's wrist?",
            ["tendinitis"],
        ),
        (
            "single-hop",
            "What did Rafael find wrong with the library's original foundation?",
            ["piles"],
        ),
        ("single-hop", "What has Rafael started doing before bed?", ["chess"]),
        ("single-hop", "Where did Rafael take a beekeeping class?", ["beeclass"]),
        ("single-hop", "What are the names of Rafael's queen bees?", ["queens"]),
        ("single-hop", "What did Rafael's mother cook for the family over Christmas?", ["tamales"]),
        ("single-hop", "Who shares Keiko's studio in the old warehouse?", ["warehouse"]),
        ("single-hop", "Where was Rafael's e-bike taken from?", ["stolen"]),
        ("single-hop", "What were the foster kittens called?", ["names"]),
        ("single-hop", "Which neighbor fed Keiko's pets while she was gone?", ["marisol"]),
        ("single-hop", "Which ABBA hit did Keiko's grandmother perform?", ["dancingqueen"]),
        ("single-hop", "What is Hiro going to study in grad school?", ["hirograd"]),
        ("single-hop", "Who gave the best man speech at Rafael's wedding?", ["bestman", "speech"]),
        ("single-hop", "Where did Rafael and Yesenia go on their honeymoon?", ["costarica"]),
        ("single-hop", "What is Rafael now project lead on?", ["projectlead"]),
        ("multi-hop", "What pets does Keiko have now?", ["mochi", "udon"]),
        (
            "multi-hop",
            "How did Keiko's deadline for the final art change?",
            ["deadline", "extension"],
        ),
        ("multi-hop", "How has Rafael's chess rating changed over time?", ["1350", "1500"]),
        (
            "multi-hop",
            "What did Keiko contribute to Rafael and Yesenia's wedding?",
            ["invdesign", "poem", "compromise"],
        ),
        (
            "multi-hop",
            "What injuries have Keiko and Rafael each dealt with?",
            ["tendinitis", "pinky"],
        ),
        (
            "multi-hop",
            "How did Rafael's bouldering level change after he got hurt?",
            ["v5", "backclimbing"],
        ),
        ("multi-hop", "What bikes has Rafael owned?", ["stolen", "cargobike"]),
        (
            "multi-hop",
            "How did the work on the library's foundation progress?",
            ["piles", "approved", "construction", "poured"],
        ),
        ("temporal", "When did Rafael and Yesenia get engaged?", ["proposal"]),
        ("temporal", "When did Keiko learn her picture book would be published?", ["bookdeal"]),
        ("temporal", "When did Rafael get married?", ["weddingdate"]),
        ("temporal", "When did Keiko perform in her choir's winter show?", ["concert"]),
        ("temporal", "When was Rafael's e-bike stolen?", ["stolen"]),
        ("temporal", "When did Keiko fly to Japan?", ["airport"]),
        ("temporal", "When did Rafael's bees arrive?", ["beesinstalled"]),
        ("temporal", "When did Keiko submit the final art for her book?", ["submitted"]),
        ("temporal", "When did Keiko's brother get to Portland?", ["hiroarrived"]),
        ("temporal", "When does Inky officially come out?", ["release"]),
        (
            "temporal",
            "Which came first, Keiko moving her workspace or Rafael losing his e-bike?",
            ["studio", "stolen"],
        ),
        ("temporal", "How long did Rafael have to keep his finger immobilized?", ["splint"]),
        (
            "open-domain",
            "Would Rafael enjoy a weekend trip to an outdoor climbing area?",
            ["v5", "backclimbing"],
        ),
        ("open-domain", "Is Keiko close to her family?", ["mom", "osaka", "hirothumbs"]),
        (
            "open-domain",
            "Does Yesenia seem to enjoy nature and the outdoors?",
            ["proposal", "yesenjoy", "karma"],
        ),
        (
            "open-domain",
            "Would Keiko be a good person to ask to design a greeting card?",
            ["invprinted", "bookdeal"],
        ),
        (
            "open-domain",
            "Does Rafael's boss seem to value his work?",
            ["gwen", "nextlead", "projectlead"],
        ),
        ("adversarial", "What is the name of Rafael's tortoise?", ["mochi"]),
        ("adversarial", "When did Keiko get engaged?", ["engaged"]),
        ("adversarial", "How did Keiko break her finger?", ["pinky", "tendinitis"]),
        ("adversarial", "What did Hiro say in his best man speech?", ["bestman"]),
        (
            "adversarial",
            "What names did Rafael give the kittens he fostered?",
            ["kittens", "names"],
        ),
        ("adversarial", "What bouldering grade does Keiko climb?", ["v5"]),
    ],
}


def build() -> Json:
    questions: list[QuestionSpec] = [
        (cid, category, question, evidence)
        for cid, table in Q.items()
        for category, question, evidence in table
    ]
    return labelled_dataset(CONVERSATIONS, questions)
