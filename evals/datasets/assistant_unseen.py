"""The ``assistant_unseen`` recall set: was SEALED until the final check of issue 15 round 3 (at
``a97c57d``, ``evals/README.md``), where it was measured once; it is no longer unseen, and its
failures are still never to be looked at. A later round needs a new sealed set of its own.

Same shape as the other person-and-assistant sets (``histories.generate``: one person and their
assistant a conversation, about fifty dated sessions each, long assistant answers, ``user`` speaks
first), but written independently of ``assistant``, ``assistant_sealed`` and ``assistant_blind``,
from its own pool: other lives again (a primary and secondary teacher, a sheep and hen farmer, a
software developer, an amateur musician, the parent of a newborn, a food-bank and charity
volunteer) alongside hobbies, health, money, home, travel and paperwork; long answers with
numbered steps, code, SQL and small tables, where single lines hold the details later asked
about; a mixed voice (terse one-liners beside long, chatty messages); and questions worded away
from what answers them (preferences asked as requests, current values in several phrasings,
temporal questions in other frames, totals and lists without the words they were said with).
Its own seed, its own years (first sessions in 2015-2016), its own id prefix. 100 people.
"""

from __future__ import annotations

from datetime import datetime

from evals.datasets.histories import (
    Absent,
    Event,
    Fact,
    Item,
    Json,
    Pool,
    Preference,
    Series,
    Task,
    Update,
    generate,
)

PEOPLE = 100
SEED = 7331

SHOPS = (
    "Pennywhistle Hardware",
    "Gribble & Daughters",
    "The Ironmongery on Fore Street",
    "Sallow Farm Supplies",
    "Kestrel Music",
    "Tumbledown Books",
    "The Yarn Loft",
    "Hobbs Agricultural",
)

