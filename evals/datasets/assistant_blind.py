"""The ``assistant_blind`` recall set: was SEALED until the end of issue 15 round 3, where it was
measured for the first time (``evals/README.md``); it is no longer unseen, and its failures are
still never to be looked at (``assistant_unseen`` is the next unseen check).

Same shape as ``assistant`` and ``assistant_sealed`` (``histories.generate``: one person and their
assistant a conversation, about fifty dated sessions each, long assistant answers, ``user`` speaks
first), but written independently of both, from its own pool, to test whether what was tuned on
the others generalises: other walks of life (a nurse on shifts, a café owner, a student, a
retiree, a tradesperson), another voice (longer messages with context over several sentences,
sometimes lower case and abbreviations, the thing said in passing mid-paragraph), and questions
worded as people ask an assistant, sharing few words with what they were answered by: preferences
asked as requests for advice, current values asked without "now", temporal questions in several
forms, counts, sums and lists over sessions phrased without "how many". Its own seed, its own
years (2018-2020). 100 people, one store.
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
SEED = 5113

PLACES = (
    "Copper Kettle",
    "The Drover's Rest",
    "Marigold",
    "Sandpiper",
    "Old Forge",
    "Quayside Deli",
    "The Larch",
    "Bellwether",
    "Paloma",
    "The Hop Garden",
    "Kittiwake",
    "Morello",
    "Ridgeway Stores",
    "The Tin Whistle",
)

SUPPLIERS = (
    "Hartley's Wholesale",
    "Greenacre Produce",
    "Mill Lane Dairy",
    "Burrow Roasters",
    "Fenwick Paper Co.",
    "Orchard Bakehouse",
    "Tallow & Co.",
    "Northfield Packaging",
)

TASKS = (
    Task(
        key="night_sleep",
        topic="shifts",
        ask=(
            "ok so i'm back on nights from thursday, four in a row, and last block i was a zombie by the third one. i get home about 8.30am and just cannot get to sleep properly, i keep waking at noon. how do people who do this for years actually manage it?",
            "Could you help me set up a sleep routine around a run of night shifts? I finish at half seven in the morning, the drive home is twenty minutes and the street is noisy during the day. I've tried just going to bed straight away and it isn't working.",
        ),
        intro=(
            "Nights are hard on everyone, and the people who cope best treat the daytime sleep like a fixed appointment rather than something that happens if it happens. Here's a routine to try across the block:",
            "Waking at noon after a night shift is very common: your body clock is pushing you awake because it thinks it's the middle of the day. You can't switch that off, but you can make it much easier to sleep through. In order:",
        ),
        items=(
            Item(
                "Wear sunglasses for the drive home, even on a grey morning. Bright light on the way back is the strongest signal telling your brain it's daytime.",
                "In that plan for getting through a run of nights, what was I meant to put on for the journey home?",
            ),
            Item(
                "Have a small snack rather than a full meal when you get in; toast or a yoghurt. A big plate of food at 9am makes for restless sleep."
            ),
            Item(
                "Black the bedroom out completely. Cheap stick-on blackout film on the windows plus a sleep mask does more than thick curtains alone.",
                "What was the cheap fix for the bedroom windows when I'm sleeping in the day?",
            ),
            Item(
                "Split sleep if you need to: a four-hour core straight after the shift, then a ninety-minute nap before you leave for the next one. Many nurses find that easier than fighting for eight hours.",
                "How long was the second, shorter sleep supposed to be before heading back in?",
            ),
            Item(
                "Keep your phone out of reach and on do-not-disturb, with only the ward and family allowed through."
            ),
            Item(
                "Cut off caffeine about six hours before you expect to sleep, so nothing after 2am on a night shift.",
                "What time did you reckon my last coffee of a night shift should be?",
            ),
            Item(
                "White noise or a fan to cover the daytime street: bin lorries and deliveries are what usually wake people, not the light."
            ),
            Item(
                "On your first day off, get up by early afternoon and get outside; that's what swings you back to days fastest."
            ),
        ),
        outro=(
            "Give it the whole block before judging it; the first day is always the worst.",
            "If you're still waking after three hours every time, it's worth telling occupational health; some trusts will adjust patterns.",
        ),
        count=(5, 7),
    ),
    Task(
        key="shift_food",
        topic="shifts",
        ask=(
            "What should I be eating on a twelve-hour shift? I end up living off biscuits from the staff room and a meal deal at 3am, and I feel awful by the end of the week.",
            "need a food plan for long shifts pls. 07:00 to 19:30, breaks are never when they're supposed to be, and there's a microwave and a fridge but that's it",
        ),
        intro=(
            "Long shifts with unpredictable breaks need food you can eat in ten minutes, cold if necessary. A plan that works for a lot of people on wards:",
            "The trick is to stop relying on one big break and graze on things that keep your energy level. Something like this:",
        ),
        items=(
            Item(
                "Batch-cook two grain bowls on your day off: brown rice or farro, roast veg, chickpeas and a dressing in a separate pot. They keep four days in the fridge."
            ),
            Item(
                "Pack a 'grab bag' of protein snacks (nuts, a boiled egg, cheese, edamame) so you're not reaching for the biscuit tin at 4pm.",
                "Which snacks were in the bag I'm meant to take so I stop raiding the biscuit tin?",
            ),
            Item(
                "Eat your main meal before the shift starts, not halfway through; on nights that means a proper dinner at about 6pm."
            ),
            Item(
                "Keep a 750 ml bottle with you and aim to refill it three times; dehydration feels like tiredness and hunger.",
                "How many times a shift should I be refilling my water bottle, going by what you told me?",
            ),
            Item(
                "Between 2am and 5am go light: soup from a flask, fruit, crackers. Digestion slows down overnight and heavy food sits badly."
            ),
            Item(
                "A thermos flask of something hot for the last hours, when the staff room kettle is always in use."
            ),
            Item("Sunday prep in one hour: cook, portion, label with the day, done."),
        ),
        outro=(
            "You don't need to be perfect; swapping the 3am meal deal for something you brought is most of the win.",
            "Start with the grab bag, because it fixes the biggest problem for the least effort.",
        ),
        count=(4, 6),
    ),
    Task(
        key="menu_costing",
        topic="cafe",
        ask=(
            "right, I need to work out whether our lunch menu actually makes money. We do soups, toasties and a couple of salads and I've never properly costed any of it, I just priced it at what the place down the road charges. Where do I start?",
            "How do I cost a dish properly for the café? My accountant keeps saying our food margin is too low and I don't really know how to check what each plate costs us.",
        ),
        intro=(
            "Costing dishes is tedious the first time and then takes minutes. Work through one dish to learn the method, then do the rest:",
            "Your accountant is talking about gross margin on food, and the only way to fix it is dish by dish. The method:",
        ),
        items=(
            Item(
                "Write a recipe card for each dish with exact quantities per portion, weighed, not guessed. A 'handful' of cheese is usually twice what you think."
            ),
            Item(
                "Price each ingredient per gram or per unit from your latest invoices, including the boring ones: oil, butter, salt, garnish, the paper bag."
            ),
            Item(
                "Add it up for the plate cost, then aim for food cost at 28-32% of the selling price before VAT.",
                "What percentage of the menu price was the food cost supposed to come to?",
            ),
            Item(
                "Build in wastage: add 5% to the plate cost for trimmings, spills and the end of the loaf.",
                "How much extra on top of the plate cost did I need to allow for waste?",
            ),
            Item(
                "Rank the menu by profit per plate, not margin: a toastie that makes less percentage but sells forty a day may carry the business."
            ),
            Item(
                "Re-cost everything every quarter, or whenever a supplier like {pick} puts prices up.",
                "How often should I go back over all the costings, according to the method you gave me?",
            ),
            Item(
                "Look hard at anything under 60% gross margin; it either goes up in price, gets smaller, or comes off."
            ),
        ),
        code=(
            "A simple sheet layout for each dish:\n\n```\nIngredient      | Qty/portion | Unit cost | Line cost\nSourdough       | 2 slices    | 0.18      | 0.36\nCheddar         | 60 g        | 0.011/g   | 0.66\nButter          | 10 g        | 0.008/g   | 0.08\nChutney         | 15 g        | 0.006/g   | 0.09\n----------------------------------------------------\nPlate cost                                  1.19\n+5% waste                                   1.25\nSelling price (ex VAT)                      4.17\nFood cost %                                 30%\n```",
        ),
        outro=(
            "Once you've done five dishes you'll see the pattern, and most of the rest follow from the same few ingredients.",
            "It feels like admin, but it's the single most useful hour you'll spend on the café this month.",
        ),
        names=SUPPLIERS,
        count=(5, 7),
    ),
    Task(
        key="staff_rota",
        topic="cafe",
        ask=(
            "I've got five part-timers and a Saturday girl and every week the rota is a nightmare, somebody can't do a shift and I end up working it myself. Is there a better way to run this?",
            "how do small cafés handle the staff rota without it eating the owner's sunday evening? mine is a spreadsheet and a lot of texting",
        ),
        intro=(
            "Most rota pain comes from doing it late and doing it alone. A few changes move the work off you:",
            "A better system is less about software than about rules everyone knows. What I'd put in place:",
        ),
        items=(
            Item(
                "Publish the rota two weeks ahead, every other Friday, so swaps happen between staff rather than through you.",
                "How far in advance was I supposed to be putting the rota up?",
            ),
            Item(
                "Ask everyone for their fixed availability once, in writing, and only build shifts inside it."
            ),
            Item(
                "Make a swap rule: people can trade shifts with each other freely, as long as they post it in the group chat and you approve with a thumbs-up."
            ),
            Item(
                "Keep a short 'bench' of one or two people happy to pick up extra hours, and offer them first refusal.",
                "What did you call the backup list of people who want extra hours?",
            ),
            Item(
                "Use a free rota app instead of the spreadsheet; staff see changes on their phones and you stop being the switchboard."
            ),
            Item(
                "Never roster a brand new starter alone on a Saturday; pair them with your most experienced person for the first month."
            ),
        ),
        outro=(
            "Give the new rules a month; the first fortnight will feel like more work, then it drops off sharply.",
            "The swap rule is the one that saves your Sunday evenings, so start there.",
        ),
        count=(4, 6),
    ),
    Task(
        key="dissertation",
        topic="study",
        ask=(
            "So my dissertation is due in May and I have, honestly, a title and about 400 words. It's 10,000 words on community energy schemes. My supervisor is nice but vague. Can you help me turn this into an actual plan?",
            "can u help me plan my dissertation? 10k words, due end of april, i keep opening the doc and closing it again",
        ),
        intro=(
            "Ten thousand words feels enormous as one thing and very manageable as fifteen small pieces. Here's a structure and a way of working through it:",
            "The cure for opening and closing the document is smaller tasks with dates on them. Plan:",
        ),
        items=(
            Item(
                "Write a one-page outline first: chapter headings with two or three bullet points each, and a rough word count per chapter. Send it to your supervisor and ask them to react to it, which gets far less vague feedback than an open question."
            ),
            Item(
                "Literature review: about 2,500 words, built from a spreadsheet of sources with one line on what each argues.",
                "Roughly how long did you suggest the literature review chapter should be?",
            ),
            Item(
                "Methods before findings: write the methods chapter early, while what you did is fresh; it's the easiest chapter to finish."
            ),
            Item(
                "Set a daily minimum of 300 words, five days a week. It sounds tiny, but that's the whole draft in seven weeks.",
                "What was the daily word target in my dissertation plan?",
            ),
            Item(
                "Leave the introduction and abstract until last; you can't introduce an argument you haven't made yet."
            ),
            Item(
                "Book a fortnight at the end purely for editing and references, and treat it as untouchable.",
                "How much time at the end did the plan keep free for editing?",
            ),
            Item(
                "Back up to two places every day: university cloud storage and an email to yourself."
            ),
        ),
        outro=(
            "The first week is the hardest. After the outline is agreed, it becomes a matter of turning up.",
            "If you stall on a section, skip to another and come back; there's no rule that says you write in order.",
        ),
        count=(5, 7),
    ),
    Task(
        key="anatomy_recall",
        topic="study",
        ask=(
            "I have a pharmacology exam in three weeks and there are literally hundreds of drug names, classes and side effects to learn. I've been rereading my notes and highlighting but nothing sticks. What should I be doing instead?",
            "revision question: how do you actually memorise a ton of facts for a exam? i've got about 300 terms for my biochem module and i keep forgetting them the day after",
        ),
        intro=(
            "Rereading and highlighting feel productive but barely move long-term memory. Swap them for methods that make you pull the answer out of your head:",
            "Forgetting the next day is normal; it's what memory does without spaced practice. Here's a system that works for big lists:",
        ),
        items=(
            Item(
                "Turn your notes into question-and-answer cards, one fact per card. Write the question so it forces recall, not recognition."
            ),
            Item(
                "Use spaced repetition: review a card after one day, then three, then seven, then fourteen. An app like Anki does the scheduling for you.",
                "What were the intervals for going back over the cards?",
            ),
            Item(
                "Do no more than 40 new cards a day, or the reviews pile up within a week and you give up.",
                "What was the cap on new cards per day?",
            ),
            Item(
                "Group drugs by class and learn the class pattern first; most side effects come from the mechanism, so you're learning ten things at once."
            ),
            Item(
                "Explain a topic out loud to an empty room or a friend for five minutes without notes; the gaps show up immediately."
            ),
            Item(
                "Do past papers under timed conditions in the last ten days, and mark them harshly.",
                "When in the run-up did I need to start on timed practice papers?",
            ),
        ),
        code=(
            "If you'd rather make the cards from a spreadsheet, Anki imports a plain CSV with one card per line:\n\n```\nfront,back\nClass of atenolol?,Beta blocker (cardioselective)\nMain risk with ACE inhibitors?,Dry cough; hyperkalaemia\nAntidote for warfarin?,Vitamin K (and PCC if bleeding)\n```\n\nFile > Import, pick the file, and map the first column to Front and the second to Back.",
        ),
        outro=(
            "It will feel slower and harder than rereading for the first few days. That's the sign it's working.",
            "Stick with the daily reviews even on busy days; ten minutes keeps the schedule alive.",
        ),
        count=(4, 6),
    ),
    Task(
        key="quote_template",
        topic="trade",
        ask=(
            "I'm a self-employed plasterer and my quotes are basically a text message with a number in it. I lost a job last week to someone who sent a proper written quote, so I think I need to up my game. What should a good quote have in it?",
            "what goes in a proper quote for building work? I do kitchens and bathrooms (fitting, tiling, a bit of plumbing) and I've been doing it all over WhatsApp",
        ),
        intro=(
            "A written quote wins jobs because it makes you look organised and it protects you if there's a dispute. What to include:",
            "Customers compare quotes side by side, and the clearest one often wins even if it isn't the cheapest. The essentials:",
        ),
        items=(
            Item(
                "Your business name, address, phone, and a quote number, so both of you can refer to it later."
            ),
            Item(
                "A scope of work in plain words, room by room: what you'll do, and just as important, what you won't (e.g. 'making good of decorating by others')."
            ),
            Item(
                "Materials and labour shown separately, with a note on who supplies what.",
                "In the advice about writing up quotes, what were the two costs I was told to list apart?",
            ),
            Item(
                "A validity period: 30 days is standard, because material prices move.",
                "For how long should a quote stay valid?",
            ),
            Item(
                "Payment terms: a deposit (often 25%) to book the dates and buy materials, then stage payments, balance on completion.",
                "What deposit did you say is normal to ask for up front?",
            ),
            Item(
                "A line on variations: any extra work gets agreed in writing, with a price, before you start it."
            ),
            Item(
                "Your insurance details (public liability) and any trade memberships; it reassures people more than you'd think."
            ),
        ),
        outro=(
            "Make it a template once and filling it in takes ten minutes per job.",
            "Send it as a PDF, not a photo of a handwritten sheet; it looks twice as professional for the same content.",
        ),
        count=(5, 7),
    ),
    Task(
        key="van_racking",
        topic="trade",
        ask=(
            "My van is a disaster, I waste about twenty minutes a day looking for fittings and my tools are just chucked in the back. It's a medium wheelbase Transit. How should I organise it?",
            "Any tips for kitting out a work van? sparky here, lots of small parts, cable drums, and a couple of long ladders on top",
        ),
        intro=(
            "Twenty minutes a day is more than eighty hours a year, so this is worth a weekend. How I'd lay it out:",
            "The aim is that every item has one home and you can reach the daily things without climbing in. A layout that works:",
        ),
        items=(
            Item(
                "Racking on the nearside wall for small parts in clear-fronted bins, labelled; you grab from the side door without going in.",
                "Which side of the van did the shelving with the parts bins go on?",
            ),
            Item(
                "Heavy things low and forward, over the axle: the compressor, the cable drums, boxes of screws."
            ),
            Item(
                "A lockable drawer unit at the back for power tools, so they're out of sight and off the floor."
            ),
            Item(
                "A 'today' crate: each evening put the fittings for tomorrow's job in one crate by the door.",
                "What was the evening habit with a crate that you recommended?",
            ),
            Item(
                "Ply lining on the walls and floor; it protects the panels and you can screw hooks anywhere."
            ),
            Item(
                "Restock from your supplier every Friday from a printed checklist taped inside the door.",
                "Where did the checklist for restocking live?",
            ),
            Item(
                "A proper roof rack with a ladder clamp and a padlock, and check the weight limit."
            ),
        ),
        outro=(
            "Take photos once it's right; when it drifts back into chaos you'll know what it should look like.",
            "The labels feel fussy but they're the bit that stops it going back to how it was.",
        ),
        count=(4, 6),
    ),
    Task(
        key="till_export",
        topic="tech",
        ask=(
            "Our till system exports a CSV of every sale each day and I'd love to see which items sell best by hour so I can plan the bake. I know a tiny bit of Python from a course years ago. Could you write me something?",
            "could you write a python script that reads a folder of daily sales csv files and tells me what sells most at different times of day? columns are time, item, qty, price",
        ),
        intro=(
            "Here's a small script that reads every CSV in a folder and gives you a table of items by hour. It uses pandas, which you can install with `pip install pandas`.",
            "This is a good first project; the script below does it in about twenty lines.",
        ),
        code=(
            '```python\nfrom pathlib import Path\n\nimport pandas as pd\n\nFOLDER = Path("sales")\n\nframes = [pd.read_csv(path, parse_dates=["time"]) for path in sorted(FOLDER.glob("*.csv"))]\nsales = pd.concat(frames, ignore_index=True)\nsales["hour"] = sales["time"].dt.hour\n\nby_hour = sales.pivot_table(index="item", columns="hour", values="qty", aggfunc="sum", fill_value=0)\nby_hour["total"] = by_hour.sum(axis=1)\nprint(by_hour.sort_values("total", ascending=False).head(15))\n\nby_hour.to_csv("items_by_hour.csv")\n```',
        ),
        items=(
            Item(
                "Put all the daily exports into one folder called `sales` next to the script; the glob picks up every file ending in .csv."
            ),
            Item(
                "`parse_dates` turns the time column into real timestamps so `.dt.hour` can pull the hour out.",
                "Which option in that sales-by-hour script made the time column into real timestamps?",
            ),
            Item(
                '`pivot_table` with `aggfunc="sum"` adds up quantities per item per hour; `fill_value=0` fills the hours where nothing sold.'
            ),
            Item(
                "The last line writes `items_by_hour.csv`, which you can open in Excel and colour as a heat map.",
                "What was the name of the file the sales script saved its table to?",
            ),
            Item(
                "If your till uses a different column name, change it in the script; the names must match exactly, including capital letters."
            ),
            Item("Run it with `python sales_by_hour.py` from the folder that contains it."),
        ),
        outro=(
            "Once this works, the next step would be splitting weekdays from weekends; the patterns are usually very different.",
            "Send me the first few lines of one export if it throws an error and I'll adjust it.",
        ),
        count=(4, 6),
    ),
    Task(
        key="photo_tidy",
        topic="tech",
        ask=(
            "I have about 40,000 photos spread over an old laptop, two phones and a box of memory cards, and I'm terrified of losing the grandchildren's ones. What's a sensible way to get them all in one place and keep them safe?",
            "Photo chaos. Thousands of pictures on old phones and a laptop that's on its last legs. How do I sort this out once and for all without paying a fortune?",
        ),
        intro=(
            "This is a very common situation and it can be fixed in a couple of afternoons. The order matters: copy first, tidy later.",
            "The safest plan is to get everything copied before you try to organise anything. Step by step:",
        ),
        items=(
            Item(
                "Buy one external drive of at least 2 TB and copy everything onto it, device by device, into folders named after the device."
            ),
            Item(
                "Only once everything is copied, run a duplicate finder; with that many photos, expect a third to be copies.",
                "What share of the pictures did you think would turn out to be duplicates?",
            ),
            Item(
                "Sort into folders by year, then by month; it's dull but every photo program understands it."
            ),
            Item(
                "Follow the 3-2-1 rule: three copies, on two kinds of storage, one of them away from the house.",
                "What was the rule with three numbers for keeping the pictures safe?",
            ),
            Item(
                "Turn on a cloud backup for the main folder, or leave a second drive at a relative's house and swap it every few months."
            ),
            Item(
                "Don't wipe the old phones until you've opened a random handful of photos from the new copy and checked they work."
            ),
        ),
        outro=(
            "Start with the laptop, because it's the one most likely to fail.",
            "Do one device per afternoon and it won't feel overwhelming.",
        ),
        count=(4, 6),
    ),
    Task(
        key="bash_backup",
        topic="tech",
        ask=(
            "I keep the café's invoices and the rota in a folder on my laptop and I want a nightly copy to a USB drive, automatically. I'm on a Mac. Is this easy to script?",
            "can you give me a little script that backs up one folder to an external drive every night? mac, nothing fancy, I just don't want to lose my accounts folder",
        ),
        intro=(
            "Yes, `rsync` plus a scheduled job does exactly this. Here's a small script:",
            "It's a few lines. The script mirrors the folder to the drive and keeps a log so you can check it ran:",
        ),
        code=(
            '```bash\n#!/bin/bash\nSOURCE="$HOME/Documents/Business"\nTARGET="/Volumes/BACKUP/Business"\nLOG="$HOME/backup.log"\n\nif [ ! -d /Volumes/BACKUP ]; then\n  echo "$(date): drive not plugged in" >> "$LOG"\n  exit 1\nfi\n\nrsync -a --delete "$SOURCE/" "$TARGET/" && echo "$(date): ok" >> "$LOG"\n```',
        ),
        items=(
            Item(
                "Save it as `backup.sh` in your home folder and make it runnable with `chmod +x backup.sh`."
            ),
            Item(
                "Rename the USB drive to BACKUP in Finder so the path in the script matches.",
                "What name did the USB stick need to have for the script to find it?",
            ),
            Item(
                "`-a` keeps dates and permissions; `--delete` removes files from the copy that you deleted from the original, so it stays an exact mirror."
            ),
            Item(
                "Schedule it with `crontab -e` and the line `0 23 * * * $HOME/backup.sh`, which runs it at 11pm every night.",
                "At what hour is that nightly copy scheduled to run?",
            ),
            Item(
                "Check `backup.log` once a week; a line saying 'drive not plugged in' means the drive was left out."
            ),
            Item(
                "Because `--delete` mirrors deletions, also keep Time Machine on, so a file deleted by mistake can still be recovered."
            ),
        ),
        outro=(
            "Test it once by hand with `./backup.sh` and look in the drive before trusting the schedule.",
            "Any questions about the crontab line, just ask; it's the fiddly bit.",
        ),
        count=(4, 6),
    ),
    Task(
        key="batch_cook",
        topic="cooking",
        ask=(
            "Can you give me a batch cooking plan for a week? Two adults, one teenager who eats like three people, and I get maybe two hours on a Sunday. Budget is tight this month.",
            "need to cook once and eat all week. {dish} is popular in our house but we're getting sick of it, so I'd like a few different things from one session",
        ),
        intro=(
            "Two hours is plenty if you run the oven and the hob at the same time. A plan for the week:",
            "Here's a Sunday session that gives you four different dinners from overlapping ingredients, which is where the savings come from:",
        ),
        items=(
            Item(
                "Start by roasting two trays of veg (squash, peppers, onions, carrots) at 200°C for 40 minutes; they go into three of the meals."
            ),
            Item(
                "A big pot of chilli with one kilo of mince and two tins of beans; half for Monday, half frozen flat in bags.",
                "How many tins of beans went into the big pot in the batch session?",
            ),
            Item(
                "Cook a tray of chicken thighs with paprika and lemon; they do Tuesday's wraps and Thursday's rice bowls."
            ),
            Item(
                "A lentil and tomato soup while the oven's busy; it costs under three pounds for six portions and freezes well."
            ),
            Item(
                "Cook a large pan of rice, cool it within an hour, and keep it in the fridge no more than a day before reheating.",
                "How quickly did the cooked rice need to be cooled?",
            ),
            Item(
                "Label every box with the dish and the date, with masking tape and a marker; it saves the 'what is this' moment.",
                "What did you suggest for labelling the tubs?",
            ),
            Item(
                "Leave Friday as a 'fridge clear-out' night: everything left over, with eggs and toast."
            ),
        ),
        outro=(
            "Do the washing up as you go and the two hours stays two hours.",
            "For the teenager, make the portions generous and keep bread and eggs in for after-school raids.",
        ),
        slots={"dish": ("Spaghetti bolognese", "Shepherd's pie", "Sausage casserole", "Fish pie")},
        count=(5, 7),
    ),
    Task(
        key="scones",
        topic="cooking",
        ask=(
            "Our scones at the café are fine but they're flat and a bit dense, and a customer said so on a review, which stung. We bake about sixty a morning. What am I getting wrong?",
            "how do you get scones to rise tall and straight? mine come out like biscuits and i've tried two recipes",
        ),
        intro=(
            "Flat, dense scones almost always come down to warm butter, overworking, or the cutter. The fixes:",
            "Tall scones are about technique more than recipe. The things that make the difference:",
        ),
        items=(
            Item(
                "Keep the butter fridge-cold and rub it in quickly with fingertips, or pulse it in a processor."
            ),
            Item(
                "Stop mixing the moment the dough comes together; a shaggy, slightly sticky dough makes the lightest scones."
            ),
            Item(
                "Pat the dough out to at least 3 cm thick, not rolled thin; height in the dough is height in the oven.",
                "How thick did the dough need to be before cutting?",
            ),
            Item(
                "Press the cutter straight down and don't twist it; twisting seals the edges and they rise lopsided.",
                "What was the mistake with the cutter that makes them lean over?",
            ),
            Item("Put them close together on the tray so they hold each other up as they rise."),
            Item(
                "Rest the cut scones in the fridge for 15 minutes before baking, then into a hot oven at 220°C.",
                "How long did the cut scones go back in the fridge before the oven?",
            ),
            Item("Brush only the tops with egg wash; drips down the sides glue them to the tray."),
        ),
        outro=(
            "Change one thing at a time over a few mornings so you know which one did it.",
            "The thickness and the cutter are the usual culprits, so start there.",
        ),
        count=(4, 6),
    ),
    Task(
        key="rail_trip",
        topic="travel",
        ask=(
            "My {relative} and I are both retired and we'd like to do a trip through {country} by train this autumn, about ten days, nothing too rushed as my knees aren't what they were. Where would you go?",
            "planning ten days of trains around {country} with my {relative}. we're in our seventies so we don't want to be dragging cases up stairs every day. could you suggest a route?",
        ),
        intro=(
            "Ten days by train in {country} at a gentle pace is a lovely trip. A route that keeps the changes of hotel to a minimum:",
            "The secret to a relaxed rail trip is fewer bases and day trips from them. For {country}, something like:",
        ),
        items=(
            Item(
                "Use two or three bases for three or four nights each, rather than moving every day.",
                "How many nights in each place did the rail itinerary aim for?",
            ),
            Item(
                "Book seat reservations on the long-distance trains; on busy routes they sell out in autumn weekends."
            ),
            Item(
                "Send the big cases ahead with a luggage service between the bases and travel with a small bag each.",
                "What was the suggestion for dealing with the heavy luggage between hotels?",
            ),
            Item(
                "Pick hotels within ten minutes' walk of the station, or with a taxi rank outside; check for lifts when booking."
            ),
            Item("Leave every third day empty: a café, a museum, a bench by the water."),
            Item(
                "Look at a senior railcard or rail pass for the trip; from sixty upwards the discount is usually worth it.",
                "Over what age did you say the discount card becomes worth it?",
            ),
            Item("Travel mid-morning: the trains are quieter and there's no rush for breakfast."),
        ),
        outro=(
            "Autumn is the ideal time: the summer crowds have gone and the weather is still kind.",
            "Tell me which towns tempt you and I can turn this into a day-by-day plan.",
        ),
        slots={
            "country": ("Switzerland", "northern Italy", "Austria", "Scotland", "Portugal"),
            "relative": ("husband", "wife", "sister", "old friend from work"),
        },
        count=(5, 7),
    ),
    Task(
        key="city_break",
        topic="travel",
        ask=(
            "I've got three days off in a row for once (no nights!!) and I want to go somewhere. thinking {city}. budget is small-ish. what would you do with 3 days there?",
            "Three-day trip to {city} with a friend from uni next month. We like food, walking and a bit of culture but not museums all day. Any plan?",
        ),
        intro=(
            "Three days in {city} is a good length: enough to see the big things and still wander. A rough plan:",
            "{city} rewards walking, so this plan keeps transport to a minimum:",
        ),
        items=(
            Item(
                "Day one: the old centre on foot, with lunch wherever the queue is full of locals."
            ),
            Item(
                "Buy a 72-hour transport pass at the airport; it usually pays for itself in four journeys.",
                "How long was the public transport ticket I should get on arrival?",
            ),
            Item(
                "Day two morning: the big sight, booked for the first slot of the day to skip the crowds.",
                "For the most famous attraction, which time slot did you advise?",
            ),
            Item("A food market for lunch on day two; graze rather than sit down."),
            Item(
                "Day three: a neighbourhood away from the centre, and a park or river walk in the afternoon."
            ),
            Item(
                "For dinner, book one nice place in advance, like {pick}, and leave the other nights to chance."
            ),
        ),
        outro=(
            "Keep the evening of the last day free; it's always the one people say they enjoyed most.",
            "Pack light: three days is a carry-on bag trip.",
        ),
        slots={"city": ("Porto", "Ljubljana", "Kraków", "Valencia", "Copenhagen", "Edinburgh")},
        names=PLACES,
        count=(4, 6),
    ),
    Task(
        key="retire_budget",
        topic="money",
        ask=(
            "I retired in the spring and I'm living on a small works pension and, from next year, the state pension. My income has halved and I'm worried I'm spending as if it hasn't. How do I put together a budget that I'll actually stick to?",
            "how should a retired person budget? I've never done one in my life, my late husband did the money, and now it's all on me",
        ),
        intro=(
            "A retirement budget is simpler than a working one in some ways, because income is predictable. Here's how to build one:",
            "It's completely normal to feel unsure about this, and the first budget is the hardest. Steps:",
        ),
        items=(
            Item(
                "Gather three months of bank statements and write down every regular outgoing: bills, subscriptions, insurance, the lot."
            ),
            Item(
                "Split spending into 'must', 'nice' and 'occasional', and put the occasional ones (car service, gifts, holidays) into a monthly amount."
            ),
            Item(
                "Set up a second current account just for bills, and move a fixed amount into it the day the pension arrives.",
                "What was the idea with a second bank account?",
            ),
            Item(
                "Keep an emergency pot of six months' essential spending in an easy-access savings account.",
                "How big did you think my rainy-day fund should be?",
            ),
            Item(
                "Check whether you're entitled to Pension Credit or Council Tax reduction; a lot of people who qualify never claim."
            ),
            Item(
                "Review the budget after three months, and then once a year when the pension goes up.",
                "When should I first look back at the budget after setting it up?",
            ),
        ),
        outro=(
            "The first month is about seeing where the money goes, not judging it.",
            "A free appointment with a pension guidance service is worth booking too; they can look at the whole picture.",
        ),
        count=(4, 6),
    ),
    Task(
        key="self_assessment",
        topic="money",
        ask=(
            "First year self-employed and I've got to do a tax return. I've kept receipts in a carrier bag in the van, which I realise is not ideal. What do I need to do and by when?",
            "self assessment help pls: sole trader, started last april, no idea what I can claim. I'm a tiler if that matters",
        ),
        intro=(
            "Your first return looks scary but for a sole trader it's mostly adding things up. Here's the order to do it in:",
            "Don't worry about the carrier bag; half of first-year sole traders are in the same place. What to do:",
        ),
        items=(
            Item(
                "Register for Self Assessment if you haven't; you get a UTR number by post, which can take ten days.",
                "What was the reference number that comes in the post after registering?",
            ),
            Item(
                "Sort receipts by month into envelopes, then total them into a simple spreadsheet: income, materials, van, tools, phone, other."
            ),
            Item(
                "Claim van costs either as actual costs or with simplified mileage at 45p a mile for the first 10,000 miles, not both.",
                "What was the per-mile rate for the van under the simple method?",
            ),
            Item(
                "Tools and kit you bought for work count as expenses in full in the year you bought them."
            ),
            Item(
                "The online deadline is 31 January, and the tax is due the same day, plus a payment on account for next year.",
                "When is the online return due?",
            ),
            Item(
                "Put 25% of every payment you receive into a separate savings account from now on, so the bill is never a shock."
            ),
        ),
        outro=(
            "Next year, use a free app that photographs receipts; it makes this a one-evening job.",
            "If the numbers get complicated, an accountant for a sole trader usually costs less than people expect.",
        ),
        count=(4, 6),
    ),
    Task(
        key="allotment_start",
        topic="garden",
        ask=(
            "We've finally got an allotment after four years on the waiting list! It's a half plot, very overgrown, brambles and couch grass. Where on earth do we begin?",
            "just took on a neglected allotment plot, full of weeds. what should I do in the first year so I don't get overwhelmed and give up like the last tenant did",
        ),
        intro=(
            "Congratulations, and don't panic: almost every new plot looks like that. The key is to clear a bit at a time and grow something straight away. Plan:",
            "The most common first-year mistake is trying to clear it all before planting anything. A better way:",
        ),
        items=(
            Item(
                "Divide the plot into quarters and clear one quarter properly first; cover the rest with thick black sheeting or cardboard to smother the weeds.",
                "What did you suggest covering the uncleared parts with?",
            ),
            Item(
                "Dig the bramble roots out rather than cutting them; a mattock is the tool for the job."
            ),
            Item(
                "Plant easy, generous crops in the first cleared quarter: potatoes, courgettes, runner beans and squash.",
                "Which crops were recommended for the first bit I clear?",
            ),
            Item(
                "Potatoes also help break up the soil, which is why old gardeners put them in first."
            ),
            Item(
                "Put a compost bay in the corner from day one, made from four pallets tied together.",
                "What were the compost bins to be made from?",
            ),
            Item(
                "Introduce yourself to the plot neighbours; they'll know the soil, the pests and who has spare seedlings."
            ),
            Item("Go little and often: three visits of an hour beat one exhausting Sunday."),
        ),
        outro=(
            "By the end of the first year you want one productive quarter and the rest weed-free under covers. That's a success.",
            "Take a photo today. You'll enjoy comparing it next summer.",
        ),
        count=(4, 6),
    ),
    Task(
        key="pots_patio",
        topic="garden",
        ask=(
            "I've moved into a flat with a small south-facing balcony and I'd love to grow some food on it, herbs, salad, maybe tomatoes. I've never grown anything that lived. What should I do?",
            "balcony growing for a total beginner? it gets sun most of the afternoon and it's quite windy up here (4th floor)",
        ),
        intro=(
            "A sunny balcony can be surprisingly productive. The main enemies are drying out and wind, so plan for those:",
            "Good news: containers are the easiest way to start, because you control the soil. Here's how:",
        ),
        items=(
            Item(
                "Use the biggest pots you have room for; small pots dry out in a day in summer sun.",
            ),
            Item(
                "Buy peat-free multi-purpose compost and mix in a handful of slow-release feed per pot."
            ),
            Item(
                "Start with cut-and-come-again salad leaves, which are ready in four weeks and forgive mistakes.",
                "Which leaves were supposed to be the easy first thing to sow?",
            ),
            Item(
                "Grow tumbling cherry tomatoes in a hanging basket or a tall pot, and feed weekly with tomato food once they flower."
            ),
            Item(
                "Water in the evening, and check daily in summer by pushing a finger into the compost up to the second knuckle.",
                "What was the finger test for knowing when the pots need water?",
            ),
            Item(
                "Put a windbreak of trellis or mesh on the railing; it cuts wind damage dramatically.",
                "What did you say to fix to the railing because of the wind?",
            ),
            Item(
                "Rosemary, thyme and oregano love sun and neglect; basil needs more water and a sheltered corner."
            ),
        ),
        outro=(
            "Check the building rules on weight and anything fixed to the railings before going big.",
            "Start with four pots and add more once those are thriving.",
        ),
        count=(4, 6),
    ),
    Task(
        key="grandkids_week",
        topic="family",
        ask=(
            "The grandchildren are coming to stay for a week in the summer holidays while their parents work, they're 6 and 9. I love them to bits but I'm worried about running out of steam and ideas. Help!",
            "I've got my two grandkids (6 and 9) for half term. Any ideas that won't cost a fortune or wear me out?",
        ),
        intro=(
            "A week with a six- and a nine-year-old is lovely and exhausting in equal parts. A plan that mixes busy days with quiet ones:",
            "The trick is a rhythm: one outing a day, one quiet hour, and simple food. Some ideas:",
        ),
        items=(
            Item(
                "Give each day one 'big thing' in the morning, when everyone has energy, and keep afternoons at home."
            ),
            Item(
                "A daily quiet hour after lunch: books, drawing, an audiobook. Call it 'reading time' and have it for yourself too.",
                "What did the plan call the rest hour after lunch?",
            ),
            Item(
                "Let them cook one meal together from start to finish: pizza on naan breads is ideal at those ages."
            ),
            Item(
                "A free museum or the library on the rainy day; many have summer holiday trails and craft sessions."
            ),
            Item(
                "A 'nature bingo' card for a walk in the park: a feather, a snail, a red leaf, a dog with a ball.",
                "What was the game for the walk in the park?",
            ),
            Item(
                "Keep one treat in reserve for the day when everybody's grumpy, like the cinema or a swim."
            ),
            Item("Bedtime half an hour earlier than they'd like; you'll need the evening."),
        ),
        outro=(
            "Don't plan every minute. Children remember the silly moments more than the outings.",
            "Ask their parents to send their favourite breakfast and a familiar toy; it smooths the first night.",
        ),
        count=(4, 6),
    ),
    Task(
        key="teen_phone",
        topic="family",
        ask=(
            "My 14-year-old is on her phone until 1am most nights and then can't get up for school. Every time I bring it up we have a row. How do other parents handle this without it becoming a war?",
            "teenager + phone at night = total nightmare. any approach that actually works? he's 15 and taller than me so I can't exactly confiscate it",
        ),
        intro=(
            "This is one of the most common battles in families with teenagers, and heavy-handed rules usually backfire. An approach that tends to work better:",
            "Rows happen when it feels like punishment. If you can make it a household rule rather than a judgement on them, it goes much better:",
        ),
        items=(
            Item("Talk when nobody's cross, ideally at a weekend lunch, not at midnight."),
            Item(
                "Agree a family charging station outside bedrooms, with phones in it at a set time; adults included.",
                "Where were all the phones supposed to go at night?",
            ),
            Item(
                "Make the time something they help choose, like 10.30 on school nights and later on Fridays, in exchange for something they want."
            ),
            Item(
                "Buy a cheap alarm clock so 'I need it for the alarm' stops being the reason.",
                "What was the cheap thing to buy so the alarm excuse goes away?",
            ),
            Item(
                "Use the router's schedule to switch Wi-Fi off to their devices at the agreed time as a backstop, and tell them it's there."
            ),
            Item(
                "Review it after a fortnight together, and loosen it a little if they've kept to it.",
                "After how long were we supposed to sit down and review the phone deal?",
            ),
        ),
        outro=(
            "Expect some testing of the edges in the first week; calm consistency wins it.",
            "The sleep will pick up within a couple of weeks, and so will the mornings.",
        ),
        count=(4, 6),
    ),
    Task(
        key="back_pain",
        topic="health",
        ask=(
            "My lower back has been sore for a couple of weeks. I'm on my knees a lot at work (fitting flooring) and it's worse in the mornings. Nothing shooting down the legs. Is there anything I can do myself before I go to the GP?",
            "I've had a stiff lower back for about a fortnight, from lifting I think. what can I do at home to help it?",
        ),
        intro=(
            "Most back pain like this settles on its own within six weeks, and staying gently active helps more than rest. Things that help:",
            "With no pain down the legs and no numbness, self-care is a reasonable first step. What to try:",
        ),
        items=(
            Item(
                "Keep moving: short walks several times a day are better than lying down, which stiffens everything."
            ),
            Item(
                "Heat in the morning (a hot shower or a heat pad for 15 minutes) to loosen the stiffness.",
                "What did you recommend first thing in the morning for the stiffness?",
            ),
            Item("Gentle knee-to-chest stretches and pelvic tilts, ten of each, twice a day."),
            Item(
                "At work, use proper knee pads and a kneeling board, and stand up and stretch every 30 minutes.",
                "How often should I be getting up off my knees to stretch while working?",
            ),
            Item("Lift with the load close to your body and turn with your feet, not your back."),
            Item(
                "See a doctor promptly if you get numbness around the groin, problems peeing, or weakness in the legs; those need checking the same day.",
                "Which warning signs meant going to a doctor the same day?",
            ),
        ),
        outro=(
            "If it's no better in six weeks, or getting worse, book the GP or a physio.",
            "Painkillers as the pharmacist advises can help you keep moving, which is what actually gets it better.",
        ),
        count=(4, 6),
    ),
    Task(
        key="blood_pressure",
        topic="health",
        ask=(
            "The nurse at my check-up said my blood pressure was a bit high, 148 over 92, and wants me to check it at home for a week. I've bought a monitor. How do I do it properly, and is there anything I should be changing in the meantime?",
            "how do you take blood pressure at home properly? just got a cuff thing and I've been told to keep a record for the surgery",
        ),
        intro=(
            "Home readings are more reliable than the surgery ones if you take them the same way every time. How:",
            "The point of home readings is consistency. Here's the routine surgeries usually ask for:",
        ),
        items=(
            Item(
                "Sit quietly for five minutes first, back supported, feet flat, arm resting at heart height.",
                "How many minutes should I sit still before taking a reading?",
            ),
            Item(
                "Take two readings a minute apart, morning and evening, for seven days.",
            ),
            Item(
                "No caffeine, smoking or exercise in the half hour before.",
            ),
            Item(
                "Put the cuff on bare skin, on the same arm each time, two centimetres above the elbow crease.",
                "Where exactly does the cuff go on the arm?",
            ),
            Item(
                "Write every reading down with the date and time, or use the monitor's memory; the surgery usually ignores the first day.",
                "Which day's readings does the surgery usually leave out?",
            ),
            Item(
                "In the meantime: less salt, less alcohol, and a brisk walk most days all help within weeks."
            ),
        ),
        outro=(
            "If you ever get a reading above 180 over 120 with a headache or chest pain, that's a same-day call.",
            "Take the record to the appointment and they'll decide from the average.",
        ),
        count=(4, 6),
    ),
    Task(
        key="cafe_social",
        topic="cafe",
        ask=(
            "We're a small independent café and our Instagram has 312 followers, most of them my friends. My niece says we should 'do reels'. I don't have time to become an influencer. What's the minimum that actually brings people through the door?",
            "what should a little café post on social media? I have maybe 20 mins a week for it, honestly",
        ),
        intro=(
            "With twenty minutes a week, the goal is to be findable and look alive, not to go viral. What matters most:",
            "You don't need to become an influencer. For a local café, a few basics do almost all the work:",
        ),
        items=(
            Item(
                "Get the Google Business profile right first: hours, photos, menu. More new customers find you there than on Instagram.",
                "Which listing did you say to sort out before worrying about Instagram?",
            ),
            Item(
                "Post three times a week: Monday's bake, a midweek behind-the-counter shot, and Friday's weekend special.",
                "How many posts a week did the social media plan have?",
            ),
            Item(
                "Batch the photos on one quiet morning: shoot by the window in daylight, never under the fluorescent light."
            ),
            Item(
                "Reply to every review, good or bad, within two days; people read the replies as much as the reviews."
            ),
            Item(
                "Tag your suppliers, like {pick}; they often share the post to their followers.",
                "Who should I be tagging in the posts so they share them?",
            ),
            Item(
                "Run one simple offer a month for followers, such as a free cookie with a coffee if they show the post."
            ),
        ),
        outro=(
            "Consistency beats polish: three ordinary posts a week for six months will do more than one brilliant reel.",
            "Ask regulars to leave a review; most will if you ask at the till.",
        ),
        names=SUPPLIERS,
        count=(4, 6),
    ),
    Task(
        key="sea_swim",
        topic="hobbies",
        ask=(
            "A few of the women from work go sea swimming at {beach} every Sunday morning, all year round, and they've asked me to come along. I swim fine in a pool but the sea terrifies me a bit. How do I start safely?",
            "thinking of taking up cold water swimming, people keep telling me it's amazing for your mood. what do I need to know before I try?",
        ),
        intro=(
            "Sea swimming is wonderful, and starting with a group is the safest way. The main thing is respecting the cold. What to know:",
            "Cold water is safe if you build up slowly and never go alone. Here's how to start:",
        ),
        items=(
            Item(
                "Never swim alone, and tell someone on the shore when you're in and when you're out."
            ),
            Item(
                "Get in slowly and breathe out long and steady for the first minute until the cold-shock gasp passes.",
                "How long does the gasping reflex last when you first get into cold water?",
            ),
            Item(
                "A rough rule for beginners: one minute in the water per degree of water temperature, and less at first.",
                "What was the rule of thumb for how long to stay in?",
            ),
            Item(
                "Wear a bright tow float and a bright hat so you're visible to boats and the shore."
            ),
            Item(
                "Neoprene gloves and socks make a huge difference in winter; hands and feet go first.",
                "Which bits of kit did you say help most in winter?",
            ),
            Item(
                "Warm up afterwards gradually: dress quickly, hat on, a hot drink; no hot shower straight away."
            ),
            Item(
                "Check tide times and the forecast before every swim, and don't go in if there's a big swell."
            ),
        ),
        outro=(
            "Go with the group for the first few months; they'll know the currents at {beach}.",
            "You'll probably be hooked by week three.",
        ),
        slots={"beach": ("the harbour steps", "the north beach", "the lido end", "the breakwater")},
        count=(5, 7),
    ),
    Task(
        key="birding",
        topic="hobbies",
        ask=(
            "Since I stopped working I've been watching the birds at the feeder a lot, and I'd like to get into birdwatching properly. I can tell a robin from a blackbird and that's about it. How do I learn?",
            "how does a complete beginner get into birdwatching? retired, have a garden and a park nearby, no binoculars yet",
        ),
        intro=(
            "Birdwatching is a lovely thing to take up, and the garden is the best classroom there is. A way in:",
            "Starting with the birds you already see is exactly right. Here's a path from there:",
        ),
        items=(
            Item(
                "Get a pair of 8x42 binoculars; that size is bright, steady and the standard recommendation for beginners.",
                "Which size of binoculars was the beginner recommendation?",
            ),
            Item(
                "Learn your garden birds properly first, around twenty species, before worrying about rarities."
            ),
            Item(
                "Use a free sound-identification app on your phone; learning songs doubles what you notice.",
            ),
            Item(
                "Keep a notebook: date, place, species. It turns a walk into a record and you'll love reading it back."
            ),
            Item(
                "Take part in the garden bird count in late January; it's an hour at the window and it helps science.",
                "What time of year is the garden bird count?",
            ),
            Item(
                "Join a guided walk with the local bird group; an expert pointing things out teaches more in a morning than a month alone.",
            ),
        ),
        outro=(
            "Feeders with sunflower hearts bring the widest range of birds to a garden.",
            "Patience is the whole skill; sit still for ten minutes and the birds come back.",
        ),
        count=(4, 6),
    ),
    Task(
        key="choir",
        topic="hobbies",
        ask=(
            "I've joined a community choir and there's a concert in eight weeks. Everyone else seems to read music and I very much don't. How can I learn my part in time without embarrassing myself?",
            "how do you learn a choir part when you can't read music? alto, concert in two months",
        ),
        intro=(
            "Lots of choir members can't read music and learn by ear. A routine that gets a part into your head in time:",
            "You can absolutely learn it by ear. Here's how people do it:",
        ),
        items=(
            Item(
                "Ask for the part recordings: most choirs have an MP3 of each voice part alone.",
                "What did you say to ask the choir leader for?",
            ),
            Item(
                "Listen to your part for ten minutes a day, every day, even while doing other things.",
            ),
            Item(
                "Mark the score with your own symbols: arrows for up and down, a breath tick, circles round the tricky bits."
            ),
            Item(
                "Learn one song at a time, starting with the one that opens the concert.",
                "Which song did you suggest learning first?",
            ),
            Item(
                "Stand next to a strong singer in your section at rehearsals; you'll lock onto them."
            ),
            Item(
                "Record yourself singing along on your phone once a week and listen back; it shows where you drift.",
            ),
        ),
        outro=(
            "By the concert you won't need the words in front of you for most of it, which frees you to watch the conductor.",
            "Nerves on the night are normal; breathe out slowly before the first note.",
        ),
        count=(4, 6),
    ),
)

PREFERENCES = (
    Preference(
        "teetotal",
        (
            "I don't drink at all, haven't touched a drop in six years, so nothing involving the pub crawl kind of thing.",
            "fyi I'm teetotal, have been since my twenties, it's just not for me.",
        ),
        ("Any ideas for how to celebrate my thirtieth with a few friends?",),
    ),
    Preference(
        "pescatarian",
        (
            "I eat fish but no meat, that's been the way since I was at school, so bear that in mind.",
        ),
        (
            "What could I make for six people on Saturday night?",
            "Give me some ideas for a Sunday roast alternative?",
        ),
        "cooking",
    ),
    Preference(
        "no_flying",
        (
            "I won't get on a plane, had a horrible flight years ago and that was it for me.",
            "planes are a no for me, proper phobia, I've not flown since 2009.",
        ),
        (
            "Where could {partner} and I go for our anniversary in the spring?",
            "Can you suggest somewhere abroad for a week's break in June?",
        ),
        "travel",
    ),
    Preference(
        "bad_knees",
        (
            "My knees are shot after years of kneeling on floors; stairs and steep hills are the worst of it.",
        ),
        (
            "Could you suggest a walking holiday for next year?",
            "Where would be good for a few days exploring on foot?",
        ),
        "travel",
    ),
    Preference(
        "coeliac",
        ("I'm coeliac, so even a crumb of ordinary flour makes me ill for days.",),
        (
            "What could we bake for the school fete stall?",
            "I fancy a treat with my afternoon cuppa, any recipe ideas?",
        ),
        "cooking",
    ),
    Preference(
        "dog_comes",
        (
            "{pet} comes everywhere with us, we've never put our dog in kennels and we're not about to start.",
        ),
        ("Any ideas for a long weekend away in October?", "Where should we stay on the coast?"),
        "travel",
    ),
    Preference(
        "lark",
        (
            "I'm up at five most days without an alarm and I'm useless after about nine at night, always have been.",
        ),
        (
            "How should I fit my revision into the day during the exam weeks?",
            "When's the best time for me to squeeze in some exercise?",
        ),
        "study",
    ),
    Preference(
        "no_chilli",
        ("I really can't do spicy food, honestly even a korma is pushing it for me.",),
        (
            "What should I order at the Thai place tomorrow night?",
            "Suggest a midweek curry I could cook?",
        ),
        "cooking",
    ),
    Preference(
        "car_free",
        ("we got rid of the car last spring and just use buses and the bikes these days.",),
        (
            "How would we get to a wedding in a village in the Cotswolds?",
            "Plan us a weekend in the Yorkshire Dales?",
        ),
        "travel",
    ),
    Preference(
        "introvert",
        (
            "I'm quite an introvert, honestly big groups and noisy rooms wipe me out for a day afterwards.",
        ),
        (
            "What should I do for my fortieth?",
            "How could I meet a few new people since moving here?",
        ),
        "",
    ),
    Preference(
        "lactose",
        ("dairy and me don't get on, lactose intolerant, found out last year.",),
        (
            "What can I grab for breakfast before a long day at work?",
            "What should I take for lunch on a twelve-hour shift?",
        ),
        "shifts",
    ),
    Preference(
        "paper_person",
        (
            "I'm much happier with pen and paper than apps, I just don't get on with doing things on a screen.",
        ),
        (
            "What's a good way to keep on top of my jobs and who owes me money?",
            "How should I organise my week?",
        ),
        "trade",
    ),
    Preference(
        "second_hand",
        (
            "I try very hard not to buy anything new, it's second-hand or nothing wherever possible.",
        ),
        (
            "I need a desk and a decent chair for studying, where should I look?",
            "What should I get to kit out a spare room?",
        ),
        "study",
    ),
    Preference(
        "cat_allergy",
        ("I'm badly allergic to cats, eyes streaming within ten minutes.",),
        (
            "We're booking a holiday let in Cornwall, anything I should check first?",
            "I'm thinking of getting a pet for company, what would you suggest?",
        ),
        "",
    ),
    Preference(
        "light_sleeper",
        ("I'm a very light sleeper, the slightest noise and I'm wide awake.",),
        (
            "What should I ask for when I check in to the hotel in Porto?",
            "Any tips for booking a place to stay in a city centre?",
        ),
        "travel",
    ),
    Preference(
        "no_pork",
        ("We don't eat pork in our house, it's a religious thing.",),
        (
            "What could go on the barbecue when the neighbours come round?",
            "Ideas for a packed lunch the kids would actually eat?",
        ),
        "cooking",
    ),
    Preference(
        "listener",
        ("I take things in far better by listening than reading, always have, even at school.",),
        (
            "How should I prepare for my theory test?",
            "What's the best way for me to learn about the history of the area?",
        ),
        "study",
    ),
    Preference(
        "heat",
        ("I really suffer in the heat, anything over about 25 degrees and I'm done in.",),
        (
            "When should we book our trip to Seville?",
            "Which month would be good for a week in Greece?",
        ),
        "travel",
    ),
    Preference(
        "budget",
        ("Money is really tight at the moment, every pound counts until things pick up.",),
        (
            "What could I get {partner} for their birthday?",
            "Any ideas for a day out with the family over the holidays?",
        ),
        "money",
    ),
)

UPDATES = (
    Update(
        "ward",
        (
            "the stroke unit",
            "A&E",
            "the children's ward",
            "theatre recovery",
            "the respiratory ward",
            "the discharge lounge",
        ),
        (
            "I'm on {v} at the moment, mostly long days, it's busy but the team's lovely.",
            "for context I work on {v}, been there since I qualified.",
        ),
        (
            "Big change at work, after months of asking they've finally moved me off {old} and I start on {v} on Monday. Same hospital, same car park fees.",
            "so I've left {old}!! transferred to {v}, first week done and my feet are destroyed.",
        ),
        (
            "Which bit of the hospital am I working in?",
            "Where am I based at the hospital these days?",
        ),
        "good",
        topic="shifts",
    ),
    Update(
        "cafe_hours",
        ("8 till 3", "half seven till 4", "9 till 5", "8 till 2", "7 till 3"),
        ("We open {v} at the café, six days a week, closed Mondays.",),
        (
            "We've changed our opening times: it was {old}, and from next week it's {v}, which suits the school run crowd better.",
            "new hours at the café, we've gone from {old} to {v} after looking at the till data.",
        ),
        (
            "If a customer rings to ask when we're open, what do I tell them?",
            "What times does my café trade?",
        ),
        topic="cafe",
    ),
    Update(
        "flat_white",
        ("£2.80", "£2.95", "£3.10", "£3.30", "£3.50"),
        ("A flat white at ours is {v}, which I think is fair for round here.",),
        (
            "Redid the price list this week after looking at milk and bean costs. Flat white went from {old} to {v}. Nobody's said a word yet, touch wood.",
            "flat white is {v} from today, it was {old}, new chalkboard and everything.",
        ),
        (
            "What do we charge for a flat white?",
            "I'm redoing the chalkboard, what price goes next to the flat white?",
        ),
        "neutral",
        topic="cafe",
    ),
    Update(
        "van",
        (
            "a Ford Transit Custom",
            "a Vauxhall Vivaro",
            "a VW Transporter",
            "a Renault Trafic",
            "a Citroën Berlingo",
        ),
        ("I drive {v} for work, it's done a lot of miles but it gets me there.",),
        (
            "Traded in {old} this week and picked up {v}. Heated seats, I'm never going back.",
            "the old van's gone, said goodbye to {old}, it's {v} for me from today.",
        ),
        (
            "What am I driving for work?",
            "Which van should the insurance renewal be for?",
        ),
        "good",
        topic="trade",
    ),
    Update(
        "supervisor",
        ("Dr Okafor", "Professor Lindqvist", "Dr Pereira", "Dr Hale", "Professor Adeyemi"),
        ("My supervisor is {v}, who is lovely but replies to emails about once a fortnight.",),
        (
            "Plot twist: {old} has gone on research leave so I've been handed over to {v} for the rest of the year.",
            "I've got a new supervisor, {v}, because {old} left the department.",
        ),
        (
            "Who should I send my chapter draft to for sign-off?",
            "Who's overseeing my dissertation?",
        ),
        topic="study",
    ),
    Update(
        "room_rent",
        ("£95 a week", "£110 a week", "£118 a week", "£128 a week", "£140 a week"),
        ("I pay {v} for my room in a shared house, bills included.",),
        (
            "New tenancy agreement came through: the room goes from {old} to {v}, with a month's notice.",
            "rent's changed, {old} before and now {v}, and the shower still doesn't work.",
        ),
        (
            "What do I pay for my room?",
            "How much goes to the landlord each week?",
        ),
        "neutral",
        topic="money",
    ),
    Update(
        "volunteering",
        (
            "the charity shop on the high street",
            "the hospital radio",
            "the food bank at St Mark's",
            "the library's reading group",
            "the canal restoration trust",
        ),
        ("Since retiring I volunteer with {v} one day a week, it gets me out of the house.",),
        (
            "I've stopped helping at {old}, it wasn't the same after the manager left. I'm with {v} now instead.",
            "Changed my volunteering: no more {old}, I've signed up with {v}.",
        ),
        (
            "Where do I give my time as a volunteer?",
            "What's my regular volunteering?",
        ),
        topic="hobbies",
    ),
    Update(
        "shift_pattern",
        (
            "long days",
            "permanent nights",
            "earlies and lates",
            "a mix of days and nights",
            "a nine-to-five clinic rota",
        ),
        ("I'm doing {v} at the moment, which is why my messages come at odd times.",),
        (
            "rota's changed AGAIN. no more {old}, it's {v} from next month. my body clock has given up.",
            "Good news for once: I've come off {old} and I'm on {v} now.",
        ),
        (
            "What hours am I working at the hospital?",
            "What sort of rota am I on?",
        ),
        topic="shifts",
    ),
    Update(
        "side_job",
        (
            "at a bar in town",
            "in the campus library",
            "at a big supermarket",
            "tutoring GCSE maths",
            "at a call centre",
        ),
        ("I work part-time {v} on top of uni, about twelve hours a week.",),
        (
            "Quit the job {old}, I'm working {v} now, better pay and fewer late nights.",
            "new part-time job!! I've left {old} and I start {v} on Friday.",
        ),
        (
            "Where's my part-time job?",
            "What do I do for money alongside my course?",
        ),
        "good",
        topic="study",
    ),
    Update(
        "five_k",
        ("34:10", "31:45", "29:58", "28:20", "27:05"),
        ("My parkrun time is usually about {v}, but I'm only running for fun.",),
        (
            "Parkrun update: I'm coming in around {v} most weeks now, it used to be {old}.",
            "my usual saturday 5k is more like {v} these days, was {old} in the spring.",
        ),
        (
            "What's my typical parkrun time?",
            "What finishing time should I put down as my usual 5k on the race entry?",
        ),
        "neutral",
        topic="health",
    ),
    Update(
        "team_size",
        ("three", "four", "five", "six", "seven"),
        ("There are {v} of us working at the café, me included.",),
        (
            "Staffing has shifted around, so we're {v} now instead of {old}.",
            "staffing update, we were {old} and now we're {v}, which is either brave or stupid.",
        ),
        (
            "How big is my team at the café?",
            "How many aprons do I need to order so everyone at the café has one?",
        ),
        topic="cafe",
    ),
    Update(
        "day_rate",
        ("£170", "£190", "£210", "£230", "£250"),
        ("I charge {v} a day for labour, which is about average round here.",),
        (
            "Had a rethink about pricing and changed my day rate from {old} to {v}.",
            "day rate's now {v}, was {old}, nobody's batted an eyelid.",
        ),
        (
            "What should I put down for a day of my labour on this quote?",
            "What's my daily rate?",
        ),
        topic="trade",
    ),
)

FACTS = (
    Fact(
        "hospital",
        ("St Columba's", "the Royal Infirmary", "Westgate General", "Kingsmead Hospital"),
        (
            "I'm at {v}, the big one by the ring road, and parking there is a nightmare.",
            "work is {v}, forty minutes each way on a good day.",
        ),
        ("Where do I do my shifts?", "Which hospital employs me?"),
        topic="shifts",
    ),
    Fact(
        "cafe_name",
        ("The Wren", "Crumb & Co.", "Little Fig", "The Corner Cup", "Bramble Café"),
        ("We named the café {v}, after a joke between me and my sister, and it stuck.",),
        ("What's my business called?", "What name is over the door of my café?"),
        topic="cafe",
    ),
    Fact(
        "course",
        (
            "environmental science",
            "adult nursing",
            "history and politics",
            "mechanical engineering",
            "psychology",
        ),
        (
            "i'm in second year of {v}, which is why everything I ask you is about deadlines.",
            "I'm doing {v} at uni, if that helps with the context.",
        ),
        ("What's my degree in?", "What subject am I at university for?"),
        topic="study",
    ),
    Fact(
        "former_job",
        (
            "thirty-one years as a postman",
            "teaching geography",
            "running a hardware shop",
            "a career in the civil service",
            "working as a midwife",
        ),
        ("I retired last year after {v}, so all this free time is new to me.",),
        ("What was my line of work before I retired?", "What did I do for a living?"),
        topic="money",
    ),
    Fact(
        "merchant",
        ("Travis Perkins", "City Plumbing", "Screwfix", "a local merchant called Harlow's"),
        ("I get most of my materials from {v}, I've got a trade account there.",),
        (
            "Where do I usually buy supplies for jobs?",
            "Which supplier am I set up with on credit?",
        ),
        topic="trade",
    ),
    Fact(
        "blood_group",
        ("O negative", "A positive", "B positive", "AB negative"),
        ("I'm {v}, which is why the donor people ring me constantly.",),
        ("What's my blood type?",),
        topic="health",
    ),
    Fact(
        "dog_breed",
        ("a lurcher", "a border terrier", "a greyhound we rescued", "a cockapoo", "a Jack Russell"),
        ("We've got {v} called {pet}, who is the real boss of the house.",),
        ("What kind of dog is {pet}?", "What breed is our dog?"),
        topic="family",
    ),
    Fact(
        "anniversary",
        ("12 March", "3 June", "28 September", "14 November", "21 December"),
        (
            "{partner} and I got married on {v}, a long time ago now, and we still go out for a meal every year.",
        ),
        ("What date should I book our yearly anniversary dinner for?",),
        topic="family",
    ),
    Fact(
        "boot_size",
        ("6", "7", "8 and a half", "10", "11"),
        ("My feet are a size {v}, in case that matters for anything.",),
        ("What size should I order the new safety boots in?",),
        topic="trade",
    ),
    Fact(
        "bus",
        ("the 42", "the X5", "the 18", "the 7A", "the 130"),
        ("I get {v} to campus every morning, which is always late.",),
        ("Which bus do I take to lectures?", "What's my route to uni?"),
        topic="study",
    ),
    Fact(
        "first_job",
        (
            "a paper round",
            "washing dishes in a hotel kitchen",
            "a Saturday job at Woolworths",
            "picking strawberries",
        ),
        ("My very first job was {v}, I was fourteen and thought I was rich.",),
        ("How did I earn my first wages?",),
    ),
    Fact(
        "hometown",
        ("Sunderland", "Galway", "Stoke", "Inverness", "Swansea", "Carlisle"),
        ("I grew up in {v}, moved down here for work in my twenties.",),
        ("Where am I originally from?", "Which town did I spend my childhood in?"),
    ),
    Fact(
        "espresso",
        ("a La Marzocco Linea", "a Sanremo Zoe", "a second-hand Faema", "a Rancilio Classe 5"),
        ("We run {v} behind the counter, it's older than some of my staff.",),
        ("Which coffee machine should the engineer bring parts for?",),
        topic="cafe",
    ),
    Fact(
        "drug_allergy",
        ("penicillin", "codeine", "ibuprofen", "aspirin"),
        ("I'm allergic to {v}, came out in hives the one time I had it.",),
        ("What should I tell the dentist I can't be given?",),
        mood="neutral",
        topic="health",
    ),
    Fact(
        "grandkids_ages",
        ("4 and 7", "6 and 9", "2 and 5", "8 and 11"),
        ("The grandchildren are {v} now, time flies.",),
        ("How old are my grandchildren?",),
        topic="family",
    ),
)

EVENTS = (
    Event(
        "revalidation",
        (
            "Finally submitted my revalidation tonight, three years of reflections and feedback done.",
        ),
        ("my revalidation", "sending off my professional registration paperwork"),
        mood="good",
        topic="shifts",
    ),
    Event(
        "hygiene_visit",
        (
            "The environmental health officer came in unannounced this morning, and we kept our five stars!",
        ),
        ("the hygiene inspection", "our food safety visit"),
        mood="good",
        topic="cafe",
    ),
    Event(
        "van_break_in",
        ("Someone broke into the van overnight and took two drills and the laser level.",),
        ("the van break-in", "when my tools got nicked"),
        mood="bad",
        topic="trade",
    ),
    Event(
        "presentation",
        ("Did my project presentation today, fifteen minutes plus questions, and I didn't faint.",),
        ("my dissertation presentation", "presenting my project to the department"),
        mood="good",
        topic="study",
    ),
    Event(
        "leaving_do",
        ("It was my leaving do today after all those years. Speeches, a cake, the lot.",),
        ("my retirement party", "the send-off at work"),
        mood="good",
        topic="money",
    ),
    Event(
        "tumble",
        (
            "Took a tumble on wet leaves by the church this morning, nothing broken but a huge bruise.",
        ),
        ("my fall by the church", "slipping over on the leaves"),
        mood="bad",
        topic="health",
    ),
    Event(
        "new_baby",
        (
            "Our {son} and his partner had their baby last night, a little boy, everyone's doing well.",
        ),
        ("the baby arriving", "becoming a grandparent again"),
        mood="good",
        topic="family",
    ),
    Event(
        "in_charge",
        ("First night in charge of the whole ward tonight. Terrifying, but we got through it.",),
        ("my first shift in charge", "running the ward for the first time"),
        mood="good",
        topic="shifts",
    ),
    Event(
        "machine_down",
        (
            "The espresso machine packed up in the middle of the Saturday rush. Instant coffee and apologies all morning.",
        ),
        ("the coffee machine breaking", "the machine dying mid-rush"),
        mood="bad",
        topic="cafe",
    ),
    Event(
        "ceiling_leak",
        ("Water came through the kitchen ceiling this morning from the flat upstairs.",),
        ("the leak from upstairs", "the ceiling leak"),
        mood="bad",
    ),
    Event(
        "wiring_regs",
        ("Got the certificate for my wiring regs exam through the post today!",),
        ("passing the regs exam", "getting my wiring qualification"),
        mood="good",
        topic="trade",
    ),
    Event(
        "chest_infection",
        (
            "Called in sick today, first time in two years, completely floored by a chest infection.",
        ),
        ("my chest infection", "the day I phoned in ill"),
        mood="bad",
        topic="health",
    ),
    Event(
        "music_night",
        ("Went to see {v} last night with {partner}, really good night out.",),
        ("going to see {v}", "the night out watching {v}"),
        (
            "a tribute band at the town hall",
            "the Hallé",
            "a brass band in the park",
            "a jazz trio at the Crown",
            "a folk duo at the arts centre",
        ),
        (
            "Who was the live music {partner} and I went out to in {month}?",
            "What did we go and hear play in {month}?",
        ),
        "good",
        topic="hobbies",
    ),
    Event(
        "coach_trip",
        ("Had a day out in {v} yesterday with the over-sixties club, coach there and back.",),
        ("the outing to {v}", "our coach trip to {v}"),
        ("Whitby", "Bath", "Stratford", "Durham", "Lincoln", "Ely"),
        (
            "Where did the club's coach outing in {month} go?",
            "Which town did I have a day out in during {month}?",
        ),
        "good",
        topic="travel",
    ),
    Event(
        "job_finished",
        ("Finished {v} today, the customer was over the moon.",),
        ("finishing {v}", "signing off {v}"),
        (
            "a loft conversion",
            "a full bathroom refit",
            "a kitchen extension",
            "a shop front",
            "a barn conversion",
        ),
        (
            "What did I complete for a client in {month}?",
            "Which project was wrapped up in {month}?",
        ),
        "good",
        topic="trade",
    ),
    Event(
        "interview",
        ("Had an interview with {v} this afternoon, think it went ok??",),
        ("my interview with {v}", "going for the job with {v}"),
        (
            "an NHS graduate scheme",
            "a consultancy in Leeds",
            "the council's planning team",
            "a renewable energy start-up",
        ),
        (
            "Who did I go for a job with in {month}?",
            "Which employer saw me for an interview in {month}?",
        ),
        topic="study",
    ),
    Event(
        "stall",
        ("We did a stall at {v} today, sold out of brownies by two.",),
        ("the stall at {v}", "trading at {v}"),
        ("the Christmas fair", "the food festival", "the farmers' market", "a vintage car rally"),
        ("Where did we have a stand in {month}?", "What event did the café sell at in {month}?"),
        "good",
        topic="cafe",
    ),
)

SERIES = (
    Series(
        "blood_donation",
        ("whole blood", "platelets", "plasma", "whole blood again"),
        ("Popped into the donor centre after my shift and gave {v}, got my biscuit.",),
        (
            "Count up my trips to the donor centre for me?",
            "How many donations have I made lately?",
            "What's my tally of donations lately?",
        ),
        mood="good",
        topic="health",
    ),
    Series(
        "bank_shifts",
        ("£96", "£132", "£180", "£214"),
        ("Picked up an extra bank shift this week, that's another {v} before tax.",),
        (
            "Add up what the bank shifts have earned me, would you?",
            "What's the total I've made from extra shifts?",
        ),
        topic="shifts",
    ),
    Series(
        "best_saturday",
        ("£1,240", "£1,385", "£1,510", "£1,690"),
        ("Record Saturday at the café: we took {v} through the till!",),
        (
            "How have our record Saturday takings grown over time?",
            "Give me the figures for each best-ever Saturday at the café so far.",
        ),
        mood="good",
        topic="cafe",
    ),
    Series(
        "essay_marks",
        ("54", "59", "63", "68", "72"),
        ("got my mark back for the latest essay, {v}, not sure how to feel.",),
        (
            "Are my coursework grades going up or down?",
            "Summarise the scores I've had back on assignments.",
        ),
        topic="study",
    ),
    Series(
        "cancelled_jobs",
        (
            "a bathroom in Ashfield",
            "a kitchen floor on Dale Road",
            "a patio out at Brinsley",
            "a porch in Kimberley",
        ),
        ("Another customer pulled out the day before I was due to start: {v}.",),
        (
            "Which bookings fell through on me at the last minute?",
            "List the jobs customers cancelled.",
        ),
        mood="bad",
        topic="trade",
    ),
    Series(
        "garden_birds",
        ("a nuthatch", "a great spotted woodpecker", "a goldcrest", "a pair of bullfinches"),
        ("Saw {v} in the garden this morning, first time ever!",),
        (
            "What newcomers have turned up at the feeder?",
            "Which first-time visitors to the garden have I reported?",
        ),
        mood="good",
        topic="hobbies",
    ),
    Series(
        "sea_temp",
        ("14 degrees", "12 degrees", "10 degrees", "8 degrees"),
        ("Sunday dip done with the girls, water was {v}.",),
        (
            "How has the water temperature changed over my sea swims?",
            "What readings did the thermometer give on my Sunday dips?",
        ),
        topic="hobbies",
    ),
    Series(
        "book_group",
        ("Hamnet", "Small Things Like These", "The Salt Path", "Lessons in Chemistry"),
        ("Book group tonight, we talked about {v} for two hours and drank a lot of tea.",),
        (
            "Which titles has my book club got through?",
            "Remind me of the novels we've discussed at book group.",
        ),
        topic="hobbies",
    ),
    Series(
        "vet_bills",
        ("£65", "£140", "£220", "£85"),
        (
            "{pet} had to go back to the vet, {v} this time, and of course there was nothing wrong in the end.",
        ),
        (
            "What's the running total of vet bills for {pet}?",
            "Tot up what the vet has charged us for {pet}.",
        ),
        mood="bad",
        topic="family",
    ),
    Series(
        "slimming",
        ("2 lb", "3 lb", "1.5 lb", "4 lb"),
        ("Weigh-in at slimming club: down {v} this week.",),
        (
            "Altogether, how much weight have I shed at slimming club?",
            "What's my total loss at the weekly weigh-ins?",
        ),
        mood="good",
        topic="health",
    ),
    Series(
        "catering",
        (
            "a christening for forty",
            "an office lunch for twelve",
            "a wake for sixty",
            "a baby shower for twenty-five",
        ),
        ("We've got an outside catering order in: {v}!",),
        (
            "What outside catering jobs has the café taken on?",
            "Run through the private orders we've had for events.",
        ),
        mood="good",
        topic="cafe",
    ),
    Series(
        "placements",
        ("a GP surgery", "a care home", "the district nursing team", "a hospice"),
        ("Started my new placement today at {v}, long days but I'm learning loads.",),
        (
            "Where have my placements been so far?",
            "Which settings have I been sent to for practice?",
        ),
        topic="study",
    ),
)

ABSENT = (
    Absent("What did I call my tortoise?", ("tortoise",)),
    Absent("Which evening class in Italian did I enrol on?", ("italian",)),
    Absent("How much did we pay for the new boiler?", ("boiler",)),
    Absent("When is my next driving lesson?", ("driving lesson", "instructor")),
    Absent("What did the dentist say about my back tooth?", ("dentist", "tooth", "teeth")),
    Absent("Which marathon am I training for?", ("marathon",)),
    Absent("How many goats do we keep?", ("goat",)),
    Absent(
        "Which shade did we go for on the walls of the baby's room?", ("nursery", "baby's room")
    ),
    Absent("When did I get my tattoo done?", ("tattoo",)),
    Absent("Which golf club am I a member of?", ("golf",)),
    Absent("What did the solicitor say about Dad's will?", ("solicitor",)),
    Absent("Where did we go on honeymoon?", ("honeymoon",)),
    Absent("What grade did I get for my piano exam?", ("piano",)),
    Absent("Which mortgage broker did we use?", ("mortgage", "broker")),
    Absent("How old is my horse?", ("horse",)),
    Absent("What was our team's score at the pub quiz?", ("quiz",)),
)

PROFILE = {
    "partner": ("Declan", "Shona", "Marek", "Bev", "Tariq", "Gwen", "Lloyd", "Parveen", "Stuart"),
    "son": ("son Kyle", "son Adeel", "son Jonah", "son Rhys", "son Marcus"),
    "daughter": ("Kerry-Ann", "Bethan", "Nadia", "Lorna", "Simone"),
    "friend": ("Michelle", "Deb", "Gaz", "Priya", "Tomasz", "Cath"),
    "pet": ("Biscuit", "Murphy", "Dougal", "Mabel", "Rusty", "Pip"),
}

NAMES = (
    "Aled", "Bernadette", "Carys", "Dwayne", "Eileen", "Fraser", "Gillian", "Hamish", "Imogen", "Jamal",
    "Kerrie", "Lewis", "Maureen", "Neil", "Olwen", "Paddy", "Rhiannon", "Shaun", "Trudy", "Ubaid",
    "Val", "Wayne", "Yaw", "Zahid", "Andrzej", "Brenda", "Craig", "Donna", "Ebele", "Fiona",
    "Gordon", "Hayley", "Iqbal", "Janice", "Kieran", "Lorraine", "Malcolm", "Nadine", "Owain", "Pauline",
    "Rashpal", "Sandra", "Terry", "Usha", "Vinnie", "Wendy", "Yvonne", "Zeynep", "Alfie", "Babajide",
    "Cheryl", "Dean", "Elaine", "Frankie", "Gemma", "Hussein", "Ifeoma", "Jodie", "Kamal", "Lesley",
    "Mandeep", "Norma", "Oisin", "Pam", "Reggie", "Sinead", "Tyrone", "Unity", "Vijay", "Warren",
    "Alison", "Brian", "Chantelle", "Dilys", "Eddie", "Faisal", "Glenys", "Harpreet", "Irene", "Jayden",
    "Kath", "Lenny", "Marion", "Nigel", "Precious", "Rab", "Sharon", "Tommo", "Uzma", "Vernon",
    "Wanda", "Yasin", "Zbigniew", "Agnieszka", "Barry", "Colette", "Dougie", "Esi", "Fauzia", "Graham",
    "Hilary", "Ivy-Mae", "Jaspreet", "Kev",
)  # fmt: skip

ASIDES = {
    "shifts": (
        "A general point about shift work: the tiredness is cumulative, so the third and fourth shift of a block are where mistakes and bad decisions creep in. Plan anything important, like driving a long way or a difficult conversation, for before the block or after a proper recovery day.",
        "It's worth talking to colleagues who've done the pattern for years; most have a small trick (a particular snack, a playlist for the drive, a rule about the phone) that they swear by, and you can borrow the ones that fit your life.",
    ),
    "cafe": (
        "With a small business, it helps to pick one number to watch each week rather than ten. For most cafés that's either the average spend per customer or the wage bill as a share of takings; move the one you chose and the rest tends to follow.",
        "Whatever you change, tell your regulars before they notice it themselves. A line on the chalkboard or a word at the till turns a change into a conversation rather than a complaint.",
        "Keep every invoice and receipt in one place as you go, even if it's just a box file by month; it makes the end of the year far less painful and your accountant's bill smaller.",
    ),
    "study": (
        "Universities have more support than most students use: study skills sessions, writing centres, librarians who will find sources for you. They're free, already paid for by your fees, and rarely booked up outside exam season.",
        "If you hit a wall, tell someone early, whether that's a tutor, your supervisor or student support. Extensions and adjustments are far easier to arrange a fortnight before a deadline than the night before.",
    ),
    "trade": (
        "A general business point for trades: the jobs that lose money are usually the ones where the scope was vague. Write down what's included before you start, even for friends and family, and you'll avoid most arguments before they happen.",
        "Keep photos of every job, before, during and after. They're your portfolio for new customers and your evidence if something is disputed months later.",
    ),
    "tech": (
        "A small habit worth adopting: before you change anything, make a copy of the folder or file you're about to touch. It costs seconds and means a mistake is an inconvenience rather than a disaster.",
        "If something doesn't work first time, the error message nearly always says what's wrong, even if it's worded badly. Copy the exact text and send it to me; it's far quicker than describing what happened.",
        "Keep software up to date, and turn on two-step sign-in for your email above everything else, because email is how every other account gets reset.",
    ),
    "cooking": (
        "Taste as you go and season in stages; most home cooking that tastes flat is simply under-salted or missing a squeeze of acid at the end, like lemon juice or a splash of vinegar.",
        "Read the whole recipe before starting and get everything weighed and chopped first. It feels slower, but it's how professional kitchens stay calm.",
    ),
    "travel": (
        "Travel insurance is worth buying as soon as you book rather than just before you go, because it covers you if something stops you travelling in between. Declare any medical conditions, even minor ones.",
        "Keep digital copies of passports, tickets and bookings in one folder on your phone, and a paper list of key phone numbers in case the phone dies.",
    ),
    "money": (
        "The usual caveat: allowances, thresholds and deadlines change most years, so check the current figures on the official government website before you act on anything here.",
        "Free, impartial guidance is available on most money questions, from pensions to debt, and it's worth using before paying anyone for advice.",
    ),
    "garden": (
        "Gardening is mostly about watching: note what thrives and what sulks in your particular spot, and next year do more of the first. A phone photo every couple of weeks is an easy diary.",
        "Water less often but more deeply; a thorough soak twice a week does more good than a sprinkle every evening, because it sends roots down rather than keeping them at the surface.",
    ),
    "family": (
        "Whatever you decide, agreeing it with the other adults in the family first matters more than the exact rules; children spot a gap between grown-ups immediately.",
        "Be kind to yourself in all this. Nobody gets it right every day, and a calm apology after a bad moment teaches children more than a perfect record would.",
    ),
    "health": (
        "This is general information, not a diagnosis. If anything is getting worse, or you're worried, a pharmacist is a quick first port of call and can tell you whether you need to see a GP.",
        "Sleep, movement and regular meals do a surprising amount of the heavy lifting for most health niggles, unexciting as that sounds.",
    ),
    "hobbies": (
        "Joining a group, even a small one, is the best way to keep a new interest going: you learn from people a step ahead, and having somewhere to be on a given day keeps you turning up when motivation dips.",
        "Don't spend much on equipment until you've been at it for a few months and know what you actually use; second-hand kit is plentiful for almost every hobby.",
    ),
}

POOL = Pool(
    prefix="ab",
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
        "hi again.",
        "Morning! Quick one before work.",
        "Sorry, me again, it's late.",
        "ok so.",
        "Hello, hope you don't mind another question.",
        "right then.",
    ),
    postscripts=(
        "Thanks in advance, you're a lifesaver.",
        "Keep it simple if you can, I'm knackered.",
        "I've only got my break to read this.",
        "No rush, whenever.",
        "Bullet points are fine.",
        "tbh I've no idea where to start.",
        "I'd rather do it properly than quickly.",
        "Be honest with me.",
        "Need it sorted by the weekend ideally.",
    ),
    bridges=(
        "Anyway, the reason I'm messaging:",
        "But that's not why I'm here.",
        "Anyway!",
        "Right, my actual question.",
        "So, what I wanted help with:",
    ),
    acks={
        "good": (
            "Oh, that's brilliant news, well done!",
            "That's lovely to hear, {name}.",
            "Congratulations, that must feel good.",
        ),
        "bad": (
            "Oh no, I'm sorry, that's a rotten thing to deal with.",
            "That's really frustrating, {name}, sorry to hear it.",
            "Ugh, what a day. Sorry.",
        ),
    },
    asides=ASIDES,
    offers=(
        "Would a printable one-page version help? I can boil this down to something you could stick on the fridge.",
        "If you tell me more about your situation I can tailor this rather than keeping it general.",
        "Happy to go through any one of these in more detail; just say which.",
    ),
    follows=(
        (
            "If I could only do one of these, which one?",
            "Go for the one that removes the biggest daily annoyance, even if it isn't the most impressive. A small change you keep doing beats a big one you abandon after a week, and once it's a habit you'll have the energy to add the next.",
        ),
        (
            "What do people usually get wrong with this?",
            "Mostly they try everything at once, run out of steam, and conclude it doesn't work. The other common one is skipping the preparation at the start because it feels like a waste of time. Start smaller than you think you need to, and give it a few weeks before judging it.",
        ),
        (
            "sorry, can you explain that again but simpler?",
            "Of course. In short: do the first step this week, the next one the week after, and don't worry about the rest yet. Everything else on the list is a refinement. If a particular step doesn't make sense, tell me which and I'll put it another way.",
        ),
        (
            "Is any of this going to cost much?",
            "Very little of it, honestly. Most of the list is about how you do things rather than what you buy. Where there is a cost, there's nearly always a cheaper second-hand or borrowed option, and it's worth starting there until you know it's something you'll stick with.",
        ),
    ),
    closings=(
        (
            "That's really helpful, thank you so much.",
            "You're very welcome, {name}. Let me know how it goes.",
        ),
        ("perfect ta", "No problem, good luck with it all."),
        (
            "Great, I'll have a go at that this week.",
            "Sounds like a plan. Come back if anything doesn't work out as expected.",
        ),
        (
            "Thanks, that's put my mind at rest.",
            "Glad it helped. Take care of yourself, {name}.",
        ),
    ),
    when=(
        "Remind me of the date of {a}?",
        "{a}: what day was that again?",
        "Which date did {a} fall on?",
        "When exactly was {a}?",
    ),
    ago=(
        "How long ago was {a}, roughly?",
        "It's been how many weeks since {a}?",
        "How far back was {a}?",
    ),
    order=(
        "Did {a} come before or after {b}?",
        "{a} and {b}: which came first?",
        "Which was more recent, {a} or {b}?",
    ),
    gap=(
        "How much time passed between {a} and {b}?",
        "How many weeks separated {a} and {b}?",
        "Between {a} and {b}, how long was it?",
    ),
    start=(datetime(2018, 5, 1), datetime(2019, 5, 1)),
)


def build(people: int = PEOPLE) -> Json:
    """The blind set (``people`` conversations; the default is the registered 100)."""
    return generate(POOL, people=people, seed=SEED)
