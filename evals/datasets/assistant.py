"""The ``assistant`` recall set: 120 people, each with about fifty dated sessions of chat with
their assistant, all in one store (one namespace per person). Seeded; no source file.

The shape Flynn serves: a person asks for things (recipes, itineraries, scripts, plans) and the
assistant answers at length, while the person mentions, in passing, what questions are later
asked about: preferences, facts that change, dated events, recurring threads. Built by
``histories.generate`` (which documents the categories and the speakers: ``user`` is the person
and always speaks first) from the pool below; ``assistant_small`` is its first 12 people, for
quick runs. ``assistant_sealed`` is written from a separate pool (other people, other requests,
other wording) and is not to be measured until the end of the work it tests.
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

PEOPLE = 120
SEED = 1515

VENUES = (
    "Casa Amarela",
    "Bistro Lumen",
    "The Salt Cellar",
    "Tavern Okra",
    "Maison Verte",
    "Olive & Ash",
    "Kettle House",
    "Bar Nocturne",
    "Little Fig",
    "Copper Pot",
    "Marlow's",
    "Fenwick Kitchen",
    "Sala Blu",
    "Ember Room",
    "Quayside Larder",
    "Oto",
)

TASKS = (
    Task(
        key="city_food",
        topic="travel",
        ask=(
            "I'm going to {dest} for a few days. Where should I eat? Not touristy please.",
            "Can you recommend some restaurants in {dest}? Mid-range mostly, one nice dinner.",
            "Any food recommendations for {dest}? I'll be there for a long weekend.",
        ),
        intro=(
            "Here are some places in {dest} that locals actually go to, roughly from cheap to splurge:",
            "Happy to help. {dest} punches well above its weight for food. A shortlist:",
        ),
        items=(
            Item(
                "**{pick}**: tiny, only eight tables and no online booking, so ring them the morning you want to go. The slow-cooked pork cheeks are the thing to order.",
                "In {dest}, which little place did you say I need to call in advance?",
            ),
            Item(
                "**{pick}**: the best-value lunch in the centre, three courses plus a glass of wine for about the price of a sandwich at the tourist spots. Weekdays only, 12:30 to 3.",
                "What was the spot you mentioned for a cheap set midday meal in {dest}?",
            ),
            Item(
                "**{pick}**: rooftop terrace looking over the old town; go just before sunset and get the grilled octopus.",
                "What was the name of the place with the view you said to visit at dusk in {dest}?",
            ),
            Item(
                "**{pick}**: a vegetable tasting menu that even committed carnivores rave about; seven small courses, very seasonal."
            ),
            Item(
                "**{pick}**: an old market-hall stall. Stand at the counter, point at whatever looks fresh and they grill it in front of you.",
                "Where did you say I could eat standing up while they cook my food in {dest}?",
            ),
            Item(
                "**{pick}**: natural wine bar with good small plates; it gets loud after nine, so go early if you want to talk."
            ),
            Item(
                "**{pick}**: family-run bakery whose custard tarts sell out by ten, so make it breakfast rather than dessert.",
                "Which pastry shop in {dest} did you tell me to get to early in the day?",
            ),
            Item(
                "**{pick}**: the splurge, a chef's counter with twelve seats. Book three weeks out and ask for the seats facing the grill."
            ),
        ),
        outro=(
            "If you only have one evening, pair an early drink at the wine bar with dinner at the counter place. Most kitchens close around 10:30, later on Fridays and Saturdays.",
            "One tip: a lot of places close on Mondays, and lunch menus are often far better value than dinner. Enjoy {dest}!",
        ),
        slots={
            "dest": (
                "Porto",
                "Kraków",
                "Valencia",
                "Ljubljana",
                "Bologna",
                "Ghent",
                "Tallinn",
                "Seville",
                "Lyon",
                "Gdańsk",
            )
        },
        names=VENUES,
        count=(5, 7),
        follow=(
            (
                "Are any of those ok for a big group? There might be eight of us one night.",
                "For eight, the wine bar and the market stall are easiest: neither needs much notice for a group on a weeknight. The counter restaurant can do a private booking of the whole counter, but you'd need to email them well ahead. Avoid the tiny place; eight people would be the whole room.",
            ),
        ),
    ),
    Task(
        key="itinerary",
        topic="travel",
        ask=(
            "Could you put together a rough plan for {trip_city}? A few days, we like walking and food more than museums.",
            "Help me plan a few days in {trip_city}? First time there.",
        ),
        intro=(
            "Here's a relaxed plan for {trip_city}, assuming you arrive the evening before:",
            "Here's a {trip_city} outline that mixes the classics with some quieter bits:",
        ),
        items=(
            Item(
                "Start in the old quarter with the free walking tour (they leave at 10 from the main square), then lunch at {pick} and a slow afternoon by the river.",
                "Where did you suggest we eat after the guided stroll on the {trip_city} trip?",
            ),
            Item(
                "Day trip by regional train, about 50 minutes each way. Buy the return at the machine in the station; it's 30% cheaper than paying on board.",
                "What discount did you mention for buying the rail fare before boarding?",
            ),
            Item(
                "Slow morning at the botanical garden, then the covered market for snacks and drinks at the {pick} rooftop for the evening."
            ),
            Item(
                "Rent bikes from {pick} near the station (about 15 a day) and ride the river path out to the lighthouse; it's flat the whole way.",
                "Where did you say to hire bicycles in {trip_city}?",
            ),
            Item(
                "Museum day: the modern art museum stays open late on Thursdays and is half price after 6, when it's nearly empty.",
                "On which evening did you say the gallery in {trip_city} gets cheaper?",
            ),
            Item(
                "Food tour in the afternoon (the one run by {pick} keeps groups to eight people), then an early night."
            ),
            Item(
                "Thermal baths in the morning: bring flip-flops and your own towel to dodge the rental fees, then a long lunch."
            ),
            Item(
                "Walk up to the viewpoint for sunrise (40 minutes, steep at the end), then breakfast at {pick} on the way down.",
                "What café did you suggest for after the early climb to the lookout?",
            ),
        ),
        outro=(
            "Get a 72-hour transport pass on arrival; it covers the airport train too. I'd keep one afternoon free in case of rain.",
            "Most sights are walkable from the centre, so stay near the main station for easy day trips.",
        ),
        slots={
            "trip_city": (
                "Lisbon",
                "Edinburgh",
                "Copenhagen",
                "Vienna",
                "Prague",
                "Budapest",
                "Amsterdam",
                "Bordeaux",
            )
        },
        names=VENUES,
        count=(3, 5),
        label="**Day {i}:**",
    ),
    Task(
        key="packing",
        topic="travel",
        ask=(
            "What should I pack for {trip}? I always overpack.",
            "Can you give me a packing list for {trip}? Carry-on only if possible.",
        ),
        intro=(
            "Carry-on only is very doable for {trip}. The trick is layers and one of everything:",
            "Here's a list for {trip} that fits in a 40-litre bag:",
        ),
        items=(
            Item(
                "Two merino base layers. They can be worn several days running without smelling, which is what makes the small bag work.",
                "What fabric did you say I could wear again and again without it getting whiffy?",
            ),
            Item(
                "A packable rain shell, even if the forecast is dry; it doubles as a windbreaker."
            ),
            Item(
                "One pair of broken-in shoes plus light sandals. New shoes on a trip are how blisters happen."
            ),
            Item(
                "A zip pouch with plasters, ibuprofen, rehydration sachets and a small tube of {pick} blister gel.",
                "Which blister product did you put in the first-aid pouch on my list?",
            ),
            Item(
                "Roll clothes rather than folding, and use a compression cube for the bulky layer."
            ),
            Item(
                "A universal adapter with two USB ports, so one socket charges everything overnight."
            ),
            Item(
                "Solid toiletries (shampoo bar, solid deodorant) so nothing counts toward the liquids limit.",
                "What did you suggest to get around the airport rule on liquids?",
            ),
            Item("A light scarf or buff: sun, cold, dust, a pillow on the train."),
        ),
        outro=(
            "Lay everything out the night before and take away a third of it. You will not miss it.",
            "Weigh the bag once it's packed; budget airlines are strict about 7 or 10 kg.",
        ),
        slots={
            "trip": (
                "a week of hiking in the Alps",
                "a rainy long weekend in Scotland",
                "ten days in Japan in spring",
                "a beach week in Crete",
                "a work trip to Chicago in winter",
            )
        },
        names=("Compeed", "Spenco", "Band-Aid Hydro Seal", "Elastoplast"),
        count=(5, 7),
    ),
    Task(
        key="risotto",
        topic="cooking",
        ask=(
            "Can you walk me through making mushroom risotto? I've never managed to get it creamy.",
            "What's your method for a proper mushroom risotto for two?",
        ),
        intro=(
            "Creamy risotto is mostly technique, not cream. For two generous portions:",
            "Here's the method that works every time, for two:",
        ),
        items=(
            Item(
                "Soak 15 g dried porcini in 300 ml hot water for 20 minutes and keep the soaking liquid; it's the backbone of the flavour."
            ),
            Item(
                "Warm about a litre of stock in a separate pan and keep it just below a simmer; cold stock stalls the rice."
            ),
            Item(
                "Sweat a finely chopped shallot in butter and a splash of oil over medium heat for 5 minutes, without browning."
            ),
            Item(
                "Add 160 g carnaroli (or arborio) and toast it for 2 minutes until the edges turn translucent."
            ),
            Item(
                "Deglaze with a glass of dry white wine, or a tablespoon of white wine vinegar in 100 ml water if you don't keep wine in.",
                "If there's no alcohol at home, what did you suggest using instead in that rice dish?",
            ),
            Item(
                "Add the stock a ladle at a time, stirring often, for 18 to 20 minutes; pour in the porcini liquid halfway through."
            ),
            Item(
                "Fry 250 g chestnut mushrooms separately in a very hot pan so they brown rather than steam, then fold them in at the end."
            ),
            Item(
                "Off the heat, beat in a cold knob of butter and a big handful of parmesan, cover and rest for 2 minutes. Italians call this the mantecatura.",
                "What's the Italian name for the last step, where you whip in the cheese with the pot off the stove?",
            ),
        ),
        outro=(
            "It should flow slowly when you tilt the plate (all'onda, like a wave). If it's stiff, loosen it with a last splash of stock.",
        ),
        count=(6, 8),
        label="{i}.",
    ),
    Task(
        key="curry",
        topic="cooking",
        ask=(
            "How do I make a Thai green curry that doesn't taste like it came from a jar?",
            "Give me a good green curry recipe? I have a paste but it always tastes flat.",
        ),
        intro=(
            "A shop-bought paste can taste great if you fry it properly and balance it at the end. For four:",
        ),
        items=(
            Item(
                "Spoon the thick cream off the top of a can of coconut milk and fry it in the wok until it splits and the oil shows, about 5 minutes.",
                "What did you tell me to cook until it separates before adding the paste?",
            ),
            Item(
                "Fry 3 to 4 tablespoons of paste in that oil for 2 minutes, until it smells sharp and fragrant."
            ),
            Item(
                "Add 500 g sliced chicken thigh or firm tofu and coat it in the paste before pouring in the rest of the can."
            ),
            Item("Pea aubergines or chunks of regular aubergine go in next; simmer 10 minutes."),
            Item(
                "Tear in four or five makrut lime leaves, central rib removed. Frozen ones are fine and keep for months.",
                "Which leaves did you say I can keep in the freezer for that Thai dish?",
            ),
            Item(
                "Balance at the end: fish sauce for salt, palm sugar for sweetness, lime for sour. Taste, adjust, taste again.",
                "What three things did you say to adjust the seasoning with at the very end?",
            ),
            Item(
                "Finish with a big handful of Thai basil off the heat and a few slices of red chilli."
            ),
            Item("Serve with jasmine rice, rinsed twice and cooked 1:1.25 rice to water."),
        ),
        outro=(
            "The split coconut cream is the step most recipes skip, and it's the one that makes it taste like a restaurant's.",
        ),
        count=(6, 8),
    ),
    Task(
        key="bread",
        topic="cooking",
        ask=(
            "I want to bake my first loaf of bread. Something simple that doesn't need a mixer?",
            "Can you give me a no-knead bread recipe? I have a cast-iron pot.",
        ),
        intro=(
            "No-knead bread is the best first loaf: time does the work. You need 500 g strong white flour, 10 g salt, 3 g instant yeast and 375 ml lukewarm water.",
        ),
        items=(
            Item(
                "Mix everything into a shaggy dough in a big bowl, just until there's no dry flour. It will look wrong. That's fine."
            ),
            Item(
                "Cover and leave at room temperature for 12 to 18 hours, until it's bubbly and roughly doubled."
            ),
            Item(
                "Tip it onto a floured counter and fold it over itself four times to build a little tension."
            ),
            Item("Let it rest seam-side down on baking paper for an hour while the oven heats."),
            Item(
                "Heat the oven with the pot inside to 250°C for 30 minutes. The pot has to be scorching.",
                "How hot did you tell me to get the oven for my first loaf?",
            ),
            Item(
                "Lift the dough in by the paper, lid on, for 30 minutes; then lid off for 15 to 20 more until deep brown.",
                "How long does the lid stay on before I take it off, according to your recipe?",
            ),
            Item(
                "Cool it on a rack for at least an hour before cutting, or the inside turns gummy.",
                "Why did you say I have to wait before slicing the loaf?",
            ),
        ),
        outro=(
            "Once you've made it twice, swap 100 g of the flour for wholemeal or rye. Same method.",
        ),
        count=(6, 7),
    ),
    Task(
        key="mealprep",
        topic="cooking",
        ask=(
            "Can you help me plan a week of work lunches I can cook on Sunday?",
            "I want to stop buying lunch every day. Ideas for meal prep that doesn't get boring?",
        ),
        intro=(
            "Here's a Sunday plan: about 90 minutes of cooking for five lunches that don't all taste the same.",
        ),
        items=(
            Item(
                "Roast two trays of vegetables (squash, peppers, red onion, chickpeas) with smoked paprika; they go into three of the lunches."
            ),
            Item(
                "Cook a big pot of a mixed grain like farro; it holds its bite in the fridge far better than rice.",
                "Which grain did you say stays chewy in the fridge for my lunches?",
            ),
            Item(
                "Make one jar of dressing (tahini, lemon, garlic, water) and one of salsa verde; sauces are what stop it being boring."
            ),
            Item(
                "Monday and Tuesday: grain bowls with the veg and a soft-boiled egg you cook that morning."
            ),
            Item(
                "Wednesday: a lentil soup from the freezer stash, so the week has one warm lunch."
            ),
            Item(
                "Keep dressings separate and add them at lunchtime, so nothing goes soggy.",
                "What did you tell me to keep apart until I eat, so the prepped food doesn't wilt?",
            ),
            Item(
                "Cooked grains and veg are good for four days in the fridge; freeze Thursday and Friday's portions on Sunday and move them down on Wednesday night.",
                "How many days did you say the cooked stuff keeps chilled?",
            ),
        ),
        outro=(
            "Buy five identical glass containers; it sounds silly, but it makes the whole thing stick.",
        ),
        count=(5, 7),
    ),
    Task(
        key="rename_script",
        topic="tech",
        ask=(
            "Can you write me a Python script to rename all the photos in a folder by the date they were taken?",
            "I have thousands of files named IMG_1234.jpg. Could you script renaming them to the date?",
        ),
        intro=(
            "Here's a small script that renames photos to their capture date (falling back to the file's modified time), and never overwrites anything:",
        ),
        code=(
            """```python
import argparse
from datetime import datetime
from pathlib import Path

from PIL import Image

TAKEN = 36867  # EXIF DateTimeOriginal


def taken(path: Path) -> datetime:
    try:
        raw = Image.open(path).getexif().get_ifd(0x8769).get(TAKEN)
        return datetime.strptime(raw, "%Y:%m:%d %H:%M:%S")
    except Exception:
        return datetime.fromtimestamp(path.stat().st_mtime)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("folder", type=Path)
    parser.add_argument("--dry-run", action="store_true")
    args = parser.parse_args()
    for path in sorted(args.folder.glob("*.jpg")):
        stem = taken(path).strftime("%Y-%m-%d_%H%M%S")
        target = path.with_name(stem + path.suffix.lower())
        n = 1
        while target.exists():
            target = path.with_name(stem + "-" + str(n) + path.suffix.lower())
            n += 1
        print(path.name, "->", target.name)
        if not args.dry_run:
            path.rename(target)


main()
```""",
        ),
        items=(
            Item(
                "Install the one dependency with `pip install pillow` (it reads the EXIF data).",
                "Which library did I need to install for the picture-renaming program?",
            ),
            Item(
                "Run it with `--dry-run` first: it prints every old and new name without touching anything.",
                "What option did you tell me to use so the script only shows what it would do?",
            ),
            Item(
                "Two photos taken in the same second get `-1`, `-2` suffixes instead of overwriting each other."
            ),
            Item(
                "It only looks at `.jpg`; change the glob to `*.heic` for iPhone files (you'd need `pillow-heif` as well)."
            ),
            Item("Copy the folder first the first time you run it for real. Cheap insurance."),
        ),
        outro=(
            "Run it as `python rename_photos.py ~/Pictures/holiday --dry-run`, check the output, then again without the flag.",
        ),
        count=(4, 5),
        label="-",
    ),
    Task(
        key="spreadsheet",
        topic="money",
        ask=(
            "In Google Sheets, how do I total my spending by category and month? I have date, category and amount columns.",
            "How can I make my expenses spreadsheet show how much I spent per category each month?",
        ),
        intro=(
            "Assuming dates in column A, categories in B and amounts in C, with a header row, a few ways to do it:",
        ),
        items=(
            Item(
                "Quickest: a pivot table (Insert > Pivot table) with Category as rows, Date grouped by month as columns and SUM of Amount as values."
            ),
            Item(
                'For a formula version, put months in row 1 of a summary tab and categories in column A, then use `=SUMIFS(Data!C:C, Data!B:B, $A2, Data!A:A, ">="&B$1, Data!A:A, "<"&EDATE(B$1,1))`.',
                "What function did you give me for adding up by both label and date range?",
            ),
            Item(
                "Make sure the dates are real dates, not text: Format > Number > Date. Text dates silently break every formula."
            ),
            Item(
                "Add a data validation dropdown on the category column so 'Groceries' and 'groceries ' don't become two categories.",
                "How did you suggest stopping typos from splitting one spending type into two?",
            ),
            Item(
                "Conditional formatting on the summary (a colour scale) makes the expensive months jump out."
            ),
            Item(
                "Freeze the header row (View > Freeze > 1 row) so it stays put as the list grows."
            ),
        ),
        outro=(
            "If you later want charts, build them off the summary tab, not the raw data; they stay much tidier.",
        ),
        count=(4, 6),
    ),
    Task(
        key="wifi",
        topic="tech",
        ask=(
            "My wifi is awful in the back bedroom. What can I try before buying new gear?",
            "Why does our internet keep dropping in the evenings and how do I fix it?",
        ),
        intro=("Work through these roughly in order; the first few are free:",),
        items=(
            Item(
                "Move the router off the floor and out of cupboards: chest height, central, away from the fish tank and the microwave."
            ),
            Item(
                "Log into the router (usually 192.168.1.1) and set the 2.4 GHz band to channel 1, 6 or 11, whichever neighbours use least.",
                "Which radio channels did you suggest picking between on the router?",
            ),
            Item(
                "Split the bands: give 5 GHz its own name so close devices use it and the slow band is left for the far rooms."
            ),
            Item(
                "Restart the router weekly or set a scheduled reboot; cheap ISP routers leak memory."
            ),
            Item(
                "Check speed with a cable plugged in. If it's slow even wired, it's the line, and that's a call to the provider.",
                "How did you say I can tell whether the problem is the broadband itself rather than the wireless?",
            ),
            Item(
                "If you do buy something, a two-unit mesh kit beats a plug-in extender, which halves your speed."
            ),
            Item(
                "Powerline adapters are worth a try if the house has thick stone walls and the wiring is on one circuit."
            ),
        ),
        outro=(
            "Most back-bedroom problems are solved by the router's position plus a mesh point halfway down the hall.",
        ),
        count=(5, 7),
    ),
    Task(
        key="git_undo",
        topic="tech",
        ask=(
            "I committed to the wrong branch in git. How do I undo it without losing the changes?",
            "How do I undo my last git commit but keep the work?",
        ),
        intro=("No harm done as long as you haven't pushed. Here's the safe way:",),
        code=(
            """```bash
git log --oneline -3          # note the commit you want to move
git reset --soft HEAD~1       # undo the commit, keep the changes staged
git stash                     # set them aside
git switch correct-branch
git stash pop                 # changes are back, still staged
git commit -m "the same message"
```""",
        ),
        items=(
            Item(
                "`--soft` keeps your changes staged; `--mixed` (the default) keeps them but unstaged; `--hard` throws them away, so avoid it here.",
                "Which reset mode did you warn me never to use if I want to keep my edits?",
            ),
            Item(
                "If you already pushed, use `git revert <sha>` instead; rewriting shared history annoys everyone."
            ),
            Item(
                "Lost something anyway? `git reflog` lists every position HEAD has been at for 90 days, so you can get back to it.",
                "What's the command you mentioned for finding commits I thought were gone?",
            ),
            Item("`git switch -` jumps back to the branch you were on before."),
            Item(
                "Alternatively, `git cherry-pick <sha>` on the right branch, then reset the wrong one."
            ),
        ),
        outro=("Do a `git status` between each step until it feels routine.",),
        count=(3, 5),
        label="-",
    ),
    Task(
        key="password_manager",
        topic="tech",
        ask=(
            "Which password manager should I use? I'm still reusing the same three passwords everywhere.",
            "Can you compare password managers for a family of four?",
        ),
        intro=("Any of these is a huge step up from reused passwords. Quick comparison:",),
        items=(
            Item(
                "**Bitwarden**: open source, the free tier syncs unlimited devices; the family plan is about 40 a year for six people.",
                "Which one did you say was open source with unlimited syncing on the free plan?",
            ),
            Item(
                "**1Password**: the most polished apps and the best family sharing (shared vaults, recovery for kids); no free tier."
            ),
            Item(
                "**KeePassXC**: free, offline, a single encrypted file you sync yourself. Great if you distrust clouds, fiddly for family."
            ),
            Item(
                "**Apple Passwords / Google Password Manager**: fine if everyone is on one platform, awkward across both."
            ),
            Item(
                "Whichever you pick, turn on two-factor for the manager itself and print the emergency kit.",
                "What did you say to put on paper after setting it up?",
            ),
            Item(
                "Start with email and banking; let the rest migrate as you log into things over a month."
            ),
        ),
        outro=(
            "For a mixed iPhone and Android family I'd lean Bitwarden on cost, 1Password on polish.",
        ),
        count=(5, 6),
    ),
    Task(
        key="couch_to_5k",
        topic="fitness",
        ask=(
            "I want to start running. I can barely do two minutes. Can you give me a plan to get to 5k?",
            "Could you make me a beginner running plan? Goal is a parkrun in a couple of months.",
        ),
        intro=(
            "Three runs a week, with a rest day between each. Every session starts with a 5-minute brisk walk:",
        ),
        items=(
            Item("Weeks 1-2: alternate 60 seconds jogging and 90 seconds walking, 8 times."),
            Item(
                "Week 3: 90 seconds jogging, 90 walking, then 3 minutes jogging, 3 walking; twice through.",
                "What were the intervals for the third week of my plan?",
            ),
            Item("Week 4: 3 min jog, 90 s walk, 5 min jog, 2.5 min walk, twice."),
            Item(
                "Week 5 has the scary one: a 20-minute continuous run at the end. Go slower than feels necessary."
            ),
            Item("Weeks 6-7: build from 22 to 28 minutes continuous."),
            Item("Week 8-9: 30 minutes, three times a week. That's roughly 5k for most beginners."),
            Item(
                "Pace rule: you should be able to speak in full sentences. If you can't, slow down; it isn't cheating.",
                "What test did you give me for whether I'm going too fast?",
            ),
            Item(
                "Get fitted at a running shop before week 3; most knee and shin problems are shoes."
            ),
        ),
        outro=(
            "Repeat any week that felt too hard. Finishing the plan in twelve weeks instead of nine is still finishing it.",
        ),
        count=(6, 8),
        label="-",
    ),
    Task(
        key="strength",
        topic="fitness",
        ask=(
            "Can you give me a simple strength routine for home? I have two adjustable dumbbells and a bench.",
            "What's a good full-body workout with just dumbbells, three days a week?",
        ),
        intro=(
            "A full-body session, three days a week (e.g. Monday, Wednesday, Friday). Rest 90 seconds between sets:",
        ),
        items=(
            Item(
                "Goblet squat, 3 sets of 10, holding one dumbbell at your chest.",
                "What lower-body move did you put first, the one where I hug a weight?",
            ),
            Item("Dumbbell bench press, 3 x 8-10."),
            Item("One-arm row, 3 x 10 each side, knee and hand on the bench."),
            Item("Romanian deadlift, 3 x 10: soft knees, push the hips back, feel the hamstrings."),
            Item("Overhead press, standing, 3 x 8."),
            Item("Finish with a plank, 3 x 30-45 seconds, and dead bugs, 2 x 10."),
            Item(
                "Progression: when you hit the top of the rep range on every set, add 1 to 2 kg next time.",
                "When did you say I should make the dumbbells heavier?",
            ),
        ),
        outro=(
            "Write down every set. The log is what makes you progress, more than any particular exercise.",
        ),
        count=(5, 7),
    ),
    Task(
        key="desk_stretches",
        topic="health",
        ask=(
            "My neck and shoulders are wrecked from sitting all day. Any stretches I can do at my desk?",
            "What can I do about a stiff upper back from working at a laptop?",
        ),
        intro=("Do these twice a day, and more importantly, stand up every 30-45 minutes:",),
        items=(
            Item(
                "Doorway chest stretch: forearms on the frame, step through until you feel it across the chest, hold 30 seconds.",
                "Which stretch did you suggest using a door frame for?",
            ),
            Item("Chin tucks: 10 slow reps, making a double chin, head level."),
            Item("Seated thoracic twist: hands on opposite shoulders, rotate gently, 5 each way."),
            Item(
                "Upper trap stretch: ear to shoulder, the opposite hand holding the chair seat, 20 seconds a side."
            ),
            Item("Shoulder blade squeezes: pinch them together and down for 5 seconds, 10 times."),
            Item(
                "Raise the laptop so the top of the screen is at eye level, with a separate keyboard. This one change does more than all the stretches.",
                "What did you say was the single biggest fix for my setup?",
            ),
        ),
        outro=(
            "If you get tingling down an arm, that's worth a physio or GP visit rather than more stretching.",
        ),
        count=(5, 6),
    ),
    Task(
        key="sleep",
        topic="health",
        ask=(
            "I keep waking up at 4am and can't get back to sleep. Any ideas?",
            "How can I fall asleep faster? My brain won't switch off at night.",
        ),
        intro=(
            "Early waking is really common and usually a mix of a few things. What tends to help:",
        ),
        items=(
            Item(
                "Same wake-up time every day, weekends included. It anchors everything else.",
            ),
            Item(
                "Keep the bedroom cool, around 18°C; a warm room is a classic cause of early waking.",
                "What temperature did you say the room should be for better rest?",
            ),
            Item("No caffeine after noon. Its half-life is about five hours."),
            Item(
                "If you're awake more than 20 minutes, get up, sit somewhere dim and read something dull, then go back when sleepy.",
            ),
            Item(
                "Write tomorrow's to-do list before bed so your brain isn't holding it at 4am.",
            ),
            Item(
                "Try a 4-7-8 breath: in for 4, hold 7, out for 8, four rounds.",
                "What was the breathing pattern you told me about, with the counts?",
            ),
            Item("Alcohol helps you fall asleep and then wrecks the second half of the night."),
        ),
        outro=(
            "Give any change two weeks before judging it. If it persists for months, CBT-I with a sleep clinic works better than pills.",
        ),
        count=(5, 7),
    ),
    Task(
        key="stain",
        topic="home",
        ask=(
            "Someone spilled red wine on our cream carpet. Help!",
            "How do I get a coffee stain out of a light-coloured rug?",
        ),
        intro=("Act fast, and don't rub; rubbing pushes it deeper. In order:",),
        items=(
            Item("Blot with a dry white cloth, pressing down, moving to a clean patch each time."),
            Item(
                "Pour a little cold water on and blot again. Never hot water; heat sets the stain.",
                "What did you warn me not to use on the carpet because it fixes the mark permanently?",
            ),
            Item(
                "Mix a teaspoon of washing-up liquid and a tablespoon of white vinegar into 500 ml of cool water; dab it on and blot."
            ),
            Item(
                "For what's left: a paste of bicarbonate of soda and water, left to dry overnight, then vacuumed up.",
                "What did you say to leave on overnight and hoover up the next day?",
            ),
            Item(
                "Test anything stronger (hydrogen peroxide, carpet cleaner) on a hidden corner first; it can bleach wool."
            ),
            Item("Work from the outside of the stain inward so it doesn't spread."),
        ),
        outro=(
            "If it's wool and still visible after that, a professional clean is worth it before it sets for good.",
        ),
        count=(5, 6),
    ),
    Task(
        key="declutter",
        topic="home",
        ask=(
            "My wardrobe is overflowing and I wear the same five things. How do I clear it out?",
            "Any system for decluttering a closet that actually sticks?",
        ),
        intro=("A weekend approach that doesn't end with everything back in the wardrobe:",),
        items=(
            Item(
                "Take everything out, all of it, onto the bed. You have to see the whole pile.",
            ),
            Item("Four piles: keep, donate, sell, bin. Nothing goes back in 'maybe'."),
            Item(
                "The hanger trick: turn every hanger backwards now, and flip it when you wear something. After six months, whatever is still backwards goes.",
                "What did you say to do with the coat hangers so I can see what I never wear?",
            ),
            Item(
                "Anything that doesn't fit now goes, even the 'when I lose weight' jeans.",
            ),
            Item(
                "Sell the good pieces on {pick} in one go on a Sunday evening, when most people browse.",
                "Which site did you suggest for selling the nicer clothes?",
            ),
            Item(
                "Donate the same day. Bags in the car boot have a way of staying there for months."
            ),
            Item("One in, one out from now on."),
        ),
        outro=(
            "Most people end up keeping about half. Don't aim for minimalism; aim for a wardrobe where you can see everything.",
        ),
        names=("Vinted", "Depop", "eBay", "Poshmark"),
        count=(5, 7),
    ),
    Task(
        key="plant_care",
        topic="garden",
        ask=(
            "The leaves on my {plant} are going yellow. What am I doing wrong?",
            "How do I look after a {plant}? I just bought one and I kill everything.",
        ),
        intro=("A {plant} is forgiving once you get the basics right:",),
        items=(
            Item(
                "Water only when the top 5 cm of soil is dry: stick a finger in. Most houseplants die of too much water, not too little.",
                "How deep did you say the soil should be dry before I water my {plant}?",
            ),
            Item(
                "Bright, indirect light; a metre or two from a window, not in harsh afternoon sun."
            ),
            Item(
                "Make sure the pot has a drainage hole, and empty the saucer 20 minutes after watering."
            ),
            Item(
                "Yellow lower leaves plus damp soil means overwatering; crispy brown tips means dry air or underwatering.",
            ),
            Item(
                "Feed with a diluted liquid fertiliser once a month from April to September, never in winter.",
                "In which months did you say to give the {plant} plant food?",
            ),
            Item(
                "Wipe the leaves with a damp cloth every few weeks so they can actually use the light."
            ),
            Item("Repot in spring, only one size up, when roots come out of the bottom."),
        ),
        outro=(
            "Yellowing leaves often recover once the watering is right; cut off the ones that don't.",
        ),
        slots={"plant": ("monstera", "fiddle-leaf fig", "peace lily", "pothos", "rubber plant")},
        count=(5, 7),
    ),
    Task(
        key="raised_bed",
        topic="garden",
        ask=(
            "We're building a raised bed this spring. What should we grow in our first year?",
            "Can you help me plan a small vegetable bed, about 1.2 by 2.4 metres?",
        ),
        intro=(
            "For a first year, grow things that are easy, productive and that you actually eat. For a 1.2 x 2.4 m bed:",
        ),
        items=(
            Item("Fill it with a 60:40 mix of topsoil and compost; bagged compost alone slumps."),
            Item("Courgettes: two plants are plenty, honestly. They're enormous."),
            Item("Cut-and-come-again salad leaves, sown every three weeks from April."),
            Item(
                "French marigolds along the edges to draw aphids away from the beans.",
                "What flowers did you suggest planting around the edge to keep pests off?",
            ),
            Item("Climbing beans up a wigwam at the north end so they don't shade everything."),
            Item("Cherry tomatoes in the sunniest corner, pinched out weekly."),
            Item(
                "Water deeply twice a week rather than a splash every day; roots follow the water down.",
                "How often did you tell me to water the veg patch?",
            ),
            Item(
                "Put a layer of cardboard down first to smother grass; it rots away by summer.",
            ),
        ),
        outro=(
            "Keep a simple notebook of what you sowed when; next year's garden is planned from it.",
        ),
        count=(5, 7),
    ),
    Task(
        key="budget",
        topic="money",
        ask=(
            "I never know where my money goes. Can you help me set up a budget that I'll actually stick to?",
            "How should I budget on a {cur}3,200 monthly take-home?",
        ),
        intro=("Here's a simple setup that works for most people:",),
        items=(
            Item(
                "Start with 50/30/20: half for needs (rent, bills, food), 30% for wants, 20% for savings and debt.",
            ),
            Item(
                "Open a separate account for bills and have a standing order move the money there the day you're paid.",
            ),
            Item(
                "Track for one month before changing anything; most people guess their food spend 40% too low.",
                "By how much did you say people tend to underestimate their grocery spending?",
            ),
            Item(
                "Try an app like {pick} that makes you give every pound or dollar a job.",
                "Which budgeting app did you recommend?",
            ),
            Item("Cancel one subscription a week until you'd genuinely miss the next one."),
            Item("Build a starter emergency fund of one month's expenses before anything else."),
            Item(
                "Check in for 15 minutes every Sunday. The habit matters more than the spreadsheet."
            ),
        ),
        outro=("The budget will be wrong the first month. That's the point of the first month.",),
        names=("YNAB", "Monarch", "Goodbudget", "Emma"),
        count=(5, 7),
    ),
    Task(
        key="index_funds",
        topic="money",
        ask=(
            "Can you explain index funds like I'm five? Everyone at work talks about them.",
            "Is it worth putting my savings into an index fund?",
        ),
        intro=(
            "Sure. An index fund buys a little of every company in a list (an index), so you own a slice of the whole market rather than betting on a few companies.",
        ),
        items=(
            Item(
                "Why people like them: you don't have to pick winners, and over decades the market as a whole has grown."
            ),
            Item(
                "Fees matter enormously: look for an ongoing charge under 0.2% a year. A 1% fee can eat a quarter of your returns over 30 years.",
                "What's the maximum yearly charge you told me to look for?",
            ),
            Item(
                "A global tracker (all-world) is the simplest single choice; it holds thousands of companies across countries."
            ),
            Item(
                "Only invest money you won't need for at least five years; in any single year it can drop 20-30%.",
                "For how long did you say I should be able to leave the money alone?",
            ),
            Item(
                "Use a tax-free wrapper first if your country has one (an ISA, a Roth IRA, a TFSA)."
            ),
            Item(
                "Monthly automatic investing smooths out the ups and downs; this is called pound- or dollar-cost averaging."
            ),
        ),
        outro=(
            "Not financial advice, of course, but this is the standard boring approach and boring is good here.",
        ),
        count=(5, 6),
    ),
    Task(
        key="language_plan",
        topic="learning",
        ask=(
            "I want to get conversational in {lang} in about a year. How should I study?",
            "What's the best way to learn {lang} with 30 minutes a day?",
        ),
        intro=(
            "With 30 minutes a day, a year gets you comfortably conversational in {lang} if you split the time well:",
        ),
        items=(
            Item(
                "10 minutes of spaced-repetition vocab (Anki), using a frequency list: the top 1,000 words cover most of daily speech."
            ),
            Item(
                "10 minutes of listening: a learner podcast like {pick}, where they speak slowly about everyday things.",
                "What was the name of the slow-speech show you suggested for practising {lang}?",
            ),
            Item(
                "10 minutes of speaking out loud, even to yourself: describe your day, your plans."
            ),
            Item(
                "From month three, one conversation a week with a tutor on italki; 30-minute lessons are about 10-15.",
            ),
            Item("Watch a series you know well dubbed into {lang}, with {lang} subtitles."),
            Item(
                "Don't start with grammar books; learn the grammar when a sentence confuses you.",
            ),
            Item(
                "Keep a phrase notebook of things you wanted to say and couldn't; that's your real syllabus.",
                "What kind of notebook did you tell me to keep while learning {lang}?",
            ),
        ),
        outro=("The first three months feel slow. Around month four it starts to click.",),
        slots={"lang": ("Spanish", "Italian", "Japanese", "Portuguese", "German", "Korean")},
        names=(
            "Coffee Break",
            "Easy Languages",
            "News in Slow",
            "Duolingo Stories",
            "Unlocked Audio",
        ),
        count=(5, 7),
    ),
    Task(
        key="book_recs",
        topic="learning",
        ask=(
            "I've finished everything on my list. Can you recommend some {genre}?",
            "What {genre} would you recommend for holiday reading?",
        ),
        intro=("Some {genre} picks, with a line on why for each:",),
        items=(
            Item(
                "*{pick}*: a lighthouse keeper, a missing ship and a slow-burning mystery; very atmospheric.",
                "What was the book you mentioned about the man who tends a lighthouse?",
            ),
            Item("*{pick}*: short chapters, a big heart, and a twist you won't see coming."),
            Item(
                "*{pick}*: told backwards through letters; takes 30 pages to get into, then you can't stop.",
                "Which one did you say is told in reverse order through correspondence?",
            ),
            Item("*{pick}*: funny and sad about a family restaurant over three generations."),
            Item(
                "*{pick}*: an expedition across a frozen sea, based on real diaries.",
                "Which title was the one built from real explorers' journals?",
            ),
            Item("*{pick}*: quiet, beautiful writing about a woman restoring an old orchard."),
            Item("*{pick}*: a heist in a museum, told by six narrators who all lie."),
        ),
        outro=(
            "If you only pick one, pick the first; it's the one people press on their friends.",
        ),
        slots={"genre": ("fiction", "novels", "books for a long flight", "literary fiction")},
        names=(
            "The Salt Keeper",
            "Low Tide Letters",
            "A Season of Small Hours",
            "The Orchard at Wren Hill",
            "North of Everything",
            "Six Liars",
            "The Long Table",
            "Paper Lanterns",
            "The Cartographer's Daughter",
            "Still Water",
        ),
        count=(4, 6),
    ),
    Task(
        key="landlord_email",
        topic="home",
        ask=(
            "Can you help me write an email to my landlord about the {problem}? It's been weeks.",
            "Draft a firm but polite message to my landlord about the {problem}.",
        ),
        intro=("Here's a draft that is firm, polite and leaves a paper trail:",),
        code=(
            """> Subject: Repair request: {problem}