TASKS = (
    Task(
        key="lesson_plan",
        topic="teaching",
        ask=(
            "I've got an observed lesson next week: {subject} with my year {year} group, fifty minutes, thirty kids, a couple who really struggle and a few who finish everything in five minutes flat. Could you sketch out a lesson plan with timings? Nothing fancy, I just want it to flow.",
            "lesson plan pls. {subject}, year {year}, 50 mins.",
            "Can you help me structure a single lesson on {subject} for year {year}? I keep running out of time before the end and never get to check whether they actually understood it.",
        ),
        intro=(
            "Here's a fifty-minute plan for {subject} that keeps the pace up and builds in a proper check on understanding before the end, which is what observers tend to look for:",
            "Running out of time usually means the middle section has no fixed end point, so this plan gives every part a hard stop. For {subject} with year {year}:",
        ),
        items=(
            Item(
                "Do now (5 minutes): a single true-or-false statement about {subject} on the board as they walk in; they write T or F on mini whiteboards and hold them up on your count of three.",
                "For the opening task in my {subject} lesson, what were the children supposed to show me their answers on?",
            ),
            Item(
                "Teacher input (10 minutes): model two worked examples out loud, narrating every decision, then one more where the class tells you each step."
            ),
            Item(
                "Paired practice (15 minutes): mixed pairs with one scribe; the pen changes hands every third question so nobody coasts.",
                "When the kids worked in twos, how often was the writing supposed to switch between them?",
            ),
            Item(
                "Hinge question at minute 32: one multiple-choice item with four options; anyone who picks a wrong answer comes to the back table for a four-minute re-teach while the rest carry on.",
                "Roughly how far into the lesson did you put the single multiple-choice check?",
            ),
            Item(
                "Stretch: a 'convince me it's wrong' card for early finishers, with a deliberately flawed answer for them to pick apart."
            ),
            Item(
                "Support: a printed copy of the worked examples on pale yellow paper for the two who struggle, so they aren't copying off the board.",
                "What colour paper did you suggest for the handout for the weaker pupils?",
            ),
            Item(
                "Exit ticket (5 minutes): one question on a sticky note, stuck on the door frame as they leave; sort them into got it, nearly, and not yet for tomorrow's seating.",
                "Where did the kids stick their end-of-lesson notes on the way out?",
            ),
            Item(
                "Leave the last two minutes for packing away; an observer notices a rushed ending more than anything else."
            ),
        ),
        outro=(
            "Print the timings on a card and keep it on your desk; glancing at a card is far less obvious than checking the clock.",
            "If the hinge question shows most of them are lost, abandon the practice and re-teach: observers reward responding to the room over sticking to the plan.",
        ),
        slots={
            "subject": (
                "fractions",
                "the water cycle",
                "persuasive writing",
                "the Tudors",
                "electric circuits",
                "area and perimeter",
            ),
            "year": ("4", "5", "6", "7", "8"),
        },
        count=(5, 7),
        follow=(
            (
                "what if the hinge question goes badly for like half of them",
                "Then the plan has done its job: it has told you early. Bring the whole class back together, re-teach the single step most of them got wrong with a fresh example, and set a shorter practice. Say out loud what you're doing and why; an observer will see that as good teaching, not a failure.",
            ),
        ),
    ),
    Task(
        key="marking_load",
        topic="teaching",
        ask=(
            "I am drowning in marking. I teach six classes of English, that's about 170 exercise books, and the school policy says 'regular, meaningful feedback' without saying what that is. I spend every Sunday on it and I'm starting to hate the job. How do other teachers cope?",
            "Ways to cut down marking time without the feedback getting worse? I'm spending ten hours a week on books.",
        ),
        intro=(
            "You're far from alone; marking is the workload complaint teachers mention most, and a lot of it doesn't move learning much. These approaches keep feedback useful while giving you your weekends back:",
            "The trick is to move from writing comments in every book to giving feedback the whole class acts on. A system that works for lots of departments:",
        ),
        items=(
            Item(
                "Whole-class feedback sheet: read the books with a single A4 page beside you split into three boxes, what went well, common errors, and spellings to fix, then share it at the start of the next lesson.",
                "That one-page sheet for feeding back to the whole class: what were its three sections?",
            ),
            Item(
                "Set a timer: no more than ninety seconds per book when you do read them individually. You'll be surprised how much you can see in that time.",
                "What was the time limit per exercise book you told me to stick to?",
            ),
            Item(
                "Use a code instead of sentences: a circled P for paragraphing, a circled T for tense, a circled E for 'explain further'. Pupils look the code up and fix it themselves."
            ),
            Item(
                "Build twelve minutes of 'improvement time' into the following lesson, in green pen, so the fixing is visible in the book without you writing anything.",
                "What colour pen did pupils use to correct their work in the follow-up lesson?",
            ),
            Item(
                "Deep-mark one class per week on a rotation rather than all six at once; over six weeks every book gets a proper read."
            ),
            Item(
                "Check the policy with your head of department: many schools that say 'regular' mean once every three weeks, not every lesson."
            ),
            Item(
                "Mark in school, never at home: book a free period as a marking appointment and keep to it."
            ),
        ),
        outro=(
            "Try the whole-class sheet with one group first and see how it feels before rolling it out to all six.",
            "Feedback only matters if pupils act on it, which is why the improvement time matters more than anything you write.",
        ),
        count=(4, 6),
    ),
    Task(
        key="parents_evening",
        topic="teaching",
        ask=(
            "Parents' evening on {day}. First one where I'm a form tutor, so I'm seeing {count} families back to back. I'm dreading the one or two parents who are going to be angry about something. Any advice on how to run it?",
            "tips for surviving parents evening? {count} appointments, five minutes each",
        ),
        intro=(
            "A parents' evening is mostly about timekeeping and having something specific to say about each child. Here's how to run {count} appointments without overrunning or getting cornered:",
            "The first one is always the most nerve-racking; after this you'll have a routine. A few things that help:",
        ),
        items=(
            Item(
                "Put a small kitchen timer on the table where both you and the parents can see it; people wrap up politely when they can see the minutes going.",
                "What did you say to put on the table so the appointments didn't overrun?",
            ),
            Item(
                "Open with one specific positive about the child (a sentence they wrote, a kindness you noticed), never a general 'she's lovely'."
            ),
            Item(
                "Have a half-page sheet for each pupil with three targets already written, so the parent leaves with something on paper."
            ),
            Item(
                "For a difficult parent, move your chair so you sit beside them, looking at the same piece of work, rather than facing them across the desk.",
                "With a parent who's cross, where did you suggest I sit?",
            ),
            Item(
                "If a conversation needs longer than the slot, offer a phone call on a named day that week and write it down in front of them."
            ),
            Item(
                "Keep a notebook with a column headed 'by Friday' for every promise you make; follow-ups that never happen are what parents remember.",
                "What was the heading of the column in the notebook for things I'd promised to do?",
            ),
            Item(
                "Bring water and a cereal bar; three hours of talking on a working day is tiring and you'll flag around appointment twenty."
            ),
        ),
        outro=(
            "Afterwards, write up any safeguarding or pastoral concerns that same evening while they're fresh.",
            "Most parents simply want to know that you know their child. If you manage that, the evening goes well.",
        ),
        slots={
            "day": ("Thursday", "Tuesday", "Wednesday week"),
            "count": ("twenty-eight", "thirty-one", "twenty-four"),
        },
        count=(4, 6),
    ),
    Task(
        key="lambing",
        topic="farm",
        ask=(
            "Lambing starts in about three weeks. We've {ewes} ewes scanned this year, mostly Mules and a few Texel crosses, and last year we lost more lambs than I'd like in the first 48 hours. Can you put together a checklist of what I should have ready and what to do with each lamb as it arrives?",
            "lambing checklist? {ewes} ewes, indoor lambing, small shed",
        ),
        intro=(
            "Most early losses come down to three things: cold, hunger and infection, so the checklist is built around those. For a flock of {ewes} lambing indoors:",
            "Here's a practical list, in roughly the order you'll need things, for {ewes} ewes in a small shed:",
        ),
        items=(
            Item(
                "Individual pens: set up one 1.5 by 1.5 metre pen for every eight ewes, hurdles tied and bedded before the first one starts.",
                "How many ewes per small pen did the lambing checklist work on?",
            ),
            Item(
                "Navels: dip every lamb's navel in strong iodine within fifteen minutes of birth, and again four hours later.",
                "How soon after a lamb is born did you say to dip the navel?",
            ),
            Item(
                "Colostrum: each lamb needs about 50 ml per kilo of body weight in its first six hours; tube-feed any that haven't sucked by then, using frozen colostrum thawed in warm water, never the microwave.",
                "What amount of first milk per kilogram did you say a newborn lamb needs?",
            ),
            Item(
                "Warming box: a box with a thermostat set to around 30 degrees for chilled lambs, but only after a lamb has had colostrum if it is more than five hours old."
            ),
            Item(
                "Spray-mark ewes by scanning result before lambing (blue for twins, red for triplets) so you know who to watch and who might take a spare lamb.",
                "Which colour mark went on the ewes expecting triplets?",
            ),
            Item(
                "Kit box: lubricant, long gloves, lambing ropes, a head snare, a stomach tube and syringes, spare iodine, a head torch and the vet's number taped to the lid."
            ),
            Item(
                "Write down every death with the day, the ewe's tag and your best guess at the cause; next year's numbers come from that list."
            ),
        ),
        outro=(
            "If you only change one thing from last year, make it the colostrum timing; it's behind most first-two-day losses.",
            "Ask your vet for a pre-lambing visit if you haven't had one; they'll usually test a few ewes' blood for energy levels for a modest fee.",
        ),
        slots={"ewes": ("140", "85", "210", "60")},
        count=(5, 7),
    ),
    Task(
        key="soil_test",
        topic="farm",
        ask=(
            "Got the soil analysis back for {field} and I'm not sure what to make of it. pH 5.7, phosphorus index 1, potash index 2-, magnesium index 3. It's permanent grass, grazed by sheep and cut for hay every other year. What should I be doing?",
            "Can you explain a soil test for me in plain English? The field's called {field}, pH is 5.7 and the phosphate's low. Do I need to lime it?",
        ),
        intro=(
            "That's a fairly common picture for grassland that's been grazed for years without much going back on. In short, the acidity is the first job, because nothing else works well until that's sorted. For {field}:",
            "Here's what those numbers mean and what I'd do about them, in order of priority:",
        ),
        items=(
            Item(
                "pH 5.7 is on the low side for grass; the target is 6.0 to 6.2. Ground limestone at around 5 tonnes per hectare should lift it, spread in autumn or early spring.",
                "How much lime per hectare did you reckon {field} needed?",
            ),
            Item(
                "Lime takes effect slowly, about 18 months to fully work through, so re-test in two years rather than next spring.",
                "How long did you say before the lime fully kicks in?",
            ),
            Item(
                "Phosphorus index 1 is low: aim for index 2. Farmyard manure at 25 tonnes per hectare supplies a good share of that without buying fertiliser."
            ),
            Item(
                "Potash 2- is fine for grazing but will drop after a hay cut; put some back in the years you take hay."
            ),
            Item(
                "Magnesium index 3 is good, so choose a calcium limestone rather than a magnesian one; you don't need the extra."
            ),
            Item(
                "Take the next samples in a W pattern across the field, 25 cores to a depth of 7.5 cm, avoiding gateways and troughs.",
                "How many soil cores, and walking in what shape, should I take next time I sample?",
            ),
        ),
        outro=(
            "Put the lime on first; spending on fertiliser while the pH is low is partly wasted.",
            "Keep this report with the field records; the trend over several tests matters more than any one result.",
        ),
        slots={"field": ("Long Meadow", "the Top Piece", "Barn Close", "Hollins Field")},
        count=(4, 6),
    ),
    Task(
        key="egg_stall",
        topic="farm",
        ask=(
            "We've gone up to a lot of hens and I'm thinking of putting an honesty box at the end of the lane to sell eggs. Is there anything legal I need to know, and how should I set it up so people actually stop?",
            "Setting up a roadside egg stall. What do I need? Pricing, signs, rules, that kind of thing.",
        ),
        intro=(
            "A roadside stall is a nice little earner if it's easy to stop at and always stocked. Here's a setup that works:",
            "Good plan; eggs sell themselves if people can see the stall in time to pull in. The essentials:",
        ),
        items=(
            Item(
                "Selling ungraded eggs direct from the farm gate is allowed for small flocks, but you can't label them by size; write 'mixed sizes' on the box instead.",
                "What did you say I have to write on the egg boxes, since I can't grade them?",
            ),
            Item(
                "Put a sign 100 metres before the stall on each side of the lane so drivers have time to slow down.",
                "How far back down the road should the signs go?",
            ),
            Item(
                "Price at £2 a half-dozen to start; round numbers mean fewer coins and fewer IOUs."
            ),
            Item(
                "Use a cool box with a freezer block in summer; eggs left in the sun on a stall spoil quickly and one bad box loses a customer."
            ),
            Item(
                "Bolt a lockable cash tin to the shelf and empty it every evening; add a printed QR code for bank transfers, which now brings in about a third of sales at most stalls.",
                "Besides cash, what way of paying did you suggest putting on the stall?",
            ),
            Item(
                "Write the laying date on each box in pencil and take back anything older than ten days for your own kitchen."
            ),
        ),
        outro=(
            "Check with the council whether the stall needs planning permission if it's a permanent structure on the verge; a movable table usually doesn't.",
            "Regulars are the whole business, so keep it stocked at the same hours and they'll plan their drive around it.",
        ),
        count=(4, 6),
    ),
    Task(
        key="csv_merge",
        topic="code",
        ask=(
            "I have a folder with about 60 CSV exports from our old till system, one per month, same columns. I need one big file. I know a bit of Python. Can you write me something and explain it?",
            "python script to combine a folder of csv files into one? they all have the same header",
        ),
        intro=(
            "Here's a short script that stitches them together with only the standard library, so there's nothing to install:",
            "This does it in about fifteen lines with the csv module; no pandas needed:",
        ),
        code=(
            '```python\nimport csv\nimport glob\n\nfiles = sorted(glob.glob("exports/*.csv"))\nheader_written = False\nwith open("combined.csv", "w", newline="", encoding="utf-8") as out:\n    writer = csv.writer(out)\n    for path in files:\n        with open(path, newline="", encoding="utf-8-sig") as handle:\n            reader = csv.reader(handle)\n            header = next(reader)\n            if not header_written:\n                writer.writerow(["source_file", *header])\n                header_written = True\n            for row in reader:\n                if row:\n                    writer.writerow([path, *row])\nprint("merged", len(files), "files")\n```',
        ),
        items=(
            Item(
                "`sorted(glob.glob(...))` picks up every file ending in .csv in the exports folder and puts them in name order, so months come out in sequence if the names start with the year."
            ),
            Item(
                'The files are opened with `encoding="utf-8-sig"`, which quietly drops the invisible byte-order mark Excel puts at the start of a file and which otherwise ends up glued to your first column name.',
                "Which encoding did you have me open the exports with, to get rid of the stray character Excel adds?",
            ),
            Item(
                '`newline=""` on both files stops Windows from adding a blank line between every row.'
            ),
            Item(
                "The header is only written once, from the first file; every other file's header is read and thrown away."
            ),
            Item(
                "An extra first column, `source_file`, records which export each row came from, which is invaluable when a number looks wrong.",
                "What was the name of the extra column the merge script adds?",
            ),
            Item(
                "`if row:` skips empty lines, which old till systems often leave at the bottom of an export."
            ),
        ),
        outro=(
            "Run it from the folder that contains `exports`, and open `combined.csv` in a spreadsheet to check the row count looks right.",
            "If the columns ever change between months, tell me and I'll switch it to `csv.DictReader` so it matches them by name.",
        ),
        count=(4, 6),
        follow=(
            (
                "what if one of the files has a different delimiter, like semicolons",
                'Then pass `delimiter=";"` to `csv.reader` for that file. If you don\'t know in advance which ones, `csv.Sniffer().sniff(handle.read(2048))` can guess it; seek back to the start with `handle.seek(0)` before reading the rows.',
            ),
        ),
    ),
    Task(
        key="git_rescue",
        topic="code",
        ask=(
            "I think I've wrecked my git repo. I did a reset --hard to 'tidy up' and now two days of commits on my feature branch seem to be gone. I haven't pushed them. Please tell me they can be recovered?",
            "git question: accidentally reset my branch and lost commits, not pushed. how do i get them back",
        ),
        intro=(
            "Good news: commits you've made locally are almost never truly gone, even after a hard reset. Git keeps a log of where every branch has pointed. Here's how to get them back, step by step:",
            "Don't panic and, for now, don't run any garbage collection. Your commits are still in the repository; you just need to find them:",
        ),
        items=(
            Item(
                "Run `git reflog` and look down the list for the entry just before the reset; each line has a short hash and a description like 'commit: add export button'.",
                "What was the command for seeing the history of where my branch had pointed?",
            ),
            Item(
                "Create a new branch at that point with `git switch -c rescue <hash>` so the commits have a name again and can't be cleaned up.",
                "What did you suggest calling the branch I made to save the lost work?",
            ),
            Item(
                "Check it's all there with `git log --oneline rescue` and compare against what you remember."
            ),
            Item(
                "If you want them back on your feature branch, `git switch feature` then `git reset --hard rescue` (this time it's the right direction)."
            ),
            Item(
                "Reflog entries are kept for 90 days by default, so there is no rush, but don't leave it for months.",
                "How long does git hang on to those reference log entries by default?",
            ),
            Item(
                "Next time, when you need to overwrite a pushed branch, use `git push --force-with-lease`, which refuses if someone else has pushed in the meantime.",
                "What was the safer alternative to a plain force push you mentioned?",
            ),
        ),
        outro=(
            "Once it's back, push the branch to the remote so there's a second copy.",
            "A small habit that prevents this: before any reset, make a throwaway branch where you are. It costs nothing.",
        ),
        count=(4, 6),
    ),
    Task(
        key="slow_query",
        topic="code",
        ask=(
            "Our orders page has got really slow. It's Postgres, the orders table is about 4 million rows, and the page runs a query for one customer's orders sorted by date, 20 per page with OFFSET. It takes about 3 seconds now. Where would you start?",
            "postgres query slow, filtering orders by customer_id and ordering by created_at desc with limit/offset. 4m rows. ideas?",
        ),
        intro=(
            "That pattern (filter by one column, sort by another, then page with OFFSET) is a classic cause of slow pages as a table grows. Here's how I'd tackle it:",
            "Three seconds for one customer's page almost certainly means Postgres is reading far more rows than it returns. In order:",
        ),
        code=(
            "```sql\nEXPLAIN (ANALYZE, BUFFERS)\nSELECT id, created_at, total\nFROM orders\nWHERE customer_id = 4821\nORDER BY created_at DESC\nLIMIT 20 OFFSET 200;\n\nCREATE INDEX CONCURRENTLY orders_customer_created\n    ON orders (customer_id, created_at DESC);\n\n-- next page, keyset style\nSELECT id, created_at, total\nFROM orders\nWHERE customer_id = 4821 AND created_at < '2015-06-01 09:14:00'\nORDER BY created_at DESC\nLIMIT 20;\n```",
        ),
        items=(
            Item(
                "Run the query with `EXPLAIN (ANALYZE, BUFFERS)` first and look for a 'Seq Scan on orders' or a big 'Sort' node; that tells you the index isn't being used."
            ),
            Item(
                "Add a composite index on `(customer_id, created_at DESC)`; with both columns in that order Postgres can jump straight to the customer and read their rows already sorted.",
                "Which two columns, in what order, did you want the new index on?",
            ),
            Item(
                "Build it with `CREATE INDEX CONCURRENTLY` so the table isn't locked against writes while it builds on a live system.",
                "What keyword did you add so building the index wouldn't lock the table?",
            ),
            Item(
                "Replace OFFSET with keyset paging: remember the `created_at` of the last row shown and ask for rows older than that. OFFSET 2000 still reads and throws away 2,000 rows.",
            ),
            Item(
                "Select only the columns the page shows instead of `SELECT *`; it lets Postgres answer more from the index."
            ),
            Item("Run `ANALYZE orders;` after a big import so the planner's statistics are fresh."),
        ),
        outro=(
            "With the index in place, a page like this should come back in a few milliseconds regardless of table size.",
            "Check the plan again after the index is built; if it still sorts, paste me the output and we'll look at it together.",
        ),
        count=(4, 6),
    ),
    Task(
        key="practice_plan",
        topic="music",
        ask=(
            "I'm taking grade {grade} {instrument} in the spring. Adult learner, full-time job, realistically 40 minutes a day on weekdays and a bit more at weekends. How should I split up my practice?",
            "{instrument} practice routine for a grade {grade} exam? 40 min a day max",
        ),
        intro=(
            "Forty focused minutes a day is plenty for grade {grade} if each block has a clear job. Here's a split that covers everything the exam asks for:",
            "Adult learners usually have more discipline than time, so the key is not wasting the first ten minutes. A daily routine for {instrument}:",
        ),
        items=(
            Item(
                "Warm-up and scales (10 minutes): two keys a day in rotation, with the metronome at 60 and moving up four clicks only when you get three clean runs in a row.",
                "What speed did you have me start the metronome at for scales?",
            ),
            Item(
                "Pieces (20 minutes): work on the hardest four bars first, not from the beginning; that's where marks are lost.",
                "In the practice routine, which part of a piece was I supposed to start on?",
            ),
            Item(
                "Slow practice: play tricky passages at half speed until they're boring, then at three-quarter speed; speed comes after accuracy."
            ),
            Item(
                "Sight-reading (5 minutes): one short new piece every day from a book one grade below your exam; the aim is to keep going, not to be perfect.",
                "For sight-reading, what level of material did you tell me to use?",
            ),
            Item(
                "Aural (5 minutes): clap back rhythms from a recording or an app while you're cooking or commuting."
            ),
            Item(
                "Record yourself every Sunday on your phone and listen back the next day; you'll hear things you can't notice while playing.",
                "Which day of the week was I meant to record myself?",
            ),
            Item("Do a full mock exam, in order, in front of someone three weeks before the date."),
        ),
        outro=(
            "Keep a one-line practice diary (what you did, what improved) so you can see progress on the days it doesn't feel like any.",
            "If a piece is still not working six weeks out, talk to your teacher about swapping it for another from the list; it's allowed.",
        ),
        slots={
            "grade": ("3", "4", "5", "6"),
            "instrument": ("piano", "cello", "clarinet", "classical guitar", "flute"),
        },
        count=(5, 7),
    ),
    Task(
        key="first_gig",
        topic="music",
        ask=(
            "My band has our first proper gig at {venue} in three weeks!! Forty-minute slot, second on the bill. We've only ever played in the rehearsal room. What do we need to sort so we don't look like amateurs?",
            "first gig coming up at {venue}, 40 min set. checklist?",
        ),
        intro=(
            "Congratulations! A first gig goes well when the boring logistics are sorted so you can concentrate on playing. Here's what to do before the night at {venue}:",
            "A forty-minute set is about nine or ten songs with gaps. Here's a checklist to get you through it looking like you've done it before:",
        ),
        items=(
            Item(
                "Set list: print it in big type (28 point or more) and tape one copy to the floor by each player, plus one for the sound engineer.",
                "How large did you say the set list should be printed?",
            ),
            Item(
                "Open with your second-best song and finish with your best; put the slower one around the middle."
            ),
            Item(
                "Rehearse the whole set straight through, standing up, at least twice, including the talking between songs."
            ),
            Item(
                "Spares bag: strings, two leads, a 9-volt battery, drumsticks, gaffer tape and a multi-plug.",
                "Which battery did you put in the bag of spares?",
            ),
            Item(
                "At soundcheck, tell the engineer what each of you needs in your wedge monitor, usually more vocals; don't ask for everything louder.",
                "What's the thing most players ask for more of in their monitor, according to you?",
            ),
            Item(
                "Keep gaps between songs to about four seconds unless someone is speaking; long silences while people retune are what make a set drag.",
            ),
            Item(
                "Bring your own friends and ask them to stand near the front; a room fills from the front once someone starts it."
            ),
        ),
        outro=(
            "Enjoy it: the audience wants you to do well, and mistakes you notice are rarely noticed from the floor.",
            "Afterwards, thank the promoter and the sound engineer by name; it's how second gigs happen.",
        ),
        slots={
            "venue": ("the Wheatsheaf", "The Crown & Anchor", "the Boiler Room", "Sparrow's Bar")
        },
        count=(5, 7),
    ),
    Task(
        key="newborn_sleep",
        topic="baby",
        ask=(
            "{baby} is three weeks old and I've read so many conflicting things about safe sleep that I've confused myself. Could you just give me the basics I actually need to follow? We've got a Moses basket and a cot.",
            "safe sleep rules for a newborn, quick version please, running on no sleep",
        ),
        intro=(
            "Completely understandable; the advice is simpler than the internet makes it look. The essentials for safe sleep in the first months:",
            "Here's the short version, the things that matter most, in plain terms:",
        ),
        items=(
            Item(
                "Always on their back, for every sleep, day and night, in their own flat, firm space."
            ),
            Item(
                "Feet to foot: put the baby with their feet at the bottom of the Moses basket or cot so they can't wriggle down under the blanket.",
                "What was the position called for where the baby's feet go in the basket?",
            ),
            Item(
                "Keep the room between 16 and 20 degrees; a simple room thermometer is worth having.",
                "What temperature range did you say the baby's room should be kept in?",
            ),
            Item(
                "Nothing else in the cot: no pillows, bumpers, soft toys or loose duvets; a cellular blanket tucked in at chest height, or a baby sleeping bag of the right size."
            ),
            Item(
                "Stop swaddling as soon as they show signs of trying to roll, usually from about eight weeks.",
                "At roughly what age did you say swaddling usually has to stop?",
            ),
            Item("Room share for the first six months, with the basket next to your bed."),
            Item(
                "If you use white noise, keep it quieter than a running shower and a good distance from the basket."
            ),
        ),
        outro=(
            "Your health visitor can go through any of this with you at the next visit; there's no such thing as a silly question at three weeks.",
            "Look after yourself too: sleep when you can, and accept every offer of help.",
        ),
        count=(5, 7),
    ),
    Task(
        key="weaning",
        topic="baby",
        ask=(
            "{baby} is nearly six months and the health visitor says we can start weaning. I honestly don't know where to begin: purees? finger food? how much? Can you give me a plan for the first few weeks?",
            "starting solids next week. what do i give first and how much",
        ),
        intro=(
            "Starting solids is more about getting used to tastes and textures than about nutrition at first; milk still does the heavy lifting for a while. A plan for the first weeks:",
            "It's exciting and a bit messy. Here's a simple way to start:",
        ),
        items=(
            Item(
                "Week one: single vegetables, not fruit, starting with the bitter ones: broccoli first, then cauliflower, spinach and parsnip, one a day.",
                "What vegetable did you put first on the weaning plan?",
            ),
            Item(
                "Quantity: a teaspoon or two once a day, at a time the baby isn't too hungry or too tired; mid-morning works for most."
            ),
            Item(
                "Offer water in an open or free-flow cup at every meal, just a few sips.",
                "What kind of cup did you say to give water in at mealtimes?",
            ),
            Item(
                "Gagging is normal and noisy; choking is silent. Learn the difference and do a baby first aid course if you can."
            ),
            Item(
                "Introduce common allergens one at a time, in tiny amounts, starting with egg, and leave two or three days before the next new one so you can spot a reaction.",
                "Which allergen was I meant to try first?",
            ),
            Item(
                "Soft finger foods like steamed carrot sticks the length of your finger can come in alongside purees from the start."
            ),
            Item("No salt, sugar or honey before one year, and no whole nuts before five."),
        ),
        outro=(
            "Expect most of it to end up on the floor for the first fortnight; that's part of learning.",
            "Let {baby} lead: if they turn away or close their mouth, they've had enough.",
        ),
        count=(5, 7),
    ),
    Task(
        key="baby_flight",
        topic="baby",
        ask=(
            "We're flying to see {partner}'s parents with {baby}, who'll be about five months by then. Three-hour flight. I'm terrified of being the people with the screaming baby. What do we need to know and pack?",
            "flying with a baby for the first time, 3h flight, help",
        ),
        intro=(
            "Babies that age often travel better than toddlers, and most fellow passengers are more sympathetic than you'd think. Here's what helps:",
            "A three-hour flight is very doable. Planning and packing, in order:",
        ),
        items=(
            Item(
                "Ring the airline to ask for a bassinet seat at the bulkhead; they're limited and go on a first-come basis.",
                "What kind of seat did you say to phone the airline about?",
            ),
            Item(
                "Feed during take-off and landing, breast or bottle or a dummy; the sucking helps their ears with the pressure change.",
                "What did you say would help the baby's ears when the plane goes up and comes down?",
            ),
            Item(
                "Pack one nappy per hour of travel plus four spare, counting from leaving the house, not from take-off.",
                "How many nappies did you suggest for the journey?",
            ),
            Item(
                "A spare top for you as well as the baby, in a zip bag; it's always the parent who gets covered."
            ),
            Item(
                "Formula, expressed milk and baby food are allowed through security in reasonable amounts; they may ask to test it."
            ),
            Item(
                "A lightweight stroller can usually be taken to the aircraft door and collected there when you land."
            ),
        ),
        outro=(
            "Board last if you can: less time sitting in a cramped seat before the doors close.",
            "If {baby} cries, walk the aisle a little; a change of scene works wonders and nobody minds.",
        ),
        count=(4, 6),
    ),
    Task(
        key="foodbank_rota",
        topic="volunteer",
        ask=(
            "I've somehow ended up coordinating the volunteers at our food bank. About 35 people, open Tuesdays, Thursdays and Saturdays, and the current 'system' is a paper diary and a lot of phone calls. How can I organise the rota without it taking over my life?",
            "how do I run a volunteer rota for a food bank? 35 volunteers, three sessions a week",
        ),
        intro=(
            "The aim is a rota that mostly runs itself, where volunteers sort out their own swaps and you only step in for gaps. Here's a setup that works well for groups your size:",
            "Paper diaries break down at about twenty people. A simple system:",
        ),
        items=(
            Item(
                "Move the rota to a shared spreadsheet with one tab per month; volunteers can view it but only you edit."
            ),
            Item(
                "Set a rule that swaps are posted in the group chat by Wednesday at noon for the following week, so there's time to fill gaps.",
                "By when each week did swaps have to be posted, in that rota system?",
            ),
            Item(
                "Every session needs two keyholders and a named lead; mark the lead in bold so newcomers know who to ask.",
                "How many people with keys did you say each session needs?",
            ),
            Item(
                "Ask for commitment as a pattern ('first and third Saturday') rather than weekly availability; it halves the back-and-forth."
            ),
            Item(
                "Keep a reserve list of six or seven people happy to be called at short notice, and thank them properly when you do.",
            ),
            Item(
                "Send a short message every Sunday evening with the week's rota as a screenshot; many people won't open a spreadsheet.",
                "What day and time was the weekly reminder with the rota supposed to go out?",
            ),
            Item(
                "Hold a fifteen-minute induction for every new volunteer covering food hygiene, the referral vouchers and where the first-aid kit is."
            ),
        ),
        outro=(
            "Once it's running, find a deputy; no volunteer role should depend on one person.",
            "Rotas fail when volunteers feel taken for granted, so say thank you often and publicly.",
        ),
        count=(4, 6),
    ),
    Task(
        key="quiz_night",
        topic="volunteer",
        ask=(
            "I've volunteered to run a quiz night to raise money for {charity}. Village hall, probably 60-80 people in teams. Never done anything like it. How do I structure the evening and make the most money?",
            "running a charity quiz, need format + ways to raise more money on the night",
        ),
        intro=(
            "Quiz nights are one of the most reliable small fundraisers because people are happy to pay for a fun evening. Here's a structure, with the money-makers built in:",
            "For around 70 people in the village hall, this format runs to about two and a half hours:",
        ),
        items=(
            Item(
                "Eight rounds of ten questions, with a break after round four for food and the raffle.",
                "How many rounds did your quiz format have?",
            ),
            Item(
                "Charge per head, not per table (£5 is typical), and cap teams at six.",
                "What was the biggest a team could be in your quiz plan?",
            ),
            Item(
                "Put a picture round on the tables from the start so early arrivals have something to do while people settle."
            ),
            Item(
                "Sell 'jokers' for £1 that double a team's score for one round of their choice; they add surprisingly to the takings."
            ),
            Item(
                "Raffle with donated prizes from local businesses; ask in person, as emails get ignored."
            ),
            Item(
                "Tie-breaker: a question with a number answer, such as the height of a local landmark, where the closest guess wins.",
                "How did you suggest settling a tie at the end?",
            ),
            Item(
                "Have two people marking at the back while you read the next round, so there's no dead time."
            ),
        ),
        outro=(
            "Write the questions to be fun rather than hard; a quiz where every team scores over half the marks feels like a good night.",
            "Announce the total raised before everyone leaves; people like to know what they've contributed to {charity}.",
        ),
        slots={
            "charity": (
                "the hospice",
                "the air ambulance",
                "the school's PTA",
                "the village hall roof fund",
            )
        },
        count=(5, 7),
    ),
    Task(
        key="birding",
        topic="hobbies",
        ask=(
            "I've caught the birdwatching bug from {friend}. I don't really know anything yet. What should I buy and how do I get better at actually identifying things?",
            "getting into birdwatching. binoculars advice + how to learn the birds?",
        ),
        intro=(
            "A lovely hobby, and one you can do anywhere. Here's how to start without spending a fortune:",
            "Most people learn birds the same way: a few good habits, one decent pair of binoculars and a lot of looking. In order:",
        ),
        items=(
            Item(
                "Binoculars: 8x42 is the best all-round size, bright enough for dull days and steady enough to hold; around £150 gets a very good pair.",
                "What binocular size did you recommend for a beginner?",
            ),
            Item(
                "Learn your garden birds properly first, the twenty commonest species, so anything unusual stands out."
            ),
            Item(
                "Look at the bird before the book: note size, beak shape, behaviour and where it was, then identify it afterwards."
            ),
            Item(
                "Learn songs through one bird at a time: start with the robin, which sings all year and is often the first you hear at dawn.",
                "Which bird's song did you say to learn first?",
            ),
            Item(
                "Keep a notebook or app list with date and place; patterns through the seasons are half the pleasure."
            ),
            Item(
                "Go on a guided walk with the local bird club; experienced birders are usually delighted to help a beginner."
            ),
        ),
        outro=(
            "Early mornings in spring are when birds are most active and singing, if you can face the alarm.",
            "Don't worry about the rarities; learning common birds well is what makes you good at this.",
        ),
        count=(4, 6),
    ),
    Task(
        key="sportive",
        topic="hobbies",
        ask=(
            "I've entered a {distance} cycling sportive in {month_name}. I ride to work and do the odd longer ride at weekends, but the furthest I've done is about 50k. How should I train for it?",
            "training plan for a {distance} sportive? currently 50k max",
        ),
        intro=(
            "There's plenty of time if you build steadily. The key is a long ride each week that creeps up in distance, with easier riding in between. A plan:",
            "Going from 50k to {distance} is very achievable with a few months. Here's the shape of it:",
        ),
        items=(
            Item(
                "Increase your longest ride by no more than 10 per cent a week, and every fourth week drop back to an easier week.",
                "By what percentage was my weekly long ride allowed to grow?",
            ),
            Item(
                "Keep the commute as easy riding; it counts as base fitness without tiring you for the weekend."
            ),
            Item(
                "One hill session a week: find a climb of three to five minutes and ride it four to six times, rolling back down to recover."
            ),
            Item(
                "Practise eating on the bike: something every 45 minutes from the first hour, before you feel hungry.",
                "How often did you say I should eat something while riding?",
            ),
            Item(
                "Get a bike fit, or at least check your saddle height, before the long rides start; a few millimetres fixes most knee pain."
            ),
            Item(
                "Ride the final long training ride, about 80 per cent of the distance, two weeks before the event, then taper.",
                "How long before the event was my last big training ride supposed to be?",
            ),
        ),
        outro=(
            "On the day, start slower than you want to; everyone sets off too fast with the crowd.",
            "Enjoy the feed stations and the company; a sportive isn't a race.",
        ),
        slots={
            "distance": ("100-mile", "160k", "120k", "100k"),
            "month_name": ("June", "September", "July"),
        },
        count=(4, 6),
    ),
    Task(
        key="desk_back",
        topic="health",
        ask=(
            "My lower back has been aching for weeks. I work at a desk all day, mostly on a laptop at the kitchen table if I'm honest. No injury, it just builds up through the day. What can I do about it myself before I bother the GP?",
            "lower back ache from sitting all day, any stretches or setup fixes?",
        ),
        intro=(
            "A laptop on a kitchen table is close to the worst setup for backs, so there's a lot you can improve yourself. Here's where to start:",
            "Aches that build through the day and ease overnight are very often about posture and stillness. Things to try for a fortnight:",
        ),
        items=(
            Item(
                "Raise the screen so its top edge is level with your eyes; a laptop stand or a pile of books, plus a separate keyboard and mouse.",
                "Where should the top of the screen be, according to your desk set-up tips?",
            ),
            Item(
                "Get up every 30 minutes, even for a minute; set a repeating timer if you forget.",
                "How often did you tell me to get up from the desk?",
            ),
            Item(
                "Cat-cow stretch on hands and knees, ten slow repetitions morning and evening, arching then rounding the spine."
            ),
            Item(
                "Knee hugs lying on your back, holding each knee to the chest for 20 seconds, three times each side."
            ),
            Item(
                "Put a rolled-up towel in the small of your back when you sit; it keeps the natural curve without a new chair.",
                "What did you say to put behind my lower back when sitting?",
            ),
            Item(
                "Walk for at least 20 minutes a day; gentle movement helps back pain more than rest."
            ),
            Item(
                "See a GP promptly if you get numbness, weakness in a leg, or any problems with bladder or bowels."
            ),
        ),
        outro=(
            "Give the changes two weeks; most desk-related back pain improves noticeably in that time.",
            "If it doesn't, a physiotherapist is a good next step, and in many areas you can refer yourself.",
        ),
        count=(5, 7),
    ),
    Task(
        key="running_start",
        topic="health",
        ask=(
            "I want to start running. I'm {age}, haven't run since school, and I get out of breath running for a bus. {friend} said I should do one of those beginner programmes. What would a first couple of months look like?",
            "complete beginner runner, can barely run a minute. plan?",
        ),
        intro=(
            "Everyone starts somewhere, and run-walk programmes work precisely because they don't ask you to run far at first. A nine-week outline:",
            "Here's a gentle way in, three times a week, building from walking with short bursts of running:",
        ),
        items=(
            Item(
                "Weeks 1-2: a brisk five-minute walk, then alternate 60 seconds of running with 90 seconds of walking, eight times.",
                "In the first fortnight, how long were the walking breaks between runs?",
            ),
            Item(
                "Weeks 3-4: run 90 seconds, walk 90 seconds, then run three minutes, walk three minutes, twice through."
            ),
            Item(
                "Weeks 5-6: longer runs of five and then eight minutes, with short walks between."
            ),
            Item("Weeks 7-9: 25, then 28, then 30 minutes of continuous running."),
            Item(
                "Run slowly enough that you could speak in short sentences; the 'talk test' is the best guide to pace.",
                "What was the simple check you gave me for whether I'm going too fast?",
            ),
            Item("Leave a rest day between runs; that's when your body actually adapts."),
            Item(
                "Get fitted for shoes at a running shop, where they'll watch you run on a treadmill; it's the one thing worth spending on.",
                "Where did you say I should go to get trainers?",
            ),
        ),
        outro=(
            "If a week feels too hard, repeat it; there's no prize for finishing in nine weeks exactly.",
            "Once you can run thirty minutes, a parkrun is a friendly first event.",
        ),
        slots={"age": ("38", "44", "51", "29", "57")},
        count=(5, 7),
    ),
    Task(
        key="monthly_budget",
        topic="money",
        ask=(
            "{partner} and I keep getting to the end of the month with nothing left and no idea where it went. Take-home is about £{income} between us. Can you help us set up a budget that we'll actually stick to?",
            "Budget help please. £{income} a month coming in, always skint by the 25th.",
        ),
        intro=(
            "The money isn't disappearing, it's just not being decided in advance. A simple system that most couples can keep up:",
            "With £{income} a month you have room to save; the job is to make the choices before payday rather than after. Here's how:",
        ),
        items=(
            Item(
                "Start with a split of 50/30/20: half on needs, 30 per cent on wants, a fifth on savings and debt, then adjust to your real bills.",
                "What three-way percentage split did you start my budget from?",
            ),
            Item(
                "Track every spend for one month only; after that, checking categories weekly is enough."
            ),
            Item(
                "Set up sinking funds for irregular costs: £40 a month for car servicing and MOT, £30 for Christmas, £25 for birthdays.",
                "How much a month did you put aside for the car in the sinking funds?",
            ),
            Item(
                "Move savings out on payday by standing order, not at the end of the month; what's left is what you can spend."
            ),
            Item(
                "Have a separate current account for bills and a joint card for groceries, so the bill money is never accidentally spent."
            ),
            Item(
                "Hold a 'money date' for twenty minutes every Sunday evening with a cup of tea to look at the week ahead.",
                "When did you suggest we sit down together each week to go over our money?",
            ),
        ),
        outro=(
            "The first month will be wrong somewhere; that's fine. Adjust the categories and keep going.",
            "Build an emergency fund of one month's essential costs before anything else; it stops a surprise bill going on a credit card.",
        ),
        slots={"income": ("2,900", "3,400", "4,100", "2,650")},
        count=(4, 6),
    ),
    Task(
        key="tax_return",
        topic="money",
        ask=(
            "First year freelancing alongside my job ({side}), so I need to do a self-assessment tax return. I've kept some receipts in a shoebox. What do I need to do and what can I claim?",
            "first self assessment, side income from {side}, what can I claim and when is it due",
        ),
        intro=(
            "It's less scary than it looks, especially if you get organised well before the deadline. The main points:",
            "Here's what a first-year return involves for side income like {side}:",
        ),
        items=(
            Item(
                "Register for self-assessment by 5 October after the end of the tax year you started, then file online by 31 January.",
                "What was the deadline to register, that you mentioned?",
            ),
            Item(
                "Put 30 per cent of every payment you receive into a separate savings account so the tax bill isn't a shock.",
                "What share of each invoice did you say to set aside?",
            ),
            Item(
                "You can claim allowable expenses: equipment, software, materials, and a share of phone and internet used for the work."
            ),
            Item(
                "For working from home, the simplified flat rate of £6 a week is easier than calculating a share of your bills.",
                "What was the weekly flat rate for working from home?",
            ),
            Item(
                "Keep records for at least five years after the deadline; photograph receipts and store them by month."
            ),
            Item(
                "Be ready for payments on account: in your second year you may pay half of next year's bill in advance."
            ),
        ),
        outro=(
            "Do it in November or December, not on 30 January; the helpline is quieter and you have time to find missing figures.",
            "If your side income grows, an accountant's fee often pays for itself in expenses you'd have missed.",
        ),
        slots={
            "side": (
                "illustration work",
                "wedding photography",
                "tutoring",
                "web design",
                "furniture restoring",
            )
        },
        count=(4, 6),
    ),
    Task(
        key="mould",
        topic="home",
        ask=(
            "We've got black mould coming back in the corner of {child}'s bedroom ceiling and on the window frames every winter. It's a 1930s semi. We wipe it off and it's back in a month. What's causing it and how do we stop it for good?",
            "black mould on bedroom window and ceiling corner, keeps returning. what do I do",
        ),
        intro=(
            "Mould that returns in the same corners each winter is almost always condensation: warm, damp air meeting a cold surface. Fixing it means less moisture and warmer surfaces:",
            "Wiping treats the symptom; here's how to tackle the cause:",
        ),
        items=(
            Item(
                "Open the trickle vents at the top of the windows and leave them open all winter.",
            ),
            Item(
                "Keep indoor humidity below 60 per cent; a cheap hygrometer tells you where you are.",
                "What humidity level did you say to stay under?",
            ),
            Item(
                "Run a 10-litre dehumidifier in the worst room overnight; empty it daily and you'll see how much water was going onto the walls.",
                "What size dehumidifier did you suggest?",
            ),
            Item(
                "Dry washing outside or in a room with the door shut and window open, never on radiators in bedrooms."
            ),
            Item(
                "Kill existing mould with a fungicidal wash, not bleach, which removes the colour but leaves roots behind; wear gloves and a mask."
            ),
            Item(
                "Check the loft insulation above that corner; a gap there makes a cold spot on the ceiling where mould always starts.",
                "What did you think might be missing above the ceiling corner?",
            ),
            Item("Keep furniture 5 cm away from outside walls so air can move behind it."),
        ),
        outro=(
            "If it still comes back after a winter of this, get a damp surveyor in to rule out a leak or rising damp.",
            "Repaint treated areas with an anti-mould paint once the wall is fully dry.",
        ),
        count=(5, 7),
    ),
    Task(
        key="paint_room",
        topic="home",
        ask=(
            "Going to repaint the {room} this weekend, walls and ceiling, first time doing it myself rather than getting someone in. What order do I do things in and what do I need from {shop}?",
            "diy painting a room, order of jobs + shopping list?",
        ),
        intro=(
            "A good finish is 80 per cent preparation. Here's the order professionals work in, and what to buy:",
            "Doing it in the right order saves you repainting bits. For the {room}:",
        ),
        items=(
            Item(
                "Wash the walls with sugar soap and rinse; paint doesn't stick well to grease, especially near light switches.",
                "What did you tell me to wash the walls down with first?",
            ),
            Item(
                "Fill cracks with a flexible filler, let it dry, and sand flat with 120-grit paper.",
            ),
            Item(
                "Ceiling first, then walls, then woodwork last, so drips only ever land on something you haven't painted yet.",
                "In what order did you say to paint the ceiling, walls and skirting?",
            ),
            Item(
                "Cut in around the edges with a 2-inch brush before rolling each wall, while the edges are still wet."
            ),
            Item(
                "Two coats, with at least four hours between them; check the tin, as some need overnight.",
                "How long did you say to leave between coats?",
            ),
            Item(
                "Wrap the roller and tray in cling film between coats instead of washing them; they'll keep overnight.",
            ),
            Item(
                "Take the masking tape off while the last coat is still slightly tacky for a clean line."
            ),
        ),
        outro=(
            "Buy a medium-pile roller for walls and a sleeve with an extension pole for the ceiling; it saves your neck.",
            "Open windows and take breaks; a room painted in a hurry always shows it.",
        ),
        slots={"room": ("spare room", "hallway", "kitchen", "living room", "box room")},
        count=(5, 7),
    ),
    Task(
        key="rail_trip",
        topic="travel",
        ask=(
            "Thinking of a rail trip round Europe for about three weeks this summer with {friend}. Never done anything like it. Is a rail pass worth it, and how should we plan it?",
            "interrail basics? 3 weeks, first time",
        ),
        intro=(
            "It's a brilliant way to travel, and you don't need to plan every day. The things that matter most:",
            "Three weeks is a good length: enough for five or six places without rushing. Here's how to approach it:",
        ),
        items=(
            Item(
                "A pass is usually worth it if you're taking more than about eight longer journeys; for fewer, book point-to-point tickets early.",
            ),
            Item(
                "High-speed trains in France, Spain and Italy need seat reservations on top of the pass, often €10 to €35; book those as soon as you know your dates.",
                "Which countries did you warn need extra seat bookings on fast trains?",
            ),
            Item(
                "Use night trains for the longest legs; you save a night's accommodation and a day of travelling.",
                "What did you suggest for the longest journeys, to save on a hotel?",
            ),
            Item(
                "Plan roughly three nights in each place; fewer than two and you spend the trip on platforms."
            ),
            Item(
                "Download the official rail planner app, which works offline and shows which trains need reservations."
            ),
            Item(
                "Pack light: one 40-litre backpack each; you'll be carrying it up station stairs every few days.",
                "How big a backpack did you recommend taking?",
            ),
        ),
        outro=(
            "Leave one or two days unplanned; the best days of trips like this are often the ones you didn't expect.",
            "Check the pass rules for your home country; you can usually use it only for the journey out and back there.",
        ),
        count=(4, 6),
    ),
    Task(
        key="camping",
        topic="travel",
        ask=(
            "First family camping trip in {month_name}, two nights at a site near {town}, with {child} and a borrowed tent. What do we need and what do first-timers always forget?",
            "camping checklist for a family first time?",
        ),
        intro=(
            "Camping's a lot more fun when you're warm, dry and fed, so the checklist is built around those. For two nights:",
            "Here's what you need, and the bits people forget, for a first family trip:",
        ),
        items=(
            Item(
                "Put the borrowed tent up in the garden before you go; you'll find any missing pegs or poles while the shops are still open.",
                "Where did you say to try pitching the tent first?",
            ),
            Item(
                "Sleeping mats matter more than sleeping bags; the cold comes up from the ground.",
            ),
            Item(
                "Bring a rubber mallet and ten spare pegs; campsite ground is often hard and pegs bend.",
                "How many extra pegs did you say to pack?",
            ),
            Item(
                "A head torch each, especially for the children; holding a torch while doing anything else is a pain."
            ),
            Item(
                "Keep a bag with a full change of dry clothes for everyone, never opened until you need it."
            ),
            Item(
                "Plan one-pan meals and do the first night's dinner at home in a flask or a container; arrival evenings are always chaotic."
            ),
        ),
        outro=(
            "Pitch somewhere flat and not at the bottom of a slope; if it rains, water runs downhill into tents.",
            "Keep the first trip short and near home; you can always go further next time.",
        ),
        slots={"month_name": ("May", "August", "July")},
        count=(4, 6),
    ),
    Task(
        key="complaint_letter",
        topic="admin",
        ask=(
            "I've been overcharged by {company} for three months running, about £{amount} in total, and every time I ring them I'm on hold for forty minutes and nothing happens. Can you write me a complaint letter that will actually get their attention?",
            "write a formal complaint to {company} about being overcharged £{amount}",
        ),
        intro=(
            "A written complaint creates a record and starts the clock on their complaints process, which a phone call doesn't. Here's a letter, followed by what to do with it:",
            "Here's a firm but polite letter, and the steps that give it teeth:",
        ),
        code=(
            "Dear Complaints Team,\n\nAccount number: [your number]\n\nI am writing to make a formal complaint about overcharging on my account for the last three months, totalling £{amount}. I raised this by phone on [dates] and have not had a resolution.\n\nPlease refund the overpayment in full and correct my account within 14 days of this letter. If I do not receive a satisfactory response within eight weeks, I will refer the matter to the ombudsman.\n\nYours faithfully,\n{name}",
        ),
        items=(
            Item(
                "Send it by email to the complaints address and by recorded delivery, and keep copies of both.",
                "How did you suggest I post the paper copy of the complaint?",
            ),
            Item(
                "Attach the bills with the wrong amounts highlighted, and a short table of what you were charged against what you should have been."
            ),
            Item(
                "After eight weeks without a final answer, or sooner if they issue a 'deadlock letter', you can go to the ombudsman for free.",
                "After how long can I take it to the ombudsman if they don't sort it out?",
            ),
            Item(
                "Keep a log of every call: date, time, name of the person and what they promised."
            ),
            Item(
                "Ask for a goodwill payment for your time as well as the refund; many companies offer £25 to £50 without a fight.",
                "What range of goodwill payment did you say is often offered?",
            ),
        ),
        outro=(
            "Stay polite throughout; the ombudsman will read the whole exchange.",
            "Don't cancel any direct debit while it's in dispute unless they agree; it can muddy the account.",
        ),
        slots={
            "company": (
                "the energy company",
                "my broadband provider",
                "my mobile network",
                "the water board",
            ),
            "amount": ("186", "94", "240", "131"),
        },
        count=(3, 5),
    ),
    Task(
        key="cv_refresh",
        topic="admin",
        ask=(
            "I'm applying for {job} roles, first time I've job-hunted in eight years. My CV is four pages long and reads like a list of duties. How do I fix it?",
            "cv help, applying for {job} jobs, cv is 4 pages",
        ),
        intro=(
            "Eight years of experience is a strength; it just needs presenting as results rather than duties. Here's how to rework it:",
            "Recruiters spend under a minute on a first read, so everything is about making the best things easy to find:",
        ),
        items=(
            Item(
                "Cut it to two pages; anything older than ten years gets one line each.",
                "What was the maximum length you told me to get the CV down to?",
            ),
            Item(
                "Open with a four-line profile aimed at {job} roles: who you are, your strongest area, and what you're looking for."
            ),
            Item(
                "Rewrite duties as achievements with a number in each: 'cut supplier costs by 12 per cent', not 'responsible for purchasing'.",
            ),
            Item(
                "Mirror the key words from the job advert in your own wording; many employers filter CVs automatically first."
            ),
            Item(
                "Save and send it as a PDF named with your full name and the word CV, never 'CV final v3'.",
                "What file format did you say to send the CV in?",
            ),
            Item(
                "Drop 'references available on request' and your full address; town and county is enough.",
            ),
        ),
        outro=(
            "Write a short, specific cover note for each application; it matters more than a perfect CV.",
            "Ask someone in the field to read it for ten minutes; an outside eye spots what you can't.",
        ),
        slots={
            "job": (
                "project coordinator",
                "operations manager",
                "data analyst",
                "learning support",
                "estates manager",
            )
        },
        count=(4, 6),
    ),
    Task(
        key="slow_laptop",
        topic="tech",
        ask=(
            "My laptop has got painfully slow. It's about five years old, Windows, takes ages to start and the fan is always going. I can't really afford a new one. Anything I can do?",
            "old windows laptop really slow, how to speed it up without buying new",
        ),
        intro=(
            "A five-year-old laptop can usually be made to feel much quicker. Work through these in order, easiest first:",
            "Before spending money, try these; most slow laptops are suffering from the same few things:",
        ),
        items=(
            Item(
                "Open Task Manager (Ctrl+Shift+Esc), go to the Startup tab and disable everything you don't need the moment the machine starts.",
                "Which keys did you say open Task Manager?",
            ),
            Item(
                "Uninstall programs you don't use, especially trial antivirus suites that came with the machine; run only one antivirus."
            ),
            Item(
                "Free up disk space until at least 20 per cent of the drive is empty; Windows slows badly when the disk is nearly full.",
                "How much of the drive did you want kept free?",
            ),
            Item(
                "Clean the fan vents with a can of compressed air; dust makes it overheat and throttle itself."
            ),
            Item(
                "The biggest single upgrade: swap the old hard disk for a solid-state drive, about £40 for 500GB, which turns minutes into seconds at start-up.",
                "What was the one hardware upgrade you said would make the biggest difference?",
            ),
            Item("Add RAM if it has 4GB or less; 8GB is comfortable for browsing and office work."),
        ),
        outro=(
            "Back up your documents before changing any hardware, just in case.",
            "If it's still sluggish after all this, a clean reinstall of Windows is the last free step.",
        ),
        count=(4, 6),
    ),
    Task(
        key="photo_backup",
        topic="tech",
        ask=(
            "All our family photos are on my phone and one old laptop, going back to when {child} was born. I've just realised if either dies we lose everything. What's a sensible backup plan that isn't complicated?",
            "how should I back up family photos? phone + one laptop currently",
        ),
        intro=(
            "The rule of thumb professionals use is 3-2-1: three copies, on two kinds of storage, one of them somewhere else. Here's how that looks at home:",
            "Here's a simple plan that protects you against a dead phone, a dead laptop and even a burglary:",
        ),
        items=(
            Item(
                "Turn on automatic cloud backup on the phone so every new photo is copied as soon as you're on Wi-Fi."
            ),
            Item(
                "Buy a 2TB external drive and copy the laptop's photo folder to it on the first Sunday of every month.",
                "What capacity of external drive did you recommend?",
            ),
            Item(
                "Keep that drive at a relative's house or at work, not next to the laptop; a fire or theft would take both.",
                "Where did you say to keep the external drive?",
            ),
            Item(
                "Organise folders by year and then month, such as 2015/2015-07, so you can check at a glance that nothing is missing."
            ),
            Item(
                "Once a year, open a few random old photos from every copy to check they actually work; a backup you've never tested isn't a backup.",
                "How often should I open old photos from the backups to check them?",
            ),
            Item(
                "Print a photo book each year of the best ones; paper has outlasted every file format so far."
            ),
        ),
        outro=(
            "The cloud subscription will cost a couple of pounds a month, which is cheap insurance for irreplaceable pictures.",
            "Set a calendar reminder for the monthly copy; backups fail when they rely on remembering.",
        ),
        count=(4, 6),
    ),
)

