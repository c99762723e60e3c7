"""The ``assistant_next`` recall set: SEALED. Not to be measured with any ranker until the final
check of later recall work; its failures are never to be looked at.

Same shape as the other person-and-assistant sets (``histories.generate``: one person and their
assistant a conversation, about fifty dated sessions each, long assistant answers, ``user`` speaks
first), but written independently of ``assistant``, ``assistant_sealed``, ``assistant_blind`` and
``assistant_unseen``, from its own pool: other lives (a city bus driver, someone caring for an
elderly parent at home, a bicycle mechanic in a small workshop, a PhD student in freshwater
ecology, an amateur actor, a retired engineer restoring old machines) alongside cooking, health,
money, home, travel, paperwork and gadgets; long answers with numbered steps, R and SQL, letters
and small tables, where single lines hold the details later asked about; a mixed voice (terse
lower-case one-liners and typos beside long, chatty messages); and questions worded away from what
answers them (preferences asked as requests, current values in several phrasings, temporal
questions in other frames, including "what did I do in March", and totals and lists without the
words they were said with). Its own seed, its own years (first sessions in 2012-2013), its own id
prefix (``an``). 100 people.
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
SEED = 90210

SHOPS = (
    "Spokes & Sprockets",
    "Halfpenny Cycles",
    "Marrable's DIY",
    "The Tool Chest on Quay Lane",
    "Crannock Hardware",
    "Wheelwright Bikes",
    "Pargeter's Motor Factors",
    "The Copper Kettle Deli",
)

TASKS = (
    Task(
        key="route_learning",
        topic="bus",
        ask=(
            "They've put me on the {route} from Monday and I've never driven it. Two days of route learning, then I'm on my own with a full bus at rush hour. How do I get it into my head fast? I'm fine with the driving, it's remembering which stops are request-only and where the tight turns are.",
            "new route next week (the {route}), any tricks for learning it quick",
            "Got to learn the {route} by the weekend. Bit nervous tbh, the last time I got lost on a diversion and a passenger had to direct me. What's a good way to learn a route properly?",
        ),
        intro=(
            "Learning a route is mostly about building a mental map in the right order: first the shape, then the hazards, then the stops. Here's how I'd spend the time before you take the {route} out on your own:",
            "Two days is enough if you use them well. For the {route}, work through it in layers rather than trying to remember everything in one go:",
        ),
        items=(
            Item(
                "Ride it as a passenger first, on a quiet mid-morning journey, sitting upstairs at the very front where you can see the road ahead the way you will from the cab.",
                "When I went round the new route as a passenger, where did you tell me to sit?",
            ),
            Item(
                "Draw the route yourself from memory on a blank sheet after the first ride, then compare it with the official map and mark every place you got wrong in red."
            ),
            Item(
                "Make a pocket card listing only the turns, one line each ('L at the Co-op, R after the church'), not the stops; the stops follow once the turns are automatic.",
                "The little card I was meant to keep in my pocket: what was on it, and what did you say to leave off?",
            ),
            Item(
                "Walk the two trickiest junctions on foot on your day off; standing at a corner for five minutes shows you where cars park and where the kerb is tight."
            ),
            Item(
                "Ask the depot for the timing points, not just the stops; knowing you should pass the hospital at :17 tells you at a glance whether you're running early.",
                "What did you say to ask the depot for, so I'd know if I was ahead of time?",
            ),
            Item(
                "Learn the route backwards as well: most drivers who get lost do it on the return leg, because every junction looks different from the other side."
            ),
            Item(
                "Talk it through out loud at home the night before, turn by turn, with your eyes shut; if you stall at a point, that's the bit to look at again."
            ),
        ),
        outro=(
            "Give yourself permission to be slow for the first week. Passengers forgive a careful driver far more readily than a driver who misses their stop.",
            "If you do go wrong, stop somewhere safe, call control and ask; it's what they're there for and nobody at the depot will think less of you.",
        ),
        slots={
            "route": (
                "47",
                "12A",
                "X9",
                "83 night service",
                "6 to the hospital",
            ),
        },
        count=(4, 6),
        follow=(
            (
                "what if there's a diversion on day one",
                "Then you follow the diversion notice, not your memory. Ask control to read you the diversion turn by turn before you leave the depot and write it on the back of your pocket card. Most diversions rejoin the route within a few stops, so you only need to hold a handful of turns in your head.",
            ),
        ),
    ),
    Task(
        key="incident_report",
        topic="bus",
        ask=(
            "Had an incident on the bus this afternoon, an elderly lady fell when I braked for a car that pulled out. She said she was fine but I've got to write it up for the depot by tomorrow. I've never written one. Can you help me word it?",
            "need to write an incident report for work, passenger fell over on my bus. what goes in it",
        ),
        intro=(
            "An incident report should be dull, factual and in the order things happened; that protects you and the company far better than anything that sounds like an explanation. Here's a version to adapt, and the rules behind it:",
            "The key is facts, not feelings or guesses. Here's a template you can fill in, followed by what to keep in mind while you write it:",
        ),
        code=(
            "INCIDENT REPORT\n\nDriver: {name}    Staff no.: [number]    Vehicle fleet no.: [number]\nService: [route]    Direction: [inbound/outbound]\nDate: [date]    Time: [approx. time]    Location: [road, nearest stop]\n\nWhat happened:\nA car pulled out from [road] without warning. I braked firmly to avoid a collision. A female passenger, estimated age 75-80, who was standing near the centre doors, lost her footing and fell.\n\nAction taken:\nI secured the vehicle, went to the passenger, and asked if she was hurt. She said she was not injured and declined an ambulance. I offered her a seat and took her name and phone number. I reported the incident to control at [time].\n\nWitnesses: [names/contact details if any]\nCCTV: on board, not reviewed by me.\n\nSigned: {name}",
        ),
        items=(
            Item(
                "Write it the same day while you still remember the details, and put the time you finished writing at the bottom.",
                "When did you tell me to get the report written, and what was I supposed to add at the end of it?",
            ),
            Item(
                "Say 'braked firmly', never 'slammed on' or 'had to brake hard because...'; describe what you did, not why it wasn't your fault.",
                "Which phrase did you want me to use for the braking instead of how I'd have put it?",
            ),
            Item(
                "Record that she declined an ambulance and that you offered one; that single line matters a great deal if she feels worse tomorrow."
            ),
            Item(
                "Mention the on-board CCTV and ask the depot to save the footage; most systems overwrite themselves within about seventy-two hours.",
                "How soon did you say the camera recordings on the bus get wiped?",
            ),
            Item(
                "Don't speculate about the car driver, the passenger's health or whether she was holding on. If you didn't see it, leave it out."
            ),
            Item(
                "Keep a photocopy or a photo of the report for yourself, dated, in case anyone asks about it months later."
            ),
        ),
        outro=(
            "Once it's handed in, that's your part done. Most of these close with nothing further happening; the report just needs to be accurate.",
            "If you felt shaken afterwards, tell your supervisor. It's common and most depots can put you in touch with someone to talk to.",
        ),
        count=(3, 5),
    ),
    Task(
        key="cpc_modules",
        topic="bus",
        ask=(
            "My Driver CPC card runs out in September and I've done a grand total of seven hours of the thirty-five. The depot runs some courses but they clash with my rota. How do I sort this without losing my licence to drive for a living?",
            "cpc hours - need 28 more before sept. how do i plan it",
        ),
        intro=(
            "Twenty-eight hours is four days of training, which is very doable before September if you book now. Here's a plan:",
            "Plenty of drivers are in the same boat this year, so the courses fill up; the main thing is to get dates in the diary. Step by step:",
        ),
        items=(
            Item(
                "Each course day is seven hours, so you need four more; they don't have to be consecutive and they can be spread over several months.",
                "How many more full training days did you work out I still needed?",
            ),
            Item(
                "Ask your manager for the rota to be changed in writing, quoting the deadline; depots would much rather juggle shifts than lose a driver for weeks."
            ),
            Item(
                "Pick at least one module you'll actually use: first aid, disability awareness or fuel-efficient driving tend to be the most useful for bus work.",
                "Which training subjects did you reckon would be most useful to me on the buses?",
            ),
            Item(
                "Check your hours on the DVSA website with your licence number; the depot's records are sometimes out of date and a missing day is hard to prove later."
            ),
            Item(
                "Keep the certificate from every course in a plastic wallet in the cab bag until the new card arrives, which can take three weeks after the last day.",
                "Once I've finished all the training, how long's the wait before the replacement turns up in the post?",
            ),
            Item(
                "If the depot's dates don't work, independent training centres run Saturday courses; expect to pay roughly £60 to £90 a day."
            ),
        ),
        outro=(
            "Book the first day this week, even if the others aren't sorted yet; momentum matters more than a perfect plan.",
            "Worth knowing: you can carry on driving normally while you do the training, as long as all thirty-five hours are done before the card's expiry date.",
        ),
        count=(4, 5),
    ),
    Task(
        key="meds_chart",
        topic="care",
        ask=(
            "{parent} is on {pills} different tablets now after the hospital stay, at different times of day, and I'm terrified of getting them mixed up. The district nurse said make a chart. Can you help me lay one out?",
            "medication chart for {parent}, {pills} meds, some morning some night. template?",
            "I do {parent}'s pills every day and last week I realised I'd given the evening ones twice. Nothing bad happened but it scared me. How do other carers keep track?",
        ),
        intro=(
            "A written chart that you tick as you go is the simplest protection against double doses. Here's a layout, and some habits that go with it:",
            "You're not the first carer this has happened to, and a proper system makes it very unlikely to happen again. Something like this:",
        ),
        code=(
            "| Medicine | Dose | 8am | 1pm | 6pm | 10pm | Notes |\n|---|---|---|---|---|---|---|\n| [name] | [mg] | ☐ | | | | with food |\n| [name] | [mg] | ☐ | | ☐ | | |\n| [name] | [mg] | | | | ☐ | not with milk |\n| [name] | [mg] | ☐ | ☐ | ☐ | | |",
        ),
        items=(
            Item(
                "Copy the names and doses exactly from the pharmacy labels, not from memory, and ask the pharmacist to check your chart the next time you collect a prescription.",
                "Who did you say should look over the chart once I'd filled it in?",
            ),
            Item(
                "Tick each box the moment the tablet is swallowed, not when you put it out; a box with no tick then means 'not given', with no guessing.",
                "At what point was I meant to tick each box on the chart?",
            ),
            Item(
                "Use a weekly pill organiser with four compartments a day, and fill it on the same evening each week, Sunday works for most people.",
                "Which evening did you pick for topping up {parent}'s tablet box?",
            ),
            Item(
                "Keep a separate line at the bottom for 'as needed' medicines like paracetamol, with the time given written in, so doses can't creep too close together."
            ),
            Item(
                "Pin the chart inside a kitchen cupboard door rather than on the fridge, where visitors can read it and it gets splashed.",
                "Where did you say was better than the fridge for putting up the chart?",
            ),
            Item(
                "Ask the GP for a medication review every six months; after a hospital stay, one or two tablets can often be stopped."
            ),
        ),
        outro=(
            "If a dose is ever missed or doubled, ring the pharmacy or 111 rather than guessing; they'll tell you whether to do anything.",
            "Bring the chart with you to every appointment so whoever you see knows exactly what's being taken.",
        ),
        slots={"pills": ("seven", "nine", "five", "eleven")},
        count=(4, 6),
    ),
    Task(
        key="assessment_letter",
        topic="care",
        ask=(
            "I've been looking after {parent} full time for over a year now, since the stroke, and I'm running on empty. Someone at the carers' centre said I'm entitled to my own assessment from the council. Can you write the letter asking for one? I don't know the right words.",
            "letter to social services asking for a carers assessment please",
        ),
        intro=(
            "You are entitled to a carer's assessment in your own right, separate from any assessment of {parent}'s needs. Here's a letter, then what to do with it:",
            "Here's a short letter that uses the wording councils recognise, followed by a few tips for the assessment itself:",
        ),
        code=(
            "Dear Adult Social Care Team,\n\nRe: Request for a carer's assessment\n\nI am the main unpaid carer for my parent, [full name, date of birth, address], who has needed support since a stroke in [month/year].\n\nI provide care for approximately [number] hours a week, including personal care, medication, meals and night-time help. This is having a significant effect on my health, sleep and ability to work.\n\nI am writing to request a carer's assessment under the Carers (Recognition and Services) Act. Please contact me at the number below to arrange a date.\n\nYours sincerely,\n{name}\n[phone number]",
        ),
        items=(
            Item(
                "Before the assessment, keep a diary for one full week of everything you do, including the nights; people nearly always underestimate their own hours.",
                "For how long did you say to log everything I do before the council visit?",
            ),
            Item(
                "Ask for the assessment to happen somewhere {parent} can't hear, so you can be honest about how you're coping.",
                "Where did you suggest I have the assessment conversation?",
            ),
            Item(
                "Mention any breaks you've had to give up (work, friends, your own appointments); the assessment is about your life, not only the tasks."
            ),
            Item(
                "Ask directly about respite: a few hours a week of sitting service, or a week's stay in a care home so you can have a break.",
                "What kinds of break did you tell me to ask the council about?",
            ),
            Item(
                "If you haven't heard back within four weeks, ring and ask for the name of the person handling it; write the name down."
            ),
        ),
        outro=(
            "It can feel odd asking for help for yourself. But if you go under, {parent}'s care goes with you, so this is part of looking after them too.",
            "Keep a copy of the letter and note the date you sent it.",
        ),
        count=(3, 5),
    ),
    Task(
        key="day_routine",
        topic="care",
        ask=(
            "{parent}'s memory is getting worse, the dementia nurse says it's moderate now. Afternoons are the hardest, lots of pacing and asking to 'go home' when we're already home. Would a set daily routine help? Can you draft one?",
            "routine ideas for someone with dementia, gets agitated late afternoon",
        ),
        intro=(
            "A predictable day does help a lot of people with dementia, and the late-afternoon restlessness (often called sundowning) is very common. Here's a draft day to adapt:",
            "Yes, routine tends to reduce anxiety because there's less to work out. A rough shape for the day, built around the hard afternoon:",
        ),
        items=(
            Item(
                "Morning: get up and dressed at the same time every day, clothes laid out in the order they go on, one item handed over at a time."
            ),
            Item(
                "Mid-morning: something active while energy is highest, a short walk or folding washing, anything with a purpose."
            ),
            Item(
                "Main meal at lunchtime rather than in the evening; a big meal late in the day can make the restlessness worse.",
                "At which meal did you want the biggest plate of the day?",
            ),
            Item(
                "Around 3pm: close the curtains and put the lamps on before it starts getting dark, so the change in light is less noticeable.",
                "What did you say to do with the curtains and lights in the afternoon?",
            ),
            Item(
                "When the 'going home' starts, don't correct it. Ask about home instead ('tell me about the house you grew up in') and bring out old photographs.",
                "When the asking to leave starts, what did you suggest getting out?",
            ),
            Item(
                "Cut out tea and coffee after lunch; switch to decaf so the habit of a cuppa stays but the caffeine goes."
            ),
            Item(
                "Keep the same bedtime routine every night: the radio on low, the same music, a warm milky drink, the landing light left on.",
                "What did you suggest leaving on at night?",
            ),
        ),
        outro=(
            "It won't work every day, and that isn't your failure. Keep a note of what seems to set off the bad afternoons; patterns often show up over a couple of weeks.",
            "Talk to the GP if the agitation suddenly gets worse; an infection, especially a urine infection, is a common cause and easily treated.",
        ),
        count=(4, 6),
    ),
    Task(
        key="wheel_true",
        topic="workshop",
        ask=(
            "Customer brought in a {wheel} wheel with a wobble you could see from across the shop, plus a slight hop. I can true a wheel but I'm slow and I end up chasing the wobble round and round. Can you write me a proper method I can pin up by the stand?",
            "best method for truing a wheel? lateral and radial both out. i keep going in circles",
        ),
        intro=(
            "Chasing the wobble usually means fixing lateral and radial at the same time, or turning spokes too far. A method that works in order, for a {wheel} wheel or anything else:",
            "Here's a sequence you can pin by the stand. The golden rule is small turns, one problem at a time:",
        ),
        items=(
            Item(
                "Start by checking every spoke for tension by squeezing pairs; tighten any that are completely slack by feel before you touch the truing stand.",
            ),
            Item(
                "Fix the hop (radial) before the wobble (lateral); tightening spokes to pull a high spot in moves the rim sideways too, so the side-to-side work comes second.",
                "Which of the two faults did you tell me to sort out first on the wheel?",
            ),
            Item(
                "Never turn a nipple more than a quarter turn at a time, and work on two or three spokes around the fault rather than one.",
                "How far was I allowed to tighten each one at a time while truing?",
            ),
            Item(
                "Mark the worst spot with a bit of masking tape on the rim so you can find it again on the next revolution.",
                "How did you say to keep track of the problem area on the wheel as it spins?",
            ),
            Item(
                "Stress-relieve the spokes by squeezing parallel pairs hard, then re-check; you'll hear the pinging of spokes settling and the true will shift slightly."
            ),
            Item(
                "Aim for within half a millimetre side to side on a road wheel; chasing zero wastes time and a customer won't feel the difference.",
                "What tolerance did you say was good enough for side-to-side wobble?",
            ),
            Item(
                "Finish with a tension meter if you have one: spokes within about ten per cent of each other on each side means the wheel will stay true."
            ),
        ),
        outro=(
            "With practice a standard wheel should take you fifteen to twenty minutes. Time yourself on the next few; it gets quicker faster than you'd think.",
            "If a rim has a flat spot or a crack by a spoke hole, no amount of truing will fix it; that's a rebuild conversation with the customer.",
        ),
        slots={
            "wheel": ("700c road", "26-inch mountain bike", "Brompton front", "29er", "touring")
        },
        count=(4, 6),
        follow=(
            (
                "how much should i charge for a true",
                "Most shops charge a flat fee for a simple true, roughly £10 to £15, and more if spokes need replacing. A flat fee is easier for customers than an hourly rate and it rewards you for getting quicker.",
            ),
        ),
    ),
    Task(
        key="workshop_prices",
        topic="workshop",
        ask=(
            "I'm redoing the price board in the workshop. At the moment it's a mess of handwritten notes and I keep forgetting what I charged last time. Can you lay out a clear price list for the usual jobs, and tell me how to set the prices?",
            "price list for a small bike repair shop? services, punctures, brakes etc",
        ),
        intro=(
            "A clear board saves you arguments at the counter and stops you undercharging on a busy day. Here's a starter layout; change the figures to suit {town}:",
            "Here's a simple three-tier service list with the common single jobs below it. The figures are a starting point:",
        ),
        code=(
            "| Job | Price | Time |\n|---|---|---|\n| Puncture repair (inner tube supplied) | £8 | 15 min |\n| Brake adjust, per wheel | £7 | 10 min |\n| Gear index | £10 | 15 min |\n| Wheel true | £12 | 20 min |\n| Bronze service | £35 | 45 min |\n| Silver service | £60 | 1.5 hr |\n| Gold service (strip and rebuild) | £110 | 3 hr |",
        ),
        items=(
            Item(
                "Work out your hourly rate first: what you need to take per year, divided by the hours you can realistically bill. For a one-person shop that's usually around 25 hours a week, not 40.",
                "How much of my time did you reckon I can actually charge customers for?",
            ),
            Item(
                "Name the service tiers after something memorable; bronze, silver and gold work because customers instantly get that gold is the best.",
            ),
            Item(
                "Parts are always extra and the board should say so in large letters at the bottom: 'prices are labour only'.",
                "What wording did you want in big letters at the foot of the board?",
            ),
            Item(
                "Add a 'while you wait' line for punctures and brake adjustments only; everything else needs booking in, otherwise your day falls apart.",
                "Which jobs did you say to offer while the customer waits?",
            ),
            Item(
                "Put a price on e-bikes separately, a surcharge of around £10, because they're heavier, slower to work on and the parts cost more."
            ),
            Item(
                "Review the board every January and round up; customers accept a small yearly rise far more easily than a big jump every few years.",
                "Which month did you suggest going over the prices each year?",
            ),
        ),
        outro=(
            "A chalkboard or a laminated sheet you can redo is better than a sign painter's board; you'll be changing it.",
            "Don't be the cheapest in {town}. Be the one that's clear, on time, and does what it says.",
        ),
        count=(4, 5),
    ),
    Task(
        key="stock_db",
        topic="workshop",
        ask=(
            "I keep running out of the common stuff (tubes, brake pads, chains) because my stock is in my head. I did a bit of SQL on an evening course ages ago. Could you set me up a simple database for parts and show me the queries I'd need?",
            "simple sqlite database for bike shop stock? parts, quantities, reorder level",
        ),
        intro=(
            "SQLite is a good fit: it's one file, free, and there's a free browser program (DB Browser for SQLite) if you'd rather click than type. Here's a small schema and the queries you'll use every week:",
            "You only need one table to start with, plus a couple of queries. Here it is:",
        ),
        code=(
            "```sql\nCREATE TABLE parts (\n    id INTEGER PRIMARY KEY,\n    sku TEXT UNIQUE NOT NULL,\n    description TEXT NOT NULL,\n    supplier TEXT,\n    quantity INTEGER NOT NULL DEFAULT 0,\n    reorder_at INTEGER NOT NULL DEFAULT 2,\n    cost_pence INTEGER\n);\n\n-- what needs ordering\nSELECT sku, description, quantity, reorder_at\nFROM parts\nWHERE quantity <= reorder_at\nORDER BY supplier, description;\n\n-- sold one tube\nUPDATE parts SET quantity = quantity - 1 WHERE sku = 'TUBE-700-28';\n```",
        ),
        items=(
            Item(
                "Keep prices in pence as whole numbers (`cost_pence`) rather than pounds with decimals; it avoids rounding surprises when you add them up.",
                "Which currency unit did the stock table use for money, and what was the reason?",
            ),
            Item(
                "Give every part a short code of your own, like `TUBE-700-28` or `PAD-SHIM-B01`, and write it on the shelf label too.",
            ),
            Item(
                "Set `reorder_at` to what you'd sell in the time a delivery takes; for inner tubes in a busy week that might be ten, for a rare bottom bracket it's one.",
                "What did you say should decide the number at which I reorder something?",
            ),
            Item(
                "Run the 'what needs ordering' query every Monday morning before you phone in the week's order, and sort it by supplier so each call is one list.",
                "Which day and time did you suggest running the reorder check?",
            ),
            Item(
                "Do a full count of the shelves once a quarter and correct the quantities; small errors creep in and the database is only as good as the numbers."
            ),
            Item(
                "Back up the database file to a memory stick every Friday; it's a single file, so a copy is the whole backup.",
                "How often, and onto what, did you say to copy the stock file?",
            ),
        ),
        outro=(
            "Once you're comfortable we can add a sales table so you can see which parts actually make money, but get the stock counts right first.",
            "Start with the twenty things you sell most; don't try to enter every washer on day one.",
        ),
        count=(4, 6),
    ),
    Task(
        key="r_model",
        topic="research",
        ask=(
            "Stats question. I've got invertebrate counts from {sites} river sites, sampled every month for two years, and I want to know whether counts differ upstream and downstream of the outfalls. My supervisor says 'use a mixed model' and then went on sabbatical. I use R but I'm shaky. Where do I start?",
            "R help: count data, repeated sampling at the same sites, need a mixed model. glmer? poisson?",
        ),
        intro=(
            "Your supervisor is right: repeated samples from the same sites aren't independent, and a mixed model with site as a random effect handles that. Since these are counts, start with a Poisson GLMM and check it. Here's a skeleton:",
            "Counts plus repeated measures at {sites} sites points to a generalised linear mixed model. A working starting point in R:",
        ),
        code=(
            '```r\nlibrary(lme4)\n\ninverts <- read.csv("kick_samples.csv")\ninverts$position <- factor(inverts$position, levels = c("upstream", "downstream"))\ninverts$month <- factor(inverts$month)\n\nm1 <- glmer(count ~ position + month + (1 | site),\n            family = poisson, data = inverts)\nsummary(m1)\n\n# overdispersion check: should be close to 1\nsum(residuals(m1, type = "pearson")^2) / df.residual(m1)\n\n# if it\'s well above 1, try a negative binomial instead\nlibrary(glmmTMB)\nm2 <- glmmTMB(count ~ position + month + (1 | site),\n              family = nbinom2, data = inverts)\n```',
        ),
        items=(
            Item(
                "Set 'upstream' as the reference level of the factor, so the coefficient for position reads directly as the downstream effect.",
                "Which level did you make the baseline for the location factor in my model?",
            ),
            Item(
                "`(1 | site)` gives each site its own baseline count; that's the random effect, and it's what stops two years of samples from one site counting as independent.",
            ),
            Item(
                "Check overdispersion straight away: divide the sum of squared Pearson residuals by the residual degrees of freedom. Well above 1.5 means Poisson is too narrow.",
                "What number did you say the dispersion ratio shouldn't go much above?",
            ),
            Item(
                "If it is overdispersed, switch to a negative binomial with `glmmTMB` and `family = nbinom2`; ecological counts very often need it.",
                "Which package and family did you suggest if the Poisson model doesn't fit?",
            ),
            Item(
                "Keep month as a fixed factor for now; with only two years, modelling it as a smooth seasonal curve is more than the data can support."
            ),
            Item(
                "Plot the raw counts by site and month before you trust any model; one flood month can drive the whole result."
            ),
        ),
        outro=(
            "Write down every model you fit and why you moved on from it; your examiners will ask, and it's much easier to reconstruct from notes than from memory.",
            "Once it runs, send the summary output to your supervisor even if they're away; a two-line reply can save you a month.",
        ),
        slots={"sites": ("twelve", "eight", "sixteen", "ten")},
        count=(4, 5),
        follow=(
            (
                "do i need to include year as well?",
                "Probably yes: add `year` as a fixed factor alongside month if you think one year was generally wetter or warmer. With only two levels it costs you one parameter. Compare the models with and without it using AIC, and report both in your methods.",
            ),
        ),
    ),
    Task(
        key="lit_review",
        topic="research",
        ask=(
            "My literature review is a disaster. I've got about {papers} PDFs in a folder called 'READ THESE', half of them I've read and can't remember, and my chapter draft is due to the committee in two months. How do I get on top of it?",
            "how to organise a lit review when you have hundreds of papers and no system",
        ),
        intro=(
            "Almost every PhD student hits this at some point; the fix is a system for the papers and a structure for the chapter, kept separate. Here's a plan for the next two months:",
            "{papers} PDFs is a lot, but you don't need all of them. The plan is to sort first, then write:",
        ),
        items=(
            Item(
                "Put every paper into a reference manager (Zotero is free) before reading another word; the folder called 'READ THESE' has to go.",
                "Which free reference program did you recommend?",
            ),
            Item(
                "Triage by reading only abstracts for one afternoon, tagging each paper core, useful or skip. Expect about a fifth to end up core.",
                "What three labels did you suggest sorting the papers into?",
            ),
            Item(
                "For each core paper, write a five-line summary card in your own words: question, method, site, main result, and one sentence on how it connects to your work."
            ),
            Item(
                "Organise the chapter by question or theme, never paper by paper; a review that reads 'Smith found... Jones found...' is the most common complaint from committees.",
            ),
            Item(
                "Build a summary table of the key studies with columns for location, organism, method and finding; it often becomes a figure in the chapter itself.",
                "For the overview of key papers, what headings did you suggest?",
            ),
            Item(
                "Write for forty-five minutes every morning before email, even if it's rough; a chapter comes from daily pages, not from a heroic weekend.",
                "How long was the daily writing slot you suggested, and when in the day?",
            ),
        ),
        outro=(
            "Two months is tight but fine if you start sorting this week and writing next week, in parallel with the reading.",
            "When you're stuck on a section, write a paragraph explaining it to a friend outside your field; that draft is usually clearer than the formal one.",
        ),
        slots={"papers": ("300", "180", "250", "420")},
        count=(4, 5),
    ),
    Task(
        key="conference_talk",
        topic="research",
        ask=(
            "I've got a fifteen-minute talk at {conference} next month, my first ever. Twelve minutes plus three for questions. I have far too many results and I'm panicking about the questions bit. Help me plan it?",
            "first conference talk, 12 min + questions. how many slides, how do i structure it",
        ),
        intro=(
            "The most common first-talk mistake is trying to show everything. Twelve minutes is one story with one main result. Here's a structure for {conference}:",
            "Here's a plan for the talk and for the bit you're dreading, the questions:",
        ),
        items=(
            Item(
                "Aim for about one slide per minute, so twelve slides at most, including the title and the final 'take-home' slide.",
                "Roughly how many slides did you tell me to have?",
            ),
            Item(
                "Open with the question, not the background: a photo of your river and the one sentence you're trying to answer.",
            ),
            Item(
                "Pick one main result and give it two slides; everything else goes into backup slides after the end, ready for questions.",
                "Where did you say to put the results I couldn't fit in?",
            ),
            Item(
                "Rehearse it out loud three times with a timer, once in front of your lab group; the real thing always runs about ten per cent longer.",
                "How many full practice run-throughs did you suggest?",
            ),
            Item(
                "For questions, repeat each question back before answering; it buys you a few seconds and makes sure the room heard it."
            ),
            Item(
                "If you don't know an answer, say 'that's a great point, I haven't looked at that, but I'd expect...' and give your best guess; nobody expects a student to know everything."
            ),
            Item(
                "Make the final slide your take-home message in one sentence, and leave it up during the questions instead of a 'Thank you' slide.",
                "What did you want on the screen while I'm taking questions?",
            ),
        ),
        outro=(
            "Everyone in that room has given a first talk. They'll be rooting for you far more than you expect.",
            "Put your slides on a memory stick and email them to yourself as well; conference laptops are notoriously unreliable.",
        ),
        slots={
            "conference": (
                "the Freshwater Biological Association meeting",
                "the British Ecological Society conference",
                "the river science symposium",
                "a postgrad ecology conference in Durham",
            )
        },
        count=(4, 6),
    ),
    Task(
        key="line_learning",
        topic="stage",
        ask=(
            "I've been cast as {role} in the {society}'s spring production and I've got about 340 lines. Opening night is in nine weeks and I'm forty-six with a memory like a sieve. How do actors actually learn lines?",
            "tips for learning lines?? big part, nine weeks, terrible memory",
            "Our director wants us off book in four weeks. I'm playing {role}. I can remember the gist but never the exact words. Any method that works?",
        ),
        intro=(
            "Nine weeks is a good run-in, and a 'sieve' memory mostly means learning the wrong way (reading over and over). Methods that work for amateur and professional actors alike:",
            "The gist-but-not-the-words problem is common and very fixable. Here's a method for {role}, roughly in the order to use it:",
        ),
        items=(
            Item(
                "Learn the cue lines as well as your own: your line only comes out at the right moment if the end of the other person's line triggers it.",
                "Apart from my own part, what did you say I had to learn?",
            ),
            Item(
                "Use the first-letter method: write out each speech as only the first letter of every word, with punctuation kept, and read it back from those letters.",
                "What was the trick where I write down only part of each word?",
            ),
            Item(
                "Record the other characters' lines on your phone with gaps for yours, and play it back on walks or in the car.",
                "What did you suggest recording on my phone to practise with?",
            ),
            Item(
                "Learn in small chunks, one unit (a beat or a page) a day, and always start the day by going over everything already learned."
            ),
            Item(
                "Move while you learn: walk the blocking in your kitchen. Lines stick to movements, so they come back on stage when you make the same move.",
                "Why did you want me to walk about the kitchen while I'm going over the script?",
            ),
            Item(
                "Go over the scene just before sleep; memory consolidates overnight, and it's noticeably easier the next morning."
            ),
        ),
        outro=(
            "Be kind to yourself in the first off-book rehearsal. Everyone dries; the prompt is there for a reason, and it gets better fast once you're on your feet.",
            "Forty-six is no age at all for this, plenty of people start acting far later, and the method matters far more than the memory.",
        ),
        slots={
            "role": (
                "Lady Bracknell",
                "Malvolio",
                "the narrator",
                "Elyot",
                "the Inspector",
                "Mrs Bradman",
            ),
            "society": (
                "Playhouse Players",
                "Riverside Dramatic Society",
                "Little Theatre Company",
                "St Jude's Players",
            ),
        },
        count=(4, 5),
    ),
    Task(
        key="audition_piece",
        topic="stage",
        ask=(
            "Auditions for {show} are in three weeks and they want a two-minute monologue 'of your choosing'. I have no idea how to choose one, or how to prepare it so I don't just stand there reciting. Help?",
            "audition monologue - how to pick one and prepare it",
        ),
        intro=(
            "Choosing well is half the work; a piece that suits you will do more for you than a famous one. Here's how to pick and prepare one for {show}:",
            "A good audition piece shows the panel one clear person wanting one clear thing. Here's how to get there in three weeks:",
        ),
        items=(
            Item(
                "Pick a character close to your own age and type; the panel is trying to picture you in their show, so casting yourself against type makes their job harder."
            ),
            Item(
                "Avoid the most overdone speeches; panels hear the same few over and over, and comparison rarely helps you.",
            ),
            Item(
                "Time it aloud: two minutes is roughly 250 to 300 words at a natural pace, so cut rather than rush.",
                "What length of script fits the slot they're giving me?",
            ),
            Item(
                "Decide who you're speaking to and place them at a fixed point just above the panel's heads, never at the panel themselves.",
                "Where did you tell me to look while I'm doing the speech?",
            ),
            Item(
                "Find the one thing the character wants in the speech and mark the moment it changes; that shift is what makes it acting rather than reciting.",
            ),
            Item(
                "Prepare a 'slate', a simple intro line: your name, the play and the character, said to the panel before you turn away and begin.",
                "What's the short introduction called that I say before starting, and what goes in it?",
            ),
        ),
        outro=(
            "If they redirect you ('try it angrier'), that's a good sign; they want to see whether you can take a note. Make a clear change, even if it feels wrong.",
            "Wear something plain you can move in; they're looking at you, not your costume.",
        ),
        slots={
            "show": (
                "Abigail's Party",
                "Twelfth Night",
                "An Inspector Calls",
                "Blithe Spirit",
                "The Crucible",
            )
        },
        count=(3, 5),
    ),
    Task(
        key="carb_rebuild",
        topic="restore",
        ask=(
            "Retirement project: a {bike} that's been in a barn since about 1988. Engine turns over, good compression, but the carburettors are gummed solid. I was an engineer for forty years, so I'm fine with tools, just not with old bikes. What's the right way to clean and rebuild the carbs?",
            "rebuilding old motorcycle carbs, varnished up after years standing. process?",
        ),
        intro=(
            "A barn find with good compression is a lovely start; gummed carbs are by far the most common problem and very fixable. Here's the process, one carb at a time:",
            "Old fuel turns to varnish and blocks every small passage, so it's a full strip rather than a spray-through. For the {bike}:",
        ),
        items=(
            Item(
                "Take one carburettor apart at a time and photograph each stage; they look identical but jets and needles can differ between cylinders.",
                "Why did you say to strip the carbs one at a time?",
            ),
            Item(
                "Soak the metal parts (never the rubber or plastic) overnight in a proper carb cleaner or an ultrasonic bath with a mild degreaser.",
                "How long did you want the metal bits soaking?",
            ),
            Item(
                "Clear the jets with nylon bristles from a brush or a strand of copper wire, never a steel drill bit; the brass wears and the jet size changes.",
                "What did you tell me to use to poke through the jets, and what should I not use?",
            ),
            Item(
                "Replace all the rubber parts as a matter of course: float bowl gaskets, O-rings and the float needle; after twenty-odd years they're hard whatever they look like."
            ),
            Item(
                "Set the float height with the carb upside down and a vernier, to the figure in the workshop manual; it's usually given to a tenth of a millimetre."
            ),
            Item(
                "Balance the carbs with a set of vacuum gauges once the engine runs; an unbalanced set idles roughly and that's often mistaken for a fuel problem.",
                "What tool did you say I'd need to get the carburettors running in step?",
            ),
            Item(
                "Flush the tank and fit an inline fuel filter before you reconnect anything, or the rust in the tank will block your clean jets within a week."
            ),
        ),
        outro=(
            "Buy the proper workshop manual for the model (the original, or a Haynes); it pays for itself the first afternoon.",
            "Owners' clubs for old bikes are usually full of retired engineers; you'll fit right in, and they'll know where to get parts.",
        ),
        slots={
            "bike": (
                "1976 Honda CB550",
                "1979 Suzuki GS750",
                "1974 Triumph Bonneville",
                "1981 Kawasaki Z650",
            )
        },
        count=(4, 6),
    ),
    Task(
        key="clock_service",
        topic="restore",
        ask=(
            "I've inherited a {clock} that stopped years ago. I've got a small lathe and good eyesight still. Is cleaning the movement something an amateur can do, and how would I go about it?",
            "how to clean an old mechanical clock movement at home",
        ),
        intro=(
            "With your background, a first clean is well within reach, provided you take your time and let the mainspring down safely. Here's the broad process for a {clock}:",
            "Yes, many amateurs service their own clocks. The crucial part is safety with the spring; the rest is patience. In order:",
        ),
        items=(
            Item(
                "Let down the mainspring before anything else using a let-down key; an unwound spring releasing suddenly can break teeth and fingers.",
                "What did you say I must do before I start taking the clock apart?",
            ),
            Item(
                "Photograph the movement from both sides and draw the train before you remove any wheel.",
            ),
            Item(
                "Clean parts in a proper clock-cleaning solution, rinse, then dry them quickly with a hair dryer on low so nothing rusts.",
                "What did you suggest using to dry the parts after washing them?",
            ),
            Item(
                "Peg out every pivot hole with sharpened pegwood, twisting until the peg comes out clean; it's tedious and it's where half the old dirt hides.",
                "What's the pointed wood I use for cleaning out the pivot holes called?",
            ),
            Item(
                "Oil only the pivots and the pallets, sparingly, with proper clock oil; never oil the wheel teeth, because the oil collects dust and grinds.",
                "What bits of the movement should stay dry when I'm lubricating?",
            ),
            Item(
                "Set it in beat afterwards: listen for an even tick-tock and bend the crutch slightly until the two sounds are evenly spaced."
            ),
        ),
        outro=(
            "The British Horological Institute runs courses and has a very helpful members' forum if you get stuck.",
            "Keep a notebook of what you did and the date; the next service is due in about seven to ten years.",
        ),
        slots={
            "clock": (
                "1920s mantel clock",
                "longcase clock",
                "French carriage clock",
                "Black Forest wall clock",
            )
        },
        count=(4, 5),
    ),
    Task(
        key="marmalade",
        topic="cooking",
        ask=(
            "Seville oranges are in the shops! I want to make marmalade for the first time, a proper chunky one like my gran's. I've got a big pan and some jars. Can you give me a recipe and tell me how to tell when it's set?",
            "seville orange marmalade recipe, first time, chunky cut",
        ),
        intro=(
            "Seville season is short, so good timing. Here's a straightforward chunky marmalade for about six jars:",
            "Here's a classic method. The only tricky bit is the set, and there's a foolproof test for that further down:",
        ),
        items=(
            Item(
                "1kg Seville oranges, 1 lemon, 2 litres of water and 2kg granulated sugar; that makes six to seven standard jars.",
                "How much sugar went into the marmalade recipe?",
            ),
            Item(
                "Simmer the whole fruit in the water for about two hours until the peel is soft enough to pierce easily with a fork; the peel won't soften any more once the sugar goes in.",
                "How long were the whole oranges meant to simmer before I cut them up?",
            ),
            Item(
                "Scoop out the pips and pith and tie them in a muslin bag; boil it with the liquid, because that's where the pectin is that makes it set.",
                "What did you say to tie the seeds up in?",
            ),
            Item(
                "Put two saucers in the freezer before you start the boil; you'll need them for the wrinkle test.",
            ),
            Item(
                "Boil hard after the sugar has dissolved, and test after fifteen minutes: a drop on a cold saucer should wrinkle when you push it with a finger.",
                "How did you say to check the marmalade had set?",
            ),
            Item(
                "Leave it to stand for ten minutes before jarring so the peel doesn't all float to the top.",
                "Why did you say to wait a few minutes before putting it in the jars?",
            ),
            Item(
                "Sterilise the jars in the oven at 140°C for fifteen minutes and fill them while they're still hot."
            ),
        ),
        outro=(
            "Label the jars with the date; homemade marmalade keeps for a year or more in a cool cupboard.",
            "If it doesn't set after cooling, don't panic; tip it back in the pan and boil again for five minutes.",
        ),
        count=(4, 6),
    ),
    Task(
        key="roast_timings",
        topic="cooking",
        ask=(
            "I'm doing Sunday lunch for {guests} people, first time I've hosted since we moved. {joint}, roast potatoes, three veg, gravy, and a crumble. I always end up with everything ready at different times. Can you give me a timeline working back from 1pm?",
            "timeline for a roast dinner for {guests}? {joint}, want to eat at 1",
        ),
        intro=(
            "The trick is to work backwards from the time you sit down and let the meat rest while the potatoes crisp. Here's a timeline for {joint} and everything with it, for {guests}:",
            "Here's a countdown to 1pm. Print it and stick it on the cupboard:",
        ),
        items=(
            Item(
                "The night before: peel the potatoes and leave them in cold water, rub together the crumble topping and chill it, and lay the table.",
                "What did you have me doing with the pudding the evening before?",
            ),
            Item(
                "10.30am: meat out of the fridge to come up to room temperature; oven on.",
            ),
            Item(
                "11.00am: meat in the oven. Parboil the potatoes for eight minutes, drain and shake them in the pan to rough up the edges.",
                "How long did you say to parboil the potatoes?",
            ),
            Item(
                "12.15pm: meat out to rest under foil, turn the oven up, potatoes in on the top shelf; the meat will rest happily for forty-five minutes.",
                "How long can the joint sit under foil, according to your timeline?",
            ),
            Item(
                "12.30pm: crumble in on the lower shelf; it cooks while you eat the main course and comes out as the plates are cleared."
            ),
            Item(
                "12.40pm: veg on; gravy made in the roasting tin with the resting juices.",
            ),
            Item(
                "12.55pm: carve, and put the plates in the oven for the last two minutes so they're warm.",
                "What did you say to warm up just before serving?",
            ),
        ),
        outro=(
            "Say yes to anyone who offers to wash up while you cook; a clear sink by one o'clock makes the whole meal feel calmer.",
            "If something's late, serve the rest and bring it out when it's ready; nobody minds carrots five minutes after the potatoes.",
        ),
        slots={
            "guests": ("eight", "six", "ten"),
            "joint": (
                "a leg of lamb",
                "a rolled pork shoulder",
                "a big chicken",
                "a topside of beef",
            ),
        },
        count=(5, 6),
    ),
    Task(
        key="heel_pain",
        topic="health",
        ask=(
            "The first steps out of bed in the morning are agony, a stabbing pain under my heel, then it eases off after ten minutes and comes back after I've been sitting. I'm on my feet a lot. GP says plantar fasciitis and to 'rest it'. Ha. What can I actually do?",
            "plantar fasciitis, worst first thing in the morning, definately worse after sitting. exercises? what helps",
        ),
        intro=(
            "That morning pattern is the classic sign, and the good news is that most cases settle with simple things done consistently. Here's what tends to help:",
            "Resting completely is hard when you're on your feet for work, so here's a plan that works around that:",
        ),
        items=(
            Item(
                "Before you get out of bed, loop a towel round the ball of your foot and pull your toes towards you for thirty seconds, three times.",
                "What did you suggest doing with a towel before I even stand up in the morning?",
            ),
            Item(
                "Roll the sole of your foot over a frozen water bottle for five minutes in the evening; it stretches and cools the tissue at the same time.",
                "What did you say to roll my foot on at night?",
            ),
            Item(
                "Calf stretches against a wall, back knee straight, then bent, thirty seconds each, several times a day; tight calves are behind a lot of heel pain."
            ),
            Item(
                "Avoid going barefoot, even at home; a supportive slipper or shoe with a slight heel takes load off the fascia.",
                "What did you tell me to stop doing around the house?",
            ),
            Item(
                "Try off-the-shelf silicone heel cups in your work shoes before paying for custom insoles; they help a lot of people for a few pounds."
            ),
            Item(
                "Give it six to eight weeks of this before judging; if it's no better, ask for a referral to a physiotherapist or podiatrist.",
                "How many weeks did you say to stick at it before asking for a referral?",
            ),
        ),
        outro=(
            "It can take months to settle completely, but most people feel the mornings ease within a few weeks of daily stretching.",
            "If you notice numbness, swelling or pain that wakes you at night, go back to the GP; those aren't typical of plantar fasciitis.",
        ),
        count=(4, 5),
    ),
    Task(
        key="cholesterol",
        topic="health",
        ask=(
            "Blood test came back with cholesterol at {level}, and the nurse wants it down before she 'talks about statins'. I'd like to try diet first. I eat a fair amount of cheese and takeaways on shift days. What should I change?",
            "how do i lower cholesterol with diet, reading was {level}",
        ),
        intro=(
            "Diet can make a real difference to a reading of {level}, often enough to lower it by ten per cent or more in a few months. The changes that matter most:",
            "Here are the changes with the best evidence, roughly in order of how much they move the number:",
        ),
        items=(
            Item(
                "Swap butter, cheese and fatty meat for foods with unsaturated fats (olive or rapeseed oil, nuts, oily fish); saturated fat is the main dietary lever.",
            ),
            Item(
                "Eat oats or barley every day: a bowl of porridge gives about a third of the soluble fibre that measurably lowers LDL.",
                "What did you suggest for breakfast to help with the numbers?",
            ),
            Item(
                "Add a handful of unsalted nuts, about 30g, most days; almonds and walnuts have the best evidence.",
                "How big a portion of nuts a day did you recommend?",
            ),
            Item(
                "Eat beans, lentils or chickpeas three times a week in place of meat; they add fibre and replace saturated fat at the same time."
            ),
            Item(
                "For shift days, take a packed meal: the biggest single change for most shift workers is cutting the late-night takeaway.",
                "What's the main habit you wanted me to drop when I'm at work?",
            ),
            Item(
                "Ask for a re-test after three months; that's long enough to see whether the changes are working.",
                "When did you say to get my blood checked again?",
            ),
        ),
        outro=(
            "Exercise helps too, mainly by raising the 'good' HDL; a brisk thirty-minute walk most days is enough to count.",
            "If the numbers don't move much, statins aren't a failure; they're very effective, and diet still helps alongside them.",
        ),
        slots={"level": ("6.8", "7.2", "6.4", "7.5")},
        count=(4, 5),
    ),
    Task(
        key="mortgage_overpay",
        topic="money",
        ask=(
            "We've got about £{spare} a month spare now that {partner} has gone full-time. Mortgage is £{balance}k left at 3.9% over 19 years. Should we overpay the mortgage or put it in savings? Can you show me roughly what difference it makes?",
            "overpay mortgage or save? £{spare}/month spare, £{balance}k left, 3.9%",
        ),
        intro=(
            "It depends mostly on the interest rates either side and on having a safety net. Here's a rough comparison and a way to decide:",
            "Broadly, paying off a 3.9% mortgage is like earning 3.9% tax-free, which beats most savings accounts right now. But the order you do things in matters:",
        ),
        code=(
            "| Option | After 5 years | Mortgage term |\n|---|---|---|\n| Save £{spare}/month at 2% (after tax) | a pot of a little over sixty payments | unchanged, 19 years |\n| Overpay £{spare}/month | no pot, lower balance | roughly 4 to 5 years shorter |\n| Half and half | smaller pot, some saving | about 2 to 3 years shorter |",
        ),
        items=(
            Item(
                "Before anything else, put three months of essential outgoings in an instant-access account; overpayments can't easily be taken back out.",
                "How big a safety cushion did you want me to build up first, in months?",
            ),
            Item(
                "Check your mortgage terms: most fixed deals let you overpay up to 10% of the balance a year without a penalty.",
                "How much extra can I usually put in annually before the lender charges me for it?",
            ),
            Item(
                "Ask the lender whether overpayments shorten the term or lower the monthly payment, and choose shortening; it saves far more interest.",
                "Which of the two ways of using the extra payments did you say saves more?",
            ),
            Item(
                "If any debt costs more than 3.9%, a credit card or car loan, pay that off first; it beats both options."
            ),
            Item(
                "Don't neglect pensions: if an employer matches extra contributions, that beats overpaying by a long way."
            ),
            Item(
                "Review it once a year, at the same time as the mortgage statement, and switch if savings rates rise above the mortgage rate."
            ),
        ),
        outro=(
            "The figures in the table are rough; your lender's online overpayment calculator will give you the exact months saved.",
            "Whichever you choose, automate it with a standing order on payday so it happens without a decision each month.",
        ),
        slots={"spare": ("250", "400", "180", "320"), "balance": ("142", "96", "118", "175")},
        count=(4, 5),
    ),
    Task(
        key="stipend_budget",
        topic="money",
        ask=(
            "My PhD stipend is £{stipend} a year, tax-free, paid monthly, and by the third week of every month I'm eating toast for dinner. Rent's £{rent}. Please help me make a budget that works on a student income.",
            "budget on a phd stipend? about £{stipend} a year, rent £{rent} a month",
        ),
        intro=(
            "£{stipend} tax-free is about £1,150 a month, which is tight but workable if the fixed costs are taken out first. Here's a plan:",
            "The toast-in-week-three problem usually means spending is even across the month but the money isn't. Here's a structure that fixes that:",
        ),
        items=(
            Item(
                "On the day the stipend lands, move rent and bills to a separate account by standing order, so your main account only ever shows what you can spend.",
            ),
            Item(
                "Divide what's left by the number of weeks, and transfer one week's amount at a time into your spending account every Monday.",
                "How did you suggest I split up the spending money through the month?",
            ),
            Item(
                "As a student you can get council tax exemption; send the council your enrolment certificate if you haven't already.",
                "What did you say I should send the council, and why?",
            ),
            Item(
                "Batch-cook two big pots on Sunday (a chilli and a dal, say) and freeze in portions; it's the cheapest protection against week three.",
                "Which two dishes did you suggest cooking in bulk at the weekend?",
            ),
            Item(
                "Claim every expense the department will pay for: fieldwork travel, conference fees, sometimes even printing. Keep receipts in an envelope on your desk."
            ),
            Item(
                "Check whether your funder allows paid teaching; demonstrating in undergraduate labs typically pays £12 to £15 an hour.",
                "What sort of paid work at the university did you mention, and what does it pay?",
            ),
        ),
        outro=(
            "Don't be embarrassed to ask your graduate school about hardship funds; they exist for exactly this.",
            "Track it for two months; the first month tells you what you spend, the second whether the plan works.",
        ),
        slots={"stipend": ("13,590", "13,726", "14,000"), "rent": ("420", "375", "460", "395")},
        count=(4, 5),
    ),
    Task(
        key="draughts",
        topic="home",
        ask=(
            "Our house is a 1930s semi and it's freezing, you can feel the wind coming through the front room. The heating bill last quarter was awful. We rent, so nothing major. What can we do cheaply to stop the draughts?",
            "cheap draught proofing for a rented house? old windows, gappy floorboards",
        ),
        intro=(
            "Draughts are usually the cheapest heat loss to fix, and almost everything below is removable when you move out. Room by room:",
            "You can make a real difference for under £50 without touching anything a landlord could object to. In order of bang for buck:",
        ),
        items=(
            Item(
                "Find the draughts first: on a windy day, run a lit incense stick slowly round window frames, doors and skirting boards and watch where the smoke wavers.",
                "How did you suggest finding where the cold air gets in?",
            ),
            Item(
                "Self-adhesive foam strip around the window sashes and the front door frame costs a few pounds a roll and peels off cleanly later."
            ),
            Item(
                "Fit a brush strip or a fabric draught excluder along the bottom of the front door; it's the single biggest gap in most older houses.",
                "Which part of an old house lets in the most cold air, according to you?",
            ),
            Item(
                "Cover the letterbox with a brush flap on the inside and put a cover on the keyhole; they're small holes but they're right at wind height."
            ),
            Item(
                "For gappy floorboards, use a clear silicone-based filler strip pushed into the gaps; it flexes with the boards and can be pulled out afterwards.",
                "What did you recommend for the gaps between the floorboards?",
            ),
            Item(
                "Put up thick curtains lined with an old blanket, and close them at dusk; they help more than most people expect.",
                "What did you say to use as a lining for the curtains?",
            ),
            Item(
                "Block an unused chimney with a chimney balloon, and leave a note on the fireplace so nobody lights a fire under it.",
                "What's the inflatable thing you suggested for the fireplace?",
            ),
        ),
        outro=(
            "Don't block air bricks or bathroom and kitchen vents; you need some ventilation to avoid condensation.",
            "Tell the landlord what you've done; some will reimburse materials, and it's useful if they ever blame you for damp.",
        ),
        count=(4, 6),
    ),
    Task(
        key="bath_reseal",
        topic="home",
        ask=(
            "The silicone round the bath has gone black and is peeling off in places. I've never done sealant before. How do I get the old stuff off and put a neat new line on? Last time a man did it and charged £60.",
            "how to reseal a bath so it looks neat? first time",
        ),
        intro=(
            "It's a very doable first DIY job, and the neatness comes down to preparation more than a steady hand. Here's how:",
            "Here's the method the professionals use, step by step:",
        ),
        items=(
            Item(
                "Cut the old sealant out with a sharp blade, then rub off the remnants with a silicone remover gel; new silicone won't stick to any trace of the old.",
            ),
            Item(
                "Clean the joint with white spirit and let it dry completely, overnight if you can.",
                "How long should I wait after cleaning before the fresh bead goes on?",
            ),
            Item(
                "Fill the bath with water before you seal it; the weight makes it sink a little, so the joint won't crack when someone gets in later.",
                "Why did you tell me to fill the bath before sealing it?",
            ),
            Item(
                "Put masking tape along both sides of the joint, about 3mm away from the corner; that's the secret to a straight line.",
                "How far from the corner did you say to stick the tape?",
            ),
            Item(
                "Run the bead in one continuous movement, then smooth it with a wet finger dipped in soapy water, and peel the tape off straight away before it skins.",
                "What did you say to dip my finger in when smoothing the bead?",
            ),
            Item(
                "Leave it for twenty-four hours before the bath is used; sanitary silicone needs that long to cure.",
            ),
        ),
        outro=(
            "Buy a sanitary silicone with a fungicide in it; the cheap general-purpose sort goes black again within months.",
            "Ventilation is what stops the mould coming back: open a window or run the extractor for twenty minutes after every bath.",
        ),
        count=(4, 5),
    ),
    Task(
        key="walking_holiday",
        topic="travel",
        ask=(
            "{friend} and I want to walk {trail} in {month}, carrying our own stuff and staying in B&Bs and hostels. We're reasonably fit but haven't done anything multi-day. How should we plan it?",
            "planning to walk {trail}, first long-distance walk, any advice on planning/kit?",
        ),
        intro=(
            "{trail} is a great first long-distance walk: well waymarked, with somewhere to sleep at the end of most days. Here's how I'd plan it for {month}:",
            "The two things that go wrong on a first multi-day walk are feet and bookings. Here's a plan that deals with both:",
        ),
        items=(
            Item(
                "Book the accommodation as soon as you've fixed your dates; the smaller villages have one or two places to stay and they fill up months ahead.",
            ),
            Item(
                "Plan shorter days at the start, no more than twelve miles on the first two, and put any big day in the middle once your legs have adjusted.",
                "How many miles a day did you cap the opening stages at?",
            ),
            Item(
                "Keep your pack under eight kilos including water; weigh everything on the kitchen scales and be ruthless.",
                "What weight did you want the rucksack kept under?",
            ),
            Item(
                "Wear boots you've already done at least three long day-walks in; new boots on a multi-day walk are the most common reason people give up.",
                "How much should I have worn in my footwear before setting off?",
            ),
            Item(
                "Put a strip of zinc oxide tape on any spot that rubs the moment you feel it, not at the end of the day.",
                "What did you tell me to stick on a hot spot on my feet?",
            ),
            Item(
                "For a night off the beaten track, {pick} is a good stop with a drying room; ask for the early breakfast."
            ),
            Item(
                "Look into a baggage transfer service for a day or two if either of you struggles; it costs a few pounds a bag and can rescue the trip."
            ),
        ),
        outro=(
            "Do a two-day practice walk with full packs a month before; you'll learn more from that than from any kit list.",
            "Midges can be fierce in summer, so pack a head net; it weighs nothing and makes the evenings bearable.",
        ),
        slots={
            "trail": (
                "the West Highland Way",
                "the Coast to Coast",
                "Hadrian's Wall Path",
                "the Pembrokeshire coast path",
            ),
            "month": ("May", "June", "September"),
        },
        names=(
            "Inveroran",
            "Kings House",
            "Grasmere youth hostel",
            "Once Brewed",
            "Shap",
            "Tyndrum",
        ),
        count=(4, 6),
    ),
    Task(
        key="cycle_tour",
        topic="travel",
        ask=(
            "Thinking of taking the ferry over to {port} and cycling for a week with panniers, camping. Never toured before, though I commute by bike daily. What should I know?",
            "first bike tour abroad, ferry to {port}, a week, camping. tips?",
        ),
        intro=(
            "Cycle touring from {port} is a lovely first trip: flat, with good cycle paths and campsites close together. The practical bits:",
            "Riding to work every day means your legs are fine; the things that trip first-time tourers up are loading, kit and pace. Here's what to sort:",
        ),
        items=(
            Item(
                "Book the bike on the ferry when you book yourself; it usually costs very little but space is limited on busy sailings.",
            ),
            Item(
                "Put the weight low and at the back: two rear panniers for heavy things, a bar bag only for what you need during the day.",
                "Where did you say the heavy luggage should go on the bike?",
            ),
            Item(
                "Plan on 60 to 70 kilometres a day for a first tour, with one rest day in the middle; it's a holiday, not a race.",
                "What daily distance did you suggest for my first tour?",
            ),
            Item(
                "Carry a spare tube, tyre levers, a mini pump, a chain tool and a couple of spare spokes taped to the frame.",
                "Where did you say to keep the spare spokes?",
            ),
            Item(
                "Do a fully loaded test ride of at least forty kilometres at home; the bike handles very differently with twenty kilos on it.",
            ),
            Item(
                "Have the bike serviced two weeks before you go, not the day before, so any new cables have time to stretch and be re-adjusted.",
                "How far ahead of the trip did you want the bike serviced?",
            ),
        ),
        outro=(
            "Most campsites there have a cheap 'hiker-biker' rate and never turn a cyclist away, so you don't need to book every night.",
            "Take a photo of your bike and frame number before you go, in case you need to report it stolen.",
        ),
        slots={"port": ("Hamburg", "the Hook of Holland", "Esbjerg", "Cherbourg", "Santander")},
        count=(4, 5),
    ),
    Task(
        key="parent_tablet",
        topic="tech",
        ask=(
            "I'm getting {parent} a tablet so we can video call and so they can see the grandchildren's photos. They've never used a computer. How should I set it up so it's as simple as possible and they can't get lost in it?",
            "setting up an ipad for an elderly parent who's never used one. make it idiot proof?",
        ),
        intro=(
            "The goal is fewer choices on the screen, bigger everything, and nothing that asks them a question they can't answer. Here's a setup:",
            "Here's how to make a tablet as simple as possible for someone who's never used one:",
        ),
        items=(
            Item(
                "Remove every app from the home screen except four: video calls, photos, the radio and the camera. Put everything else in a folder on the second page.",
                "How many apps did you say to leave on the first screen?",
            ),
            Item(
                "Turn the text size up to the largest setting and switch on bold text in the accessibility menu.",
            ),
            Item(
                "Set up the video calling so that only family can call, and add yourself as a favourite; they then just tap your face.",
            ),
            Item(
                "Turn off automatic updates and notifications; a pop-up asking for a password is the most likely thing to make them give up.",
                "What did you tell me to switch off so they don't get confusing pop-ups?",
            ),
            Item(
                "Write a one-page instruction sheet in big print with pictures of each button, and keep it in the tablet case.",
                "Where did you suggest keeping the printed instructions?",
            ),
            Item(
                "Get a stand-up case so the tablet sits on the table at the right angle for video calls without being held.",
            ),
            Item(
                "Set the screen lock to a simple four-digit code and write it on the inside cover of their address book.",
                "Where did you say to write down the unlock code?",
            ),
        ),
        outro=(
            "Do the first few calls in person, sitting beside them, so they see it work before they try it alone.",
            "Be patient with the first weeks; lots of people who've never touched a computer end up loving theirs.",
        ),
        count=(4, 6),
    ),
    Task(
        key="inbox_tidy",
        topic="tech",
        ask=(
            "My email is out of control. {unread} unread, newsletters, university mailing lists, shop receipts, and somewhere in there actual messages from people. I use Gmail. How do I sort it once and for all?",
            "gmail inbox at {unread} unread, how to get it under control. i recieve like 80 a day",
        ),
        intro=(
            "Declaring a fresh start beats trying to work through {unread} messages. Here's a system that gets you to a clean inbox and keeps it there:",
            "Two parts to this: clear the backlog quickly, then set up filters so it doesn't come back. Here's how:",
        ),
        items=(
            Item(
                "Search for everything older than thirty days, select all, and archive it in one go; it's still searchable, just out of sight.",
                "How old did messages have to be to get archived in the big clear-out?",
            ),
            Item(
                "Search your inbox for the word 'unsubscribe'; that finds almost every newsletter, and you can unsubscribe from the top twenty in ten minutes.",
                "How did you suggest tracking down all the newsletters in one go?",
            ),
            Item(
                "Create a filter that sends anything from mailing lists to a label and skips the inbox; you read them when you choose to.",
            ),
            Item(
                "Set up a second filter for receipts (search for 'order confirmation' or 'receipt') into a label called Receipts."
            ),
            Item(
                "Apply the two-minute rule: if a reply takes less than two minutes, do it straight away; otherwise star it and deal with stars once a day.",
                "Which messages was I supposed to reply to immediately?",
            ),
            Item(
                "Check email at set times, say 10am and 4pm, rather than leaving it open all day.",
                "How often did you want me opening my messages, and at what hours?",
            ),
        ),
        outro=(
            "The filters are where the long-term win is; expect to tweak them for the first couple of weeks.",
            "Turn off new-mail notifications on your phone; they undo all the good work.",
        ),
        slots={"unread": ("4,312", "11,870", "2,650", "7,004")},
        count=(4, 5),
    ),
    Task(
        key="parking_appeal",
        topic="admin",
        ask=(
            "Got a parking ticket outside {parent}'s house while I was helping them up the stairs after a hospital appointment. I've got a blue badge for them but forgot to put it on the dashboard. £70. Can you help me appeal it?",
            "appeal letter for a parking fine, forgot to display blue badge",
        ),
        intro=(
            "Councils often cancel a first ticket where a valid blue badge existed but wasn't displayed, especially with a good reason. Here's a letter:",
            "You have a decent case. Here's an appeal letter and how to send it:",
        ),
        code=(
            "Dear Parking Services,\n\nPenalty Charge Notice: [PCN number]\nVehicle registration: [reg]\n\nI am writing to make an informal challenge to the above notice, issued on [date] outside [address].\n\nI was driving my parent, who holds a valid blue badge (number [badge no.], copy enclosed), home from a hospital appointment (letter enclosed). They needed help up the stairs, and in doing so I failed to display the badge. The vehicle was being used for a disabled person's journey and the badge was in the car throughout.\n\nI would be grateful if you would use your discretion to cancel the notice.\n\nYours faithfully,\n{name}",
        ),
        items=(
            Item(
                "Challenge within fourteen days of the ticket so that, if they refuse, you're still offered the reduced rate of half the fine.",
                "How many days did I have to get the challenge in to keep the discount?",
            ),
            Item(
                "Enclose a copy of both sides of the blue badge, and the appointment letter from the hospital with the date on it.",
                "What two things did you say to send a copy of with the letter?",
            ),
            Item(
                "Do it online if the council has a form; you get a reference straight away, and can attach photos."
            ),
            Item(
                "Keep to the facts and be polite; whoever reads it decides in a couple of minutes and tone matters more than you'd think.",
            ),
            Item(
                "If they reject it, you can still make a formal appeal to the independent tribunal when the Notice to Owner arrives; that costs nothing.",
                "If the council says no, who did you say I can take it to next?",
            ),
        ),
        outro=(
            "Put a note on the dashboard or sun visor saying 'BADGE?' so it doesn't happen again.",
            "Write down the date you sent it and diary a reminder for four weeks later.",
        ),
        count=(3, 5),
    ),
    Task(
        key="power_of_attorney",
        topic="admin",
        ask=(
            "{parent}'s solicitor friend says we should do a lasting power of attorney now 'while there's still capacity'. I didn't even know what that was. Can you explain what's involved and whether we can do it ourselves?",
            "how do you set up lasting power of attorney? diy or solicitor?",
        ),
        intro=(
            "A lasting power of attorney lets someone your parent chooses make decisions for them if they can no longer do so. You can do it yourselves; it's mostly careful form-filling. The steps:",
            "It's very much worth doing now. Here's what's involved, and where people usually trip up:",
        ),
        items=(
            Item(
                "There are two separate kinds: one for property and financial affairs, one for health and welfare. Most families do both.",
                "How many different types did you say there are?",
            ),
            Item(
                "The forms are on the Office of the Public Guardian website; fill them in online and print them, which catches most mistakes as you go.",
            ),
            Item(
                "A 'certificate provider' has to confirm your parent understands what they're signing: someone who's known them at least two years, or a professional such as their GP.",
                "Who can act as the witness that {parent} is of sound mind for it?",
            ),
            Item(
                "Sign in the right order: your parent first, then the certificate provider, then the attorneys. Signing out of order is the most common reason forms are rejected.",
                "What slip-up gets most of these applications bounced?",
            ),
            Item(
                "Registration takes around eight to ten weeks and there's a fee per form; ask about a reduction if your parent is on a low income.",
                "How long did you say registering it takes?",
            ),
            Item(
                "Once it's registered, keep the original somewhere safe and make certified copies for the bank and the GP surgery."
            ),
        ),
        outro=(
            "Doing it while everyone can still talk about it calmly is the whole point; it's much harder and more expensive once capacity has gone.",
            "If the family situation is complicated, a solicitor is worth the fee; otherwise many people manage perfectly well on their own.",
        ),
        count=(4, 5),
    ),
)

PREFERENCES = (
    Preference(
        "type1",
        (
            "I'm type 1 diabetic, have been since I was nine, so I'm always juggling insulin and carbs.",
            "fyi i'm diabetic (type 1) so sugar is a whole calculation for me",
        ),
        (
            "What should I pack to eat on the long walking days?",
            "Can you suggest a pudding for Sunday lunch?",
        ),
    ),
    Preference(
        "kosher",
        (
            "We keep kosher at home, so no pork or shellfish and never meat and dairy in the same meal.",
        ),
        (
            "What could I cook for {friend} and their family on Friday night?",
            "Any ideas for a main course when the in-laws come round?",
        ),
        "cooking",
    ),
    Preference(
        "hearing",
        (
            "I'm quite deaf in my left ear since an infection years ago, and background noise makes it much worse.",
        ),
        (
            "Where should we book for {partner}'s birthday meal?",
            "Which seats should I go for when we get tickets to the theatre?",
        ),
    ),
    Preference(
        "claustrophobic",
        (
            "I'm badly claustrophobic, lifts, tunnels, the Underground, I just can't do enclosed spaces.",
        ),
        (
            "What's the best way to get across London to the conference venue?",
            "Any ideas for a rainy-day outing with {child}?",
        ),
    ),
    Preference(
        "day_sleeper",
        (
            "I'm on permanent nights at the moment, so I sleep from about 8am to 3pm and the world thinks I'm lazy.",
            "working nights for the foreseeable, asleep most of the day",
        ),
        (
            "When should I ask the plumber to come round?",
            "What time should I book my doctor's appointment for?",
        ),
    ),
    Preference(
        "no_fish",
        ("I can't stand fish, anything from the sea really, even the smell puts me off.",),
        (
            "What should I make when {partner}'s parents visit?",
            "Give me a few healthy dinners to try this week?",
        ),
    ),
    Preference(
        "mac",
        (
            "I'm on a Mac for everything, have been since uni, wouldn't know where to start on Windows.",
        ),
        (
            "Which program should I write the thesis in?",
            "What's the easiest way to back up all my files?",
        ),
        "tech",
    ),
    Preference(
        "stiff_hands",
        (
            "The arthritis in my hands is getting worse, jar lids and small buttons are a real struggle now.",
        ),
        (
            "Which kitchen gadgets are worth buying?",
            "Could you suggest a hobby for the long winter evenings?",
        ),
    ),
    Preference(
        "wheelchair",
        (
            "{parent} uses a wheelchair full time now, so everything we do has to be step-free.",
            "Mobility's gone for {parent}, it's the wheelchair everywhere these days.",
        ),
        (
            "Where could we take {parent} for a day out next month?",
            "Ideas for somewhere to celebrate {parent}'s birthday?",
        ),
        "care",
    ),
    Preference(
        "seaside",
        ("I'm happiest by the sea, honestly, give me a harbour and some gulls and I'm sorted.",),
        (
            "Where should we go for our anniversary weekend?",
            "Any suggestions for a few days off after the show closes?",
        ),
        "travel",
    ),
    Preference(
        "hay_fever",
        (
            "My hay fever is brutal, from late May to July I'm basically a streaming wreck outdoors.",
        ),
        (
            "What time of year would be best for the walking trip?",
            "Can you think of a nice date idea for a Saturday in June?",
        ),
    ),
    Preference(
        "dyslexic",
        ("I'm dyslexic, so long blocks of text swim about on the page and I read really slowly.",),
        (
            "How should I go about revising for the written test?",
            "Any tips for getting through all the reading for my project?",
        ),
    ),
    Preference(
        "tall",
        ("I'm six foot six, which sounds fun until you try to fit in anything.",),
        (
            "What sort of car should we hire for the trip?",
            "What should I look for in a new bike?",
        ),
    ),
    Preference(
        "splash_out",
        (
            "When it comes to special occasions we don't skimp, we'd rather save up and do it properly.",
        ),
        (
            "Where shall I take {partner} for our anniversary?",
            "How should we mark {parent}'s eightieth?",
        ),
    ),
    Preference(
        "season_ticket",
        (
            "I've had a season ticket at the football for twenty years and I never miss a home game on a Saturday afternoon.",
        ),
        (
            "When should I hold my birthday do?",
            "Which weekend would be best for the family get-together?",
        ),
    ),
    Preference(
        "no_caffeine",
        (
            "Caffeine sets my heart racing so I've cut it out completely, no tea, no coffee, no cola.",
        ),
        (
            "How can I stay alert on the early shift?",
            "What can I do to get through the afternoon slump at my desk?",
        ),
        "bus",
    ),
    Preference(
        "chapel",
        (
            "Sunday mornings are chapel, without fail, and we keep Sundays free of work as much as we can.",
        ),
        (
            "Which day should I book the extra training day?",
            "When's a good time to do the big weekly shop?",
        ),
    ),
    Preference(
        "chilli_head",
        (
            "I love properly hot food, the more chilli the better, {partner} thinks I've burnt my taste buds off.",
        ),
        (
            "What can I cook on Friday night?",
            "Suggest a takeaway-style dish I could make at home?",
        ),
        "cooking",
    ),
    Preference(
        "solo",
        ("I prefer going away on my own, I like doing exactly what I want when I want.",),
        (
            "Any ideas for a holiday in the autumn?",
            "How should I spend a week off in October?",
        ),
        "travel",
    ),
    Preference(
        "records",
        (
            "I'm a vinyl person, always have been, a turntable and a stack of LPs is my idea of heaven.",
        ),
        (
            "What could {partner} get me for my birthday?",
            "How should I spend the voucher I got for Christmas?",
        ),
    ),
    Preference(
        "no_motorways",
        ("I won't drive on motorways, had a bad crash years ago and I just stick to A roads now.",),
        (
            "How should I get to {town} for the weekend?",
            "Best way to get to the conference on my own?",
        ),
    ),
    Preference(
        "off_grid_social",
        (
            "I'm not on Facebook or Twitter or any of that, never have been, and I'm not starting now.",
        ),
        (
            "How can I let people know about the workshop's open day?",
            "What's the best way to keep in touch with the cast between shows?",
        ),
    ),
    Preference(
        "egg_allergy",
        ("I'm allergic to eggs, proper allergic, hives and a swollen throat.",),
        (
            "What could I bake for the cast party?",
            "Any ideas for a weekend breakfast that's a bit special?",
        ),
    ),
    Preference(
        "no_camping",
        (
            "Camping is not for me, I need a proper bed and a proper shower, I tried it once and never again.",
        ),
        (
            "How should we do the night stops on the cycling trip?",
            "Where should we base ourselves for a week in Northumberland?",
        ),
        "travel",
    ),
)

UPDATES = (
    Update(
        "bus_route",
        ("the 31", "the 5B", "the X40", "the 22", "the 64"),
        ("I'm mostly on {v} at the moment, back and forth all day.", "on {v} most shifts atm"),
        (
            "They've moved me off {old}, I'm driving {v} now.",
            "Rota change: {v} instead of {old}, which suits me fine.",
        ),
        (
            "Which service do I drive most days?",
            "What route am I on these days at work?",
        ),
        topic="bus",
    ),
    Update(
        "depot",
        (
            "Ashcroft Road depot",
            "the Canal Street garage",
            "Fenwick Lane depot",
            "the Eastfield yard",
        ),
        ("I sign on at {v}, ten minutes from home.",),
        (
            "They're shutting {old}, so I've been transferred to {v}.",
            "Moved garages: I'm based at {v} now rather than {old}.",
        ),
        (
            "Where do I start my shifts from?",
            "Which garage am I based at?",
        ),
        topic="bus",
    ),
    Update(
        "rest_days",
        (
            "Tuesdays and Wednesdays",
            "Mondays and Fridays",
            "Thursday and Sunday",
            "Saturdays and Sundays",
        ),
        ("my rest days are {v} on this rota",),
        (
            "New rota's out, rest days are {v} now, not {old}.",
            "Rest days have moved to {v}, I was on {old}.",
        ),
        (
            "Which days am I off work?",
            "What are my days off on the current rota?",
        ),
        topic="bus",
    ),
    Update(
        "care_visits",
        ("once a day", "twice a day", "three times a day", "four times a day"),
        ("The agency carers come to {parent} {v} at the moment.",),
        (
            "Care package has been changed, the carers now come {v} instead of {old}.",
            "Social services reviewed things and it's {v} now, was {old}.",
            "carers now coming {v}, was {old}. fingers crossed it's enough",
        ),
        (
            "How often does someone from the agency call in on {parent}?",
            "What's the level of home help {parent} is getting?",
        ),
        topic="care",
    ),
    Update(
        "parent_home",
        (
            "with us in the back bedroom",
            "in sheltered housing on Crofton Road",
            "at Beech House care home",
            "in their own bungalow",
        ),
        ("{parent} is living {v} for now.",),
        (
            "Big change: {parent} has moved and is now {v}, no longer {old}.",
            "{parent}'s living {v} now, rather than {old}, it was time.",
        ),
        (
            "Where does {parent} live these days?",
            "What's {parent}'s living situation?",
        ),
        topic="care",
    ),
    Update(
        "workshop_rent",
        ("£380", "£450", "£520", "£610"),
        ("The workshop unit costs me {v} a month, plus rates.",),
        (
            "Landlord's changed the workshop rent to {v}, from {old}, new lease.",
            "Renegotiated the lease: {v} a month instead of {old}.",
        ),
        (
            "What do I pay for the premises each month?",
            "How much is the shop's monthly rent?",
        ),
        topic="workshop",
    ),
    Update(
        "shop_staff",
        ("just me", "me and a Saturday lad", "me and one apprentice", "three of us including me"),
        ("At the shop it's {v}.",),
        (
            "Staffing at the shop has changed: {v}, where before it was {old}.",
            "Team update: {v}, no longer {old}.",
        ),
        (
            "How many people are working at my bike shop?",
            "Who's on the payroll at the workshop?",
        ),
        topic="workshop",
    ),
    Update(
        "thesis_chapter",
        (
            "the methods chapter",
            "the literature review",
            "the chapter on mayfly emergence",
            "the general discussion",
        ),
        ("Currently writing {v}, slowly.",),
        (
            "Finished with {old} for now, I've moved on to {v}.",
            "Switched to {v}, {old} is with my supervisor.",
        ),
        (
            "What part of my thesis am I on at the moment?",
            "Which bit of the write-up am I working on?",
        ),
        topic="research",
    ),
    Update(
        "field_sites",
        ("six sites", "nine sites", "twelve sites", "fifteen sites"),
        ("I'm sampling {v} along the river every month.",),
        (
            "We've changed the design, it's {v} now instead of {old}.",
            "Fieldwork update: {v} now rather than {old}, after the flood damage.",
        ),
        (
            "How many spots along the river do I sample?",
            "What's the size of my sampling design, in locations?",
        ),
        topic="research",
    ),
    Update(
        "stage_role",
        ("Algernon", "the Vicar", "Mrs Bennet", "the Ghost of Christmas Past", "Inspector Goole"),
        ("I've been cast as {v} in our next production.",),
        (
            "Cast change! I'm playing {v} now, not {old}, someone dropped out.",
            "The director's swapped me to {v} from {old}.",
        ),
        (
            "Who am I playing in the next show?",
            "What part have I got in the upcoming production?",
        ),
        topic="stage",
    ),
    Update(
        "project_machine",
        (
            "a 1958 BSA Bantam",
            "an old Fordson Major tractor",
            "a 1964 Morris Minor",
            "a Velocette Venom",
        ),
        ("My project in the garage is {v}.",),
        (
            "Sold {old} to a chap in Wales and bought {v} as the next project.",
            "The garage project is {v} now, {old} has gone to a new home.",
        ),
        (
            "What am I restoring at the moment?",
            "Which old machine is taking up the garage?",
        ),
        topic="restore",
    ),
    Update(
        "family_car",
        ("a Honda Jazz", "a Volvo V70 estate", "a Kia Picanto", "a Citroën Picasso"),
        ("We drive {v}, nothing glamorous.",),
        (
            "Part-exchanged {old}, we've got {v} now.",
            "New car: {v}. {old} failed its MOT spectacularly.",
        ),
        (
            "What do we drive?",
            "Which motor have we got at the moment?",
        ),
    ),
    Update(
        "mortgage_rate",
        ("3.9%", "2.49%", "4.2%", "3.19%"),
        ("Our mortgage is at {v} on a fixed deal.",),
        (
            "Remortgaged! We're on {v} now, it was {old}.",
            "The fix ended, rate's {v} now instead of {old}.",
        ),
        (
            "What interest rate are we paying on the house?",
            "What's the rate on our home loan?",
        ),
        topic="money",
    ),
    Update(
        "bike_ridden",
        ("a Dawes Galaxy", "a Brompton", "a Specialized Sirrus", "an old Raleigh Record"),
        ("I ride {v} to work, most days.",),
        (
            "Got rid of {old}, I'm riding {v} now.",
            "New steed: {v}, {old} has been retired.",
        ),
        (
            "What bike do I use day to day?",
            "Which bicycle am I getting about on?",
        ),
    ),
    Update(
        "cholesterol_reading",
        ("6.8", "6.1", "5.6", "5.1"),
        ("My cholesterol came back at {v}, the nurse wants to keep an eye on it.",),
        (
            "Latest blood test: cholesterol {v}, it was {old} last time.",
            "Cholesterol's at {v} now, from {old}.",
        ),
        (
            "What was my most recent cholesterol figure?",
            "Where are my blood fats at, going by the last test?",
        ),
        topic="health",
    ),
    Update(
        "memory_tablet",
        ("5mg", "10mg", "2.5mg", "15mg"),
        ("{parent} is on {v} of donepezil in the evenings.",),
        (
            "The consultant changed {parent}'s donepezil to {v}, from {old}.",
            "Dose change: {parent} takes {v} now instead of {old}.",
        ),
        (
            "How much of the dementia medicine is {parent} taking?",
            "What's the current dose of {parent}'s memory tablets?",
        ),
        topic="care",
    ),
    Update(
        "evening_class",
        ("Spanish for beginners", "upholstery", "life drawing", "woodturning"),
        ("Tuesday nights I do {v} at the college.",),
        (
            "Swapped my Tuesday class, it's {v} now, I'd had enough of {old}.",
            "New term, new class: {v} instead of {old}.",
        ),
        (
            "What am I learning on my night course?",
            "Which class do I go to at the college in the week?",
        ),
    ),
    Update(
        "lab_teaching",
        ("four hours a week", "six hours a week", "two hours a week", "eight hours a week"),
        ("I'm demonstrating in the undergrad labs {v}.",),
        (
            "They've given me {v} of demonstrating now, it was {old}.",
            "Teaching's changed to {v}, from {old}.",
        ),
        (
            "How much teaching do I do at the university?",
            "How many hours do I spend in the student practicals?",
        ),
        topic="research",
    ),
    Update(
        "energy",
        ("British Gas", "EDF", "Scottish Power", "npower", "Ecotricity"),
        ("We're with {v} for gas and electric.",),
        (
            "Switched energy supplier to {v}, {old} kept overcharging.",
            "We've left {old}, it's {v} now for gas and electricity.",
        ),
        (
            "Who supplies our gas and power?",
            "Which company do we pay for heating and lights?",
        ),
        topic="home",
    ),
    Update(
        "landlord",
        (
            "a man called Mr Petrakis",
            "Hamlin & Ross lettings",
            "the housing association",
            "a retired couple who live in Spain",
        ),
        ("Our landlord is {v}.",),
        (
            "The house has been sold, so we rent from {v} now, not {old}.",
            "New landlord: {v}. Goodbye {old}.",
        ),
        (
            "Who owns the place we rent?",
            "Who do I pay the rent to?",
        ),
        topic="home",
    ),
    Update(
        "day_centre",
        ("on Mondays", "on Mondays and Thursdays", "three days a week", "every weekday"),
        ("{parent} goes to the day centre {v}, which gives me a breather.",),
        (
            "{parent} goes to the day centre {v} these days; before it was {old}.",
            "Day centre's changed to {v}, from {old}.",
        ),
        (
            "When does {parent} go to the day club?",
            "How often is {parent} out at the day care place?",
        ),
        topic="care",
    ),
)

FACTS = (
    Fact(
        "staff_number",
        ("40718", "33902", "51146", "28365"),
        ("My staff number's {v} if the form needs it.",),
        ("What's my employee ID at the bus company?",),
        topic="bus",
    ),
    Fact(
        "pcv_year",
        ("1994", "2003", "2009", "1988"),
        ("I got my bus licence back in {v}, feels like a lifetime ago.",),
        ("Since what year have I been qualified to drive passengers?",),
        topic="bus",
    ),
    Fact(
        "dashboard_mascot",
        ("a knitted owl", "a rubber duck in a flat cap", "a tiny Welsh flag", "a photo of {pet}"),
        ("I keep {v} on the dash in the cab, the regulars say hello to it.",),
        ("What have I got stuck up by the windscreen at work?",),
        topic="bus",
    ),
    Fact(
        "diagnosis",
        ("vascular dementia", "Alzheimer's", "Parkinson's", "heart failure"),
        ("{parent} was diagnosed with {v} in the spring.",),
        ("What condition has {parent} been told they have?", "What's {parent}'s illness?"),
        mood="bad",
        topic="care",
    ),
    Fact(
        "social_worker",
        ("Concepta", "Kobina", "Ffion", "Lionel"),
        (
            "Our social worker is called {v}, really lovely.",
            "The council's assigned us a social worker, {v}.",
        ),
        ("Who's our contact at the council for {parent}'s care?",),
        topic="care",
    ),
    Fact(
        "key_safe",
        ("4471", "2390", "8015", "1166"),
        ("The code for the key box by {parent}'s door is {v}, in case I forget it.",),
        ("What's the number to get the spare key at {parent}'s?",),
        topic="care",
    ),
    Fact(
        "shop_name",
        ("Freewheel Fixers", "The Bike Hospital", "Cog & Chainring", "Two Wheels Good"),
        ("The workshop's called {v}, {partner} came up with it.",),
        ("What did I name my repair business?",),
        topic="workshop",
    ),
    Fact(
        "workshop_unit",
        ("Unit 4", "Unit 11B", "Unit 23", "Unit 7"),
        ("We're in {v} on the Millbrook trading estate.",),
        ("Where exactly is my shop, on the estate?",),
        topic="workshop",
    ),
    Fact(
        "funder",
        ("NERC", "the Environment Agency", "a water company", "a university scholarship"),
        ("My PhD's funded by {v}, so they get a say in the reporting.",),
        ("Who's paying for my doctorate?",),
        topic="research",
    ),
    Fact(
        "study_animal",
        ("mayfly nymphs", "freshwater shrimp", "caddisfly larvae", "white-clawed crayfish"),
        ("My thesis is basically about {v}, which surprises people at parties.",),
        ("What creature is my research on?",),
        topic="research",
    ),
    Fact(
        "study_river",
        ("the Wharfe", "the Tamar", "the Teifi", "the Derwent"),
        ("All my sampling is on {v}, up and down the catchment.",),
        ("Which river is my fieldwork on?",),
        topic="research",
    ),
    Fact(
        "venue",
        ("the Corn Exchange", "St Mary's church hall", "the Civic Hall", "the Brewhouse Theatre"),
        ("We put our shows on at {v}, draughty but we love it.",),
        ("Where does our drama group perform?",),
        topic="stage",
    ),
    Fact(
        "first_part",
        (
            "a sheep in the school nativity",
            "Bottom in a school Dream",
            "the back end of a panto cow",
            "Fagin at youth theatre",
        ),
        ("My first ever role was {v}, aged about ten.",),
        ("What was the very first part I played?",),
        topic="stage",
    ),
    Fact(
        "career",
        (
            "Rolls-Royce in Derby",
            "the Swan Hunter yard on the Tyne",
            "British Rail Engineering in Crewe",
            "Drax power station",
        ),
        ("I spent most of my working life at {v}.",),
        ("Where did I work before retiring?", "Who did I spend my career with?"),
        topic="restore",
    ),
    Fact(
        "lathe",
        ("Myford ML7", "Boxford", "Colchester Bantam", "Hobbymat"),
        ("I've got a {v} lathe in the garage, bought it off a school clear-out.",),
        ("What make of lathe do I have?",),
        topic="restore",
    ),
    Fact(
        "wedding_year",
        ("1986", "2004", "1999", "1978"),
        (
            "{partner} and I married in {v}, at the registry office.",
            "married {partner} in {v}, seems like yesterday",
        ),
        ("What year did I get wed?",),
    ),
    Fact(
        "child_degree",
        ("marine biology", "law", "sports science", "French and Italian"),
        ("{child} is studying {v} at uni, first year.",),
        ("What subject is {child} taking at university?",),
    ),
    Fact(
        "pet_breed",
        ("Bedlington terrier", "lurcher", "whippet", "cocker spaniel"),
        ("{pet} is a {v}, rescue dog, total softie.",),
        ("What breed is our dog {pet}?",),
    ),
    Fact(
        "hometown",
        ("Barrow-in-Furness", "Merthyr Tydfil", "Stornoway", "Grimsby"),
        ("I'm originally from {v}, left at eighteen.",),
        ("Where was I brought up?",),
    ),
    Fact(
        "gp",
        ("Dr Okonjo", "Dr Haldane", "Dr Fairweather", "Dr Szabo"),
        ("Our GP is {v} at the Abbey Lane surgery.", "our doctor's {v}, fwiw"),
        ("Who's our family doctor?",),
        topic="health",
    ),
    Fact(
        "works_van",
        (
            "an old Fiat Doblò",
            "a long-wheelbase VW Caddy",
            "a Mercedes Vito",
            "a borrowed Peugeot Partner",
        ),
        ("For collections I use {v}, it just about takes four bikes.",),
        ("What do I drive when I'm picking up customers' bikes?",),
        topic="workshop",
    ),
    Fact(
        "crumble_secret",
        (
            "a spoonful of marmalade",
            "ground ginger",
            "oats in the topping",
            "a splash of elderflower cordial",
        ),
        ("Gran's secret with a crumble was always {v}.",),
        ("What was my grandmother's special touch in her fruit pudding?",),
        topic="cooking",
    ),
    Fact(
        "shoe_size_eu",
        ("EU 47", "EU 39", "EU 44", "EU 41"),
        ("I take {v} in walking boots, bigger than my normal shoes.",),
        ("What size are my hiking boots?",),
        topic="travel",
    ),
    Fact(
        "ferry_company",
        ("Stena Line", "DFDS", "Brittany Ferries", "P&O"),
        ("We always go with {v}, the cabins are decent.",),
        ("Which ferry operator do we normally use?",),
        topic="travel",
    ),
)

EVENTS = (
    Event(
        "driver_of_month",
        (
            "Got named driver of the month at the depot today, there's a certificate and everything.",
        ),
        ("the little award I got from my bosses", "being recognised at work"),
        mood="good",
        topic="bus",
    ),
    Event(
        "breakdown",
        (
            "Bus died on me on {v} this afternoon with a full load on, had to wait an hour for the fitter.",
        ),
        ("the mechanical failure on {v}",),
        values=("the ring road", "Market Street", "the hospital hill", "the bypass"),
        which=(
            "Where did my bus conk out in {month}?",
            "Whereabouts did the bus pack up on me in {month}?",
        ),
        mood="bad",
        topic="bus",
    ),
    Event(
        "parent_fall",
        ("{parent} had a fall {v} this morning, nothing broken but very shaken.",),
        ("the time {parent} went down {v}",),
        values=("in the bathroom", "on the front step", "getting out of bed", "in the garden"),
        which=(
            "Where did {parent} go over in {month}?",
            "What happened to {parent} in {month}, where did they take a tumble?",
        ),
        mood="bad",
        topic="care",
    ),
    Event(
        "admitted",
        (
            "{parent} was taken into hospital last night with a chest infection, I'm writing this from the ward.",
        ),
        ("{parent} being rushed in with an infection", "the emergency stay for {parent}"),
        mood="bad",
        topic="care",
    ),
    Event(
        "respite_start",
        ("{parent} went into respite today for a week, I've no idea what to do with myself.",),
        (
            "{parent}'s short stay in the care home",
            "the week {parent} was looked after elsewhere so I could rest",
        ),
        topic="care",
    ),
    Event(
        "shop_opened",
        (
            "Opened the workshop doors for the first time today! Three customers and a puncture.",
            "WE'RE OPEN. day one, sold two inner tubes and a bell lol",
        ),
        ("the business's launch day", "my first day of trading"),
        mood="good",
        topic="workshop",
    ),
    Event(
        "break_in",
        ("Someone broke into the workshop overnight and took {v}. Police have been.",),
        ("the burglary at the shop",),
        values=("three customers' bikes", "the till", "my good tool chest", "the demo e-bike"),
        which=(
            "What went missing from the workshop in {month}?",
            "What did the thieves get away with in {month}?",
        ),
        mood="bad",
        topic="workshop",
    ),
    Event(
        "shop_session",
        ("Ran {v} at the shop today, really good turnout.",),
        ("hosting {v}",),
        values=(
            "a free bike-check morning",
            "a basic maintenance class",
            "a kids' cycle safety session",
            "a women's maintenance evening",
        ),
        which=(
            "What did I put on at the workshop in {month}?",
            "What event did the shop host in {month}?",
        ),
        mood="good",
        topic="workshop",
    ),
    Event(
        "upgrade_viva",
        (
            "Passed my upgrade review this morning, officially a PhD candidate and not just a 'probationary' one!",
        ),
        ("becoming a full PhD candidate", "my progression assessment"),
        mood="good",
        topic="research",
    ),
    Event(
        "fieldwork",
        ("Back from a week's fieldwork at {v}, wet through and very happy.",),
        ("the sampling trip to {v}",),
        values=(
            "the top of the catchment",
            "the chalk streams in Hampshire",
            "Loch Lomond",
            "the Norfolk Broads",
        ),
        which=(
            "Where was I collecting samples in {month}?",
            "Which field trip did I do in {month}?",
        ),
        topic="research",
    ),
    Event(
        "paper_accepted",
        ("My first paper got accepted today!! Minor revisions and it's in.",),
        ("the journal saying yes to my article", "getting my article published"),
        mood="good",
        topic="research",
    ),
    Event(
        "opening_night",
        ("Opening night of {v} tonight, we got a standing ovation from a full house.",),
        ("the start of the run of {v}",),
        values=(
            "The Importance of Being Earnest",
            "Habeas Corpus",
            "Blithe Spirit",
            "Oliver!",
            "Abigail's Party",
        ),
        which=(
            "Which show did we open in {month}?",
            "What did the society put on in {month}?",
        ),
        mood="good",
        topic="stage",
    ),
    Event(
        "first_start",
        (
            "Fired it up today for the first time in twenty-five years, first kick! Took it round the block.",
        ),
        ("getting the old engine running again", "the day the project came back to life"),
        mood="good",
        topic="restore",
    ),
    Event(
        "mot_pass",
        ("The {v} sailed through its MOT this morning, not even an advisory.",),
        ("the {v}'s annual inspection",),
        values=("Morris Minor", "old Land Rover", "Triumph", "BSA"),
        which=(
            "Which of my old vehicles got through its test in {month}?",
            "What passed the MOT in {month}?",
        ),
        mood="good",
        topic="restore",
    ),
    Event(
        "power_cut",
        (
            "Power's been off on our street since teatime, eating cold beans by candlelight.",
            "powercut on our street, typing this on my phone by torchlight",
        ),
        ("the blackout on our road", "the evening with no electricity"),
        mood="bad",
        topic="home",
    ),
    Event(
        "wedding_guest",
        ("We were at {v}'s wedding today, my feet are killing me from the dancing.",),
        ("the day {v} got hitched",),
        values=("my cousin Philomena", "{friend}", "my nephew Cai", "a mate from work"),
        which=(
            "Whose big day were we guests at in {month}?",
            "Who got married in {month}, the one we went to?",
        ),
        mood="good",
    ),
    Event(
        "concert",
        ("{v} gig last night, ears still ringing.",),
        ("seeing {v}",),
        values=("The Proclaimers", "Richard Hawley", "the Hallé", "Paul Weller", "Madness"),
        which=(
            "Who did I see play in {month}?",
            "What concert was I at in {month}?",
        ),
        mood="good",
    ),
    Event(
        "car_bumped",
        ("Some idiot reversed into our car in the Tesco car park and drove off.",),
        (
            "the hit-and-run on our motor at the shops",
            "the dent someone left in our motor at the supermarket",
        ),
        mood="bad",
    ),
    Event(
        "grandparent",
        ("I'm a grandparent!! Little girl, born at 4am, 7lb exactly.",),
        ("the arrival of the new baby in the family", "the birth of my first grandchild"),
        mood="good",
    ),
    Event(
        "first_aid_day",
        ("Did the first aid course today, seven hours of bandaging a plastic dummy.",),
        ("the day of bandages and resuscitation practice", "the emergency-help training"),
        topic="bus",
    ),
    Event(
        "parent_birthday",
        ("Had a little party for {parent}'s birthday today, they sang along to everything.",),
        ("{parent}'s celebration with cake", "marking another year for {parent}"),
        mood="good",
        topic="care",
    ),
    Event(
        "gave_talk",
        ("Gave my conference talk this morning, shaking but nobody asked anything nasty.",),
        ("presenting my results to a room of strangers", "my slot at the scientific meeting"),
        topic="research",
    ),
    Event(
        "storm",
        ("Massive storm overnight, a tree's come down across the road and the fence is flat.",),
        ("the big wind", "the wild weather night"),
        mood="bad",
        topic="home",
    ),
    Event(
        "race",
        ("Did {v} today! Slow but I finished.",),
        ("running {v}",),
        values=(
            "the Great North Run",
            "the Manchester 10k",
            "the Cardiff half",
            "a trail race in the Peaks",
        ),
        which=(
            "What race did I enter in {month}?",
            "What event did I do on foot in {month}?",
        ),
        mood="good",
        topic="health",
    ),
)

SERIES = (
    Series(
        "overtime",
        ("6", "9", "4", "12"),
        (
            "Did {v} hours of overtime this week, the rota's full of holes.",
            "{v} hrs overtime this week. knackered",
        ),
        (
            "Add up the extra hours I've put in at the depot?",
            "What's my total on top of normal shifts lately?",
        ),
        topic="bus",
    ),
    Series(
        "lost_property",
        (
            "a violin",
            "a set of false teeth",
            "a wedding dress in a bag",
            "a pushchair with no child in it",
        ),
        (
            "Found {v} left on the bus at the end of my shift today.",
            "You'll never guess what someone left on my bus today: {v}.",
        ),
        (
            "What strange things have passengers forgotten on board?",
            "List the odd items I've handed in to lost property?",
        ),
        topic="bus",
    ),
    Series(
        "training_modules",
        (
            "customer care",
            "disability awareness",
            "fuel-efficient driving",
            "security and conflict",
        ),
        (
            "Done the {v} module today, another seven hours towards the card.",
            "CPC day done, {v} this time, the trainer was actually good.",
        ),
        (
            "Which CPC courses have I completed so far?",
            "Remind me what training I've got under my belt this year?",
        ),
        topic="bus",
    ),
    Series(
        "care_bills",
        ("£412", "£530", "£488", "£615"),
        (
            "Paid the care agency {v} for this month, it's eye-watering.",
            "Agency invoice came, {v} for the month. Paid it, grumbling.",
        ),
        (
            "How much has {parent}'s home help cost us altogether?",
            "What's the running total for the carers' invoices?",
        ),
        mood="bad",
        topic="care",
    ),
    Series(
        "night_wakings",
        ("five", "four", "three", "two"),
        (
            "{parent} was up {v} times in the night again.",
            "Rough night, {parent} was awake {v} times.",
        ),
        (
            "Are {parent}'s nights getting better or worse?",
            "How has the sleep been going at {parent}'s, night by night?",
        ),
        topic="care",
    ),
    Series(
        "old_films",
        ("Brief Encounter", "The Sound of Music", "Casablanca", "Whisky Galore!"),
        (
            "Watched {v} with {parent} this evening, they knew half the words.",
            "Film night at {parent}'s: {v}, tissues all round.",
        ),
        (
            "Which classics have {parent} and I sat through together?",
            "What have we watched on our film nights at {parent}'s?",
        ),
        mood="good",
        topic="care",
    ),
    Series(
        "bikes_sold",
        (
            "a secondhand Raleigh",
            "a kids' balance bike",
            "a Dawes tourer",
            "a refurbished Peugeot racer",
        ),
        (
            "Sold {v} this morning, good start to the day.",
            "{v} went to a new home today, sold it for a decent price.",
        ),
        (
            "What bicycles have gone out of the door lately?",
            "Which bikes have I found buyers for?",
        ),
        mood="good",
        topic="workshop",
    ),
    Series(
        "weekly_repairs",
        ("14", "19", "23", "27"),
        (
            "{v} bikes through the workshop this week.",
            "Workshop count for the week: {v} bikes in and out.",
        ),
        (
            "Is the shop getting busier, judging by the weekly job numbers?",
            "How has the repair trade been going week on week?",
        ),
        topic="workshop",
    ),
    Series(
        "samples_sorted",
        ("6", "8", "11", "13"),
        (
            "Sorted {v} kick samples under the microscope today, eyes are square.",
            "{v} more samples picked and identified today.",
        ),
        (
            "What's my tally of processed samples so far?",
            "How many jars of river bugs have I worked through in total?",
        ),
        topic="research",
    ),
    Series(
        "drafts_sent",
        ("chapter one", "the methods", "the stats chapter", "the introduction"),
        (
            "Sent {v} off to my supervisor, bracing for red ink.",
            "finally emailed {v} to my supervisor. fingers crossed",
        ),
        (
            "Which parts of the thesis have I handed over for comments?",
            "What has my supervisor had from me to read?",
        ),
        topic="research",
    ),
    Series(
        "audience",
        ("84", "112", "130", "151"),
        ("We had {v} in tonight, best crowd yet.", "Full-ish house tonight, {v} in the audience."),
        (
            "How did the houses go across the run of the play?",
            "What's the total number of people who came to see the show?",
        ),
        mood="good",
        topic="stage",
    ),
    Series(
        "parts_spend",
        ("£45", "£120", "£86", "£210"),
        (
            "Spent {v} on bits for the restoration today, don't tell {partner}.",
            "Parts order came to {v} this week, the hobby's getting expensive.",
        ),
        (
            "What's the project in the garage cost me so far?",
            "Tot up my spending on the restoration?",
        ),
        topic="restore",
    ),
    Series(
        "clocks_fixed",
        (
            "the carriage clock",
            "a cuckoo clock for next door",
            "the kitchen wall clock",
            "Grandad's alarm clock",
        ),
        (
            "Got {v} ticking again tonight, very satisfying.",
            "{v} is running again after a strip-down, keeping good time too.",
        ),
        (
            "Which timepieces have I brought back to life?",
            "What have I managed to repair on the horology front?",
        ),
        mood="good",
        topic="restore",
    ),
    Series(
        "preserves",
        ("6", "9", "4", "11"),
        (
            "Made {v} jars of chutney this afternoon, the house smells of vinegar.",
            "Chutney session today, {v} jars cooling on the side.",
        ),
        (
            "What's the total of preserves I've potted up?",
            "How much have I made for the pantry shelves in all?",
        ),
        topic="cooking",
    ),
    Series(
        "blood_pressure",
        ("148/92", "141/88", "136/84", "129/80"),
        ("BP this morning was {v}.", "blood pressure {v} today"),
        (
            "Is my blood pressure heading in the right direction?",
            "How have my readings changed since I started checking?",
        ),
        topic="health",
    ),
    Series(
        "trail_miles",
        ("14", "17", "11", "19"),
        (
            "Walked {v} miles today, feet in a bucket now.",
            "Today's stage was {v} miles, legs like lead.",
        ),
        (
            "What's the total distance I've covered on foot on this trip?",
            "Add up my walking days for me?",
        ),
        topic="travel",
    ),
    Series(
        "countries",
        ("Belgium", "Germany", "Luxembourg", "France"),
        (
            "Crossed into {v} today on the bike, no sign at the border, just a change of road surface.",
            "Cycled over the border into {v} this afternoon!",
        ),
        (
            "Which countries have I ridden through on the tour?",
            "List where I've been on two wheels this trip?",
        ),
        mood="good",
        topic="travel",
    ),
    Series(
        "holiday_jar",
        ("£20", "£35", "£50", "£15"),
        ("Put {v} in the holiday jar.", "Another {v} into the jar for our trip."),
        (
            "How much is in the kitty for going away?",
            "What have we saved up for the trip so far?",
        ),
        topic="money",
    ),
    Series(
        "sponsorship",
        ("£25", "£40", "£100", "£15"),
        (
            "Another {v} of sponsorship came in for the run today!",
            "Someone at work sponsored me {v} for the run, so kind.",
        ),
        (
            "How much have people pledged for my run?",
            "What's my fundraising total so far?",
        ),
        mood="good",
        topic="health",
    ),
    Series(
        "parent_remembered",
        ("my name straight away", "{child}", "the old house in a photo", "all the words to a hymn"),
        (
            "Good day with {parent} today, remembered {v}.",
            "Lovely moment today, {parent} remembered {v}.",
        ),
        (
            "What has {parent} been able to recall on the better days?",
            "Remind me of the things {parent} has come out with lately on good days?",
        ),
        mood="good",
        topic="care",
    ),
)

ABSENT = (
    Absent("What did the farrier charge to shoe the pony?", ("farrier", "pony", "horse")),
    Absent("Which tattoo artist did I book for my sleeve?", ("tattoo",)),
    Absent("What's the name of the cruise ship we went on?", ("cruise",)),
    Absent("When is my cataract operation?", ("cataract",)),
    Absent("Which hospital ward did I end up on after my operation?", ("ward",)),
    Absent("Who was the customer who brought in the tandem?", ("tandem",)),
    Absent("Which surf beach did we go to in north Devon?", ("surf", "devon")),
    Absent("What was my master's dissertation about?", ("dissertation", "masters")),
    Absent("What did the garage say about the caravan's axle?", ("caravan",)),
    Absent("Which piano grade am I working towards?", ("piano",)),
    Absent("How much did I win at the bingo?", ("bingo",)),
    Absent("Which allotment plot did the council give us?", ("allotment",)),
    Absent("What did I get in my maths GCSE resit?", ("gcse", "resit")),
    Absent("When is my hip replacement booked for?", ("hip replacement", "hip op")),
    Absent("Which fencing club do I train with?", ("fencing", "sabre", "epee")),
    Absent("What colour is our motorhome?", ("motorhome", "campervan")),
    Absent(
        "Who covered my part when I lost my voice before a show?",
        ("understudy", "lost my voice", "laryngitis"),
    ),
    Absent("How much did the new windscreen for my bus cost the company?", ("windscreen",)),
    Absent("What's my yoga teacher called?", ("yoga",)),
    Absent("How much rent does the lodger pay us?", ("lodger",)),
    Absent("What beer did I make in the homebrew kit?", ("homebrew", "home brew", "brewing")),
    Absent("What did the vet say about the rabbit's teeth?", ("rabbit",)),
    Absent("Which golf course did we play at on holiday?", ("golf",)),
    Absent("What did I pay for the hot tub?", ("hot tub", "jacuzzi")),
)

PROFILE = {
    "partner": (
        "Idwal",
        "Solenne",
        "Teodor",
        "Wilhelmine",
        "Rhodri",
        "Araminta",
        "Caradog",
        "Yvette",
        "Lysander",
    ),
    "child": ("Morwen", "Ellis", "Eirlys", "Ossian", "Beatrix", "Jago"),
    "friend": ("Pim", "Dorothea", "Lemuel", "Grainne", "Adaeze", "Crispin"),
    "pet": ("Sputnik", "Dylan", "Marzipan", "Pudding", "Scrumpy", "Nelson", "Toffee"),
    "town": ("Alnwick", "Hay-on-Wye", "Kendal", "Bridport", "Llandeilo", "Morpeth", "Tiverton"),
    "parent": ("Mum", "Dad", "Mam", "Da"),
    "shop": SHOPS,
}

NAMES = (
    "Achim", "Berit", "Casimir", "Damaris", "Radomir", "Fergal", "Gudrun", "Yaroslav", "Fintan", "Jutta",
    "Valdemar", "Leocadia", "Oddny", "Osric", "Wilfrid", "Sabela", "Fulvio", "Hallvard", "Sindre", "Tove",
    "Gisela", "Vidar", "Wenonah", "Rozalia", "Yevgeny", "Zuzana", "Manon", "Bodil", "Cerys", "Dragan",
    "Esmé", "Nadezhda", "Gwenllian", "Hartmut", "Iolanthe", "Jerzy", "Kirsi", "Nevenka", "Morwenna", "Neirin",
    "Sigrun", "Piran", "Raffaella", "Bergljot", "Tegan", "Gwladys", "Valentina", "Wolfram", "Vasco", "Zdenek",
    "Tiernan", "Bastian", "Clodagh", "Jadwiga", "Ailbhe", "Femi", "Gorka", "Henrike", "Mairead", "Jarek",
    "Kerensa", "Linnea", "Malachy", "Nuala", "Zlatan", "Petronella", "Ragnhild", "Seamus", "Cadoc", "Urszula",
    "Vaclav", "Wenna", "Xanthe", "Hrafn", "Zygmunt", "Arwel", "Beatrijs", "Colm", "Dafydd", "Lisandro",
    "Fiadh", "Godfrey", "Dorottya", "Isaura", "Aurore", "Jovana", "Ludovica", "Marit", "Nnamdi", "Uchechi",
    "Pascoe", "Rosalie", "Sunniva", "Torquil", "Endellion", "Vilhelm", "Conall", "Ingeborg", "Zelda", "Lorcan",
)  # fmt: skip

ASIDES = {
    "bus": (
        "A word on fatigue, since it comes up with every driver: if you feel yourself nodding at the wheel, pull in somewhere safe and call control. No timetable is worth it, and a good depot would far rather have a late bus than an accident.",
        "The regulars on a route notice far more than you think. A nod and a 'morning' costs nothing, and on a bad day they're the ones who'll tell you which stop someone's waiting at.",
    ),
    "care": (
        "Please don't forget your own health in all this. Carers very often skip their own appointments; book yours in the same diary as {parent}'s and treat them as just as fixed.",
        "The local carers' centre is worth a phone call if you haven't made one: they know which services actually exist in your area, and many run a free emergency card scheme in case something happens to you while you're out.",
    ),
    "workshop": (
        "Write every job up on a ticket, however small, with the customer's number and what you agreed. The one time you don't will be the time someone insists you quoted half the price.",
        "Keep one corner of the bench clear for the bike that's waiting to be collected. A tidy workshop feels professional to customers and saves you ten minutes of searching a day.",
    ),
    "research": (
        "Keep a lab notebook even for computational work: date, what you ran, what happened. Future you, writing the thesis at two in the morning, will be very grateful.",
        "Talk to the other PhD students in your department; most problems you'll hit have already been hit by someone two doors down, and a coffee is cheaper than a week stuck.",
    ),
    "stage": (
        "Amateur theatre runs on goodwill, so offer to help with the set, the tea urn or front of house when you're not on; it's the quickest way to become part of the company.",
        "Warm up your voice before every rehearsal, not just the show: a few minutes of humming and lip trills protects it over a long run.",
    ),
    "restore": (
        "Bag and label every fastener as it comes off, with a note of where it came from. Old machines rarely use standard sizes, and a missing bolt can take weeks to find.",
        "Owners' clubs and forums are a goldmine for old machinery: someone has nearly always done the same job and photographed it, and they'll often know a supplier for parts you thought were extinct.",
    ),
    "cooking": (
        "Read the whole recipe through before you start, and get everything weighed out first. It feels fussy, but it's how you avoid discovering halfway through that something needed soaking overnight.",
        "Season in small amounts and taste after each; salt is easy to add and impossible to remove.",
    ),
    "health": (
        "Take this as general information, not a diagnosis of your situation; if anything changes suddenly or you're worried, speak to your GP or a pharmacist.",
        "Small, boring changes kept up for months beat dramatic ones that last a fortnight. Pick the one or two easiest and build from there.",
    ),
    "money": (
        "Rates and allowances change every April, so look up this year's numbers on the official pages or ask a free advice service before committing to anything.",
        "Write the plan down on one side of A4 and stick it somewhere you'll see it; a plan that lives only in your head tends to be rewritten every time there's a tempting purchase.",
    ),
    "home": (
        "Tenants: read the tenancy agreement before you fix anything, and tell the landlord in writing; it protects your deposit.",
        "Anything involving gas or the fuse box is a job for a qualified person, however handy you are. Everything else, give it a go.",
    ),
    "travel": (
        "Leave a copy of your route and where you're staying with someone at home, and agree a time you'll check in each evening.",
        "Take a paper map of the area as well as your phone; batteries die, signal disappears, and a map never needs charging.",
    ),
    "tech": (
        "Before you change any settings, write down what they were, or take a photo of the screen. It makes undoing a change painless.",
        "Whatever else you do, make sure photos and important documents exist in two places. Phones and laptops get lost and broken far more often than people plan for.",
    ),
    "admin": (
        "Keep a single folder, paper or on the computer, with every letter sent and received and the date on each. Organisations respond very differently when you can quote dates back to them.",
        "Be polite but persistent: most official processes have time limits, and it's perfectly reasonable to ring on the day a deadline passes and ask what's happening.",
    ),
}

POOL = Pool(
    prefix="an",
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
        "evening",
        "Hello again, me with another one.",
        "on my break so quick one",
        "Sorry to bother you so late.",
        "Morning, kettle's on, let's do this.",
        "ok another one",
        "Hiya, hope you're having a better day than me.",
    ),
    postscripts=(
        "Bullet points if you can.",
        "Plain English please, I'm knackered.",
        "thx",
        "I'll read it properly tonight.",
        "Don't hold back.",
        "Sorry, that's a lot.",
        "Keep it short-ish.",
        "Assume I've got no money to throw at it.",
        "i'm on my phone so go easy",
        "No rush on this one.",
    ),
    bridges=(
        "Anyway, that's not why I'm writing.",
        "Moving on.",
        "But here's what I need help with.",
        "Where was I.",
        "Ok, the actual question:",
        "Anyway!",
    ),
    acks={
        "good": (
            "Congratulations, {name}, that's brilliant!",
            "Oh, that's wonderful to hear.",
            "Well done you, that's a real achievement.",
        ),
        "bad": (
            "Oh no, I'm really sorry, {name}.",
            "That's awful, I hope everyone's alright.",
            "What a horrible thing to deal with; sorry to hear it.",
        ),
    },
    asides=ASIDES,
    offers=(
        "If it helps, I'll condense this into a single printable page.",
        "Tell me how it goes and we can adjust the plan.",
        "Happy to go into more detail on any of these steps.",
        "I can also do a shorter version if this is too much to take in at once.",
    ),
    follows=(
        (
            "where do i even start with all that",
            "With the first item, and only the first item, this week. Once that's done the rest falls into place much more easily; most of the later steps assume the first one is already in hand. If it helps, put it in the diary as a fixed appointment with yourself.",
        ),
        (
            "Is any of that going to cost much?",
            "Very little for most of it: the bulk is time and a bit of organisation rather than money. Where something does cost, I've tried to point out the cheaper option, and it's worth asking around before buying, because someone you know may well have one you can borrow.",
        ),
        (
            "What do most people mess up with this kind of thing?",
            "Rushing the preparation. Almost every problem I hear about comes from skipping the early, boring steps to get to the interesting part. Spend the time at the start and the rest goes far more smoothly.",
        ),
        (
            "sorry, bit lost. can you say that again but shorter",
            "Of course. Do the first step now, the second next week, and leave the rest until those two feel routine. If one part in particular was confusing, say which and I'll try a different angle.",
        ),
        (
            "And if I can't manage all of it?",
            "Then do what you can and don't beat yourself up about the rest. Even the first couple of steps make a real difference on their own. Come back and tell me what got in the way and we'll find a way round it.",
        ),
    ),
    closings=(
        ("Perfect, thanks so much.", "You're very welcome, {name}. Take care."),
        ("ta v much", "No problem at all."),
        (
            "That's given me plenty to think about, thank you.",
            "Glad it helped; come back any time if something doesn't work out.",
        ),
        (
            "brilliant, you're a star",
            "Happy to help, {name}. Good luck with it.",
        ),
        ("Cheers, that'll do nicely.", "Great, let me know how it turns out."),
    ),
    when=(
        "Remind me, when was {a}?",
        "Do you know the date of {a}?",
        "Which day was {a}? I've lost track.",
        "When did {a} happen, do you have the exact date?",
    ),
    ago=(
        "How long back was {a} now?",
        "{a}: how many weeks ago was that?",
        "How much time has gone by since {a}?",
    ),
    order=(
        "{a} or {b}: which happened earlier?",
        "Thinking of {a} and {b}, which one came first?",
        "Did {a} come after {b}, or before?",
    ),
    gap=(
        "How much time was there between {a} and {b}?",
        "How many days separate {a} and {b}?",
        "What length of time lies between {a} and {b}?",
    ),
    start=(datetime(2012, 3, 1), datetime(2013, 3, 1)),
)


def build(people: int = PEOPLE) -> Json:
    """The next sealed set (``people`` conversations; the default is the registered 100)."""
    return generate(POOL, people=people, seed=SEED)