>
> Hi,
>
> I'm writing to follow up on the {problem}, which I first reported on the phone three weeks ago. It is still not fixed and is affecting our use of the flat.
>
> Could you please confirm by Friday when a repair will be booked? I'm happy to give access on weekday mornings.
>
> Thanks,
> {name}""",
        ),
        items=(
            Item("Attach two or three dated photos; they matter more than anything you write."),
            Item(
                "Keep it in writing from now on, even if they phone you; follow every call with a two-line email summary.",
                "What did you say I should do after every phone call with the property owner?",
            ),
            Item("Give a specific date for a reply, not 'as soon as possible'."),
            Item(
                "If nothing happens in 14 days, the next step is the council's private housing team, who can inspect.",
                "Who did you say I could escalate to if they ignore me for two weeks?",
            ),
            Item("Don't withhold rent; it weakens your position even when you're in the right."),
        ),
        outro=(
            "Send it in the morning; replies to emails sent before 10am come noticeably faster.",
        ),
        slots={
            "problem": (
                "broken boiler",
                "damp in the bedroom",
                "leaking shower",
                "faulty oven",
                "broken window latch",
            )
        },
        count=(3, 5),
        label="-",
    ),
    Task(
        key="presentation",
        topic="work",
        ask=(
            "I have to give a 20-minute presentation to the leadership team next week and I'm dreading it. Tips?",
            "How do I make my slides less boring for a quarterly review?",
        ),
        intro=(
            "Twenty minutes to senior people is mostly about structure. Here's how I'd prepare:",
        ),
        items=(
            Item(
                "Open with the conclusion: what you want them to decide or know, in one sentence."
            ),
            Item(
                "One idea per slide, and a headline that states it ('Churn fell 12% after the change'), not a topic ('Churn').",
                "What kind of slide titles did you tell me to write instead of topic labels?",
            ),
            Item("Fewer than ten slides; put the rest in an appendix for questions."),
            Item(
                "Rehearse out loud three times, once with a timer, once to a colleague, once recorded on your phone.",
                "How many run-throughs did you say I should do before the talk?",
            ),
            Item("Prepare for the three hardest questions; write down your answers."),
            Item("Leave five minutes for questions. Leadership audiences always have them."),
            Item(
                "If the slides fail, you should be able to give the talk from a single printed page."
            ),
        ),
        outro=(
            "Nerves are normal. Slow down in the first minute; everyone speeds up when nervous.",
        ),
        count=(5, 7),
    ),
    Task(
        key="agenda",
        topic="work",
        ask=(
            "Our weekly team meeting is an hour of people talking over each other. How do I run it better?",
            "Can you give me a template for a useful one-hour team meeting?",
        ),
        intro=("A structure that keeps an hour useful:",),
        items=(
            Item(
                "Send the agenda a day before, each item with an owner and a goal: decide, discuss or inform."
            ),
            Item(
                "Start with 10 minutes of written updates read silently; no one reads status aloud."
            ),
            Item(
                "Put decisions first, while people are fresh; updates last, or better, async.",
            ),
            Item(
                "Use a 'parking lot' doc for tangents; park it, move on, follow up later.",
                "What did you call the place to put off-topic discussions?",
            ),
            Item(
                "End five minutes early to write down decisions and owners in the shared doc.",
            ),
            Item(
                "Rotate who facilitates each week, so it's not always you keeping time.",
                "What did you suggest doing about who chairs the weekly meeting?",
            ),
        ),
        outro=("After a month, ask the team to rate the meeting 1-5 anonymously and adjust.",),
        count=(5, 6),
    ),
    Task(
        key="kids_party",
        topic="family",
        ask=(
            "{kid} turns {age} next month. Any party ideas that aren't a soft-play centre?",
            "Help me plan a birthday party at home for {kid}, who's turning {age}? About ten kids.",
        ),
        intro=("A two-hour party at home for ten {age}-year-olds, without losing your mind:",),
        items=(
            Item("Keep it to two hours; 90 minutes is even better at that age."),
            Item(
                "A treasure hunt with clues in numbered envelopes hidden round the house and garden, ending at the cake.",
                "What game with hidden envelopes did you suggest for {kid}'s birthday?",
            ),
            Item(
                "A craft table as kids arrive (decorate a paper crown or a cookie) so early arrivals have something to do."
            ),
            Item("Pizza is the easiest food; order for 30 minutes after the start, not the end."),
            Item(
                "Party bags: one small good thing (a book, a kite) beats ten plastic bits.",
                "What did you say to put in the take-home bags instead of lots of little toys?",
            ),
            Item("Ask two other parents to stay and help, one on games, one on food."),
            Item("Musical statues or freeze dance when energy is high; it burns it off quickly."),
        ),
        outro=(
            "Write the timetable on a sheet of paper on the fridge. You will forget it otherwise.",
        ),
        slots={"age": ("five", "six", "seven", "eight", "nine")},
        count=(5, 7),
    ),
    Task(
        key="gift",
        topic="family",
        ask=(
            "What should I get {partner} for our anniversary? Budget about {cur}100.",
            "Gift ideas for {partner}? Birthday's coming up and I'm out of ideas.",
        ),
        intro=("A few directions, from practical to sentimental:",),
        items=(
            Item(
                "A subscription to {pick} coffee: a different roaster's beans every month.",
                "What was the monthly beans service you thought {partner} would like?",
            ),
            Item(
                "An experience rather than a thing: a cooking class or a pottery evening for two."
            ),
            Item(
                "A framed print of a map of the place you met, with the date in small type.",
                "What did you suggest framing for the sentimental option?",
            ),
            Item(
                "Really good versions of something they use every day: a chef's knife, slippers, a pen."
            ),
            Item("A photobook of the past year; most services deliver in about a week."),
            Item("Tickets to something a few months away, so the gift lasts longer."),
        ),
        outro=("Add a handwritten card either way. It's usually the part people keep.",),
        names=("Origin", "Pact", "Kiss the Hippo", "Blue Bottle", "Trade"),
        count=(4, 6),
    ),
    Task(
        key="photography",
        topic="hobbies",
        ask=(
            "All my photos of the kids playing football come out blurry. What settings should I use?",
            "How do I take sharp photos of moving things with my camera?",
        ),
        intro=("Blur with moving subjects is almost always shutter speed. Try this setup:",),
        items=(
            Item(
                "Shutter priority (S or Tv) at 1/500 s or faster for running kids or dogs.",
                "What speed did you tell me to set so running children aren't blurry?",
            ),
            Item("Auto ISO with a cap of 6400; noise is better than blur."),
            Item(
                "Continuous autofocus (AF-C or AI Servo) so the camera keeps tracking.",
                "Which focus mode did you say keeps following a subject as it moves?",
            ),
            Item("Burst mode, and pick the best of five."),
            Item("Shoot with the sun behind you, or in shade, to avoid harsh contrast."),
            Item("Get low, at the kids' eye level; it makes every sports photo better."),
        ),
        outro=("Try it at the next match and then look at which shots failed and why.",),
        count=(5, 6),
    ),
    Task(
        key="board_games",
        topic="hobbies",
        ask=(
            "Can you recommend some board games for when friends come over? Four to six people, not too long.",
            "What are good board games for a family game night?",
        ),
        intro=("Some tried-and-tested picks for groups:",),
        items=(
            Item(
                "**Codenames**: word-association teams, 15 minutes a round, works with up to eight.",
            ),
            Item(
                "**Wavelength**: guess where a partner's clue falls on a dial; loud and funny.",
                "What was the game where you guess a point on a dial from a friend's hint?",
            ),
            Item("**Ticket to Ride**: claim train routes; the one that converts non-gamers."),
            Item(
                "**The Crew**: a cooperative card game played in near silence; surprisingly tense.",
                "Which cooperative card game did you say you play almost without talking?",
            ),
            Item("**Sushi Go Party**: drafting cards, 20 minutes, fine for kids of eight and up."),
            Item("**Just One**: everyone gives a one-word clue; duplicates get cancelled."),
        ),
        outro=("Codenames and Just One are the safest first buys; both are cheap.",),
        count=(4, 6),
    ),
    Task(
        key="bike_care",
        topic="hobbies",
        ask=(
            "My bike chain is squeaking and the gears jump. What basic maintenance should I be doing?",
            "How do I look after my bike myself? I ride to work every day.",
        ),
        intro=("A bit of regular care fixes most of that. A routine:",),
        items=(
            Item(
                "Clean and lube the chain every 300 km or after any wet ride. Wipe off the excess; a wet-looking chain collects grit.",
                "How often did you say the chain needs oiling?",
            ),
            Item("Check tyre pressure weekly; the range is printed on the sidewall."),
            Item(
                "Gears jumping usually means the cable has stretched: turn the barrel adjuster a quarter turn anticlockwise at a time.",
                "What did you say to twist to fix the skipping gears?",
            ),
            Item(
                "Squeeze the brakes: if the lever touches the handlebar, the pads need adjusting or replacing."
            ),
            Item(
                "Measure chain wear with a cheap chain checker; replacing a chain early saves the cassette."
            ),
            Item("A full service once a year at a shop is still worth it."),
        ),
        outro=("Ten minutes on a Sunday keeps most of the expensive problems away.",),
        count=(5, 6),
    ),
    Task(
        key="pour_over",
        topic="cooking",
        ask=(
            "I got a V60 for my birthday. How do I make good coffee with it?",
            "My pour-over coffee tastes sour. What am I doing wrong?",
        ),
        intro=("Sour pour-over is almost always under-extraction. A recipe to start from:",),
        items=(
            Item(
                "15 g of coffee to 250 g of water (1:16.7), weighed, not measured with a spoon.",
                "What ratio of grounds to water did you give me for the filter coffee?",
            ),
            Item("Grind medium-fine, like table salt; go finer if it's sour, coarser if bitter."),
            Item("Water just off the boil, around 94°C."),
            Item(
                "Bloom: pour 40 g of water, swirl, wait 40 seconds before the rest.",
                "How long did you say to let it sit after the first little pour?",
            ),
            Item("Pour the rest in slow circles in two stages, finishing by 2:30 to 3:00 total."),
            Item("Rinse the paper filter first with hot water, which also heats the jug."),
        ),
        outro=("Change one thing at a time, and it'll be dialled in within a week.",),
        count=(5, 6),
    ),
    Task(
        key="savings_account",
        topic="money",
        ask=(
            "Where should I keep my emergency fund? It's just sitting in my current account.",
            "Is a high-interest savings account worth it for about {cur}5,000?",
        ),
        intro=("Yes: an emergency fund should be boring, safe, and instantly available. Options:",),
        items=(
            Item(
                "Easy-access savings: usually 4-5% at online banks right now, and you can withdraw any day."
            ),
            Item(
                "Avoid accounts that cap withdrawals at three a year; emergencies don't care.",
                "What kind of restriction did you warn me about on some accounts?",
            ),
            Item("Check the deposit protection limit so the whole amount is covered."),
            Item("Notice accounts pay a little more but lock the money for 30-95 days."),
            Item(
                "Keep it at a different bank from your current account, so it isn't tempting to dip into."
            ),
            Item(
                "Aim for three to six months of essential costs, not of total spending.",
                "How big did you say my safety pot should be?",
            ),
        ),
        outro=("Set up a standing order the day after payday so it grows without thinking.",),
        count=(4, 6),
    ),
    Task(
        key="chitchat",
        topic="misc",
        ask=(
            "Ugh, long day. Tell me something interesting?",
            "I'm procrastinating. Give me a fun fact or three.",
        ),
        intro=("Happy to distract you for a minute. A few favourites:",),
        items=(
            Item("Octopuses have three hearts, and two of them stop beating when they swim."),
            Item(
                "Honey found in ancient Egyptian tombs is still edible; it practically never spoils."
            ),
            Item("A day on Venus is longer than its year."),
            Item("Bananas are berries, and strawberries technically aren't."),
            Item("Wombats produce cube-shaped droppings, which stops them rolling away."),
            Item("The Eiffel Tower grows about 15 cm in summer as the iron expands."),
            Item("Sharks are older than trees by about 50 million years."),
        ),
        outro=("Now go and do one small thing on your list, and the rest gets easier.",),
        count=(3, 5),
        label="-",
    ),
)

PREFERENCES = (
    Preference(
        "veg",
        (
            "I don't eat meat, haven't for about eight years, so keep that in mind.",
            "Also, no meat or fish for me, I've been veggie since uni.",
        ),
        (
            "Any ideas for what I could cook when my in-laws come over on Sunday?",
            "What should I make for a dinner party this weekend? Six people.",
        ),
        "cooking",
    ),
    Preference(
        "early_flights",
        (
            "Please don't suggest anything that leaves before 9. I'm useless at dawn and I refuse to do 6am departures anymore.",
        ),
        (
            "I need to get to a conference in Berlin in March. What kind of flight should I book?",
            "Can you help me pick travel times for a trip to Rome next month?",
        ),
        "travel",
    ),
    Preference(
        "aisle",
        ("I always take the aisle seat on planes, I get up a lot.",),
        ("Which seat should I choose for the overnight to Singapore?",),
        "travel",
    ),
    Preference(
        "peanuts",
        ("I'm allergic to peanuts, properly allergic, EpiPen and everything.",),
        (
            "What snacks should I pack for a full day of hiking?",
            "What can I bring to the office bake sale?",
        ),
        "cooking",
    ),
    Preference(
        "mild",
        ("Heads up, I can't handle chilli heat at all. Even black pepper is pushing it.",),
        (
            "Which dish should I order at the Thai place tonight?",
            "Recommend something for me to try from a Sichuan menu?",
        ),
        "cooking",
    ),
    Preference(
        "lactose",
        ("Dairy wrecks my stomach, so I avoid milk and cheese.",),
        (
            "What's a good breakfast before a long run?",
            "Can you suggest a dessert I could make for friends?",
        ),
        "cooking",
    ),
    Preference(
        "trains",
        ("I'd rather take the train whenever it's under about six hours; flying stresses me out.",),
        (
            "What's the best way for me to get from London to Amsterdam?",
            "How should I travel to Edinburgh for a wedding in June?",
        ),
        "travel",
    ),
    Preference(
        "light_sleeper",
        ("I'm a very light sleeper, so anywhere near bars or nightlife is a no for me.",),
        (
            "Which neighbourhood should I book a hotel in when I visit Barcelona?",
            "Where should I stay in Lisbon for four nights?",
        ),
        "travel",
    ),
    Preference(
        "sober",
        ("I don't drink, by the way. Three years sober in May.",),
        (
            "What should I bring as a gift to a housewarming?",
            "Suggest something fun to do for my birthday night out?",
        ),
        "",
    ),
    Preference(
        "audiobooks",
        ("I mostly listen to books now rather than read them, on my commute.",),
        ("Can you recommend a way to get into history? I know nothing about it.",),
        "learning",
    ),
    Preference(
        "mornings",
        ("I can only really train before work; evenings are chaos with the kids.",),
        ("How should I fit a strength routine into my week?",),
        "fitness",
    ),
    Preference(
        "neovim",
        ("I live in Neovim, please don't give me VS Code instructions.",),
        ("How can I get better autocomplete for a TypeScript project?",),
        "tech",
    ),
    Preference(
        "no_horror",
        ("I can't stand scary films, they give me nightmares for days.",),
        (
            "What should we watch for movie night on Friday?",
            "Recommend a series I could binge over the holidays?",
        ),
        "",
    ),
    Preference(
        "heights",
        ("I get dizzy with heights, so no cable cars or glass floors for me.",),
        ("What are some fun things to do on a weekend in Barcelona?",),
        "travel",
    ),
    Preference(
        "knee",
        ("My left knee has been dodgy since the surgery, so running and jumping are out.",),
        ("What cardio could I do to get fitter this winter?",),
        "fitness",
    ),
    Preference(
        "coriander",
        ("Coriander tastes like soap to me, I pick it out of everything.",),
        ("Do you have a good salsa recipe for taco night?",),
        "cooking",
    ),
    Preference(
        "budget_trips",
        ("I try to keep any trip under about {cur}800 all in.",),
        ("Plan me a long weekend somewhere warm in February?",),
        "travel",
    ),
    Preference(
        "left_handed",
        ("I'm left-handed, which is why my notes always smudge.",),
        ("What should I look for in a fountain pen?",),
        "",
    ),
    Preference(
        "linux",
        ("I'm on Linux at home, Fedora, no Mac or Windows machines in the house.",),
        ("What's a good program for editing my holiday videos?",),
        "tech",
    ),
    Preference(
        "cat_allergy",
        ("I'm badly allergic to cats, my eyes swell shut.",),
        ("We're thinking about getting a pet for the kids. What would suit us?",),
        "",
    ),
    Preference(
        "hands_on",
        ("I learn way better by building something than by reading theory.",),
        ("How should I go about learning SQL for work?",),
        "learning",
    ),
    Preference(
        "fujifilm",
        ("I shoot everything on an old Fujifilm X-T2.",),
        ("What lens should I buy for portraits?",),
        "hobbies",
    ),
    Preference(
        "deep_work",
        ("I block my mornings for deep work, nothing before 11 if I can help it.",),
        ("When should I schedule the weekly sync with my team?",),
        "work",
    ),
    Preference(
        "gluten",
        ("I'm coeliac, so anything with wheat, barley or rye is off the table.",),
        ("What could I bake for my niece's birthday?",),
        "cooking",
    ),
)

UPDATES = (
    Update(
        "job",
        (
            "a logistics planner at Harlow Freight",
            "a data analyst at the county council",
            "a product manager at Pebblestone",
            "a dental receptionist at Brightsmile",
            "a junior architect at Keel & Lowe",
            "a support engineer at Finchley Systems",
        ),
        (
            "I work as {v}, so my days are mostly spreadsheets and phone calls.",
            "For context, my job: I'm {v}.",
        ),
        (
            "Big news: I left my job as {old} and started a new job as {v}. First week done!",
            "Update on the work front: I'm not {old} anymore, I started a new job as {v} on Monday.",
        ),
        (
            "What do I do for a living these days?",
            "Where do I work now, after the job change?",
            "What's my new job?",
        ),
        "good",
        topic="work",
    ),
    Update(
        "home",
        ("Hillside", "the Old Docks", "Marsh Lane", "Northgate", "Larkfield", "the canal quarter"),
        ("We rent a flat in {v}, second floor, noisy but cheap.", "We live over in {v}."),
        (
            "We finally moved! We live in {v} now, a little house with a yard. Goodbye {old}.",
            "Moving day was Saturday: out of {old}, into a house in {v}. We live somewhere with a garden at last.",
        ),
        (
            "Which part of town is home for me at the moment?",
            "What neighbourhood do we live in currently?",
            "Where do we live now that we've moved house?",
        ),
        "good",
        topic="home",
    ),
    Update(
        "car",
        ("2011 Ford Focus", "Toyota Yaris", "VW Golf estate", "Nissan Leaf", "Skoda Octavia"),
        ("I drive a {v}, it's old but the car gets me around.",),
        (
            "Said goodbye to the {old} this week, we picked up a {v}. New car smell!",
            "Traded in the {old} for a {v}. The new car feels like a spaceship.",
        ),
        (
            "What car do I have now?",
            "Which motor am I driving these days?",
            "What's my new car?",
        ),
        "good",
    ),
    Update(
        "race",
        (
            "half marathon in October",
            "10k in September",
            "full marathon next spring",
            "trail 25k in the autumn",
        ),
        ("I'm training for a {v}.",),
        (
            "Change of plan: forget the {old}, I've entered a {v} instead. Training starts again.",
            "I switched races, no more {old}; I'm training for a {v} now.",
        ),
        (
            "Which event am I preparing for at this point?",
            "What race am I entered in now?",
            "Which race am I training for now?",
        ),
        topic="fitness",
    ),
    Update(
        "reading_goal",
        ("20", "24", "30", "36", "50"),
        ("My reading goal this year is {v} books.",),
        (
            "I bumped my yearly reading goal from {old} to {v} books.",
            "New reading target: {v} books this year instead of {old}.",
        ),
        (
            "How many titles am I aiming to get through this year?",
            "What's my reading goal for the year?",
            "How many books is my reading goal now?",
        ),
        topic="learning",
    ),
    Update(
        "training_days",
        (
            "Mondays and Thursdays",
            "Tuesdays and Fridays",
            "weekends only",
            "Wednesdays and Sundays",
        ),
        ("I go to the gym on {v}.",),
        (
            "I've moved my gym sessions from {old} to {v}, it fits better now.",
            "Switched my gym days to {v}.",
        ),
        ("On which days do I work out now?", "Which days do I go to the gym these days?"),
        topic="fitness",
    ),
    Update(
        "phone",
        ("Pixel 6", "iPhone 12", "Galaxy S21", "iPhone 14", "Pixel 8"),
        ("I'm on a {v}, if that matters for the instructions.",),
        ("New phone! Finally retired the {old}, I've got a {v} now.",),
        (
            "What handset am I using currently?",
            "Which phone do I have now?",
            "What's my new phone?",
        ),
        "good",
        topic="tech",
    ),
    Update(
        "summer_trip",
        ("Sicily", "the Norwegian fjords", "Croatia", "a road trip around Ireland", "Greece"),
        ("We're planning to go to {v} this summer.",),
        (
            "Change of plans for the summer holiday, we're doing {v} instead of {old}.",
            "We dropped {old}; the summer holiday is {v} now.",
        ),
        (
            "Where are we going on holiday this year?",
            "What's the destination for our summer break?",
            "What are our summer holiday plans now?",
        ),
        topic="travel",
    ),
    Update(
        "kid_activity",
        ("swimming", "football", "ballet", "judo", "piano"),
        ("{kid} does {v} on Saturday mornings.",),
        (
            "{kid} quit {old}, says it's boring; it's {v} on Saturday mornings now.",
            "No more {old} for {kid}, we've signed up for {v} on Saturdays.",
        ),
        (
            "What does {kid} do on weekend mornings at the moment?",
            "What does {kid} do on Saturdays now?",
        ),
        topic="family",
    ),
    Update(
        "launch_date",
        ("the 14th of March", "early April", "the end of May", "the 2nd of June", "mid-July"),
        ("Our big project at work launches {v}.",),
        (
            "The project launch got pushed from {old} to {v}. Again.",
            "Launch moved: {v} now, not {old}.",
        ),
        ("When is the release for my work project now?", "When does the project at work launch?"),
        "bad",
        topic="work",
    ),
    Update(
        "language",
        ("Spanish", "French", "Italian", "Japanese", "Dutch"),
        ("I'm learning {v} on my phone in the evenings.",),
        ("I gave up on {old}, switched to learning {v} and I'm enjoying it much more.",),
        ("Which language am I learning at the moment?", "What language am I learning now?"),
        topic="learning",
    ),
    Update(
        "rent",
        ("{cur}1,150", "{cur}1,275", "{cur}1,400", "{cur}950"),
        ("Our rent is {v} a month.",),
        ("The landlord put the rent up from {old} to {v} a month. Ugh.",),
        ("How much do we pay for housing each month now?", "What's our rent now?"),
        "bad",
        topic="money",
    ),
    Update(
        "manager",
        ("Priyanka", "Tomasz", "Gareth", "Hélène", "Marcus"),
        ("My manager, {v}, is great, very hands-off.",),
        (
            "{old} left the company, so {v} is my manager now.",
            "I report to {v} now since the reorg; no more {old}.",
        ),
        ("Who is my line manager at the moment?", "Who's my boss these days?"),
        topic="work",
    ),
    Update(
        "commute",
        ("cycle", "take the bus", "drive", "walk", "take the train"),
        ("I {v} to work most days.",),
        ("I don't {old} to work anymore, I {v} now.",),
        ("How do I get to the office these days?", "How do I get to work now?"),
    ),
)

FACTS = (
    Fact(
        "sister_city",
        ("Ghent", "Montreal", "Perth", "Bergen", "Malmö", "Galway"),
        ("My sister {sister} lives in {v}, so I'm there a couple of times a year.",),
        ("Where is {sister} based?", "Which city does my sister live in?"),
        topic="travel",
    ),
    Fact(
        "friday_cafe",
        ("Halcyon Coffee", "the Pear Tree café", "Grindhouse", "Lantern Roasters"),
        ("I usually work from {v} on Fridays, they don't mind laptops.",),
        (
            "Where do I go for remote work at the end of the week?",
            "Where do I usually work from on Fridays?",
        ),
        topic="work",
    ),
    Fact(
        "teacher",
        ("Mr Okafor", "Ms Lindqvist", "Mrs Patel", "Mr Duarte"),
        ("{kid}'s teacher this year is {v}, who is lovely.",),
        ("Who teaches {kid}'s class this year?", "What's the name of {kid}'s teacher this year?"),
        topic="family",
    ),
    Fact(
        "vet",
        ("Riverside Animal Clinic", "Oakwood Vets", "Pawsitive Care", "Meadow Lane Veterinary"),
        ("{pet} goes to {v}, they know him there.",),
        ("Which animal clinic do we take {pet} to?",),
    ),
    Fact(
        "sofa",
        ("{cur}1,250", "{cur}890", "{cur}1,640", "{cur}720"),
        ("We finally bought a sofa, it was {v} and I'm still wincing.",),
        ("How much did the new sofa set us back?", "How much did we pay for the sofa?"),
        "good",
        topic="home",
    ),
    Fact(
        "blood",
        ("O negative", "A positive", "B negative", "AB positive"),
        ("Found out at my first blood donation that I'm {v}.",),
        ("What's my blood group?",),
    ),
    Fact(
        "shoe",
        ("42", "44.5", "39", "46", "41"),
        ("I'm a size {v} in running shoes.",),
        ("What size trainers do I wear?", "What size running shoes do I take?"),
        topic="fitness",
    ),
    Fact(
        "partner_birthday",
        ("the 3rd of August", "the 19th of November", "the 27th of February", "the 11th of May"),
        ("{partner}'s birthday is {v}, I need to start planning.",),
        ("When should I plan a celebration for {partner}?", "When is {partner}'s birthday?"),
        topic="family",
    ),
    Fact(
        "physio",
        ("Dana", "Olu", "Kasia", "Ruairí"),
        ("My physio, {v}, says I sit like a question mark.",),
        ("Who's the physio who complains about my posture?", "What's my physio called?"),
        topic="health",
    ),
    Fact(
        "band",
        ("Khruangbin", "Big Thief", "Fontaines D.C.", "Nils Frahm", "Wet Leg"),
        ("I've had {v} on repeat for weeks.",),
        ("Which band have I had on repeat lately?", "Who have I had on repeat for weeks?"),
    ),
    Fact(
        "floor",
        ("third", "fourth", "fifth"),
        ("We're on the {v} floor with no lift, so the shopping is a workout.",),
        (
            "How many flights of stairs do I climb, given there's no lift?",
            "Which floor is our flat on?",
        ),
        topic="home",
    ),
    Fact(
        "gran_age",
        ("90", "87", "94", "101"),
        ("My gran turns {v} next month, there's a big family lunch.",),
        (
            "How old is my gran turning?",
            "How old is my grandmother going to be next month?",
        ),
        "good",
        topic="family",
    ),
    Fact(
        "parents",
        ("Aberdeen", "Cork", "Hamilton", "Swansea", "Halifax"),
        ("I grew up in {v}, but I've not lived there for years.",),
        ("Where was I raised?", "Where is it that I grew up?"),
    ),
    Fact(
        "start_time",
        ("7:30", "8:15", "9:45", "6:45"),
        ("I start work at {v} most days, so I'm up early.",),
        ("What time does my workday begin, most days?", "What time do I start work?"),
        topic="work",
    ),
    Fact(
        "wedding_place",
        (
            "a barn near Hexham",
            "the registry office in town",
            "a beach in Crete",
            "my gran's garden",
        ),
        ("{partner} and I got married in {v}, tiny wedding, best day.",),
        ("Where did our wedding take place?", "Where did {partner} and I get married?"),
        "good",
    ),
    Fact(
        "allergy_med",
        ("cetirizine", "loratadine", "fexofenadine"),
        ("Hay fever season again, I'm living on {v}.",),
        (
            "Which antihistamine do I rely on in hay fever season?",
            "What do I take for my hay fever?",
        ),
        "bad",
        topic="health",
    ),
)

EVENTS = (
    Event(
        "tooth",
        ("Just got back from having a wisdom tooth out, my face is a balloon.",),
        ("my dental surgery", "my wisdom tooth extraction"),
        mood="bad",
        topic="health",
    ),
    Event(
        "passport",
        ("My new passport finally arrived today!",),
        ("the renewal of my travel document", "my new passport arriving"),
        mood="good",
    ),
    Event(
        "promotion",
        ("I got promoted to senior this morning!!",),
        ("my step up at work", "my promotion"),
        mood="good",
        topic="work",
    ),
    Event(
        "concert",
        ("Saw {v} live last night, still buzzing.",),
        ("the {v} gig", "seeing {v} live"),
        (
            "Khruangbin",
            "Arctic Monkeys",
            "Hozier",
            "Little Simz",
            "Phoebe Bridgers",
            "Bombay Bicycle Club",
        ),
        ("Which band did I go and see in {month}?", "Who was the act I saw perform in {month}?"),
        "good",
    ),
    Event(
        "car_service",
        ("The car's in the garage today for its service, and they're doing the brakes.",),
        ("the car's last maintenance visit", "the car's service"),
    ),
    Event(
        "race",
        ("Ran the {v} this morning! Legs are jelly.",),
        ("the {v}", "running the {v}"),
        ("Leeds half marathon", "city 10k", "Bath half", "riverside 5k", "Great North Run"),
        ("Which race did I run in {month}?", "What was the event I ran in {month}?"),
        "good",
        topic="fitness",
    ),
    Event(
        "guitar",
        ("Had my very first guitar lesson tonight, my fingertips hurt.",),
        ("my first music lesson", "my first guitar lesson"),
        mood="good",
        topic="hobbies",
    ),
    Event(
        "flu",
        ("I've been flat on my back with flu since Tuesday.",),
        ("the week I was sick in bed", "my bout of flu"),
        mood="bad",
        topic="health",
    ),
    Event(
        "books",  # not with the books series: the club's novel would be one more
        ("Hosted book club at ours tonight, we did {v}.",),
        ("hosting the reading group", "the book club night at mine"),
        (
            "Piranesi",
            "Klara and the Sun",
            "Demon Copperhead",
            "The Overstory",
            "Small Things Like These",
        ),
        (
            "Which novel did we discuss at my place in {month}?",
            "What book did my book club do at mine in {month}?",
        ),
        topic="learning",
    ),
    Event(
        "parents",
        ("Back from a weekend at my parents' in {hometown}.",),
        ("my last trip home to see Mum and Dad", "the weekend at my parents'"),
    ),
    Event(
        "interview",
        ("Had the interview at {v} today, I think it went ok?",),
        ("the interview at {v}", "my job interview with {v}"),
        ("Northwind", "Calder Health", "Brightwave", "Ostrich Labs", "Meridian Bank"),
        (
            "Which company did I interview with in {month}?",
            "Who did I have a job interview with in {month}?",
        ),
        topic="work",
    ),
    Event(
        "haircut",
        ("Finally did the big haircut, short for the first time in ten years.",),
        ("the big change in hairstyle", "my big haircut"),
        mood="good",
    ),
    Event(
        "bike",
        ("Picked up a secondhand road bike this afternoon.",),
        ("buying my bicycle", "getting the road bike"),
        mood="good",
        topic="hobbies",
    ),
    Event(
        "wedding",
        ("Back from {v}'s wedding, danced until 2am.",),
        ("{v}'s wedding", "the wedding of {v}"),
        ("Amira and Jon", "my cousin Ellie", "Tariq", "my old flatmate Bea", "Rosa and Dev"),
        ("Whose wedding did I go to in {month}?", "Which wedding was I a guest at in {month}?"),
        "good",
    ),
    Event(
        "tap",
        ("Fixed the dripping kitchen tap myself today, new washer and everything.",),
        ("the plumbing repair I did on my own", "fixing the kitchen tap"),
        mood="good",
        topic="home",
    ),
    Event(
        "theory_test",
        ("Passed my driving theory test this morning.",),
        ("the written part of learning to drive", "my driving theory test"),
        mood="good",
    ),
    Event(
        "glasses",
        ("Picked up my first ever pair of glasses today.",),
        ("getting my first spectacles", "my first pair of glasses"),
    ),
    Event(
        "trip",
        ("Just landed back from {v}.",),
        ("the trip to {v}", "my holiday in {v}"),
        ("Lisbon", "Iceland", "Marrakech", "the Lake District", "Vienna", "Crete"),
        ("Where did I travel to in {month}?", "Where was I just back from in {month}?"),
        topic="travel",
    ),
    Event(
        "bloods",
        ("Had my annual blood tests done this morning, all fine apparently.",),
        ("my yearly checkup at the lab", "my annual blood tests"),
        topic="health",
    ),
    Event(
        "hike",
        ("Climbed {v} yesterday, the views were unreal.",),
        ("the {v} climb", "going up {v}"),
        ("Ben Nevis", "Snowdon", "Scafell Pike", "Helvellyn", "Pen y Fan"),
        ("Which mountain did I go up in {month}?", "What did I climb in {month}?"),
        "good",
        topic="fitness",
    ),
)

SERIES = (
    Series(
        "books",
        (
            "Piranesi",
            "Tomorrow, and Tomorrow, and Tomorrow",
            "The Midnight Library",
            "Circe",
            "Shuggie Bain",
            "Lessons in Chemistry",
        ),
        ("Finished {v} last night.", "Just got to the end of {v}, what a book."),
        (
            "How many books have I told you I finished?",
            "Which novels have I completed recently?",
            "Which books have I finished?",
        ),
        topic="learning",
    ),
    Series(
        "car_costs",
        (
            "{cur}340 for new brake pads",
            "{cur}95 for a tyre",
            "{cur}610 for the clutch",
            "{cur}180 for the MOT and a bulb",
        ),
        ("The garage charged me {v}.", "Another bill from the garage: {v}."),
        (
            "What's the total I've spent at the garage?",
            "How much have I paid the garage in total?",
        ),
        mood="bad",
        topic="money",
    ),
    Series(
        "pottery",
        (
            "a wonky mug",
            "a set of two bowls",
            "a vase",
            "a little jug",
            "a plate that actually sits flat",
        ),
        ("Finished glazing {v} at pottery class!", "Out of the kiln this week at pottery: {v}."),
        (
            "How many pieces have I finished at pottery so far?",
            "What have I made at pottery class so far?",
        ),
        mood="good",
        topic="hobbies",
    ),
    Series(
        "race_times",
        ("a parkrun in 31:20", "a parkrun in 29:45", "a parkrun in 28:10", "a parkrun in 27:55"),
        ("Did {v} this Saturday.",),
        (
            "What's my best time at the Saturday 5k so far?",
            "How much have my Saturday times improved?",
            "What's my fastest parkrun time so far?",
        ),
        mood="good",
        topic="fitness",
    ),
    Series(
        "trip",  # not with the trip event: its country would count too
        ("Portugal", "Morocco", "Slovenia", "Japan", "Canada", "Norway"),
        ("Back from {v}, what a trip.", "Just got home from a trip to {v}."),
        (
            "How many countries have I visited on trips?",
            "Which countries have I been to on trips?",
        ),
        mood="good",
        topic="travel",
    ),
    Series(
        "plants",
        (
            "a calathea",
            "a string-of-pearls",
            "a big bird of paradise",
            "a ZZ plant",
            "an olive tree for the balcony",
        ),
        (
            "Bought {v} for the living room, the plant collection grows.",
            "Couldn't resist, I came home with {v}. Another plant!",
        ),
        ("How many houseplants have I added to the collection?", "Which plants have I bought?"),
        topic="garden",
    ),
    Series(
        "savings",
        ("{cur}250", "{cur}400", "{cur}150", "{cur}600"),
        ("Put {v} into the emergency fund this month.",),
        (
            "How much have I put aside in my rainy-day pot altogether?",
            "How much have I put into the emergency fund in total?",
        ),
        mood="good",
        topic="money",
    ),
    Series(
        "deadlift",
        ("80 kg", "92.5 kg", "100 kg", "107.5 kg"),
        ("New deadlift PR: {v}!",),
        (
            "How has my heaviest pull from the floor progressed?",
            "How much has my deadlift PR gone up?",
        ),
        mood="good",
        topic="fitness",
    ),
    Series(
        "restaurants",
        (
            "the new Sri Lankan place on Mill Road",
            "Fenwick Kitchen",
            "a ramen bar called Oto",
            "the Georgian bakery by the station",
        ),
        ("We tried {v} last night.",),
        ("Which new places have we eaten at recently?", "Which restaurants have we tried lately?"),
        topic="cooking",
    ),
    Series(
        "physio",  # one physio story per person
        (
            "the massage-and-stretch one",
            "the one with the resistance bands",
            "a painful one with dry needling",
            "an easy one, mostly exercises to do at home",
        ),
        ("Physio today, {v}. Shoulder is slowly improving.",),
        (
            "How many appointments have I had for my shoulder rehab?",
            "How many physio sessions have I had for my shoulder?",
        ),
        topic="health",
    ),
    Series(
        "hikes",
        ("14 km", "9 km", "22 km", "17 km"),
        ("Hiked {v} today, knackered.",),
        (
            "How far have I hiked in total, going by what I've told you?",
            "How many km have I hiked altogether?",
        ),
        topic="fitness",
    ),
    Series(
        "courses",
        (
            "Intro to Statistics",
            "the Excel for analysts course",
            "a UX writing course",
            "Python for everybody",
        ),
        ("Finished {v} online, certificate and all.",),
        ("Which online classes have I completed?", "Which courses have I finished online?"),
        mood="good",
        topic="learning",
    ),
    Series(
        "guests",
        ("my cousin Jamie", "{sister}", "my friend {friend}", "{partner}'s parents"),
        ("{v} came to stay with us this week.",),
        ("Who have we had stay over at ours?", "Who has come to stay with us?"),
        topic="family",
    ),
    Series(
        "birds",
        ("a goldfinch", "a great spotted woodpecker", "a nuthatch", "a jay", "a long-tailed tit"),
        ("Spotted {v} at the feeder this morning!",),
        ("Which birds have I seen at the feeder?", "What have I spotted at the bird feeder?"),
        mood="good",
        topic="garden",
    ),
)

ABSENT = (
    Absent("What did you suggest for fixing my dishwasher?", ("dishwasher",)),
    Absent("What's the name of my brother's dog?", ("brother",)),
    Absent("Which ski resort did I book for January?", ("ski",)),
    Absent("How much did I pay for my piano lessons?", ("piano",)),
    Absent("What grade did I get on my French exam?", ("french exam",)),
    Absent("When did I have my knee surgery?", ("knee",)),
    Absent("Which tattoo artist did I end up going with?", ("tattoo",)),
    Absent("What was the sushi place you recommended in Osaka?", ("osaka", "sushi")),
    Absent("How many chickens do we keep in the garden?", ("chicken",)),
    Absent("What colour did we paint the nursery?", ("nursery",)),
    Absent("Which chess opening was I studying?", ("chess",)),
    Absent("When does my yoga teacher training start?", ("yoga",)),
    Absent("What's the name of the boat we rented in the summer?", ("boat",)),
    Absent("Which mortgage broker did I go with?", ("mortgage",)),
    Absent("How did my daughter's violin recital go?", ("violin",)),
)

PROFILE = {
    "partner": ("Sam", "Alex", "Jordan", "Chris", "Robin", "Maya", "Tom", "Leah", "Ravi", "Ana"),
    "sister": ("Ines", "Clare", "Zoe", "Fatima", "Grace", "Mei", "Hanna", "Orla"),
    "friend": ("Dev", "Kit", "Marta", "Luis", "Nina", "Owen", "Suki"),
    "kid": ("Milo", "Ada", "Felix", "Isla", "Noah", "Ruby", "Leo", "Esme"),
    "pet": ("Biscuit", "Pepper", "Mochi", "Ziggy", "Otis", "Juno"),
    "hometown": ("Aberdeen", "Cork", "Hamilton", "Swansea", "Halifax", "Dundee"),
    "cur": ("£", "$", "€"),
}

NAMES = (
    "Aisha", "Ben", "Carla", "Dmitri", "Elena", "Farid", "Greta", "Hugo", "Imani", "Jonas",
    "Keiko", "Lars", "Mariam", "Niall", "Olga", "Pedro", "Qing", "Rosa", "Sven", "Tara",
    "Umar", "Vera", "Wes", "Ximena", "Yusuf", "Zara", "Amos", "Bianca", "Cormac", "Dalia",
    "Emeka", "Freya", "Gus", "Hana", "Idris", "Jude", "Kamala", "Linus", "Marisol", "Nico",
    "Odile", "Pavel", "Rhea", "Simone", "Teo", "Uma", "Viktor", "Wanjiru", "Yara", "Zeke",
    "Adele", "Bram", "Celine", "Dario", "Eilidh", "Fionn", "Gwen", "Hamza", "Ilse", "Jasper",
    "Kofi", "Lena", "Mateo", "Nadia", "Oren", "Petra", "Quentin", "Rania", "Stellan", "Thea",
    "Ugo", "Valeria", "Wren", "Yosef", "Zofia", "Anouk", "Bilal", "Cleo", "Duncan", "Esra",
    "Flora", "Gideon", "Helga", "Ivo", "Jana", "Kian", "Lucia", "Magnus", "Nour", "Otto",
    "Priya", "Rafael", "Saoirse", "Tobias", "Ulla", "Vikram", "Willa", "Yannick", "Zainab", "Arlo",
    "Beatriz", "Caspar", "Delphine", "Elias", "Fatou", "Gil", "Hedda", "Iker", "Joelle", "Kasper",
    "Lorna", "Malik", "Nell", "Osman", "Paloma", "Rufus", "Sana", "Tomas", "Una", "Vito",
    "Wilma", "Xavi", "Yuki", "Zed",
)  # fmt: skip

ASIDES = {
    "travel": (
        "A general note on timing: opening hours in smaller European cities shift a lot between seasons, and many family-run places close for two or three weeks in August or January. It's worth checking a venue's own social media page the week before rather than trusting a listing site, which can be a year out of date.",
        "On getting around: in most old towns the centre is compact enough that walking is faster than any bus, and a day ticket only pays off if you do three or more rides. Keep a photo of your accommodation's address in the local language for taxi drivers, and download an offline map before you land in case roaming is patchy.",
        "Budget-wise, the biggest savings usually come from eating your main meal at lunchtime, when set menus are common, and from booking train tickets a couple of weeks ahead. Sights with free entry on the first Sunday of the month get very crowded, so the saving is often not worth the queue.",
    ),
    "cooking": (
        "A word on timings: every hob and oven runs a little differently, so treat the minutes as a guide and go by look, smell and taste. Gas responds instantly, induction is fast but unforgiving, and old electric rings hold their heat, so take the pan off a little early if you're on one of those.",
        "If you're cooking for more people, scale the main ingredients in proportion but go carefully with salt and spices; add two thirds of the scaled amount, taste, then adjust. Liquids evaporate more slowly from a fuller pan, so the cooking time goes up a bit too.",
        "Leftovers keep for three days in the fridge in a sealed container. Cool them quickly (spread out on a tray, not in the deep pan) and reheat until piping hot all the way through; rice in particular shouldn't sit around at room temperature.",
    ),
    "tech": (
        "Before you change anything, make a note of the current settings or take a screenshot, so you can get back to a working state if something goes sideways. Most problems that feel mysterious come from two changes made at once, so change one thing, test, then move to the next.",
        "If you get stuck, the exact error message pasted into a search engine in quotes is usually the fastest route to an answer; someone has almost always hit the same thing. Happy to look at the output with you if you paste it here.",
        "One general habit that pays off: keep a plain text file of the commands and settings you've used, with the date. Six months from now, when you need to do it again or something breaks, you'll be very glad of it.",
    ),
    "money": (
        "The usual caveat: I can explain how these things work, but I don't know your full situation, so for anything large (a pension transfer, a mortgage) a fee-only adviser is worth the cost. Be wary of anyone whose pay depends on which product you buy.",
        "It helps to separate the question 'how do I organise my money' from 'how do I grow it'. Organising is about accounts, dates and habits and pays off immediately; growing is about time in the market and fees, and pays off slowly. Most people get more from fixing the first before worrying about the second.",
        "Whatever you set up, automate it: money that moves on the day you're paid gets saved, and money that waits for you to remember usually gets spent. Review once a quarter, not every day, or the ups and downs will make you do something rash.",
    ),
    "fitness": (
        "A note on progress: the first four to six weeks are mostly your nervous system learning the movements, so strength jumps quickly and then slows. That's normal. Sleep and protein (roughly 1.6 g per kilo of bodyweight a day) matter as much as the sessions themselves.",
        "Some soreness a day or two after training is normal, especially at the start; sharp pain during a movement is not. If something hurts in a joint rather than a muscle, stop that exercise, swap it for an easier variation, and see a physio if it doesn't settle within a week.",
        "Consistency beats intensity here. Three average sessions every week for six months will take you much further than two heroic weeks followed by a month off, so pick a schedule that survives a busy week, not an ideal one.",
    ),
    "health": (
        "The usual disclaimer: this is general information, not a diagnosis. If something is getting worse, keeping you up at night, or comes with numbness, fever or unexplained weight loss, please see a doctor rather than working through a list like this.",
        "Small changes stack up. Pick two of these, do them every day for a fortnight and notice what changes, rather than trying everything at once and not knowing what helped. A quick note on your phone each evening makes the pattern easy to see.",
    ),
    "home": (
        "Whatever you do, test it on a small hidden area first and work in good light. Most DIY disasters come from being in a hurry, so give yourself twice the time you think you'll need, and put down a dust sheet even if it seems like overkill.",
        "If you rent, check your tenancy agreement before changing anything permanent, and keep photos of the before and after. Landlords are usually fine with sensible improvements if you ask in writing first.",
        "A basic toolkit covers most of this: a cordless drill, a set of screwdrivers, an adjustable spanner, a spirit level, a stud finder and a good torch. Buy decent versions once rather than cheap ones twice.",
    ),
    "garden": (
        "Gardening advice is always local, so take the dates here as a starting point and adjust for your area; a cold spring can push everything back three weeks. Your neighbours' gardens are the best guide to what actually thrives on your street.",
        "Water in the morning if you can: plants go into the heat of the day hydrated, and leaves dry off quickly, which cuts down on mildew and slugs. Rainwater from a butt is better than tap water for most plants, especially acid-lovers.",
    ),
    "learning": (
        "The research on learning is pretty consistent: short daily sessions beat long weekly ones, testing yourself beats rereading, and spacing reviews out beats cramming. It feels slower at the time, which is exactly why people don't do it.",
        "Expect a plateau somewhere around the second or third month, where it feels like nothing is sticking. That's usually when the foundations are settling. Changing the material (a new podcast, a different book) often gets you over it faster than pushing harder.",
    ),
    "work": (
        "A general point: people remember how a meeting or a talk felt more than what was on the slides. Being clear about what you want from them, and finishing on time, does more for your reputation than any amount of polish.",
        "If you're not sure how something will land, run it past one trusted colleague first. A ten-minute preview catches most of the problems and gives you an ally in the room when it matters.",
    ),
    "family": (
        "Whatever you plan, build in slack: things with children, and with family generally, always take longer than the plan says. A quiet corner with a few books or a film to fall back on rescues many an afternoon that's going off the rails.",
        "It's worth asking one or two people in advance about allergies or anything they can't do, rather than finding out on the day. A quick message a week before is enough.",
    ),
    "hobbies": (
        "The best advice for any hobby is to do it little and often and to keep a simple log; looking back at where you started is the best motivation there is. A local club or group speeds things up enormously, both for tips and for actually showing up.",
        "Don't upgrade gear until you can name exactly what your current kit is stopping you from doing. Most improvement in the first year comes from practice, not equipment, and second-hand is fine for nearly everything.",
    ),
}

FOLLOWS = (
    (
        "How long would all that take, roughly?",
        "Realistically, plan for an afternoon the first time. Most of it is setting things up and reading through the steps, and it gets much quicker once you've done it once: the second time is usually about half as long. If you'd rather split it over two evenings, do the preparation on the first and leave the parts that need your full attention for the second, when you're fresh. And keep some buffer; the first attempt at anything always turns up one thing you didn't expect.",
    ),
    (
        "Could you make that shorter? Just the essentials.",
        "Sure, here's the short version. Do the first two things on the list this week and ignore the rest until they feel routine; they account for most of the benefit. Everything after that is refinement, and you can come back to it once the basics are a habit. If you only remember one sentence: start small, check that it works, then add the next piece.",
    ),
    (
        "What's the one thing you'd do first?",
        "The first item. It has the biggest effect for the least effort, and it makes the rest easier to judge, because you'll see quickly whether things are improving. Once that's in place, pick whichever of the others feels easiest rather than the 'most important'. Momentum matters more than order here, and getting two things done beats planning five.",
    ),
    (
        "Is any of this risky, or can I just try it?",
        "Nothing here is risky if you go step by step and check as you go. The only thing I'd be careful about is doing everything at once, because then you can't tell which change helped (or which one caused a problem). Make one change, give it a few days, note what happened, then move to the next. If anything surprises you along the way, tell me what you saw and we can adjust.",
    ),
    (
        "What would you do differently on a tight budget?",
        "Most of it costs nothing: the changes that matter are about timing and habits, not equipment or paid services. Where something does cost money, start with the cheapest version or borrow it, and only upgrade once you know you'll stick with it. Second-hand marketplaces and local libraries (which lend surprising things these days, from tools to sewing machines) cover a lot of the rest.",
    ),
)

CLOSINGS = (
    (
        "Thanks, that's really helpful!",
        "Anytime, {name}. Let me know how it goes, and if anything doesn't work the way I described, tell me what happened and we'll figure it out.",
    ),
    (
        "Perfect, thank you.",
        "You're welcome! Good luck with it. If you want, come back after you've tried it and we can fine-tune from there.",
    ),
    (
        "Great, I'll try that tonight.",
        "Sounds good. Tell me how it turns out; the first attempt is always the one you learn the most from.",
    ),
    ("ok cheers", "Cheers! Talk soon."),
)


POOL = Pool(
    prefix="ap",
    names=NAMES,
    profile=PROFILE,
    tasks=TASKS,
    preferences=PREFERENCES,
    updates=UPDATES,
    facts=FACTS,
    events=EVENTS,
    series=SERIES,
    absent=ABSENT,
    openers=("", "", "", "Morning!", "Hey, quick one.", "Hi again.", "Evening!", "Hello!"),
    postscripts=(
        "No rush.",
        "Keep it practical please.",
        "I've tried searching but there's too much conflicting advice.",
        "Thanks in advance!",
        "Be honest.",
        "Bullet points are fine.",
        "I'm a total beginner at this.",
        "Asking because I keep putting it off.",
        "Short answer is fine.",
        "Explain it like I'm new to it.",
    ),
    bridges=("Anyway, question for you.", "Anyway.", "Separate thing:", "Unrelated, but:"),
    acks={
        "good": (
            "Congratulations, that's great news!",
            "Oh, lovely, well done!",
            "That's brilliant, {name}!",
        ),
        "bad": (
            "Oh no, sorry to hear that.",
            "Ugh, that's rotten luck.",
            "Sorry, that sounds rough.",
        ),
    },
    asides=ASIDES,
    offers=(
        "If you tell me a bit more about your situation (how much time you have, what you've already tried, and what 'done' looks like for you), I can turn this into a step-by-step plan with dates.",
        "Want me to turn this into a printable checklist? I can also cut it down to a one-page version to stick on the fridge.",
        "Happy to go deeper on any of these. Just say which one, and whether you want the quick version or the thorough one.",
        "If any of this doesn't fit, for example because of cost, space or time, let me know and I'll suggest alternatives that do.",
    ),
    follows=FOLLOWS,
    closings=CLOSINGS,
    when=(
        "When was {a}?",
        "What date was {a}?",
        "Roughly when did {a} happen?",
    ),
    ago=("How long ago was {a}?", "How many weeks has it been since {a}?"),
    order=(
        "Which came first, {a} or {b}?",
        "Did {a} happen before or after {b}?",
    ),
    gap=(
        "How much time passed between {a} and {b}?",
        "How many weeks were there between {a} and {b}?",
    ),
    start=(datetime(2022, 9, 1), datetime(2023, 9, 1)),
)


def build(people: int = PEOPLE) -> Json:
    """The set (``people`` conversations; the default is the registered 120)."""
    return generate(POOL, people=people, seed=SEED)