PREFERENCES = (
    Preference(
        "coeliac",
        (
            "I'm coeliac, diagnosed a couple of years back, so even a crumb of the wrong flour and I'm ill for days.",
            "Should mention I can't have gluten at all, coeliac.",
        ),
        (
            "What could I bring along to the staff room bake sale?",
            "Any ideas for a birthday cake I could make for {partner}?",
        ),
    ),
    Preference(
        "night_owl",
        (
            "I'm hopeless in the mornings, honestly my brain doesn't switch on until about eleven, and I'm at my best late at night.",
        ),
        (
            "When in the day should I block out time for the hard stuff?",
            "How should I plan my study time around work?",
        ),
    ),
    Preference(
        "no_car",
        (
            "We don't have a car, never have, we get about by bus and bike.",
            "fyi no car in this household, it's trains or nothing",
        ),
        (
            "Where could we go for a long weekend in the autumn?",
            "Suggest a day out for the family for Saturday?",
        ),
        "travel",
    ),
    Preference(
        "vegan",
        ("I went fully plant-based last year and I'm sticking with it, nothing from animals.",),
        (
            "What should I cook when {friend} comes round for dinner?",
            "Give me a few packed lunch ideas for the week?",
        ),
    ),
    Preference(
        "hates_phone",
        (
            "I really hate making phone calls, it's a proper anxiety thing, I'll do anything to avoid ringing someone.",
        ),
        (
            "What's the best way to chase up a quote that never arrived?",
            "How do I sort out the problem with the delivery that didn't turn up?",
        ),
        "admin",
    ),
    Preference(
        "heights",
        ("I'm terrified of heights, even a stepladder makes my knees go.",),
        (
            "What could {partner} and I do on a weekend away in a city?",
            "Any ideas for an adventurous day out for my birthday?",
        ),
    ),
    Preference(
        "linux",
        ("I only use Linux at home, Ubuntu on everything, haven't had Windows in years.",),
        (
            "What software should I use to edit the band's recordings?",
            "Which program would you recommend for sorting out my photo library?",
        ),
        "tech",
    ),
    Preference(
        "quiet_places",
        (
            "Big crowds really aren't my thing, I get overwhelmed in busy places and need to leave.",
            "Not great with crowds, I'll be honest.",
        ),
        (
            "Where's good to go for a few days in the summer holidays?",
            "Any suggestions for something to do on a bank holiday?",
        ),
    ),
    Preference(
        "paper_planner",
        (
            "I'm old-fashioned, I like everything written in a paper diary, apps just don't stick for me.",
        ),
        (
            "What's the best way to keep on top of my to-do list this term?",
            "How should I keep track of all the deadlines coming up?",
        ),
    ),
    Preference(
        "no_alcohol",
        ("I don't drink, haven't for nearly ten years, it just isn't something I miss.",),
        (
            "How should I celebrate finishing the project with the team?",
            "What could I take as a gift when we go to {friend}'s for dinner?",
        ),
    ),
    Preference(
        "bad_knees",
        (
            "My knees are shot from years of football, anything with impact or lots of stairs is out.",
        ),
        (
            "What exercise should I take up to get a bit fitter this year?",
            "Any ideas for keeping active through the winter?",
        ),
        "health",
    ),
    Preference(
        "spice_averse",
        ("I can't take any chilli heat at all, even a mild curry has me in tears.",),
        (
            "What should we order in for the team lunch on Friday?",
            "Can you suggest a recipe for a midweek dinner that isn't boring?",
        ),
    ),
    Preference(
        "history_buff",
        (
            "I'm a total history nerd, castles, old churches, battlefields, that's my idea of a great day.",
        ),
        (
            "What should I do with a free afternoon on the trip?",
            "Where shall I go for a day off on my own next month?",
        ),
        "travel",
    ),
    Preference(
        "audiobooks",
        (
            "I find it really hard to concentrate on print these days, I listen to everything instead, on the headphones.",
        ),
        (
            "What's a good way to get through more books this year?",
            "How can I learn more about farming history without sitting down with a textbook?",
        ),
    ),
    Preference(
        "left_handed",
        ("I'm left-handed, which makes half the tools in the world feel backwards.",),
        (
            "What should I look out for when I buy a new pair of scissors and a few kitchen knives?",
            "Any tips for choosing a guitar to learn on?",
        ),
    ),
    Preference(
        "cat_allergy",
        ("I'm allergic to cats, really badly, eyes streaming in five minutes.",),
        (
            "What sort of pet would suit us now the kids are a bit older?",
            "Where should we stay for a week in the Lakes, any type of place you'd steer me to?",
        ),
    ),
    Preference(
        "cheap",
        ("Money is very tight at the moment so I'm trying to do everything on the cheap.",),
        (
            "How should I celebrate {partner}'s birthday this year?",
            "What should I buy to get started with the new hobby?",
        ),
    ),
    Preference(
        "cold_water",
        ("I've become a bit obsessed with wild swimming, year round, the colder the better.",),
        (
            "What's something I could do to mark my fortieth?",
            "Plan me a morning routine that sets me up for the day?",
        ),
    ),
    Preference(
        "no_subscriptions",
        ("I refuse to pay monthly for software, it's free or a one-off purchase or nothing.",),
        (
            "Which software should I use to do the accounts for the side business?",
            "How can I record a demo of the band at home?",
        ),
        "tech",
    ),
    Preference(
        "public_speaking",
        ("Speaking in front of people is my absolute nightmare, I freeze up completely.",),
        (
            "How can I help out at the charity if I don't have much free time?",
            "What's a good way to get noticed for promotion at work?",
        ),
    ),
    Preference(
        "lunch_hour",
        (
            "Realistically the only free time I get on a weekday is my lunch hour, evenings are swallowed by the kids.",
        ),
        (
            "When should I fit in my practice around the day job?",
            "What time should I schedule the long ride each week?",
        ),
    ),
    Preference(
        "motion_sick",
        ("I get horribly travel sick on boats and coaches, always have.",),
        (
            "How should we get over to the islands in the summer?",
            "Which way round should we plan the trip in Scotland?",
        ),
        "travel",
    ),
    Preference(
        "nut_allergy",
        ("I've got a serious peanut and tree nut allergy, EpiPen in my bag at all times.",),
        (
            "What could I make for a barbecue with the neighbours?",
            "Ideas for the food at {child}'s birthday party?",
        ),
    ),
    Preference(
        "minimal_screen",
        (
            "I'm trying hard to spend less time on screens, my eyes and my head can't take it after work.",
        ),
        (
            "Any suggestions for winding down in the evenings?",
            "How could I learn a bit of Spanish before the holiday?",
        ),
    ),
)

