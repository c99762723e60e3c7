"""The ``assistant_sealed`` recall set: was SEALED; measured at the start and the end of issue 15
round 3 (``evals/README.md``), so no longer unseen. Its failures are never to be looked at.

Same shape as ``assistant`` (``histories.generate``: one person and their assistant a
conversation, about fifty dated sessions each, long assistant answers, ``user`` speaks first),
but written from its own pool: other people (names, families, places), other requests and
answers, other things said in passing, and questions worded differently (its own temporal
frames, follow-ups, openers), with its own seed and its own years. 100 people, one store.
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
SEED = 9042

SHOPS = (
    "Wicker & Thread",
    "The Blue Heron",
    "Saltbox",
    "Gallo Nero",
    "Pickle Jar",
    "Harbour Lights",
    "Ferro",
    "Nook",
    "The Gannet",
    "Brindle",
    "Juniper Hall",
    "Tidewater",
    "Lemon Grove",
    "Stag & Fern",
)

TASKS = (
    Task(
        key="market_town",
        topic="travel",
        ask=(
            "We've got a free Saturday near {town}. What's worth doing there?",
            "Any tips for a day out in {town}? Going with my {relative}.",
        ),
        intro=(
            "{town} is perfect for a day trip; it's small enough to see on foot. Some ideas in rough order of a day:",
            "A good day in {town} doesn't need much planning, but these are the bits I'd prioritise:",
        ),
        items=(
            Item(
                "Coffee and a cardamom bun at {pick}, on the corner of the square; it opens at 8 and the first batch is the best.",
                "Where did you tell me to get breakfast buns first thing in {town}?",
            ),
            Item(
                "The Saturday market runs 9 till 2 along the river; the cheese stall at the far end does free tastings."
            ),
            Item(
                "Walk the old railway line out to the viaduct, about 45 minutes each way and completely flat.",
                "How long did you say the walk along the disused track takes in each direction?",
            ),
            Item(
                "The abbey ruins are free and rarely busy before 11. Climb the tower stairs for the view over the rooftops."
            ),
            Item(
                "Lunch at {pick}, a pub with a proper fire and a daily pie; ask for the snug if it's raining.",
                "What was the pub with the fireplace you mentioned for lunch in {town}?",
            ),
            Item(
                "{pick} is a second-hand bookshop spread over three crooked floors; budget an hour at least."
            ),
            Item(
                "If you're driving, park at the long-stay by the leisure centre: it's a third of the price of the centre and a five-minute walk.",
                "Which car park did you recommend to save money in {town}?",
            ),
            Item("Finish with an ice cream on the bridge and watch the rowers go under."),
        ),
        outro=(
            "Check the market's page the week before; it moves indoors in winter.",
            "Trains back tend to be busy after five, so grab a seat early or stay for dinner.",
        ),
        slots={
            "town": (
                "Hebden Bridge",
                "Ludlow",
                "Rye",
                "Kilkenny",
                "Bruges",
                "Colmar",
                "Lucca",
                "Tavira",
            ),
            "relative": ("mum", "dad", "aunt", "in-laws"),
        },
        names=SHOPS,
        count=(5, 7),
    ),
    Task(
        key="camping",
        topic="travel",
        ask=(
            "First time camping with the family this summer. What do we actually need?",
            "Could you help me prepare for a three-night camping trip in {region}?",
        ),
        intro=(
            "Camping is 80% sleep and food; get those right and the rest is easy. For {region}:",
        ),
        items=(
            Item(
                "A tent rated one person bigger than your group, so there's room for bags. Pitch it once in the garden before the trip.",
                "What did you say to do at home before we leave, tent-wise?",
            ),
            Item(
                "Sleeping mats matter more than sleeping bags: the ground steals heat. Look for an R-value of 3 or more.",
                "What insulation rating did you tell me to look for on the mats?",
            ),
            Item("A two-burner stove, a lighter and a backup box of matches in a zip bag."),
            Item(
                "Pre-mix dry ingredients for each meal at home and label the bags; it halves washing up at the site."
            ),
            Item(
                "A head torch for everyone, with a red-light mode so you don't blind each other at night.",
                "Which light setting did you suggest so nobody gets dazzled after dark?",
            ),
            Item("Midge repellent and a net if you're anywhere near water in July."),
            Item("Wet wipes, a washing-up bowl and a bin bag more than you think you need."),
        ),
        outro=("Book a site with showers for a first trip; wild camping can come next year.",),
        slots={
            "region": (
                "the Lake District",
                "Snowdonia",
                "the Highlands",
                "Cornwall",
                "the Peak District",
            )
        },
        count=(5, 7),
    ),
    Task(
        key="road_trip",
        topic="travel",
        ask=(
            "We're driving from {from_city} to {to_city} over a week. Where should we stop?",
            "Plan a road trip for us, {from_city} to {to_city}, no more than four hours' driving a day.",
        ),
        intro=("A week gives you time to slow down. A route with short driving days:",),
        items=(
            Item(
                "First night somewhere small rather than a big city; you'll be tired and parking is easier."
            ),
            Item(
                "Stop at {pick} for lunch on day two; it's a farm shop café right off the main road with a playground.",
                "What was the farm-shop café you said to stop at on the drive?",
            ),
            Item(
                "Take the coast road instead of the motorway for the third leg; it adds 40 minutes and it's the best scenery of the trip.",
                "How much extra time did you say the scenic route adds?",
            ),
            Item("Spend two nights in the middle, so there's one day without the car."),
            Item("Fill up before the mountain section; stations are scarce and expensive there."),
            Item(
                "Book the last night near the destination so you arrive relaxed, not after six hours on the road."
            ),
            Item(
                "Download the route offline; signal drops in the valleys.",
                "What did you tell me to do with the maps because of poor reception?",
            ),
        ),
        outro=("Swap drivers every two hours, and keep snacks in the front.",),
        slots={
            "from_city": ("Bordeaux", "Munich", "Dublin", "Inverness", "Seattle"),
            "to_city": ("Barcelona", "Vienna", "Galway", "Skye", "Portland"),
        },
        names=SHOPS,
        count=(5, 6),
    ),
    Task(
        key="focaccia",
        topic="cooking",
        ask=(
            "How do I make focaccia? I want the big airy holes.",
            "Can you give me a foolproof focaccia recipe for a tray bake?",
        ),
        intro=("Focaccia is forgiving and very wet. For a 23 x 33 cm tray:",),
        items=(
            Item(
                "500 g bread flour, 400 g water, 10 g salt, 4 g instant yeast; mix with a spoon until no dry bits remain."
            ),
            Item(
                "Stretch-and-fold four times, 30 minutes apart, with wet hands; this builds the structure instead of kneading.",
                "How many rounds of stretching did you say replace kneading in the flatbread?",
            ),
            Item(
                "Cover and leave it in the fridge overnight, up to 24 hours; the slow rise gives the flavour and the bubbles.",
            ),
            Item(
                "Pour 4 tablespoons of olive oil into the tray, tip the dough in and let it relax for 2 hours at room temperature."
            ),
            Item(
                "Oil your fingers and dimple all the way to the bottom of the tray, then scatter flaky salt and rosemary.",
                "What herb did you tell me to scatter on top?",
            ),
            Item(
                "Bake at 230°C for 22 to 25 minutes until deep golden.",
                "How long did you say it needs in the oven?",
            ),
            Item("Cool on a rack so the bottom stays crisp."),
        ),
        outro=("Day-old focaccia makes the best toasted sandwiches.",),
        count=(6, 7),
    ),
    Task(
        key="soup",
        topic="cooking",
        ask=(
            "I want to make a big batch of soup to freeze. Something hearty?",
            "What's a good freezer-friendly soup for winter lunches?",
        ),
        intro=(
            "A smoky lentil and tomato soup freezes brilliantly and makes about eight portions:",
        ),
        items=(
            Item(
                "Soften two onions, two carrots and two celery sticks in olive oil for 10 minutes."
            ),
            Item(
                "Add a teaspoon each of smoked paprika and cumin and fry for a minute until fragrant.",
                "Which two spices did you say to toast with the veg for the lentil soup?",
            ),
            Item(
                "Stir in 300 g red lentils, two cans of chopped tomatoes and 1.5 litres of stock."
            ),
            Item("Simmer for 25 minutes until the lentils collapse."),
            Item(
                "Blend half of it and stir it back in, so it's creamy but still has texture.",
                "How much of the pot did you tell me to blitz?",
            ),
            Item("Season with salt and a squeeze of lemon right at the end."),
            Item(
                "Freeze flat in labelled zip bags; they stack like files and thaw in an hour.",
                "How did you suggest storing the portions in the freezer?",
            ),
        ),
        outro=("It keeps three months frozen. Add a swirl of yoghurt when serving.",),
        count=(6, 7),
    ),
    Task(
        key="pickles",
        topic="cooking",
        ask=(
            "I've got a glut of cucumbers. Can I pickle them without canning equipment?",
            "How do quick fridge pickles work?",
        ),
        intro=("Quick fridge pickles need no special kit. For two jam jars:",),
        items=(
            Item(
                "Slice 500 g cucumbers (or radishes, or red onion) and pack them into clean jars."
            ),
            Item(
                "Heat 250 ml cider vinegar, 250 ml water, 1 tablespoon salt and 1 tablespoon sugar until dissolved.",
                "What kind of vinegar did you say to use for the brine?",
            ),
            Item("Add dill, garlic and a few peppercorns to each jar."),
            Item(
                "Pour the hot brine over so everything is covered, and let it cool with the lid off."
            ),
            Item(
                "They're ready after 24 hours in the fridge and keep about a month.",
                "How long do the jars last chilled, according to you?",
            ),
            Item("Use non-iodised salt; iodised salt can make the brine cloudy."),
        ),
        outro=("Once you've done it once, try carrots with ginger or beetroot with orange zest.",),
        count=(5, 6),
    ),
    Task(
        key="debounce",
        topic="tech",
        ask=(
            "My search box fires an API call on every keystroke. How do I debounce it in JavaScript?",
            "Can you explain debouncing with a small JS example?",
        ),
        intro=(
            "Debouncing waits until the user has stopped typing for a moment before acting. A minimal version:",
        ),
        code=(
            """```javascript
function debounce(fn, wait = 300) {
  let timer;
  return (...args) => {
    clearTimeout(timer);
    timer = setTimeout(() => fn(...args), wait);
  };
}

const search = debounce((text) => fetch("/api/search?q=" + encodeURIComponent(text)), 300);
input.addEventListener("input", (event) => search(event.target.value));
```""",
        ),
        items=(
            Item(
                "300 ms is a good default delay for typing; go down to 150 if it feels sluggish.",
                "What delay in milliseconds did you recommend as a starting point?",
            ),
            Item(
                "Throttling is different: it runs at most once per interval while events keep coming, better for scroll handlers."
            ),
            Item(
                "Cancel in-flight requests with an AbortController, or an older response can overwrite a newer one.",
                "What did you say to use so stale responses don't clobber the latest results?",
            ),
            Item("Lodash ships `debounce` if you already depend on it."),
            Item("Skip the request entirely for queries shorter than two characters."),
        ),
        outro=(
            "Test it by typing fast and watching the network tab: you should see one request per pause.",
        ),
        count=(3, 5),
        label="-",
    ),
    Task(
        key="pandas_csv",
        topic="tech",
        ask=(
            "I have a huge CSV of sales data. How do I get monthly totals per region in Python?",
            "Can you show me how to summarise a CSV by month with pandas?",
        ),
        intro=("pandas makes this a few lines. Assuming columns `date`, `region`, `amount`:",),
        code=(
            """```python
import pandas as pd

sales = pd.read_csv("sales.csv", parse_dates=["date"])
monthly = (
    sales.groupby([pd.Grouper(key="date", freq="MS"), "region"])["amount"]
    .sum()
    .unstack("region")
    .fillna(0)
)
monthly.to_csv("monthly_by_region.csv")
print(monthly.tail())
```""",
        ),
        items=(
            Item(
                "`parse_dates` turns the column into real dates, which the monthly grouping needs.",
            ),
            Item(
                '`freq="MS"` labels each month by its first day; use `"ME"` for month-end labels.',
                "Which frequency code did you use so each month is labelled by its first day?",
            ),
            Item(
                "For files bigger than memory, read in chunks with `chunksize=500_000` and add up the partial results.",
                "What argument did you suggest for reading a file that doesn't fit in RAM?",
            ),
            Item("`unstack` makes one column per region; drop it if you prefer a long table."),
            Item("Save as Parquet rather than CSV if you'll reload it often; it's far faster."),
        ),
        outro=("Open the output in a spreadsheet to sanity-check one month by hand.",),
        count=(3, 5),
        label="-",
    ),
    Task(
        key="phone_backup",
        topic="tech",
        ask=(
            "My phone is almost full of photos. What's the safest way to back them up?",
            "How should I back up ten years of family photos?",
        ),
        intro=(
            "The rule professionals use is 3-2-1: three copies, two kinds of storage, one somewhere else. In practice:",
        ),
        items=(
            Item("Turn on your phone's own cloud backup, but don't treat it as the only copy."),
            Item(
                "Copy everything to an external SSD once a month; a 1 TB drive is cheap now.",
                "What size external drive did you suggest?",
            ),
            Item(
                "Keep a second drive at a relative's or at work, and swap them every few months.",
                "Where did you say to keep the spare copy?",
            ),
            Item("Organise by year and month folders, not by event; it never needs rethinking."),
            Item(
                "Check a random old photo opens from each backup twice a year. Untested backups fail."
            ),
            Item(
                "Once backed up twice, delete from the phone with {pick}, which finds duplicates and blurry shots first.",
                "What was the app you mentioned for clearing out duplicate pictures?",
            ),
        ),
        outro=("Start with the oldest photos; they're the ones with no other copy.",),
        names=("Gemini Photos", "Remo", "Slidebox", "Cleaner Kit"),
        count=(5, 6),
    ),
    Task(
        key="laptop",
        topic="tech",
        ask=(
            "I need a new laptop for work and some photo editing, around {cur}1,000. What should I look for?",
            "Which laptop specs matter for someone who mostly uses a browser and Lightroom?",
        ),
        intro=("For browser-heavy work plus photo editing, prioritise in this order:",),
        items=(
            Item(
                "16 GB of RAM minimum; with many tabs and Lightroom open, memory is the first thing you run out of.",
                "How much memory did you say is the minimum for my new computer?",
            ),
            Item("An SSD of 512 GB or more; photo libraries grow fast."),
            Item(
                "A screen that covers close to 100% of sRGB, so colours you edit are the colours people see.",
                "What colour coverage did you tell me the display should have?",
            ),
            Item(
                "At least two USB-C ports, one of them with charging, plus a card reader if you shoot on SD."
            ),
            Item("Battery life: look for independent reviews, not the manufacturer's figure."),
            Item("Weight under 1.5 kg if you carry it daily."),
        ),
        outro=("Try the keyboard in a shop if you can; it's the part you touch all day.",),
        count=(5, 6),
    ),
    Task(
        key="mobility",
        topic="fitness",
        ask=(
            "My hips are so tight from cycling. Can you give me a short mobility routine?",
            "What's a 15-minute stretching routine for stiff hips and hamstrings?",
        ),
        intro=("Fifteen minutes, ideally after a ride or in the evening:",),
        items=(
            Item(
                "90/90 hip switches: sit with both knees bent at right angles, rotate side to side, 10 each way.",
                "What was the seated exercise where both legs are at right angles?",
            ),
            Item(
                "Couch stretch: back knee against a wall, 60 seconds a side; it's brutal, ease in."
            ),
            Item("Pigeon pose, 60 seconds each side."),
            Item("World's greatest stretch: lunge, elbow to instep, rotate up, 5 each side."),
            Item(
                "Hamstring floss: lying down, strap round the foot, straighten and bend the knee 15 times.",
                "What did you suggest using round my foot for the hamstring drill?",
            ),
            Item("Cat-cow, 10 slow reps, to finish."),
        ),
        outro=("Daily beats long: ten minutes every day does more than an hour on Sunday.",),
        count=(5, 6),
    ),
    Task(
        key="swimming",
        topic="fitness",
        ask=(
            "I can swim breaststroke but front crawl wipes me out after one length. Tips?",
            "How do I get better at front crawl as an adult?",
        ),
        intro=(
            "Almost everyone who gets wiped out by crawl is holding their breath. Fix that first:",
        ),
        items=(
            Item(
                "Exhale constantly through your nose underwater, so you only need to inhale when you turn.",
                "What did you say I'm probably doing wrong with my breathing?",
            ),
            Item(
                "Breathe every three strokes so you alternate sides; it evens out your stroke.",
                "How often did you suggest turning to breathe?",
            ),
            Item("Kick from the hips with loose ankles, small and fast; big kicks just tire you."),
            Item("Use a kickboard for a few lengths of kick-only each session."),
            Item(
                "Drill: one arm stays extended in front while the other strokes (catch-up drill)."
            ),
            Item(
                "Swim slower than you think; build to 4 lengths continuous before thinking about speed."
            ),
        ),
        outro=("A couple of adult lessons are worth their weight in gold here.",),
        count=(5, 6),
    ),
    Task(
        key="headaches",
        topic="health",
        ask=(
            "I've been getting headaches most afternoons at work. Anything I can try?",
            "What could be causing my afternoon headaches?",
        ),
        intro=(
            "Afternoon headaches have a few very common culprits, worth ruling out one by one:",
        ),
        items=(
            Item(
                "Dehydration: aim for a glass of water every hour; keep a bottle on the desk as a reminder."
            ),
            Item(
                "Screen glare: lower the brightness to match the room, and use the 20-20-20 rule: every 20 minutes look 20 feet away for 20 seconds.",
                "What was the rule with the three twenties for my eyes?",
            ),
            Item("Skipped lunch or a sugary one: a proper meal with protein steadies things."),
            Item(
                "Caffeine timing: a late-morning coffee wearing off can cause a rebound headache."
            ),
            Item(
                "Posture: a forward-head position strains the neck muscles that refer pain into the head.",
            ),
            Item(
                "Get an eye test if it's been more than two years; mild long-sightedness is a classic cause.",
                "How long did you say it's fine to go between eye checks before it's worth booking one?",
            ),
        ),
        outro=(
            "Keep a simple diary for two weeks (time, water, food, sleep) and a pattern usually shows.",
        ),
        count=(5, 6),
    ),
    Task(
        key="mould",
        topic="home",
        ask=(
            "There's black mould around our bathroom window. How do I get rid of it for good?",
            "How do I stop condensation and mould in the bedroom?",
        ),
        intro=("Mould is a moisture problem first and a cleaning problem second:",),
        items=(
            Item(
                "Clean it with a diluted bleach spray or a mould remover, wearing gloves and a mask, window open.",
            ),
            Item(
                "Run the extractor fan for 20 minutes after every shower, and leave the door closed while it runs.",
                "How long did you tell me to keep the fan going after showering?",
            ),
            Item("Wipe the window and tiles with a squeegee after showers."),
            Item(
                "Keep indoor humidity under 60%; a cheap hygrometer tells you where you are.",
                "What humidity level did you say to stay below?",
            ),
            Item("Open windows for ten minutes each morning, even in winter."),
            Item(
                "A compressor dehumidifier in the worst room; 10-12 litres a day is plenty for a flat.",
                "What capacity of moisture-removing machine did you suggest?",
            ),
            Item("Leave a gap between furniture and outside walls so air can move."),
        ),
        outro=(
            "If it keeps coming back on one wall, it may be a leak or a bridging problem, which is the landlord's job.",
        ),
        count=(5, 7),
    ),
    Task(
        key="paint_room",
        topic="home",
        ask=(
            "We're painting the living room ourselves this weekend. What order do we do things in?",
            "Tips for painting a room without making a mess?",
        ),
        intro=("Preparation is 70% of a good paint job. The order:",),
        items=(
            Item(
                "Clear the room, cover the floor with dust sheets and take off switch and socket plates."
            ),
            Item("Fill cracks, sand smooth and wipe the walls with sugar soap."),
            Item(
                "Use low-tack decorator's tape on skirting boards and frames, and pull it off while the last coat is still slightly wet.",
                "When did you say to peel off the masking tape?",
            ),
            Item("Ceiling first, then walls, then woodwork."),
            Item(
                "Cut in the edges with a 2-inch angled brush, then roll while the edges are still wet to avoid lines.",
                "What kind of brush did you recommend for the edges?",
            ),
            Item("Two thin coats beat one thick one; wait the full drying time between them."),
            Item("Wrap rollers in cling film between coats instead of washing them."),
        ),
        outro=("Budget a full day for a medium room, two with the ceiling.",),
        count=(5, 7),
    ),
    Task(
        key="tomatoes",
        topic="garden",
        ask=(
            "I want to grow tomatoes on my balcony. Where do I start?",
            "My tomato plants are all leaves and no fruit. Help?",
        ),
        intro=("Balcony tomatoes are very doable. The essentials:",),
        items=(
            Item(
                "Pick a cherry variety like {pick}; they crop early and forgive mistakes.",
                "Which variety did you suggest for growing on the balcony?",
            ),
            Item("One plant per 20-litre pot at least; small pots mean constant watering."),
            Item("Six to eight hours of sun; a south or west-facing balcony is ideal."),
            Item(
                "Pinch out the side shoots that grow between stem and branch every week on cordon types.",
                "What did you tell me to snap off weekly?",
            ),
            Item(
                "Once the first flowers set, feed weekly with a high-potash tomato feed; nitrogen-rich feed gives all leaves, no fruit.",
                "What kind of fertiliser did you say makes them fruit instead of just growing leaves?",
            ),
            Item("Water consistently; dry then soaked is what causes split fruit."),
        ),
        outro=(
            "Pick them when fully coloured and slightly soft; they taste best at room temperature.",
        ),
        names=("Sungold", "Gardener's Delight", "Tumbling Tom", "Sweet Million"),
        count=(5, 6),
    ),
    Task(
        key="lawn",
        topic="garden",
        ask=(
            "Our lawn is patchy and full of moss. What can we do this year?",
            "How do I get a decent lawn without chemicals?",
        ),
        intro=("A lawn year, roughly by season:",),
        items=(
            Item(
                "Early spring: rake out the moss hard with a spring-tine rake (scarifying). It'll look worse before better.",
            ),
            Item(
                "Spike compacted areas with a garden fork, 10 cm deep every 10 cm, to let air and water in.",
                "How deep did you say to push the fork in when aerating?",
            ),
            Item("Overseed bare patches in April or September, when soil is warm and damp."),
            Item(
                "Mow high (about 5 cm) and often; short lawns let moss and weeds in.",
                "At what height did you say to keep the grass?",
            ),
            Item("Leave the clippings in summer; they feed the lawn."),
            Item(
                "Moss usually means shade, damp or compaction, so fix the cause, not just the moss."
            ),
        ),
        outro=("Give it a full year; lawns improve slowly and then all at once.",),
        count=(5, 6),
    ),
    Task(
        key="pension",
        topic="money",
        ask=(
            "I'm 34 and have barely thought about my pension. What should I be doing?",
            "Can you explain how workplace pensions work and whether I should pay in more?",
        ),
        intro=(
            "Starting in your thirties is fine; the important thing is starting. The main points:",
        ),
        items=(
            Item(
                "Always contribute enough to get the full employer match; it's an instant 100% return on that money.",
                "What did you say I must do at minimum so I don't leave free money on the table?",
            ),
            Item("Contributions get tax relief, so paying in 100 usually costs you 80 or less."),
            Item(
                "A rough rule of thumb: halve your age when you start and put that percentage of salary in, including the employer's part.",
                "What rule of thumb did you give for the contribution percentage?",
            ),
            Item("Check the default fund's fees; anything over 0.5% a year is worth questioning."),
            Item(
                "Combine old pots from previous jobs so you can see them in one place, after checking for exit fees or guarantees."
            ),
            Item(
                "Increase your contribution by 1% every time you get a pay rise; you won't feel it."
            ),
        ),
        outro=("Log into the pension provider's website once a year; most people never do.",),
        count=(5, 6),
    ),
    Task(
        key="tax_return",
        topic="money",
        ask=(
            "I have to do my first self-assessment tax return. What do I need to get together?",
            "Any tips for doing my tax return as a freelancer?",
        ),
        intro=("The form itself is quick if the paperwork is ready. Gather these first:",),
        items=(
            Item(
                "Your tax reference number and login, which can take ten days to arrive by post, so sort that early."
            ),
            Item("Every invoice issued in the tax year, and the bank statements to match."),
            Item(
                "Receipts for allowable expenses: equipment, software, a share of phone and internet, professional fees.",
            ),
            Item(
                "If you work from home, the flat-rate allowance is usually simpler than apportioning bills.",
                "What simpler option did you mention for home-working costs?",
            ),
            Item(
                "Put aside about 30% of every payment in a separate account so the bill is never a shock.",
                "What percentage of each invoice did you say to set aside?",
            ),
            Item("File early even if you pay later; you find out the bill with time to plan."),
        ),
        outro=(
            "A simple spreadsheet with one row per invoice and one per expense makes next year painless.",
        ),
        count=(5, 6),
    ),
    Task(
        key="salary",
        topic="work",
        ask=(
            "I've got a review coming up and want to ask for a raise. How do I approach it?",
            "How do I negotiate salary for a job offer without seeming greedy?",
        ),
        intro=(
            "Negotiation is expected; handled well, it rarely costs you anything. How to prepare:",
        ),
        items=(
            Item(
                "Find three sources for the market rate (salary surveys, recruiters, people in similar roles).",
            ),
            Item(
                "Write down three concrete results from the past year with numbers attached.",
                "How many measurable wins did you suggest I list before the meeting?",
            ),
            Item(
                "Name a specific figure slightly above what you want; ranges get anchored at the bottom.",
                "Why did you tell me not to give a range?",
            ),
            Item(
                "Then stop talking. Silence after the number is normal and uncomfortable and fine."
            ),
            Item(
                "If salary is capped, ask about title, extra leave, training budget or a review in six months."
            ),
            Item("Get whatever you agree in writing by email the same day."),
        ),
        outro=("Rehearse the first two sentences out loud; the rest follows.",),
        count=(5, 6),
    ),
    Task(
        key="cv",
        topic="work",
        ask=(
            "Can you look at how I should structure my CV? It's four pages and feels messy.",
            "What makes a CV stand out for mid-level roles?",
        ),
        intro=("Four pages is too long for almost anyone. The structure that works:",),
        items=(
            Item("Two pages maximum; recruiters spend under a minute on the first read."),
            Item(
                "Start with a three-line profile that says what you do and for whom, not adjectives about yourself.",
                "How many lines did you say the opening summary should be?",
            ),
            Item(
                "Bullets as achievements, not duties: 'cut invoice errors by a third', not 'responsible for invoicing'.",
            ),
            Item("Only the last ten years in detail; older jobs can be one line each."),
            Item(
                "Save it as a PDF named with your full name and the role, never 'CV_final_v3'.",
                "How did you tell me to name the file?",
            ),
            Item("Tailor the top third to each job; leave the rest."),
        ),
        outro=(
            "Ask someone outside your field to read it: if they can't tell what you do, simplify.",
        ),
        count=(5, 6),
    ),
    Task(
        key="toddler_sleep",
        topic="family",
        ask=(
            "Our two-year-old has started fighting bedtime every night. Any advice?",
            "How do we get a toddler to stay in bed?",
        ),
        intro=("Bedtime battles at two are extremely common; consistency is what fixes them:",),
        items=(
            Item(
                "Same routine in the same order every night: bath, pyjamas, two books, song, lights off."
            ),
            Item(
                "A picture chart of the routine they can follow and tick off gives them a sense of control.",
                "What visual aid did you suggest for the evening routine?",
            ),
            Item(
                "Offer small choices (which pyjamas, which book), never 'do you want to go to bed?'.",
            ),
            Item(
                "If they get up, walk them back with as little talking as possible, every time. It's boring on purpose.",
                "How did you say to react when the little one keeps climbing out?",
            ),
            Item(
                "A toddler clock that changes colour when it's OK to get up helps with early waking too."
            ),
            Item("Check the nap: a late or long afternoon nap can push bedtime back an hour."),
        ),
        outro=("Expect it to get worse for three or four nights before it gets better.",),
        count=(5, 6),
    ),
    Task(
        key="dog_recall",
        topic="family",
        ask=(
            "Our dog ignores us completely at the park when called. How do we fix recall?",
            "How do I train a young dog to come back when called?",
        ),
        intro=("Recall is built in small steps, starting somewhere boring:",),
        items=(
            Item(
                "Practise at home first, then the garden, then a quiet park, and only then a busy one."
            ),
            Item(
                "Use a high-value treat just for recall, like tiny bits of cheese or chicken.",
            ),
            Item(
                "Pick a new cue word (or a whistle) that has never been ignored yet.",
                "What did you suggest instead of the old command the dog already ignores?",
            ),
            Item(
                "Use a 10-metre long line at the park, so you can reel them in instead of chasing.",
                "How long a lead did you recommend for practising outdoors?",
            ),
            Item(
                "Never call them to end the fun, and never tell them off when they arrive, however long it took."
            ),
            Item("Five recalls per walk, each rewarded, then let them go again."),
        ),
        outro=("It takes weeks, not days. Reward every single return at first.",),
        count=(5, 6),
    ),
    Task(
        key="knitting",
        topic="hobbies",
        ask=(
            "I want to learn to knit. What should my first project be?",
            "Which yarn and needles should a complete beginner buy for knitting?",
        ),
        intro=("A good first project is flat, forgiving and useful:",),
        items=(
            Item(
                "Start with a garter-stitch scarf or a dishcloth: only the knit stitch, no counting.",
            ),
            Item(
                "Chunky yarn in a light colour so you can see your stitches; avoid dark or fluffy yarn at first.",
                "Why did you say to pick a pale yarn for a first project?",
            ),
            Item(
                "5 mm bamboo needles; they're less slippery than metal.",
                "What needles did you recommend for a beginner?",
            ),
            Item("Cast on with the long-tail method; it's the most useful one to learn."),
            Item("Count your stitches at the end of every row for the first week."),
            Item(
                "Video tutorials from {pick} are the clearest for beginners.",
                "Whose videos did you suggest for learning to knit?",
            ),
        ),
        outro=("Uneven tension is normal for the first few metres; it evens out by itself.",),
        names=("VeryPink Knits", "Sheep and Stitch", "Wool and the Gang", "Purl Soho"),
        count=(5, 6),
    ),
    Task(
        key="astronomy",
        topic="hobbies",
        ask=(
            "I'd like to get into stargazing with the kids. Do we need a telescope?",
            "What's a good way to start with astronomy on a budget?",
        ),
        intro=("You can see a lot before buying anything. A path in:",),
        items=(
            Item(
                "Start with 10x50 binoculars; they show the Moon's craters, Jupiter's moons and star clusters.",
                "What magnification of binoculars did you suggest to begin with?",
            ),
            Item("Use a free planisphere app to learn the bright constellations first."),
            Item(
                "Give your eyes 20 minutes in the dark, and use red light only, to keep your night vision.",
                "How long did you say our eyes need to adjust outdoors?",
            ),
            Item("Watch for the Perseid meteor shower in mid-August; no equipment needed at all."),
            Item(
                "If you do buy a telescope later, a 6-inch Dobsonian is the classic first choice."
            ),
            Item(
                "Find your nearest dark-sky spot; even 30 minutes out of town makes a huge difference."
            ),
        ),
        outro=(
            "Local astronomy societies hold open nights where you can look through big telescopes for free.",
        ),
        count=(5, 6),
    ),
    Task(
        key="revision",
        topic="learning",
        ask=(
            "I've got professional exams in {weeks} weeks. How should I plan my revision?",
            "Help me make a study plan for a certification exam? I work full time.",
        ),
        intro=(
            "With a full-time job, the plan has to be realistic rather than heroic. Over {weeks} weeks:",
        ),
        items=(
            Item(
                "List every topic on the syllabus and rate your confidence 1-3; the 1s get the most time."
            ),
            Item(
                "Study in 45-minute blocks with a 10-minute break, two blocks on weekday evenings and four at weekends.",
                "How long did you say each study stint should last?",
            ),
            Item(
                "Do past papers from the halfway point, timed, under exam conditions.",
                "From what point did you tell me to start on old exam papers?",
            ),
            Item("Make one-page summary sheets per topic; rewriting is where it sticks."),
            Item(
                "Explain each topic aloud to an imaginary student (the Feynman technique); gaps show up fast.",
                "What was the name of the method where I teach it out loud to someone pretend?",
            ),
            Item("Take one full day off a week. Tired revision is mostly wasted revision."),
        ),
        outro=("The last week is for past papers and sleep, not new material.",),
        slots={"weeks": ("six", "eight", "ten", "twelve")},
        count=(5, 6),
    ),
    Task(
        key="smalltalk",
        topic="misc",
        ask=(
            "Rainy Sunday. Suggest something to do indoors that isn't a screen?",
            "I'm bored. Any ideas for an evening in?",
        ),
        intro=("A few indoor ideas that don't involve a screen:",),
        items=(
            Item(
                "Bake something from a cuisine you've never cooked, with whatever is in the cupboard."
            ),
            Item("Start a jigsaw on a board so it can be moved off the table."),
            Item("Write a letter to someone you haven't spoken to in a year."),
            Item("Rearrange one bookshelf by colour, or by the order you read them."),
            Item("Learn three card tricks and try them on someone later."),
            Item("Pick a random album from the year you were born and listen to the whole thing."),
        ),
        outro=("Or just a nap. Rainy Sundays were made for them.",),
        count=(3, 5),
        label="-",
    ),
)

PREFERENCES = (
    Preference(
        "vegan",
        ("Just so you know, I'm fully vegan, so no eggs, dairy or honey.",),
        ("What could I cook for a birthday brunch?", "Ideas for a picnic spread this weekend?"),
        "cooking",
    ),
    Preference(
        "motion_sick",
        ("I get terribly seasick, even on the ferry across the harbour.",),
        ("How should we spend a week in the Greek islands?",),
        "travel",
    ),
    Preference(
        "no_driving",
        ("I don't have a licence and never plan to get one.",),
        ("How would you suggest we explore the west coast of Ireland?",),
        "travel",
    ),
    Preference(
        "mushrooms",
        ("I really can't stand mushrooms, it's a texture thing.",),
        ("Suggest a vegetarian pasta for tonight?",),
        "cooking",
    ),
    Preference(
        "shellfish",
        ("Shellfish makes me very ill, so prawns and mussels are out.",),
        ("What should I order in a tapas bar in Madrid?",),
        "cooking",
    ),
    Preference(
        "halal",
        ("I keep halal, so that rules out a lot of places.",),
        ("Where should we go for a team dinner in the city centre?",),
        "",
    ),
    Preference(
        "crowds",
        ("I find big crowds really overwhelming, I need space.",),
        (
            "When is the best time to visit Rome?",
            "How should I do the Christmas markets in Vienna?",
        ),
        "travel",
    ),
    Preference(
        "cold",
        ("I feel the cold terribly, I'm in a jumper in June.",),
        ("Where could we go for a week in October?",),
        "travel",
    ),
    Preference(
        "swimming_pref",
        ("Swimming is the only exercise I've ever actually enjoyed.",),
        ("How can I get fitter before my sister's wedding?",),
        "fitness",
    ),
    Preference(
        "windows",
        ("I'm a Windows person through and through, never got on with Macs.",),
        ("What's the easiest way to edit PDFs?",),
        "tech",
    ),
    Preference(
        "thrillers",
        ("Honestly I only ever read crime thrillers.",),
        ("Got any recommendations for my beach holiday reading?",),
        "learning",
    ),
    Preference(
        "small_kitchen",
        ("Our kitchen is tiny, two hobs and no oven, just a microwave.",),
        ("What can I cook for friends on Saturday?",),
        "cooking",
    ),
    Preference(
        "back",
        ("I've got a slipped disc, so anything with heavy lifting or twisting is out.",),
        ("What's a good way to build some muscle at home?",),
        "fitness",
    ),
    Preference(
        "quiet_weekends",
        ("My ideal weekend is quiet: a walk, a book, no plans.",),
        ("What should we do for our anniversary?",),
        "",
    ),
    Preference(
        "night_owl",
        ("I'm a total night owl, I do my best thinking after 10pm.",),
        ("How should I organise my study schedule for the exams?",),
        "learning",
    ),
    Preference(
        "android",
        ("Everyone in our house is on Android.",),
        ("What's a good way to share a family calendar?",),
        "tech",
    ),
    Preference(
        "sweet_tooth",
        ("I have zero sweet tooth, I'd always pick cheese over cake.",),
        ("What dessert could I make for a dinner party?",),
        "cooking",
    ),
    Preference(
        "dog_friendly",
        ("Wherever we go, our spaniel comes too.",),
        ("Can you suggest somewhere for a weekend away in the spring?",),
        "travel",
    ),
)

UPDATES = (
    Update(
        "employer",
        (
            "a paralegal at Ashcombe Law",
            "a pharmacist at a hospital in town",
            "a site manager for Corran Builders",
            "a copywriter at an agency called Bright Fox",
            "a nurse on the cardiac ward",
            "a teaching assistant at Hollins Primary",
        ),
        ("I'm {v}, if that helps with context.",),
        (
            "Huge week: I've resigned as {old} and accepted an offer as {v}!",
            "Career change done: no longer {old}, I'm {v} as of this month.",
        ),
        (
            "What's my current occupation?",
            "What is it that I do for work now?",
            "Which job do I have after the career change?",
        ),
        "good",
        topic="work",
    ),
    Update(
        "flat",
        ("Riverside", "St Anne's", "Ashby Road", "the High Street", "Cliftonville", "Mill Hill"),
        ("Our place is a rented flat on {v}.",),
        (
            "Keys collected! We've left {old} and we're in a new place on {v}.",
            "Boxes everywhere, but we're finally moved from {old} to {v}.",
        ),
        (
            "Where's our home now?",
            "Which street or area have we settled in after moving?",
            "Where's our new place?",
        ),
        "good",
        topic="home",
    ),
    Update(
        "bike_model",
        ("Brompton", "Boardman hybrid", "Trek road bike", "cargo bike", "e-bike from Decathlon"),
        ("I ride a {v} everywhere.",),
        ("The {old} got nicked, so I've bought a {v}.", "Sold the {old} and upgraded to a {v}."),
        (
            "What do I cycle on these days?",
            "Which bike do I have at present?",
            "Which bike did I upgrade to?",
        ),
        topic="fitness",
    ),
    Update(
        "gym",
        (
            "PureGym",
            "the council leisure centre",
            "a CrossFit box",
            "a climbing wall",
            "the university gym",
        ),
        ("I'm a member at {v}.",),
        ("Cancelled {old}, joined {v} instead.", "Switched from {old} to {v} this month."),
        (
            "Where do I train now?",
            "Which gym am I a member of at the moment?",
            "Which gym have I joined instead?",
        ),
        topic="fitness",
    ),
    Update(
        "partner_job",
        ("teacher", "chef", "accountant", "paramedic", "architect"),
        ("{partner} works as a {v}.",),
        (
            "{partner} has left their job as a {old} and is now working as a {v}!",
            "{partner} retrained: not a {old} any more, a {v}.",
        ),
        ("What does {partner} do for work these days?",),
    ),
    Update(
        "diet_goal",
        (
            "cutting out sugar",
            "eating more protein",
            "intermittent fasting",
            "going alcohol-free on weekdays",
        ),
        ("My current health kick is {v}.",),
        ("I've stopped {old}, it wasn't working; now it's {v}.",),
        (
            "What's my eating habit focus right now?",
            "Which health goal am I sticking to currently?",
            "What did I switch to after I stopped my last diet?",
        ),
        topic="health",
    ),
    Update(
        "holiday",
        ("Madeira", "Sardinia", "Tenerife", "the Algarve", "Montenegro"),
        ("We've booked {v} for half-term.",),
        ("Half-term plans changed, {old} is off and we're going to {v}.",),
        (
            "Where are we heading for half-term?",
            "What's our half-term destination now?",
            "Where are we going for half-term now?",
        ),
        topic="travel",
    ),
    Update(
        "choir",
        ("alto", "soprano", "tenor", "bass"),
        ("I sing {v} in the community choir.",),
        ("The director has moved me from {old} to {v}!",),
        (
            "Which part do I sing in the choir at present?",
            "Which part did the choir director move me to?",
        ),
        topic="hobbies",
    ),
    Update(
        "savings_target",
        ("{cur}5,000", "{cur}8,000", "{cur}12,000", "{cur}3,500"),
        ("We're trying to save {v} for a house deposit top-up.",),
        ("Revised our savings goal: {v} instead of {old}.",),
        ("How much are we trying to save at the moment?", "What's our savings goal now?"),
        topic="money",
    ),
    Update(
        "team_size",
        ("four", "six", "nine", "twelve"),
        ("I manage a team of {v}.",),
        ("After the restructure my team went from {old} to {v} people.",),
        ("How many people report to me now?", "How big is my team after the restructure?"),
        topic="work",
    ),
    Update(
        "instrument",
        ("ukulele", "cello", "drums", "violin", "saxophone"),
        ("I've been teaching myself the {v}.",),
        ("Packed in the {old}, I've moved on to the {v}.",),
        ("Which instrument am I practising these days?", "What have I moved on to playing?"),
        topic="hobbies",
    ),
)

FACTS = (
    Fact(
        "brother_job",
        ("a firefighter", "a software developer", "a vet", "a pilot"),
        ("My brother {brother} is {v}.",),
        (
            "What does {brother} do?",
            "What's my brother's profession?",
            "What job does my brother {brother} have?",
        ),
    ),
    Fact(
        "allotment",
        ("plot 14", "plot 32", "plot 7", "plot 21"),
        ("We finally got an allotment, {v}, after two years on the waiting list.",),
        ("Which allotment number did we get?", "Which allotment plot is ours?"),
        "good",
        topic="garden",
    ),
    Fact(
        "anniversary",
        ("the 9th of June", "the 22nd of September", "the 14th of January", "the 30th of April"),
        ("Our anniversary is {v}, and I always forget.",),
        (
            "What date is our anniversary?",
            "When do {partner} and I celebrate our anniversary?",
            "When's our anniversary again? I always forget.",
        ),
        topic="family",
    ),
    Fact(
        "dog_breed",
        ("a springer spaniel", "a lurcher", "a cockapoo", "a Staffie cross"),
        ("{pet} is {v}, three years old.",),
        ("What breed is {pet}?", "What kind of dog is {pet}, and how old?"),
        topic="family",
    ),
    Fact(
        "car_reg",
        ("silver", "dark green", "bright orange", "navy"),
        ("Our car's the {v} one on the drive, you can't miss it.",),
        ("What colour is our car?", "Which car on the drive is ours?"),
    ),
    Fact(
        "commute_time",
        ("40 minutes", "an hour and ten", "25 minutes", "almost two hours"),
        ("My commute is {v} each way.",),
        ("How long is my commute?",),
        topic="work",
    ),
    Fact(
        "dentist",
        ("Dr Achebe", "Dr Holm", "Dr Fraser", "Dr Iyer"),
        ("My dentist is {v} on the high street.",),
        ("What's my dentist's name?", "Who's my dentist on the high street?"),
        topic="health",
    ),
    Fact(
        "laptop_model",
        ("ThinkPad T14", "Dell XPS 13", "MacBook Air M1", "Surface Laptop 4"),
        ("I'm working on a {v} at the moment.",),
        ("Which laptop am I working on?",),
        topic="tech",
    ),
    Fact(
        "niece_age",
        ("three", "seven", "eleven", "fourteen"),
        ("My niece {niece} is {v}.",),
        ("How old is {niece}?", "How old is my niece {niece}?"),
        topic="family",
    ),
    Fact(
        "favourite_walk",
        (
            "the loop round Malham Cove",
            "the cliff path to the lighthouse",
            "the canal towpath",
            "Arthur's Seat at dawn",
        ),
        ("My favourite walk is {v}.",),
        ("Which route do I love walking most?", "What's my favourite walk?"),
        topic="travel",
    ),
    Fact(
        "coffee_order",
        ("a flat white with oat milk", "a double espresso", "a cortado", "a decaf latte"),
        ("My usual order is {v}.",),
        ("What do I normally get at the coffee shop?", "What's my usual coffee order?"),
    ),
    Fact(
        "degree",
        ("marine biology", "history", "civil engineering", "French and German"),
        ("I studied {v} at uni, which is funny given what I do now.",),
        ("What was my university subject?", "What did I study at uni?"),
        topic="learning",
    ),
    Fact(
        "boiler",
        ("twelve years old", "brand new", "from the nineties", "six years old"),
        ("Our boiler is {v}, for what it's worth.",),
        ("How old is our boiler?",),
        topic="home",
    ),
    Fact(
        "weekly_shop",
        ("Lidl", "the Co-op", "Aldi", "Sainsbury's"),
        ("We do the weekly shop at {v}.",),
        ("Which supermarket do we use?", "Where do we do our weekly shop?"),
        topic="cooking",
    ),
)

EVENTS = (
    Event(
        "mri",
        ("Had an MRI on my shoulder this afternoon, forty minutes of banging noises.",),
        ("my shoulder scan", "the MRI"),
        mood="bad",
        topic="health",
    ),
    Event(
        "first_day_school",
        ("{kid} started school today, I cried more than they did.",),
        ("{kid}'s first day at school", "when {kid} started school"),
        mood="good",
        topic="family",
    ),
    Event(
        "boiler",  # with the boiler's age, one boiler story per person
        ("The boiler died today. Cold showers for us.",),
        ("our heating breaking down", "the boiler packing in"),
        mood="bad",
        topic="home",
    ),
    Event(
        "gig",
        ("Went to see {v} at the arena last night!",),
        ("the {v} show", "watching {v} live"),
        (
            "Florence and the Machine",
            "Fontaines D.C.",
            "Self Esteem",
            "Elbow",
            "Sam Fender",
            "Laura Marling",
        ),
        ("Which artist did I see at the arena in {month}?", "Whose show did I go to in {month}?"),
        "good",
    ),
    Event(
        "driving_test",
        ("Passed my driving test this morning, first time!",),
        ("getting my licence", "my practical driving exam"),
        mood="good",
        topic="travel",
    ),
    Event(
        "sprain",
        ("Sprained my ankle at five-a-side tonight.",),
        ("the football injury", "when I hurt my ankle"),
        mood="bad",
        topic="fitness",
    ),
    Event(
        "exhibition",
        ("Saw the {v} exhibition today, really moving.",),
        ("the {v} exhibition", "my visit to see the {v} show"),
        ("Hockney", "Frida Kahlo", "Turner", "Yayoi Kusama", "Vermeer"),
        ("Which exhibition did I visit in {month}?", "What art show did I see in {month}?"),
        topic="hobbies",
    ),
    Event(
        "smart_meter",
        ("Got the smart meter fitted today.",),
        ("the smart meter installation", "getting the new meter"),
    ),
    Event(
        "graduation",
        ("{sister}'s graduation today, so proud.",),
        ("{sister}'s graduation", "the graduation ceremony for {sister}"),
        mood="good",
    ),
    Event(
        "citizenship",
        ("I had my citizenship ceremony today!",),
        ("becoming a citizen", "my citizenship ceremony"),
        mood="good",
    ),
    Event(
        "swim_event",
        ("Did the {v} swim this morning, freezing but amazing.",),
        ("the {v} swim", "swimming the {v}"),
        ("Windermere one-mile", "harbour 2k", "lido 5k", "Serpentine mile"),
        ("Which open-water event did I do in {month}?",),
        "good",
        topic="fitness",
    ),
    Event(
        "burst_pipe",
        ("A pipe burst under the sink this morning, the kitchen is a paddling pool.",),
        ("the kitchen flood", "the burst pipe"),
        mood="bad",
        topic="home",
    ),
    Event(
        "puppy_class",
        ("{pet}'s first obedience class tonight, total chaos.",),
        ("{pet}'s first training class", "taking {pet} to obedience school for the first time"),
        topic="family",
    ),
    Event(
        "festival",
        ("Back from {v}, I need three days of sleep.",),
        ("{v}", "the weekend at {v}"),
        ("Green Man", "Glastonbury", "Latitude", "End of the Road", "Primavera"),
        ("Which festival did I go to in {month}?",),
        "good",
        topic="travel",
    ),
    Event(
        "eye_surgery",
        ("Had laser eye surgery today, everything is blurry but ok.",),
        ("my laser eye surgery", "the eye operation"),
        topic="health",
    ),
    Event(
        "conference",
        ("Gave my first conference talk today at {v}!",),
        ("my talk at {v}", "speaking at {v}"),
        (
            "PyCon",
            "a nursing conference in Leeds",
            "the regional planning summit",
            "a marketing meetup",
        ),
        ("Where did I give a talk in {month}?",),
        "good",
        topic="work",
    ),
)

SERIES = (
    Series(
        "parkrun_vol",
        ("as a marshal", "as the timekeeper", "scanning barcodes", "as tail walker"),
        ("Volunteered at parkrun this morning {v}.",),
        (
            "How many times have I volunteered at parkrun?",
            "What roles have I done volunteering on Saturday mornings?",
        ),
        topic="fitness",
    ),
    Series(
        "home_repairs",
        (
            "{cur}220 for the electrician",
            "{cur}85 for a new lock",
            "{cur}460 to fix the roof tiles",
            "{cur}130 for the gutters",
        ),
        ("Paid out {v} today, the house is a money pit.",),
        (
            "How much have house repairs cost us so far?",
            "What's the running total on fixing the house?",
        ),
        mood="bad",
        topic="home",
    ),
    Series(
        "films",
        ("Past Lives", "Aftersun", "Oppenheimer", "Anatomy of a Fall", "The Holdovers"),
        ("Watched {v} at the cinema tonight.",),
        ("Which films have I seen at the cinema?", "How many cinema trips have I mentioned?"),
    ),
    Series(
        "swim_distance",
        ("1,000 m", "1,400 m", "1,800 m", "2,200 m"),
        ("Swam {v} this morning without stopping.",),
        (
            "How has my continuous swimming distance improved?",
            "How far can I swim without stopping now, compared to before?",
        ),
        mood="good",
        topic="fitness",
    ),
    Series(
        "quilts",
        ("a baby quilt for my niece", "a cushion cover", "a table runner", "a full double quilt"),
        ("Finished sewing {v}!",),
        ("What sewing projects have I completed?", "How many things have I finished sewing?"),
        mood="good",
        topic="hobbies",
    ),
    Series(
        "cities_work",
        ("Rotterdam", "Lyon", "Glasgow", "Frankfurt", "Milan"),
        ("Off to {v} for work tomorrow.",),
        ("Which cities have I had work trips to?", "How many business trips have I mentioned?"),
        topic="work",
    ),
    Series(
        "weight_loss",
        ("2 kg", "1.5 kg", "3 kg", "1 kg"),
        ("Down another {v} this month.",),
        (
            "How much weight have I lost altogether?",
            "How much have I gone down in total, month by month?",
        ),
        mood="good",
        topic="health",
    ),
    Series(
        "languages_lessons",
        ("a Portuguese lesson", "a Greek lesson", "a Welsh lesson", "a Turkish lesson"),
        ("Had {v} with my tutor tonight.",),
        (
            "Which languages have I had tutoring in?",
            "Which language lessons have I had with my tutor?",
        ),
        topic="learning",
    ),
    Series(
        "hosting",
        (
            "a curry night for eight",
            "Sunday lunch for the in-laws",
            "a games night",
            "a leaving do for a colleague",
        ),
        ("Hosted {v} at ours, exhausted.",),
        (
            "What have we hosted at home recently?",
            "How many gatherings have we thrown at our place?",
        ),
        topic="cooking",
    ),
    Series(
        "books_borrowed",
        ("a Le Carré", "a Ruth Rendell", "a Tana French", "an Ian Rankin"),
        ("Borrowed {v} from the library today.",),
        ("Which authors have I borrowed from the library?",),
        topic="learning",
    ),
    Series(
        "climbing",
        ("a 6a", "a 6b", "a 6c", "a 7a"),
        ("Climbed {v} at the wall tonight!",),
        (
            "What's the hardest grade I've climbed so far?",
            "How have my climbing grades progressed?",
        ),
        mood="good",
        topic="fitness",
    ),
    Series(
        "fundraising",
        ("{cur}120", "{cur}300", "{cur}75", "{cur}410"),
        ("Raised {v} for the hospice this month.",),
        ("How much have I raised for the hospice in total?",),
        mood="good",
        topic="money",
    ),
)

ABSENT = (
    Absent("What did you recommend for cleaning my oven?", ("oven clean",)),
    Absent("What's my uncle's wife called?", ("uncle",)),
    Absent("Which surfing school did I sign up with?", ("surf",)),
    Absent("How much did the wedding photographer cost us?", ("photographer",)),
    Absent("What mark did I get in my Spanish oral exam?", ("spanish",)),
    Absent("When did I break my wrist?", ("wrist",)),
    Absent("Which caravan site did we stay at?", ("caravan",)),
    Absent("What was the Vietnamese place you suggested in Hanoi?", ("hanoi", "vietnam")),
    Absent("How many bee hives do we have?", ("hive", "bees")),
    Absent("What did we name the goldfish?", ("goldfish",)),
    Absent("Which pottery wheel did I buy?", ("pottery",)),
    Absent("When is my scuba certification dive?", ("scuba",)),
    Absent("What did my accountant say about the VAT bill?", ("accountant", "vat")),
)

PROFILE = {
    "partner": ("Jamie", "Noor", "Callum", "Priti", "Hannes", "Sofia", "Daniel", "Eve", "Kwame"),
    "sister": ("Aoife", "Lotte", "Yasmin", "Bronwen", "Kirsty", "Amara"),
    "brother": ("Ciaran", "Rohan", "Mattias", "Gethin", "Tunde", "Pablo"),
    "niece": ("Poppy", "Amelie", "Zainab", "Iris", "Lola"),
    "kid": ("Rory", "Maeve", "Theo", "Aria", "Finn", "Nell", "Ezra"),
    "pet": ("Bramble", "Nutmeg", "Rolo", "Pickle", "Scout"),
    "cur": ("£", "€", "$"),
}

NAMES = (
    "Agnes", "Bertie", "Cosima", "Desmond", "Effie", "Florian", "Georgia", "Hector", "Isadora", "Jolyon",
    "Kirsten", "Leopold", "Mabel", "Nathaniel", "Ottilie", "Percy", "Rosalind", "Sebastian", "Tabitha", "Ulrich",
    "Violet", "Wilfred", "Xenia", "Yolanda", "Zachary", "Annika", "Barnaby", "Clementine", "Dorian", "Esther",
    "Ferdinand", "Genevieve", "Horatio", "Ingrid", "Jemima", "Kenji", "Louisa", "Montgomery", "Nerys", "Oswald",
    "Philippa", "Reuben", "Seraphina", "Thaddeus", "Ursula", "Valentin", "Winifred", "Ayodele", "Bogdan", "Chiamaka",
    "Dagny", "Eamon", "Farah", "Gustav", "Hyacinth", "Ignatius", "Jacinta", "Kasimir", "Lavinia", "Mungo",
    "Nkechi", "Orla-Mae", "Peregrine", "Radhika", "Soren", "Tamsin", "Ugne", "Wolfgang", "Yevgenia", "Zoltan",
    "Anastasia", "Benedikt", "Constance", "Dashiell", "Elspeth", "Fergus", "Gulnara", "Humphrey", "Ilaria", "Jethro",
    "Kalinda", "Leontyne", "Marguerite", "Niamh-Rose", "Octavia", "Piers", "Roisin", "Sigrid", "Tancredi", "Verity",
    "Waldo", "Ysolde", "Zuleika", "Alasdair", "Bathsheba", "Cyprian", "Dervla", "Evander", "Fenella", "Gwilym",
    "Henrietta", "Ivor", "Juniper", "Lazlo",
)  # fmt: skip

ASIDES = {
    "travel": (
        "Something to bear in mind with smaller places: a lot of independent cafés and shops run reduced hours out of season and close one weekday, often Tuesday. A quick look at their own page or a phone call the day before saves a wasted trip.",
        "On money: card is accepted nearly everywhere now, but keep a little cash for car parks, market stalls and honesty boxes at farm shops. Contactless on public transport often caps the daily fare automatically.",
        "For the drive itself, motorway services are expensive and samey; a five-minute detour to a village usually finds a better lunch for less. Build a thirty-minute cushion into every day so a traffic jam doesn't wreck the plan.",
    ),
    "cooking": (
        "On kit: a decent heavy-based pan and a sharp knife make more difference to home cooking than any gadget. A digital scale is the third thing, especially for baking, where cups and spoons are surprisingly inaccurate.",
        "Salt is the thing most home cooks under-use. Season in stages as you go rather than all at the end, and taste at every step; it's much easier to add than to take away.",
        "Most of this can be prepared a day ahead and kept covered in the fridge, which frees up the day you're actually serving it. Bring things back to room temperature for half an hour before cooking.",
    ),
    "tech": (
        "A quick word on security while you're at it: keep the operating system and browser updated, use a password manager, and turn on two-step login for email above all, because the email account is the key that resets every other one.",
        "Whatever you change, keep a copy of the original (a file, a config, a setting) so there's a clean way back. It's the single habit that separates a five-minute fix from a lost afternoon.",
        "If something behaves strangely, restart it before doing anything clever; a surprising share of problems disappear. If it doesn't, write down exactly what you did and what you saw, which makes it far easier to get help.",
    ),
    "money": (
        "It also pays to keep a single page listing every account, policy and pension you have, with the provider and the reference number. It takes an hour to write and saves days for you, or for your family, when something needs sorting in a hurry.",
        "The usual note of caution: I can lay out how this works in general, but rules and allowances change every year and depend on where you live, so double-check the current figures on the official government site before acting.",
        "The boring parts (automating, keeping records, checking fees once a year) do most of the heavy lifting. Clever strategies matter far less than simply not missing deadlines and not paying more in charges than you need to.",
    ),
    "fitness": (
        "Track something simple, like minutes, distance or the weight on the bar, in a notebook or an app. Seeing the line go up over a couple of months is the best motivation there is, and it tells you when to ease off as well as when to push.",
        "Warm up properly for five to ten minutes before anything intense, and build up volume gradually: a common rule is not adding more than about 10% a week. Most injuries in the first year come from doing too much too soon, not from bad technique.",
        "Recovery is where the improvement actually happens. Two or three days a week with nothing hard, decent sleep, and enough to eat will move you forward faster than squeezing in extra sessions.",
    ),
    "health": (
        "Small, boring habits carry most of the weight here: water through the day, regular meals, a walk in daylight, and a consistent bedtime. None of them is dramatic, but together they fix a surprising number of niggles.",
        "This is general information rather than medical advice. If symptoms are new, severe, or come with things like vision changes, weakness or a high temperature, get seen by a doctor the same day rather than waiting.",
        "Keeping a short daily note for a couple of weeks (sleep, food, stress, symptoms) is often the most useful thing you can take to an appointment. Patterns jump out that are invisible day to day.",
    ),
    "home": (
        "Before starting, gather everything you need in one place and read the instructions on any product all the way through, including drying and ventilation times. A second pair of hands for the awkward bits (ladders, heavy things) makes every job safer and quicker.",
        "Safety first: turn off the power at the consumer unit before touching anything electrical, and open windows when using strong cleaners. Never mix bleach with other cleaning products.",
        "If you're renting, anything structural, damp-related or to do with gas and heating is normally the landlord's responsibility. Report it in writing with photos, and keep copies of everything.",
    ),
    "garden": (
        "Keep a simple garden diary, even just photos with dates: what you planted, when things flowered, what the slugs ate. It turns next year's planning from guesswork into something you can actually rely on.",
        "Local conditions trump any guide: soil, aspect and how exposed the spot is all change what works. Talk to whoever runs the nearest allotments or garden centre; they'll know what struggles in your area.",
        "Little and often works in gardens too: ten minutes of weeding every other day is far less work than a whole Saturday once a month, because nothing gets the chance to seed.",
    ),
    "learning": (
        "Plan your revision backwards from the exam date and put it in the calendar like any other appointment. When a session is scheduled, it happens; when it's a vague intention for 'this evening', it usually doesn't.",
        "What the evidence says about studying is unglamorous: testing yourself beats rereading, spreading sessions out beats cramming, and mixing topics beats doing one for hours. It feels harder, which is exactly why it works.",
        "Protect your sleep in the run-up; memory consolidates overnight, and an all-nighter before an exam usually costs more than it gains.",
    ),
    "work": (
        "Ask for feedback from one or two people you trust afterwards, specifically what to keep and what to change. General praise is pleasant but specific notes are what help you improve for next time.",
        "One general point: preparation shows. Walking in with notes, numbers and a clear ask puts you ahead of most people in the room, whatever the conversation is about.",
        "It's worth writing a short follow-up after any important conversation, summarising what was agreed. It protects you later and people appreciate the clarity.",
    ),
    "family": (
        "Look after yourself in all this too: a tired, frazzled adult makes every routine harder. Taking turns, lowering the bar on the less important things, and asking for help are all part of the plan, not failures of it.",
        "Every child (and every dog) is different, so treat this as a menu rather than a rulebook. Try one change for a week before adding another, otherwise you can't tell what's working.",
        "Consistency between the adults matters most: agree the approach together beforehand, so nobody undoes it at the first wobble.",
    ),
    "hobbies": (
        "Set yourself a small, concrete project with an end date, like a finished piece, a first outing or a particular skill by a particular month. Open-ended practice is easy to drift away from; a goal gives every session a purpose.",
        "Joining a local group or class speeds everything up: you learn faster by watching people a little ahead of you, and having somewhere to be on a Tuesday evening keeps you going when motivation dips.",
        "Resist buying lots of kit at the start. Borrow, rent or buy second-hand until you know what you actually use, then spend on the one or two things that make a real difference.",
    ),
}

POOL = Pool(
    prefix="as",
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
        "Hiya.",
        "Right, another question.",
        "Good afternoon!",
        "Hey there.",
        "Me again!",
    ),
    postscripts=(
        "Cheers in advance.",
        "Go easy on the jargon.",
        "I've got about half an hour.",
        "Just the basics please.",
        "Nothing too fancy.",
        "I'm usually hopeless at this sort of thing.",
        "Would love your take.",
        "Detailed is fine.",
        "It's for this weekend.",
    ),
    bridges=("But what I actually wanted to ask:", "Anyhow.", "On another note:", "Moving on:"),
    acks={
        "good": (
            "What wonderful news, congratulations!",
            "Amazing, well done you!",
            "Great to hear, {name}!",
        ),
        "bad": (
            "That sounds miserable, I'm sorry.",
            "Oh dear, what a pain.",
            "Sorry, {name}, that's no fun at all.",
        ),
    },
    asides=ASIDES,
    offers=(
        "Shall I put this into a week-by-week schedule? Tell me which days you're free and I'll fit it around them.",
        "If you let me know your budget, I can narrow these down to the two best options for you.",
        "I can also write a shorter version you could send to someone else, if that's useful.",
    ),
    follows=(
        (
            "Which of those would you start with if you were me?",
            "I'd start with whichever needs the least preparation, so you get a quick win and see whether the approach suits you. Once that's running smoothly, add the next one. Trying to do the whole list in the first week is the most common reason these plans fizzle out, so go slower than feels natural and you'll get further.",
        ),
        (
            "Any common mistakes I should avoid?",
            "The big ones are rushing the early steps, changing several things at once, and giving up after one bad attempt. Almost everyone's first go is a bit rough. Note what went wrong, fix that one thing next time, and within two or three tries it usually clicks. Also: read every step once before starting, so nothing catches you mid-way.",
        ),
        (
            "Can you give me the cheapest version of this?",
            "Of course. Skip anything optional, borrow what you can, and use what you already have in the house for the rest; the core of it costs very little. The only place I wouldn't skimp is on anything to do with safety. Everything else can be upgraded later if you find you're sticking with it.",
        ),
        (
            "How will I know it's working?",
            "Give it a fair trial, two to three weeks for most things, and decide beforehand what 'working' means: a number, a feeling, a specific result. Jot down where you are now so you have something to compare against. If nothing has moved by then, tell me what you've tried and we'll change tack.",
        ),
    ),
    closings=(
        ("Brilliant, thanks a lot.", "No problem at all. Shout if you get stuck on any of it."),
        (
            "That's exactly what I needed.",
            "Glad to hear it, {name}. Good luck, and let me know how you get on.",
        ),
        ("Nice one, cheers.", "Any time!"),
        ("Super, will give it a go.", "Fingers crossed. Come back and tell me how it went."),
    ),
    when=(
        "On what day did {a} happen?",
        "Can you remind me when {a} was?",
        "What was the date of {a}?",
    ),
    ago=("How long has it been since {a}?", "How many days ago was {a}?"),
    order=("What happened earlier: {a} or {b}?", "Was {a} before {b}, or the other way round?"),
    gap=("How many days were there between {a} and {b}?", "What was the gap between {a} and {b}?"),
    start=(datetime(2021, 2, 1), datetime(2022, 2, 1)),
)


def build(people: int = PEOPLE) -> Json:
    """The sealed set (``people`` conversations; the default is the registered 100)."""
    return generate(POOL, people=people, seed=SEED)