UPDATES = (
    Update(
        "flock_size",
        ("120 ewes", "150 ewes", "95 ewes", "180 ewes"),
        ("We're running {v} at the moment on about forty hectares.",),
        (
            "Sold some of the older girls and bought in shearlings, so the flock's {v} now rather than {old}.",
            "Flock numbers have changed: {v}, from {old}.",
        ),
        (
            "How big is my flock these days?",
            "What's the head count of breeding sheep on the farm?",
        ),
        topic="farm",
    ),
    Update(
        "hens",
        ("24 hens", "40 hens", "60 hens", "15 hens"),
        ("We've got {v} scratching about in the orchard.",),
        (
            "Hen numbers have changed, we're at {v} instead of {old}.",
            "Update from the orchard: {v} these days, we had {old}.",
        ),
        (
            "How many layers am I keeping at the moment?",
            "What's the size of my laying flock?",
        ),
        topic="farm",
    ),
    Update(
        "year_group",
        ("Year 3", "Year 5", "Year 6", "Year 2"),
        ("I'm teaching {v} this year, my first time with that age.",),
        (
            "Big change at school: the head has moved me from {old} to {v} for next year.",
            "I've been moved to {v}, no longer {old}.",
        ),
        (
            "Which class am I teaching?",
            "What age group have I got this year at school?",
        ),
        topic="teaching",
    ),
    Update(
        "language_at_work",
        ("Java", "PHP", "Go", "TypeScript"),
        ("Most of my day job is writing {v}, it's what the whole backend is in.",),
        (
            "We're rewriting everything at work, so I've gone from {old} to writing {v} all day.",
            "Team switched stacks: {v} now, bye-bye {old}.",
        ),
        (
            "What programming language am I mostly coding in for my job?",
            "Which language does my team use day to day?",
        ),
        topic="code",
    ),
    Update(
        "band_name",
        ("Velvet Turnip", "The Lapwings", "Static Orchard", "Mild Peril"),
        ("The band's called {v}, don't laugh, the drummer chose it.",),
        (
            "We finally renamed the band: we're {v} now, {old} had to go.",
            "New name for the band! It's {v} from now on, not {old}.",
        ),
        (
            "What's my band called?",
            "Under what name does my group play gigs?",
        ),
        topic="music",
    ),
    Update(
        "baby_naps",
        ("four naps a day", "three naps a day", "two naps a day", "one nap a day"),
        ("{baby} is on {v} at the moment, all very short.",),
        (
            "Sleep update: {baby} is on {v} now, it was {old}.",
            "{baby}'s gone to {v}, we used to have {old}.",
        ),
        (
            "How many daytime sleeps is the little one having?",
            "What's the baby's daytime sleep pattern like these days?",
        ),
        topic="baby",
    ),
    Update(
        "volunteer_role",
        ("sorting donations", "driving the van", "running the front desk", "packing parcels"),
        ("My job at the food bank is {v}, Saturday mornings.",),
        (
            "They've asked me to switch at the food bank, so I'm {v} instead of {old}.",
            "Change of role at the food bank: {v}, no more {old}.",
        ),
        (
            "What do I do when I volunteer at the food bank?",
            "Which job do I have on my Saturday volunteering shift?",
        ),
        topic="volunteer",
    ),
    Update(
        "commute",
        ("the 7.42 train", "the number 12 bus", "my bike", "a lift with {friend}"),
        ("I get to work on {v} every morning.",),
        (
            "New way into work: {v}, no more {old}.",
            "I've changed how I commute, it's {v} now rather than {old}.",
        ),
        (
            "How do I usually get to my job?",
            "What's my way into the office these days?",
        ),
    ),
    Update(
        "rent",
        ("£650", "£725", "£790", "£860"),
        ("The rent on our place is {v} a month.",),
        (
            "The tenancy's been renewed and the rent is {v} a month now instead of {old}.",
            "Rent has changed to {v} a month, it was {old}.",
        ),
        (
            "What am I paying my landlord each month?",
            "How much does our flat cost us monthly?",
        ),
        topic="money",
    ),
    Update(
        "savings_goal",
        ("£1,500", "£3,000", "£5,000", "£8,000"),
        ("We're trying to save {v} for an emergency pot.",),
        (
            "We've rethought the savings target: {v}, not {old}.",
            "New savings target: {v} instead of {old}.",
        ),
        (
            "What's the amount we're aiming to put by?",
            "How big a rainy-day fund are we working towards?",
        ),
        topic="money",
    ),
    Update(
        "phone",
        ("an old iPhone 5", "a Moto G", "a Samsung Galaxy S6", "a Nokia Lumia"),
        ("I'm on {v}, it does the job.",),
        (
            "Finally retired {old}; I've got {v} now.",
            "New phone: {v}. {old} died in the washing machine.",
        ),
        (
            "What handset am I using these days?",
            "Which mobile have I got?",
        ),
        topic="tech",
    ),
    Update(
        "running_distance",
        ("5k", "10k", "half-marathon distance", "15k"),
        ("My long run on Sundays is {v} at the moment.",),
        (
            "I've changed the Sunday run to {v}, from {old}.",
            "Long run's now {v}; it was {old} until recently.",
        ),
        (
            "How far is my weekly long run?",
            "What distance do I cover on my Sunday outing?",
        ),
        topic="health",
    ),
    Update(
        "piano_teacher",
        ("Mrs Okafor", "Mr Brennan", "a woman called Ruth", "a student from the conservatoire"),
        ("My lessons are with {v}, every Wednesday.",),
        (
            "Had to change teacher, it's {v} now, {old} moved away.",
            "I'm having lessons with {v} now instead of {old}.",
        ),
        (
            "Who teaches me music these days?",
            "Who am I going to for lessons?",
        ),
        topic="music",
    ),
    Update(
        "broadband",
        ("BT", "Virgin", "Plusnet", "TalkTalk"),
        ("Our internet is with {v}, on the basic package.",),
        (
            "Switched internet provider to {v}, {old} was useless.",
            "We've left {old}, internet's with {v} now.",
        ),
        (
            "Who supplies our internet connection?",
            "Which company do we get broadband from?",
        ),
        topic="tech",
    ),
    Update(
        "job_title",
        ("a teaching assistant", "a classroom teacher", "head of year", "the SENCo"),
        ("I'm {v} at the moment.",),
        (
            "Role change at school: I'm {v} from September, not {old} any more.",
            "Job's changed: {v} now, no longer {old}.",
        ),
        (
            "What's my role at the school?",
            "What position do I hold at work?",
        ),
        topic="teaching",
    ),
    Update(
        "tractor",
        ("a Massey Ferguson 135", "a Ford 3000", "a John Deere 6110", "a Zetor 5211"),
        ("We're still running {v} on the farm.",),
        (
            "Traded in {old} for {v} at the sale, long overdue.",
            "The tractor's {v} now, {old} finally gave up.",
        ),
        (
            "What tractor do we have on the farm?",
            "Which machine am I driving round the fields?",
        ),
        topic="farm",
    ),
    Update(
        "bedtime",
        ("7pm", "7.30pm", "6.45pm", "8pm"),
        ("{child}'s bedtime is {v} on school nights.",),
        (
            "We've moved {child}'s bedtime to {v}, {old} was getting silly.",
            "Bedtime's changed to {v} for {child}, it used to be {old}.",
        ),
        (
            "What time does {child} go to bed on a school night?",
            "When's lights-out for {child} during term?",
        ),
        topic="home",
    ),
    Update(
        "gym",
        ("PureGym", "the leisure centre", "a CrossFit box", "the climbing wall"),
        ("I train at {v} two or three times a week.",),
        (
            "Cancelled {old} and joined {v} instead.",
            "I've swapped {old} for {v}, much better for me.",
        ),
        (
            "Where do I go to work out?",
            "Which place am I a member of for exercise?",
        ),
        topic="health",
    ),
    Update(
        "charity_hours",
        ("two hours a week", "four hours a week", "one day a fortnight", "six hours a week"),
        ("I give the charity about {v}.",),
        (
            "I'm doing {v} for the charity now, it was {old}.",
            "Changed my volunteering to {v}, from {old}.",
        ),
        (
            "How much time do I put into volunteering?",
            "What's my usual commitment to the charity?",
        ),
        topic="volunteer",
    ),
    Update(
        "sprint_length",
        ("one-week sprints", "two-week sprints", "three-week sprints"),
        ("Our team works in {v}.",),
        (
            "The new manager changed us to {v}, we were doing {old}.",
            "We've gone to {v} now, {old} wasn't working.",
        ),
        (
            "How long is each iteration on my team?",
            "What's our development cycle length at work?",
        ),
        topic="code",
    ),
    Update(
        "allotment",
        ("plot 14", "plot 3B", "plot 27", "plot 9"),
        ("We've got {v} at the allotments by the railway.",),
        (
            "Swapped plots at the allotment, we're on {v} now, {old} was waterlogged.",
            "Moved to {v} from {old}, better soil apparently.",
        ),
        (
            "Which patch is ours down at the allotments?",
            "What's the number of the bit of ground we rent for veg?",
        ),
        topic="home",
    ),
)

FACTS = (
    Fact(
        "birth_weight",
        ("7lb 2oz", "6lb 11oz", "8lb 5oz", "9lb 1oz"),
        ("{baby} came out weighing {v}, the midwife said that was a good size.",),
        ("How heavy was the baby when born?",),
        mood="good",
        topic="baby",
    ),
    Fact(
        "sheepdog",
        ("Border Collie", "Huntaway", "Kelpie", "Welsh Sheepdog"),
        ("Our working dog, {pet}, is a {v}, best thing on the farm.",),
        ("What breed is {pet}?",),
        topic="farm",
    ),
    Fact(
        "school_name",
        ("St Aidan's Primary", "Moorside Academy", "Hollybank Juniors", "Elmfield School"),
        ("I work at {v}, it's a bit of a trek but I love it.",),
        ("Where do I teach?", "What school do I work at?"),
        topic="teaching",
    ),
    Fact(
        "laptop_model",
        ("ThinkPad X220", "Dell Latitude E6430", "HP EliteBook 840", "Asus Zenbook"),
        ("For reference, the machine is a {v} I got second-hand.",),
        ("What make and model is my computer?",),
        topic="tech",
    ),
    Fact(
        "instrument_maker",
        ("a Yamaha upright", "a 1960s Hofner bass", "a Buffet clarinet", "a Fender Telecaster"),
        ("The instrument I play is {v}, my grandad's originally.",),
        (
            "What was the instrument I inherited?",
            "Which instrument came down to me from my grandfather?",
        ),
        topic="music",
    ),
    Fact(
        "field_size",
        ("12 acres", "30 acres", "7 hectares", "18 acres"),
        ("The bottom field is {v}, the rest is rented.",),
        ("How big is the land I own outright?",),
        topic="farm",
    ),
    Fact(
        "blood_group",
        ("O negative", "A positive", "B negative", "AB positive"),
        ("I'm {v}, in case that ever matters.",),
        ("Which blood group do I belong to?",),
        topic="health",
    ),
    Fact(
        "locker",
        ("locker 212", "locker 37", "locker 118", "locker 64"),
        ("My stuff at the pool is always in {v}, I'm superstitious like that.",),
        ("Which one do I always use in the changing rooms?",),
        topic="health",
    ),
    Fact(
        "shoe_size",
        ("size 6", "size 9", "size 11", "size 4"),
        ("I'm a {v} if that's relevant for the trainers.",),
        ("What size feet have I got?",),
        topic="health",
    ),
    Fact(
        "food_bank_church",
        (
            "St Columba's hall",
            "the Methodist church on Mill Road",
            "the old library",
            "the community centre",
        ),
        ("The food bank runs out of {v}.",),
        ("Where is the food bank I help at based?",),
        topic="volunteer",
    ),
    Fact(
        "github_handle",
        ("quietbyte", "tinkerdev42", "moss-and-code", "nightjar_io"),
        ("My username on GitHub is {v} if you want to look.",),
        ("What's my handle for code hosting?",),
        topic="code",
    ),
    Fact(
        "wedding_anniversary",
        ("14 March", "2 September", "21 June", "30 November"),
        ("Our anniversary is {v}, I mustn't forget it again.",),
        ("On which day do {partner} and I celebrate being married?",),
    ),
    Fact(
        "allergy_med",
        ("cetirizine", "loratadine", "fexofenadine"),
        ("The hay fever tablet that works for me is {v}, the others make me drowsy.",),
        ("Which antihistamine suits me best?",),
        topic="health",
    ),
    Fact(
        "class_size",
        ("27 children", "31 children", "19 children", "33 children"),
        ("There are {v} in my class this year.",),
        ("How many pupils have I got?",),
        topic="teaching",
    ),
    Fact(
        "boiler_age",
        ("about twelve years", "nearly twenty years", "six years"),
        ("The heating system is {v} old, we've never had it serviced.",),
        ("How old is our central heating?",),
        topic="home",
    ),
    Fact(
        "passport_expiry",
        ("next April", "in the autumn", "in about eighteen months", "this coming July"),
        ("My passport runs out {v}, I should sort that.",),
        ("When do my travel documents expire?",),
        topic="travel",
    ),
    Fact(
        "child_school_year",
        ("Reception", "Year 1", "Year 4", "Year 7"),
        ("{child} has just started {v}.",),
        ("What year is {child} in at school?",),
    ),
    Fact(
        "egg_price",
        ("£1.80 a half-dozen", "£2.20 a half-dozen", "£3.50 a dozen"),
        ("We charge {v} at the gate.",),
        ("What do our eggs sell for?",),
        topic="farm",
    ),
    Fact(
        "first_dance",
        ("'Moon River'", "'Harvest Moon'", "'At Last'", "'Make You Feel My Love'"),
        ("We had {v} for our first dance, {partner} cried.",),
        ("What song did we dance to first at our wedding?",),
    ),
    Fact(
        "grandma_age",
        ("91", "88", "96", "84"),
        ("My nan is {v} and still does the crossword in pen.",),
        ("How old is my grandmother?",),
    ),
    Fact(
        "tent_brand",
        ("a Vango six-berth", "a Coleman four-man", "an old frame tent from the 80s"),
        ("The tent we're borrowing is {v}.",),
        ("What kind of tent have we got hold of?",),
        topic="travel",
    ),
    Fact(
        "pet_age",
        ("three", "eleven", "seven", "fourteen"),
        ("{pet} is {v} now, slowing down a bit.",),
        ("What age is {pet}?",),
    ),
    Fact(
        "ni_side_job",
        (
            "Saturday shifts at the garden centre",
            "evening bar work",
            "a paper round",
            "marking exam scripts",
        ),
        ("On the side I earn a bit from {v}, every little helps.",),
        ("What's my second job on the side?",),
        topic="money",
    ),
    Fact(
        "mentor",
        ("Ewart", "Marigold", "Thandeka", "Bartholomew"),
        ("My mentor at work is called {v}, really patient.",),
        ("Who looks out for me at work?", "What's the name of the person guiding me in my job?"),
    ),
)

EVENTS = (
    Event(
        "shearing",
        ("Shearers came today and got the whole flock done before the rain, what a relief.",),
        ("the clipping of the flock", "getting the sheep sheared"),
        mood="good",
        topic="farm",
    ),
    Event(
        "ofsted",
        ("We had the inspectors in school today. Survived. Barely.",),
        ("the school inspection", "the inspectors' visit"),
        topic="teaching",
    ),
    Event(
        "baby_jabs",
        ("{baby} had their {v} this morning, lots of tears from both of us.",),
        ("the baby's {v}",),
        values=("eight-week jabs", "twelve-week jabs", "sixteen-week jabs", "one-year boosters"),
        which=(
            "Which vaccinations did the little one get in {month}?",
            "What injections was the baby given in {month}?",
        ),
        topic="baby",
    ),
    Event(
        "gig",
        ("We played {v} last night, a proper crowd too!",),
        ("playing {v}",),
        values=(
            "the Harbour Festival",
            "a wedding in a barn",
            "the open mic at the Lamb",
            "a fundraiser at the rugby club",
        ),
        which=(
            "Where did we perform in {month}?",
            "What was the band's show in {month}?",
        ),
        mood="good",
        topic="music",
    ),
    Event(
        "release",
        ("We shipped {v} to production tonight, fingers crossed nothing explodes.",),
        ("the launch of {v}",),
        values=(
            "the new checkout",
            "version 2 of the booking app",
            "the reporting dashboard",
            "the mobile API",
        ),
        which=(
            "What did my team put live in {month}?",
            "Which project went out the door at work in {month}?",
        ),
        topic="code",
    ),
    Event(
        "tupping",
        ("Rams went in with the ewes today, so lambs due in five months.",),
        ("putting the tups in", "when the rams joined the ewes"),
        topic="farm",
    ),
    Event(
        "market_sale",
        ("Took {v} to the mart today and got a decent price.",),
        ("selling {v} at the mart",),
        values=("thirty store lambs", "the cull ewes", "a pen of fat lambs", "two old rams"),
        which=(
            "What did I send to market in {month}?",
            "Which animals went through the sale ring in {month}?",
        ),
        topic="farm",
    ),
    Event(
        "exam",
        (
            "Did my grade exam this afternoon, hands were shaking through the scales but I got through it.",
        ),
        ("my music exam", "sitting the grade exam"),
        topic="music",
    ),
    Event(
        "first_steps",
        ("{baby} took their first proper steps today, right across the living room!",),
        ("the baby walking for the first time", "those first wobbly steps"),
        mood="good",
        topic="baby",
    ),
    Event(
        "food_bank_award",
        ("The food bank got a civic award tonight at the town hall, I went up to collect it.",),
        ("the award ceremony for the food bank", "collecting the food bank's civic award"),
        mood="good",
        topic="volunteer",
    ),
    Event(
        "sick_day",
        ("Had to go home ill today with {v}, feel dreadful.",),
        ("being off sick with {v}",),
        values=("a migraine", "a stomach bug", "a chest infection", "a temperature"),
        which=(
            "What knocked me off work in {month}?",
            "What was I ill with in {month}?",
        ),
        mood="bad",
        topic="health",
    ),
    Event(
        "boiler_broke",
        ("Woke up to no heating or hot water, the boiler's packed in.",),
        ("the boiler breaking down", "when we lost heating and hot water"),
        mood="bad",
        topic="home",
    ),
    Event(
        "trip",
        ("Just got back from {v}, already missing it.",),
        ("the trip to {v}",),
        values=("Edinburgh", "the Isle of Skye", "Bruges", "Snowdonia", "Ljubljana"),
        which=(
            "Where did I go away to in {month}?",
            "Which break did I have in {month}?",
        ),
        mood="good",
        topic="travel",
    ),
    Event(
        "interview",
        ("Had the interview this morning, I think it went OK? They asked a lot about budgets.",),
        ("my job interview", "the interview for the new role"),
        topic="admin",
    ),
    Event(
        "flood",
        ("The beck burst its banks overnight and the low field is under water.",),
        ("the flooding on the farm", "when the low field went under"),
        mood="bad",
        topic="farm",
    ),
    Event(
        "quiz_run",
        ("Ran the quiz night last night, packed hall, raised {v}!",),
        ("the quiz I hosted",),
        values=("£640", "£1,120", "£890", "£455"),
        which=("How much did the fundraiser I ran in {month} bring in?",),
        mood="good",
        topic="volunteer",
    ),
    Event(
        "school_trip",
        ("Took the class to {v} today, sixty children and nobody lost.",),
        ("the class outing to {v}",),
        values=("the science museum", "a Roman fort", "the seaside", "a city farm"),
        which=(
            "Where did I take my pupils in {month}?",
            "What was the destination of the school outing in {month}?",
        ),
        topic="teaching",
    ),
    Event(
        "laptop_died",
        ("Laptop wouldn't switch on this morning, just a black screen and a clicking noise.",),
        ("my computer dying", "the day the laptop gave up"),
        mood="bad",
        topic="tech",
    ),
    Event(
        "moved_house",
        ("We got the keys today! Boxes everywhere but we're in.",),
        ("moving into the new house", "getting the keys to our place"),
        mood="good",
        topic="home",
    ),
    Event(
        "hospital",
        ("Spent the afternoon in A&E with {child}, {v}, all fine in the end.",),
        ("the hospital visit with {child} for {v}",),
        values=("a sprained wrist", "a cut that needed glue", "a high fever", "a bump on the head"),
        which=("Why did {child} end up at the hospital in {month}?",),
        mood="bad",
    ),
    Event(
        "sportive_done",
        ("Finished the sportive today! Legs are jelly but I did it.",),
        ("completing the cycling event", "the big ride"),
        mood="good",
        topic="hobbies",
    ),
    Event(
        "rare_bird",
        ("Saw {v} down by the reservoir this morning, I actually shouted.",),
        ("spotting {v}",),
        values=("a hoopoe", "an osprey", "a waxwing", "a bittern"),
        which=(
            "What unusual bird did I see in {month}?",
            "Which rarity turned up for me in {month}?",
        ),
        mood="good",
        topic="hobbies",
    ),
    Event(
        "tax_filed",
        ("Submitted the tax return tonight, weeks before the deadline for once.",),
        ("sending off my tax return", "filing my self-assessment"),
        mood="good",
        topic="money",
    ),
    Event(
        "christening",
        ("{baby}'s naming day was today, the whole family came.",),
        ("the baby's naming ceremony", "the naming day party"),
        mood="good",
        topic="baby",
    ),
)

SERIES = (
    Series(
        "market_takings",
        ("£64", "£88", "£112", "£140"),
        ("Farmers' market stall went well today, took {v}.",),
        (
            "Add up what the stall at the farmers' market has made me.",
            "What have my Saturday market days brought in between them?",
        ),
        mood="good",
        topic="farm",
    ),
    Series(
        "books_read",
        ("Wolf Hall", "The Road", "Middlemarch", "Stoner"),
        ("Finished {v} last night, couldn't put it down.",),
        (
            "Which novels have I got through recently?",
            "List the books I've polished off, would you?",
        ),
        topic="hobbies",
    ),
    Series(
        "parkrun",
        ("34:10", "31:45", "29:58", "28:20"),
        ("parkrun this morning: {v}.",),
        (
            "How has my time at the Saturday 5k come along?",
            "What's my quickest result at the Saturday run so far, and where did I start from?",
        ),
        mood="good",
        topic="health",
    ),
    Series(
        "songs_learned",
        ("'Blackbird'", "'Jolene'", "'Wonderwall'", "'Hallelujah'"),
        ("Got {v} down properly today, all the way through without stopping.",),
        (
            "Which tunes have I managed to master?",
            "Remind me of the pieces I've nailed so far?",
        ),
        mood="good",
        topic="music",
    ),
    Series(
        "baby_weigh",
        ("4.1kg", "5.3kg", "6.4kg", "7.2kg"),
        ("Clinic today, {baby} weighed in at {v}.",),
        (
            "Track the baby's weight for me across the clinic visits?",
            "How much has the little one put on between check-ups?",
        ),
        topic="baby",
    ),
    Series(
        "volunteer_sessions",
        ("the Tuesday session", "a Thursday evening", "Saturday morning", "an extra Saturday"),
        ("Did {v} at the food bank, busy one.",),
        (
            "How often have I helped out at the food bank lately?",
            "Count my shifts with the food bank for me?",
        ),
        topic="volunteer",
    ),
    Series(
        "lambs_born",
        ("12 lambs", "19 lambs", "26 lambs", "9 lambs"),
        ("Another long night in the shed: {v} born since yesterday.",),
        (
            "What's the running total of lambs delivered this season?",
            "How many little ones have arrived in the lambing shed altogether?",
        ),
        topic="farm",
    ),
    Series(
        "bugs_fixed",
        (
            "the login timeout",
            "the broken CSV export",
            "a memory leak in the worker",
            "the time zone bug",
        ),
        ("Finally fixed {v} today, took all afternoon.",),
        (
            "Which problems have I squashed at work recently?",
            "What did I manage to debug over the last few weeks?",
        ),
        mood="good",
        topic="code",
    ),
    Series(
        "gig_fees",
        ("£120", "£200", "£150", "£300"),
        ("Band got paid {v} for last night's gig, split four ways.",),
        (
            "What have our shows earned the band in total?",
            "Tot up the fees from our performances?",
        ),
        topic="music",
    ),
    Series(
        "eggs_collected",
        ("18 eggs", "22 eggs", "27 eggs", "31 eggs"),
        ("Collected {v} this morning, the girls are laying well.",),
        (
            "Has laying gone up or down over my morning collections?",
            "What were the hauls from the hen house each time I mentioned them?",
        ),
        topic="farm",
    ),
    Series(
        "savings",
        ("£150", "£200", "£250", "£400"),
        ("Put {v} into the savings pot this month.",),
        (
            "How much have I put away in total?",
            "What do my deposits into the rainy-day account add up to?",
        ),
        mood="good",
        topic="money",
    ),
    Series(
        "museums",
        ("the Ashmolean", "the Pitt Rivers", "the Tate Modern", "the Hunterian"),
        ("Spent the afternoon at {v} with {child}.",),
        (
            "Which galleries and collections have I visited?",
            "Name the places full of old things I've taken a trip to?",
        ),
        topic="travel",
    ),
    Series(
        "observations",
        ("requires improvement", "good", "good with outstanding features", "outstanding"),
        ("Got my lesson observation back: {v}.",),
        (
            "How have the gradings on my observed lessons changed?",
            "What were the verdicts when I was watched teaching?",
        ),
        topic="teaching",
    ),
    Series(
        "bike_miles",
        ("42 miles", "55 miles", "68 miles", "80 miles"),
        ("Long ride today: {v}.",),
        (
            "What's the furthest I've cycled so far, and how did I build up to it?",
            "Add together the big weekend rides I've told you about.",
        ),
        topic="hobbies",
    ),
    Series(
        "donations",
        ("£25", "£40", "£60", "£15"),
        ("Sent {v} to the hospice appeal.",),
        (
            "What's the sum I've given to the hospice?",
            "Total up my gifts to that charity appeal?",
        ),
        topic="volunteer",
    ),
    Series(
        "diy_jobs",
        ("the bathroom tiles", "the garden fence", "the loft hatch", "the kitchen shelves"),
        ("Finished {v} this weekend, feeling very handy.",),
        (
            "Which jobs around the house have I ticked off?",
            "What home improvements have I done myself?",
        ),
        mood="good",
        topic="home",
    ),
    Series(
        "weight_loss",
        ("2kg", "1.5kg", "3kg", "1kg"),
        ("Weighed myself this morning, down another {v}.",),
        (
            "How much lighter am I in total since I started?",
            "Add up what I've lost on the scales?",
        ),
        mood="good",
        topic="health",
    ),
    Series(
        "pupils_reading",
        ("six", "nine", "eleven", "fourteen"),
        ("{v} kids in my class are now reading at the expected level.",),
        (
            "How has the number of children on track with reading changed?",
            "What's the trend in my class's reading results?",
        ),
        topic="teaching",
    ),
    Series(
        "cities",
        ("Lyon", "Turin", "Vienna", "Krakow"),
        ("We're in {v} tonight, the station hotel is lovely.",),
        (
            "Where have we stopped on this rail journey so far?",
            "Which places have we stayed on the trip?",
        ),
        topic="travel",
    ),
    Series(
        "invoice_paid",
        ("£350", "£480", "£220", "£610"),
        ("Client finally paid the {v} invoice.",),
        (
            "What have I been paid for freelance work so far?",
            "Total what's come in from the side business?",
        ),
        topic="money",
    ),
)

ABSENT = (
    Absent("What colour did I paint the canal boat?", ("canal", "narrowboat")),
    Absent("How many beehives do we keep in the orchard?", ("beehive", "hive", "apiary")),
    Absent("When is my next dentist appointment?", ("dentist", "dental")),
    Absent("What grade did I get in my karate belt test?", ("karate", "belt")),
    Absent("Which golf club did I join?", ("golf",)),
    Absent("What's my sister-in-law called?", ("sister",)),
    Absent("Which ski resort did we book for February?", ("skiing", "ski resort", "slopes")),
    Absent("How much did the new conservatory cost us?", ("conservatory",)),
    Absent("What's the name of my goldfish?", ("goldfish", "fish tank", "aquarium")),
    Absent("Which choir do I sing in?", ("choir", "choral")),
    Absent("How many alpacas have we got?", ("alpaca",)),
    Absent("What did the optician say about my eyes?", ("optician", "glasses", "eye test")),
    Absent("Which football team does my eldest play for?", ("football team", "football club")),
    Absent("When did I pass my driving test?", ("driving test",)),
    Absent("What was the score in the chess tournament?", ("chess",)),
    Absent(
        "Which language am I learning on the evening course?", ("evening course", "evening class")
    ),
    Absent("How far is the nearest sailing club from us?", ("sailing", "yacht", "dinghy")),
    Absent("What did I name the vineyard project?", ("vineyard", "vine")),
    Absent("Which pottery class did I sign up for?", ("pottery", "ceramic", "kiln")),
    Absent("How much did we spend on the loft conversion?", ("loft conversion",)),
    Absent("When does my PhD funding run out?", ("phd", "doctorate")),
    Absent("What did the solicitor say about the will?", ("solicitor", "probate")),
    Absent("Which marquee company did we use for the party?", ("marquee",)),
    Absent("What's my tractor's registration plate?", ("registration plate", "number plate")),
)

PROFILE = {
    "partner": (
        "Anders",
        "Beccy",
        "Lachlan",
        "Delia",
        "Edmund",
        "Fleur",
        "Gregor",
        "Hattie",
        "Ivan",
    ),
    "child": ("Seren", "Tobiah", "Lyra", "Caspian", "Mirren", "Rowan"),
    "baby": ("Elodie", "Ptolemy", "Ottoline", "Bartek", "Isolde", "Anwen"),
    "friend": ("Jojo", "Marnie", "Babs", "Kelechi", "Stanislav", "Ruairi"),
    "pet": ("Crumble", "Noodle", "Pebble", "Sprout", "Haggis", "Treacle", "Waffle"),
    "town": ("Hexham", "Penrith", "Ludlow", "Oban", "Lowestoft", "Bideford", "Settle"),
    "shop": SHOPS,
}

NAMES = (
    "Abebe", "Benedetta", "Caoimhe", "Dimitra", "Emrys", "Fenna", "Gaspard", "Halima", "Ishaan", "Jorunn",
    "Kaito", "Liesel", "Mireille", "Nuno", "Oluwaseun", "Perpetua", "Quinlan", "Radek", "Solveig", "Thandiwe",
    "Ulrike", "Vashti", "Wojciech", "Xiomara", "Yorick", "Zenobia", "Anselm", "Briony", "Cosmo", "Dunja",
    "Eero", "Fionnuala", "Griselda", "Heikki", "Ilona", "Joaquim", "Katja", "Lucan", "Margit", "Nils",
    "Ondine", "Prosper", "Rasmus", "Saskia", "Tiberius", "Ulf", "Vesna", "Wilhelmina", "Yelena", "Zsofia",
    "Aurelio", "Blessing", "Cressida", "Delyth", "Ekow", "Folasade", "Gunnar", "Hester", "Ignacio", "Jolene",
    "Kazimierz", "Lowri", "Mathias", "Nanette", "Obadiah", "Pernille", "Rosamund", "Sefton", "Temperance", "Ulysses",
    "Valdis", "Winston", "Yusra", "Zeno", "Ambrose", "Bettina", "Cian", "Dorcas", "Elowen", "Fabian",
    "Ginevra", "Hallam", "Inigo", "Jessamy", "Kjell", "Loveday", "Mercy", "Nasrin", "Onyeka", "Phineas",
    "Roxana", "Siobhan", "Torben", "Uchenna", "Vivienne", "Wystan", "Yannis", "Zinnia", "Aloysius", "Bronagh",
)  # fmt: skip

ASIDES = {
    "teaching": (
        "One thing worth saying: the best teachers I've seen steal shamelessly from colleagues. Ask to sit in on a lesson in your free period once a half term; you'll come away with one idea you can use the next day.",
        "Protect one evening a week as completely school-free. The work expands to fill whatever time you give it, and a rested teacher is a better one than a thoroughly prepared exhausted one.",
    ),
    "farm": (
        "Farm records feel like a chore, but a notebook in the truck with dates, tags and what you did is what lets you spot a pattern next year, and it's what the inspector or the vet will ask to see.",
        "Talk to your neighbours and the vet before you buy anything new; most farming problems have been solved on the next farm along, usually cheaper than the catalogue suggests.",
    ),
    "code": (
        "Before changing anything on a live system, take a copy or a backup and write down how you'd undo the change. It takes two minutes and turns a mistake into a minor inconvenience.",
        "When something misbehaves, paste me the exact error text and the command you ran; it's nearly always quicker than describing it.",
    ),
    "music": (
        "Short daily practice beats a long weekly session every time; the brain consolidates between sessions, so ten minutes on a Tuesday is worth more than an extra hour on Saturday.",
        "Play with other people whenever you get the chance, even badly. Keeping going when you've made a mistake is a skill you only learn in company.",
    ),
    "baby": (
        "Every baby is different, and the books are written for an average one that doesn't exist. If something doesn't fit your baby, trust what you see, and ask your health visitor if you're unsure.",
        "Please look after yourself as well: eat something proper, accept offers of help, and tell someone if you're feeling low for more than a couple of weeks. It's far more common than people admit.",
    ),
    "volunteer": (
        "Volunteers stay when they feel useful and appreciated, so a handwritten thank-you card at the end of the year does more for retention than any system.",
        "Check that your insurance and safeguarding policies cover whatever you're planning; the umbrella charity or the local volunteer centre can usually help with templates.",
    ),
    "hobbies": (
        "The local club or group is the fastest way to improve: people a couple of years ahead of you remember exactly what you're struggling with.",
        "Don't buy the expensive kit until you've done it for a season and know what you actually need; second-hand is plentiful and holds its value.",
    ),
    "health": (
        "This is general guidance rather than a diagnosis; if something gets worse or new symptoms appear, see a pharmacist or your GP.",
        "Consistency matters far more than intensity: a small change you can keep up for months will do more than an ambitious plan you drop after a fortnight.",
    ),
    "money": (
        "Figures, allowances and deadlines change from year to year, so check the current numbers on the official government pages before acting on any of this.",
        "Free, impartial money guidance services exist for most questions, and they're worth a call before paying anyone for advice.",
    ),
    "home": (
        "Take photos before you start any job in the house; they're useful if you need to put something back and satisfying to look at afterwards.",
        "For anything involving gas, or electrics beyond changing a fitting, use a registered professional; it's a legal requirement as well as a safety one.",
    ),
    "travel": (
        "Buy travel insurance as soon as you book rather than just before you go, so you're covered if something stops you travelling in between.",
        "Keep photos of passports, tickets and bookings in one folder on your phone, and a paper list of important numbers in case the phone dies.",
    ),
    "admin": (
        "Keep copies of everything you send and receive, with dates, in one folder; if it ever escalates, a tidy paper trail is your strongest argument.",
        "Most organisations have a published complaints or application process; following it to the letter, however tedious, is what gets results.",
    ),
    "tech": (
        "Turn on two-step sign-in for your main email account if you haven't already; email is how every other account gets reset, so it's the one to protect.",
        "Keep your system updated; most of the slowdowns and security problems people bring me are on machines that haven't been updated in months.",
    ),
}

POOL = Pool(
    prefix="au",
    names=NAMES,
    profile=PROFILE,
    tasks=TASKS,
    preferences=PREFERENCES,
    updates=UPDATES,
    facts=FACTS,
    events=EVENTS,
    series=SERIES,
    absent=ABSENT,
    openers=(
        "",
        "",
        "",
        "",
        "",
        "hey.",
        "Evening! Hope you're well.",
        "quick q",
        "Me again, sorry, it's been a day.",
        "Good morning. I've got five minutes before the bell.",
        "Right, another one for you.",
        "Hiya.",
    ),
    postscripts=(
        "Short answer is fine.",
        "As much detail as you like, I've got a quiet evening.",
        "cheers",
        "I'll print it off.",
        "Bear in mind I'm not very technical.",
        "Assume I know nothing!",
        "Thanks a million.",
        "Be blunt.",
        "Reading this on my phone, so keep it tidy.",
        "No waffle please.",
    ),
    bridges=(
        "Anyway, what I actually came to ask:",
        "That's by the by.",
        "Right, to business.",
        "Anyhow.",
        "But the real question is this.",
        "So, onto my question:",
    ),
    acks={
        "good": (
            "That's fantastic, {name}, well done!",
            "What lovely news.",
            "Oh, brilliant, that must feel great.",
        ),
        "bad": (
            "Oh, that's rotten luck, I'm sorry.",
            "Sorry to hear that, {name}, what a pain.",
            "That sounds miserable; I hope things pick up soon.",
        ),
    },
    asides=ASIDES,
    offers=(
        "Shall I turn this into a checklist you can tick off?",
        "If you tell me a bit more about your circumstances, I can make this more specific.",
        "Want me to go deeper on any one of these?",
        "I can put this in a table if that's easier to follow.",
    ),
    follows=(
        (
            "which of these matters most?",
            "If you only do one thing, do the first step on the list properly; it's the foundation the others rest on. Everything after that is improvement rather than essential, and you can add it once the first part has become routine.",
        ),
        (
            "Is this something I can do on my own or do I need a professional?",
            "Almost all of it you can do yourself with a bit of patience. The point to bring someone in is if you hit something unexpected, or if it involves safety, like gas, electrics or anything medical. Doing the groundwork yourself also means you'll ask better questions if you do call someone.",
        ),
        (
            "How long will all that take, realistically?",
            "Spread over a few weeks, not very long each day: the first steps take an evening, and the rest is small and regular. People usually give up because they try it all in one go, so pace it out and it'll stick.",
        ),
        (
            "ok and what if it doesn't work",
            "Then we change the plan rather than abandon it. Note what happened and when, come back to me with the details, and we'll work out which part isn't working for you. There's nearly always a second option.",
        ),
        (
            "Sorry, could you say that more simply?",
            "Of course. Start with the first item this week. Next week add the second. Ignore the rest until those feel normal. If one particular step is confusing, tell me which one and I'll explain it differently.",
        ),
    ),
    closings=(
        ("Brilliant, thank you.", "Any time, {name}. Good luck."),
        ("ta", "You're welcome."),
        (
            "That's really useful, I'll give it a go.",
            "Great; let me know how you get on.",
        ),
        (
            "Thanks, you've saved me hours.",
            "Happy to help, {name}. Shout if anything's unclear.",
        ),
        ("cheers, sorted", "Glad to hear it!"),
    ),
    when=(
        "What was the date of {a}?",
        "Can you tell me what day {a} happened?",
        "When did {a} take place?",
        "{a}: when was that, exactly?",
    ),
    ago=(
        "How many weeks back was {a}?",
        "Roughly how long has it been since {a}?",
        "How long ago did {a} happen?",
    ),
    order=(
        "Which happened first: {a} or {b}?",
        "Was {a} earlier or later than {b}?",
        "Put these in order for me: {a} and {b}.",
    ),
    gap=(
        "How many days were there between {a} and {b}?",
        "What was the gap between {a} and {b}?",
        "How far apart were {a} and {b}?",
    ),
    start=(datetime(2015, 2, 1), datetime(2016, 2, 1)),
)


def build(people: int = PEOPLE) -> Json:
    """The unseen set (``people`` conversations; the default is the registered 100)."""
    return generate(POOL, people=people, seed=SEED)
