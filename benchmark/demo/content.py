"""Twelve everyday scenarios written for Parley's demo, with their characters and dialogue beats.

All of it is original: not taken from Sotopia, SocialVeil or any other dataset. Each role has
*beats*, the plain lines its character would say in order; the scripted model plays them and,
for the barrier seat, restyles them under the barrier. Beats are written so that the two roles
alternate (role 0 opens) and make a sensible conversation in the barrier-free condition. A beat
that starts with ``[non-verbal]`` or ``[action]`` is that kind of action rather than speech.

The plain beats avoid the words the scripted partner and judge read as barrier signals (vague
placeholders, ritual deferrals, statements of distress), so the baseline stays clean.

The three-party scenario at the end carries AgentSense's labels (goal types, sender/receiver, a
category); the demo's templates of three and four parties are in ``group_templates.py``.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..models import Category, Communication, GoalType, Relationship
from ..models.scenarios import Difficulty


@dataclass(frozen=True)
class DemoCharacter:
    key: str
    first_name: str
    last_name: str
    age: int
    gender: str
    pronouns: str
    occupation: str
    big_five: str
    mbti: str
    moral_values: str
    personal_values: str
    personality: str
    decision_style: str
    public_info: str
    secret: str


@dataclass(frozen=True)
class DemoGoal:
    text: str
    tags: tuple[str, ...] = ()  # free labels
    goal_type: str = ""  # one of AgentSense's eight goal types (GoalType); its ERG need follows


@dataclass(frozen=True)
class DemoRole:
    character: DemoCharacter
    goals: tuple[DemoGoal, ...]
    reason: str
    private_knowledge: str
    beats: tuple[str, ...]
    communication: str = ""  # AgentSense's sender or receiver (Communication)


@dataclass(frozen=True)
class DemoProbe:
    """A multiple-choice question about one role's private information, goal or reason."""

    about: int  # the role's position
    topic: str  # Probe.Topic
    text: str
    options: tuple[str, ...]
    correct: int
    asked_of: str = "others"


@dataclass(frozen=True)
class DemoScenario:
    codename: str
    relationship: int
    difficulty: str
    context: str  # neutral: no side's goal, amounts or private facts
    original_context: str
    roles: tuple[DemoRole, ...]
    probes: tuple[DemoProbe, ...] = ()
    turn_taking: str = "round_robin"
    greeter: int | None = None
    turn_cap: int | None = None
    category: str = ""  # AgentSense's scenario category (Category)


def big_five(o: str, c: str, e: str, a: str, n: str) -> str:
    return f"Openness - {o}; Conscientiousness - {c}; Extraversion - {e}; Agreeableness - {a}; Neuroticism - {n}"


# --- characters -----------------------------------------------------------------------------------

NADIA = DemoCharacter(
    "nadia-haddad", "Nadia", "Haddad", 34, "woman", "she/her", "intensive care nurse",
    big_five("Medium", "High", "Medium", "High", "Medium"), "ISFJ",
    "Care, Fairness", "Security, Benevolence",
    "Steady under pressure and practical; keeps lists for everything and dislikes loose ends.",
    "Behavioral",
    "Works night shifts at St. Brendan's Hospital and shares a car with her younger brother.",
    "She scraped the rear bumper in the hospital car park last month and had it fixed without telling anyone.",
)
OMAR = DemoCharacter(
    "omar-haddad", "Omar", "Haddad", 29, "man", "he/him", "landscape gardener",
    big_five("High", "Low", "High", "Medium", "Low"), "ESFP",
    "Loyalty, Liberty", "Self-direction, Stimulation",
    "Easy-going and sociable; plans as little as possible and improvises the rest.",
    "Conceptual",
    "Runs a one-man garden business and does most of his jobs at weekends.",
    "He has been thinking about selling his share of the car to pay off a loan.",
)
GRACE = DemoCharacter(
    "grace-okafor", "Grace", "Okafor", 41, "woman", "she/her", "secondary school chemistry teacher",
    big_five("Medium", "High", "Medium", "Medium", "Low"), "ESTJ",
    "Fairness, Authority", "Achievement, Security",
    "Direct and organised; expects rules to be explained and then applied the same way to everyone.",
    "Directive",
    "Teaches at Harbour Road Secondary and cooks for her elderly mother most evenings.",
    "She dropped the blender jug in the sink once, which may have cracked the seal.",
)
TOMASZ = DemoCharacter(
    "tomasz-wojcik", "Tomasz", "Wójcik", 26, "man", "he/him", "customer service assistant",
    big_five("Medium", "Medium", "Medium", "High", "Medium"), "INFP",
    "Care, Fairness", "Benevolence, Conformity",
    "Patient and friendly; wants customers to leave happy but is careful to stay within the rules.",
    "Behavioral",
    "Works at the service desk of Kerrigan's Home Store.",
    "He is leaving the job at the end of the month and has already accepted another offer.",
)
LEO = DemoCharacter(
    "leo-marchetti", "Leo", "Marchetti", 31, "man", "he/him", "software tester",
    big_five("Medium", "High", "High", "Medium", "Medium"), "ENTJ",
    "Fairness, Loyalty", "Achievement, Security",
    "Likes things settled and even; happy to organise the group but keeps careful track of money.",
    "Analytical",
    "The one in his group of friends who books the tables and pays the bill up front.",
    "He ordered the most expensive dish that night and knows an even split favours him.",
)
SAM = DemoCharacter(
    "sam-achterberg", "Sam", "Achterberg", 30, "nonbinary", "they/them", "freelance illustrator",
    big_five("High", "Low", "Low", "High", "High"), "INFJ",
    "Care, Fairness", "Universalism, Self-direction",
    "Warm and a little conflict-shy; would rather pay quietly than make a fuss.",
    "Conceptual",
    "Draws book covers and children's picture books from a shared studio.",
    "They skipped the last two group dinners because they could not afford them.",
)
PRIYA = DemoCharacter(
    "priya-raman", "Priya", "Raman", 38, "woman", "she/her", "data analyst",
    big_five("High", "High", "Low", "Medium", "Medium"), "INTJ",
    "Honesty, Fairness", "Achievement, Self-direction",
    "Meticulous and reserved; would rather deliver late than deliver wrong.",
    "Analytical",
    "Works in the finance team and prepares the company's quarterly sales figures.",
    "She missed the data error for a week because she was job hunting during work hours.",
)
DANIEL = DemoCharacter(
    "daniel-brooks", "Daniel", "Brooks", 45, "man", "he/him", "head of sales operations",
    big_five("Medium", "High", "High", "Medium", "Low"), "ESTJ",
    "Loyalty, Authority", "Power, Achievement",
    "Decisive and results-driven; respects people who bring problems early.",
    "Directive",
    "Runs sales operations and presents the quarter's results to the board.",
    "He promised the finance director the figures a day earlier than he needed them, to have a buffer.",
)
ELIF = DemoCharacter(
    "elif-demir", "Elif", "Demir", 29, "woman", "she/her", "museum conservator",
    big_five("High", "High", "Medium", "Medium", "Medium"), "INFP",
    "Care, Liberty", "Self-direction, Universalism",
    "Curious and detail-minded; plans trips around exhibitions and old buildings.",
    "Conceptual",
    "Restores ceramics at the city museum.",
    "She has never told Jonas that she hates sleeping in tents.",
)
JONAS = DemoCharacter(
    "jonas-lindqvist", "Jonas", "Lindqvist", 32, "man", "he/him", "physiotherapist",
    big_five("Medium", "Medium", "Low", "High", "Low"), "ISFP",
    "Care, Loyalty", "Hedonism, Benevolence",
    "Calm and outdoorsy; recharges in quiet places and dislikes crowds.",
    "Behavioral",
    "Works at a sports clinic and has been doing a lot of overtime this spring.",
    "He is planning to propose to Elif during their next trip.",
)
RUTH = DemoCharacter(
    "ruth-abernathy", "Ruth", "Abernathy", 67, "woman", "she/her", "retired postal worker",
    big_five("Low", "High", "Medium", "Medium", "Medium"), "ISTJ",
    "Fairness, Authority", "Tradition, Security",
    "Polite, firm and practical; believes most problems are solved by a direct conversation.",
    "Directive",
    "Has lived in flat 4 for thirty years and cares for her husband at home.",
    "She has already sent the landlord an anonymous complaint about the noise.",
)
KWAME = DemoCharacter(
    "kwame-mensah", "Kwame", "Mensah", 24, "man", "he/him", "music production student",
    big_five("High", "Medium", "High", "High", "Low"), "ENFP",
    "Care, Liberty", "Self-direction, Stimulation",
    "Friendly and eager to please; absorbed in his work and loses track of time.",
    "Conceptual",
    "Moved into flat 6 last month; studies music production and works in a bakery by day.",
    "He is subletting the flat without the landlord's permission.",
)
BEA = DemoCharacter(
    "bea-castillo", "Bea", "Castillo", 27, "woman", "she/her", "bicycle mechanic",
    big_five("High", "Low", "High", "High", "Low"), "ESTP",
    "Loyalty, Care", "Stimulation, Hedonism",
    "Adventurous and upfront; owns her mistakes quickly and fixes things with her hands.",
    "Behavioral",
    "Works at a bike repair shop and spends most weekends at festivals or in the hills.",
    "The tent pole snapped at a windy festival, where she had promised Finn she would not take the tent.",
)
FINN = DemoCharacter(
    "finn-osullivan", "Finn", "O'Sullivan", 28, "man", "he/him", "primary school teacher",
    big_five("Medium", "High", "Medium", "High", "Medium"), "ISFJ",
    "Care, Fairness", "Benevolence, Security",
    "Generous and organised; lends things easily but likes them back in the state he lent them.",
    "Analytical",
    "Runs the hiking club at his school.",
    "He had noticed a crack in that tent pole before he lent the tent out.",
)
MARISOL = DemoCharacter(
    "marisol-vega", "Marisol", "Vega", 58, "woman", "she/her", "pharmacist",
    big_five("Medium", "High", "High", "High", "Medium"), "ESFJ",
    "Loyalty, Care", "Benevolence, Tradition",
    "Warm and persistent; family comes first, and she keeps the peace between relatives.",
    "Behavioral",
    "Runs a pharmacy in the old town; her son is getting married this autumn.",
    "She lent her brother Tomás 3,000 euros last year and never told the family.",
)
GABRIEL = DemoCharacter(
    "gabriel-vega", "Gabriel", "Vega", 30, "man", "he/him", "architect",
    big_five("High", "High", "Medium", "Medium", "Medium"), "INTJ",
    "Fairness, Care", "Achievement, Security",
    "Thoughtful and protective of his plans; needs reasons before he changes his mind.",
    "Analytical",
    "Works at an architecture studio and is planning his wedding for October.",
    "His fiancée's parents are paying for most of the wedding, which he has not told his mother.",
)
HANA = DemoCharacter(
    "hana-sato", "Hana", "Sato", 25, "woman", "she/her", "PhD student in marine biology",
    big_five("High", "High", "Low", "Medium", "Medium"), "ISTJ",
    "Fairness, Honesty", "Achievement, Universalism",
    "Precise and a little shy; prepares answers in advance and keeps her word.",
    "Analytical",
    "Studies plankton and spends the summer at a research station in Norway.",
    "She may extend her trip into September but has not decided, and has told no one.",
)
MARCO = DemoCharacter(
    "marco-bellini", "Marco", "Bellini", 23, "man", "he/him", "engineering intern",
    big_five("Medium", "Medium", "High", "Medium", "Low"), "ENTP",
    "Liberty, Fairness", "Stimulation, Achievement",
    "Cheerful negotiator; treats most prices as an opening offer.",
    "Conceptual",
    "Has a two-month summer internship at an engineering firm in the city.",
    "He plans to have his girlfriend stay with him for two weeks in August.",
)
DMITRI = DemoCharacter(
    "dmitri-volkov", "Dmitri", "Volkov", 36, "man", "he/him", "bus driver",
    big_five("Low", "Medium", "Low", "Medium", "Medium"), "ISTP",
    "Fairness, Honesty", "Security, Conformity",
    "Laconic and fair; names a price and expects a straight answer.",
    "Directive",
    "Drives the number 14 bus and is moving to a smaller flat next month.",
    "He wants the bike gone because it reminds him of his former partner.",
)
AISHA = DemoCharacter(
    "aisha-bello", "Aisha", "Bello", 22, "woman", "she/her", "nursing student",
    big_five("Medium", "High", "Medium", "High", "Medium"), "ENFJ",
    "Care, Fairness", "Benevolence, Achievement",
    "Friendly and careful with money; asks questions before she commits.",
    "Analytical",
    "Is in her second year of nursing school, with placements at two hospitals.",
    "She has never ridden a road bike with drop handlebars.",
)
JORDAN = DemoCharacter(
    "jordan-pike", "Jordan", "Pike", 33, "man", "he/him", "freelance sound engineer",
    big_five("High", "Low", "Medium", "High", "High"), "INFP",
    "Fairness, Care", "Self-direction, Security",
    "Creative and candid about feelings, less so about money.",
    "Conceptual",
    "Mixes albums and live concerts; his income changes from month to month.",
    "He has 6,000 euros of credit card debt.",
)
INES = DemoCharacter(
    "ines-carvalho", "Ines", "Carvalho", 34, "woman", "she/her", "civil engineer",
    big_five("Medium", "High", "Medium", "Medium", "Low"), "ISTJ",
    "Fairness, Liberty", "Self-direction, Achievement",
    "Level-headed and independent; wants arrangements that cannot turn into power struggles.",
    "Analytical",
    "Designs bridges for a regional transport authority.",
    "She has been offered a promotion that would raise her salary by 15 percent.",
)
OSKAR = DemoCharacter(
    "oskar-nieminen", "Oskar", "Nieminen", 44, "man", "he/him", "airline pilot",
    big_five("Medium", "High", "Medium", "Medium", "Low"), "ISTJ",
    "Loyalty, Fairness", "Security, Benevolence",
    "Orderly and courteous; hates asking for favours and always returns them.",
    "Directive",
    "Flies long-haul routes and lives alone with a grey cat called Pilvi.",
    "Pilvi has bitten the last two cat sitters.",
)
LENA = DemoCharacter(
    "lena-hoffmann", "Lena", "Hoffmann", 52, "woman", "she/her", "translator",
    big_five("High", "Medium", "Low", "High", "Medium"), "INTP",
    "Fairness, Care", "Universalism, Self-direction",
    "Kind but protective of her time; likes arrangements that go both ways.",
    "Analytical",
    "Translates novels from Finnish and Swedish and works from home.",
    "She once lost a neighbour's key and had to pay for a new lock.",
)


# --- scenarios --------------------------------------------------------------------------------

SCENARIOS: tuple[DemoScenario, ...] = (
    DemoScenario(
        codename="shared-car",
        relationship=Relationship.FAMILY,
        difficulty=Difficulty.STANDARD,
        context="Two siblings sit down in a family kitchen to talk about the car their grandmother left them.",
        original_context=(
            "Nadia and Omar inherited their grandmother's hatchback together. Nadia needs it after night "
            "shifts; Omar needs it for weekend work, and the insurance renewal is due."
        ),
        roles=(
            DemoRole(
                NADIA,
                goals=(DemoGoal("Keep the car on weekdays, above all after Tuesday and Thursday night shifts, and pay a fair share of the insurance."),),
                reason="Her night shifts end at 3 am, when no buses run.",
                private_knowledge="The insurance renewal is 720 euros for the year and is due on the 1st.",
                beats=(
                    "Omar, thanks for coming over. We need to sort out Gran's car before the insurance renews on the 1st.",
                    "I finish night shifts at 3 in the morning on Tuesdays and Thursdays, and no buses run then. I need the car on weekdays.",
                    "Then weekdays for me and weekends for you could work. The renewal is 720 euros for the year.",
                    "[non-verbal] frowns at the renewal letter",
                    "By days that's five to two. I can pay 500 and you pay 220, if you keep the tank full after your weekends.",
                    "Good. Can you leave the keys in the blue bowl by my door, not in the letterbox?",
                    "[action] writes the split on the back of the renewal letter and hands Omar a copy",
                    "Perfect. I'll see you on Sunday evening, then.",
                ),
            ),
            DemoRole(
                OMAR,
                goals=(DemoGoal("Keep the car for weekend jobs, and have Nadia pay the larger share of the insurance since she drives more."),),
                reason="His weekend garden jobs need the boot space for tools.",
                private_knowledge="He has been offered a regular Saturday contract in Ashford worth 400 euros a month.",
                beats=(
                    "Sure, I've been meaning to bring it up too. How do you want to split it?",
                    "That's fair. I mostly need it on Saturdays and Sundays for garden jobs, because the tools don't fit on a bike.",
                    "You'd be driving it five days out of seven. Shouldn't you cover more than half of the 720?",
                    "Look, I'm not trying to squeeze you. What if we split it by days?",
                    "500 and 220 works. And I'll fill the tank every Sunday evening before I drop it back.",
                    "The blue bowl, got it. I'll text you when it's back.",
                    "Thanks. I'll transfer my 220 on Friday.",
                    "See you Sunday. Say hi to Mum for me.",
                ),
            ),
        ),
    ),
    DemoScenario(
        codename="faulty-blender",
        relationship=Relationship.STRANGER,
        difficulty=Difficulty.STANDARD,
        context="At the service desk of a home goods store, a customer arrives with a boxed kitchen appliance.",
        original_context=(
            "Grace brings back a blender that stopped working after a month and wants her money back; "
            "Tomasz, at the service desk, has to apply the store's refund rules."
        ),
        roles=(
            DemoRole(
                GRACE,
                goals=(DemoGoal("Get a full refund of the 89 euros rather than a repair."),),
                reason="She no longer trusts the brand and wants to buy a different one.",
                private_knowledge="She bought it 34 days ago, four days past the 30-day refund window, and has the receipt.",
                beats=(
                    "Hello. I bought this blender here last month, and the motor stopped working on Sunday.",
                    "[action] puts the receipt and the boxed blender on the counter",
                    "It cost 89 euros, and I'd like a full refund, please.",
                    "A repair takes weeks, and I make soup for my mother every evening. I'd rather have my money back.",
                    "Then what can you do for me today?",
                    "Does the credit expire?",
                    "[non-verbal] nods slowly",
                    "Yes, let's do that. Thank you for sorting it out.",
                ),
            ),
            DemoRole(
                TOMASZ,
                goals=(DemoGoal("Resolve the complaint without a cash refund, with a warranty repair or store credit."),),
                reason="Refunds after the 30-day window need his manager's approval, and she is off today.",
                private_knowledge="He may approve store credit of up to 100 euros on his own.",
                beats=(
                    "I'm sorry to hear that. Do you have the receipt with you?",
                    "Thank you. I see it was bought on the 2nd of May, so 34 days ago.",
                    "Our refund window is 30 days. After that, the two-year warranty covers a repair.",
                    "I understand. I can't refund cash without my manager, and she's off until Thursday.",
                    "I can give you store credit for the full 89 euros right now, and you can pick any blender in aisle 6.",
                    "It's valid for 12 months, in all 9 of our branches.",
                    "Shall I put the 89 euros on a card for you?",
                    "You're welcome. Here's your card, and have a good afternoon.",
                ),
            ),
        ),
    ),
    DemoScenario(
        codename="dinner-bill",
        relationship=Relationship.FRIEND,
        difficulty=Difficulty.STANDARD,
        context="Two friends catch up over coffee a few days after a group dinner.",
        original_context=(
            "Leo paid the whole dinner bill for five friends and wants it split evenly. Sam ate very "
            "little and would prefer to pay only for their own order."
        ),
        roles=(
            DemoRole(
                LEO,
                goals=(DemoGoal("Collect Sam's share of the 146-euro dinner bill you paid, before the end of the week."),),
                reason="He paid the whole bill on his card, and his rent is due on Saturday.",
                private_knowledge="The other three friends have already paid him 29.20 euros each.",
                beats=(
                    "Hey Sam, good to see you. Quick one: I'm still settling Friday's dinner bill.",
                    "It came to 146 euros for the five of us, so 29.20 each if we split it evenly.",
                    "[non-verbal] raises his eyebrows",
                    "Fair enough. The others already paid 29.20, though, so someone has to cover the gap.",
                    "That works, as long as the 16 comes before Saturday. My rent goes out then.",
                    "Got it, thanks. We'll settle the 10 at the next dinner.",
                    "Of course. See you at Mira's on the 20th.",
                ),
            ),
            DemoRole(
                SAM,
                goals=(DemoGoal("Pay only for what you ordered (a salad and a water, 16 euros), not an even share."),),
                reason="They are short of money until a client pays an invoice next week.",
                private_knowledge="A client invoice of 900 euros should be paid next Wednesday.",
                beats=(
                    "Right, the bill. Thanks for paying it on your card. How much do I owe you?",
                    "I only had the green salad and a water, which came to 16 euros. Could I pay for just my order?",
                    "Money is tight for me this month, and an even split is almost double my order.",
                    "What if I pay 16 now and put 10 more toward the wine next time we go out?",
                    "[action] sends Leo 16 euros from their banking app",
                    "Deal. Thanks for being relaxed about it.",
                    "See you there.",
                ),
            ),
        ),
    ),
    DemoScenario(
        codename="report-deadline",
        relationship=Relationship.ACQUAINTANCE,
        difficulty=Difficulty.HARD,
        context="Two colleagues from different teams meet at the office coffee machine in a busy week.",
        original_context=(
            "Priya has found an error in the sales data and needs more time for the quarterly figures; "
            "Daniel needs those figures for Friday's board meeting."
        ),
        roles=(
            DemoRole(
                PRIYA,
                goals=(DemoGoal("Move the deadline for the quarterly figures from Thursday to Monday morning."),),
                reason="The warehouse export contains duplicate orders, and cleaning them takes two days.",
                private_knowledge="About 1,200 of the 40,000 order rows are duplicates; the totals are off by roughly 3 percent.",
                beats=(
                    "Daniel, have you got five minutes? It's about the quarterly figures.",
                    "Not quite. The warehouse export has 1,200 duplicate orders, and the totals are off by about 3 percent.",
                    "I need until Monday morning to clean and check all 40,000 rows.",
                    "I know the board meets on Friday. I don't want to hand you numbers I can't stand behind.",
                    "I can give you a provisional total by Thursday at 5, with a note that it may move by up to 3 percent.",
                    "Monday by 10, with the regional split and the corrected order counts.",
                    "[action] opens her calendar and books a Monday 10 am meeting with Daniel",
                    "Thanks for being flexible. Talk on Thursday.",
                ),
            ),
            DemoRole(
                DANIEL,
                goals=(DemoGoal("Get at least the headline figures by Thursday at 5 pm for Friday's board slides."),),
                reason="The board meets at 9 am on Friday and expects the quarter's revenue chart.",
                private_knowledge="The finance director has said she would accept estimates marked as provisional.",
                beats=(
                    "Sure. I'm counting on them on Thursday for the board slides. All on track?",
                    "Three percent of revenue is a lot. How long will it take to fix?",
                    "[non-verbal] rubs his forehead",
                    "The board meets at 9 on Friday. Could you give me the headline revenue by Thursday at 5, marked as provisional?",
                    "That's enough for the slides. And the full breakdown on Monday?",
                    "Good. I'll tell the finance director the detail follows on Monday.",
                    "Thanks, Priya. I appreciate the early warning.",
                    "Talk Thursday.",
                ),
            ),
        ),
    ),
    DemoScenario(
        codename="lake-trip",
        relationship=Relationship.ROMANTIC,
        difficulty=Difficulty.STANDARD,
        context="A couple sits on their sofa with a laptop, talking about the coming long weekend.",
        original_context=(
            "Elif wants a city break in Porto for the long weekend; Jonas wants a quiet weekend at a "
            "lake cabin. They share a travel budget."
        ),
        roles=(
            DemoRole(
                ELIF,
                goals=(DemoGoal("Make sure the two of you get to Porto before the tile exhibition closes on the 15th."),),
                reason="She has wanted to see this exhibition of restored tiles for a year.",
                private_knowledge="She has found return flights to Porto for 118 euros each.",
                beats=(
                    "So, the long weekend. I've been looking at flights to Porto.",
                    "There's an exhibition of restored tiles at the national museum that closes on the 15th. I'd love to see it.",
                    "Flights are 118 euros each, return. With a small guesthouse we'd stay under 400.",
                    "What if we do Porto this weekend and the lake in August?",
                    "Only this month? Then let's do the cabin this weekend and Porto on the 12th, before the exhibition closes.",
                    "[action] books two flights to Porto for the 12th",
                    "Deal. I'll bring the good coffee.",
                ),
            ),
            DemoRole(
                JONAS,
                goals=(DemoGoal("Spend the long weekend somewhere quiet by a lake, within your shared budget of 400 euros."),),
                reason="He wants a quiet weekend outdoors after months of overtime.",
                private_knowledge="His friend Anders has offered his cabin at Lake Vättern for free, but only this month.",
                beats=(
                    "Porto? I was picturing something quieter, like a cabin by a lake.",
                    "I get that. I've done so much overtime that I just want to hear water and nothing else.",
                    "[non-verbal] leans back and thinks",
                    "Anders said we can use his cabin at Lake Vättern for free, but only this month.",
                    "That works. The cabin costs nothing, so the 400 can go to Porto.",
                    "And I'll pack the fishing rods for Saturday.",
                    "Perfect. I'll tell Anders we're coming.",
                ),
            ),
        ),
    ),
    DemoScenario(
        codename="late-music",
        relationship=Relationship.STRANGER,
        difficulty=Difficulty.HARD,
        context="Two people who live in the same building meet on the stairs one evening.",
        original_context=(
            "Ruth, who lives below Kwame's new flat, has been kept awake by his music; Kwame works on "
            "music projects late in the evening."
        ),
        roles=(
            DemoRole(
                RUTH,
                goals=(DemoGoal("Get your new upstairs neighbour to stop playing music through speakers after 10 pm."),),
                reason="She gets up at 5 every morning to care for her husband.",
                private_knowledge="The building's house rules set quiet hours from 10 pm to 7 am, and she has a copy.",
                beats=(
                    "Good evening. I'm Ruth, from the flat below yours, number 4.",
                    "Nice to meet you too. I wanted to ask about the music in the evenings. It comes through my ceiling until nearly midnight.",
                    "I get up at 5 to look after my husband, so the late nights are hard on me.",
                    "[action] takes a folded copy of the house rules out of her bag",
                    "Yes. Quiet hours here are from 10 at night to 7 in the morning.",
                    "Could that last hour be before 10, say from 9 to 10?",
                    "Thank you, Kwame. That's good of you.",
                ),
            ),
            DemoRole(
                KWAME,
                goals=(DemoGoal("Keep working on your music in the evenings, ideally until midnight."),),
                reason="His final project is due in three weeks, and he works at a bakery until 6 pm.",
                private_knowledge="He has good headphones, but the final mixing needs speakers.",
                beats=(
                    "Hi Ruth, I'm Kwame. I moved into number 6 last month. Nice to meet you.",
                    "Oh, I had no idea it carried that far. I'm finishing a project for my course.",
                    "That sounds hard. My final project is due in three weeks, and I only get home from work at 6.",
                    "Are those the house rules?",
                    "Fair enough. I can use headphones after 10. I only need speakers for the last hour of mixing.",
                    "Yes, 9 to 10 works. And if it's ever too loud, knock on my door at number 6.",
                    "No problem. Sleep well tonight.",
                ),
            ),
        ),
    ),
    DemoScenario(
        codename="borrowed-tent",
        relationship=Relationship.FRIEND,
        difficulty=Difficulty.STANDARD,
        context="Two friends meet at one of their flats; one of them is carrying a rolled-up tent bag.",
        original_context=(
            "Bea is returning a tent she borrowed from Finn, with one pole broken; Finn needs the tent for "
            "a trip soon."
        ),
        roles=(
            DemoRole(
                BEA,
                goals=(DemoGoal("Return the tent and agree on a fair way to make up for the broken pole without buying a new tent."),),
                reason="A new tent of that model costs 260 euros, which she cannot afford right now.",
                private_knowledge="She has found a replacement pole online for 24 euros, delivered in five days.",
                beats=(
                    "[action] puts the tent bag down by the door",
                    "Good, mostly. I have to tell you, though: one of the poles snapped on the second night.",
                    "I found a replacement pole online for 24 euros, delivered in five days. I'll pay for it, of course.",
                    "If it's late, I'll bring my own tent round for you on the 8th.",
                    "[action] sends Finn the link to the pole",
                    "Thanks for taking it so well. I'll text you when the parcel arrives.",
                    "I'd love that. See you soon.",
                ),
            ),
            DemoRole(
                FINN,
                goals=(DemoGoal("Have your tent back in working order before your hiking trip on the 9th."),),
                reason="He is leading the school hiking club's trip and needs his own tent.",
                private_knowledge="His sister has a spare tent he could borrow if he had to.",
                beats=(
                    "Hey, my tent! How was the weekend?",
                    "Ah. I need that tent for the hiking club trip on the 9th.",
                    "Five days would be the 6th. That's close, but fine.",
                    "That's a good backup. Can you send me the link to the pole?",
                    "Got it. Same model and everything. Thanks for sorting it out.",
                    "Deal. Come over for dinner when it arrives.",
                    "See you.",
                ),
            ),
        ),
    ),
    DemoScenario(
        codename="wedding-guest-list",
        relationship=Relationship.FAMILY,
        difficulty=Difficulty.HARD,
        context="A mother and her adult son have lunch together a few months before his wedding.",
        original_context=(
            "Marisol wants her brother invited to her son Gabriel's wedding; Gabriel is wary of the guest "
            "list growing and of his uncle's past behaviour."
        ),
        roles=(
            DemoRole(
                MARISOL,
                goals=(DemoGoal("Persuade your son to invite your brother Tomás to the wedding."),),
                reason="She and Tomás have only just reconciled after eight years of silence.",
                private_knowledge="Tomás has told her he would sit at the back and leave after dinner.",
                beats=(
                    "Gabriel, before we order, can I ask you something about the wedding?",
                    "Yes. I'd like you to invite Tomás.",
                    "He and I are talking again after eight years. It would mean a lot to him, and to me.",
                    "He hasn't had a drink in three years. He goes to a meeting every Wednesday.",
                    "I'll pay the 95 euros myself. And he offered to sit at the back and leave after dinner.",
                    "Thank you, hijo. I'll tell him tonight.",
                    "[non-verbal] squeezes Gabriel's hand",
                    "Yes, let's. The paella here is good.",
                ),
            ),
            DemoRole(
                GABRIEL,
                goals=(DemoGoal("Keep the guest list at 80 people and avoid any scene at the wedding."),),
                reason="His uncle Tomás made a drunken scene at his cousin Lucia's wedding in 2016.",
                private_knowledge="The venue charges 95 euros for every guest beyond 80.",
                beats=(
                    "Of course, Mamá. Is it the guest list?",
                    "[non-verbal] puts down the menu",
                    "I'm glad you two made up. But I haven't forgotten what he did at Lucia's wedding in 2016.",
                    "I didn't know that. The list is at exactly 80, though, and each extra guest costs 95 euros.",
                    "If he leaves after dinner, before the dancing, I can live with that.",
                    "Tell him he's welcome, and that the ceremony starts at 3.",
                    "Now, can we order? I'm starving.",
                    "Paella it is.",
                ),
            ),
        ),
    ),
    DemoScenario(
        codename="summer-sublet",
        relationship=Relationship.ACQUAINTANCE,
        difficulty=Difficulty.STANDARD,
        context="Two people who met at a friend's party meet again in a shared flat, where one shows the other a room.",
        original_context=(
            "Hana is subletting her room for the summer while she is away; Marco, an intern, is looking "
            "for a cheap room for two months."
        ),
        roles=(
            DemoRole(
                HANA,
                goals=(DemoGoal("Sublet your room for July and August at 550 euros a month."),),
                reason="She will be at a research station in Norway and still pays her own rent of 550.",
                private_knowledge="Two other people have asked about the room, but both want only July.",
                beats=(
                    "Hi Marco, come in. This is the room. It gets sun all afternoon.",
                    "All of July and August. I'm asking 550 a month, bills included.",
                    "[non-verbal] hesitates",
                    "That does help. My own rent is 550, though. Could we meet at 500?",
                    "It is. Fibre, 300 megabits. And the plants on the balcony need water twice a week.",
                    "From the 1st of July. I'll leave the keys with Mrs. Novak in flat 2.",
                    "Great, I'll send you the agreement tonight.",
                ),
            ),
            DemoRole(
                MARCO,
                goals=(DemoGoal("Rent the room for the two summer months for no more than 450 euros a month."),),
                reason="His internship pays 1,100 euros a month.",
                private_knowledge="He could stay with his cousin in the suburbs for free, with a 70-minute commute.",
                beats=(
                    "It's bright. How long is it available?",
                    "It's lovely, but my internship pays 1,100 a month. Could you do 450?",
                    "I'd take both months, so you wouldn't need to find anyone else.",
                    "500 works if the internet is included.",
                    "I can water plants. When could I move in?",
                    "[action] shakes Hana's hand",
                    "Thanks, Hana. Looking forward to it.",
                ),
            ),
        ),
    ),
    DemoScenario(
        codename="used-bike",
        relationship=Relationship.STRANGER,
        difficulty=Difficulty.STANDARD,
        context="Two people meet outside an apartment building about a bicycle listed online.",
        original_context=(
            "Dmitri is selling a used road bike listed at 220 euros; Aisha has come to see it and has a "
            "limited budget."
        ),
        roles=(
            DemoRole(
                DMITRI,
                goals=(DemoGoal("Sell your road bike for at least 200 euros in cash."),),
                reason="He is moving to a smaller flat and needs the money for the removal van.",
                private_knowledge="He paid 650 euros for it four years ago, and the chain is due for replacement.",
                beats=(
                    "Hi, you're here about the bike? This is it.",
                    "[action] wheels the bike out and spins the back wheel",
                    "It'll need a new chain soon, that's true. A new one costs about 30.",
                    "160 is too low. I paid 650 for it, and the tyres have been new since March.",
                    "Meet me at 200 and I'll add the lock and the lights.",
                    "How much do you have on you?",
                    "180 with the lock and the lights, then. Deal.",
                    "Here's the key for the lock. Ride safely.",
                ),
            ),
            DemoRole(
                AISHA,
                goals=(DemoGoal("Buy the bike for 160 euros or less."),),
                reason="She needs it to get to placements at two different hospitals.",
                private_knowledge="She has exactly 180 euros in cash with her.",
                beats=(
                    "Yes, hi. The listing said 220. Can I take a look?",
                    "The frame looks good. The chain is a bit rusty, though.",
                    "Then would you take 160?",
                    "I'm a student and I need it for hospital placements. I could do 170.",
                    "[non-verbal] checks her wallet",
                    "I have 180 in cash. That's all I brought.",
                    "[action] counts out 180 euros and hands them over",
                    "Thanks, I will. Bye!",
                ),
            ),
        ),
    ),
    DemoScenario(
        codename="rent-split",
        relationship=Relationship.ROMANTIC,
        difficulty=Difficulty.HARD,
        context="A couple about to move in together sit in a café, looking over a lease.",
        original_context=(
            "Jordan and Ines are moving in together and must decide how to split the 1,400-euro rent; "
            "their incomes differ a lot."
        ),
        roles=(
            DemoRole(
                JORDAN,
                goals=(DemoGoal("Agree to split the 1,400-euro rent in proportion to income rather than half each."),),
                reason="His income varies, and in some winter months he earns under 1,800 euros.",
                private_knowledge="He earned 2,100 a month on average last year; Ines earns about 3,500.",
                beats=(
                    "Before we sign the lease, can we talk about how we split the rent?",
                    "That's what I wanted to raise. My income swings a lot, and some winter months I make under 1,800.",
                    "At 700, some months half my pay would go on rent. Could we split it by income, say 40 to 60?",
                    "I don't want that either. The flat would be equally ours, no matter how we split it.",
                    "So I'd pay 700, and you'd pay 700 plus 150. That takes some pressure off.",
                    "That's fair. I'd rather say so early than hide it.",
                    "[action] signs the lease and passes the pen to Ines",
                    "Our first flat. I'll book the van for the 28th.",
                ),
            ),
            DemoRole(
                INES,
                goals=(DemoGoal("Keep the rent split half and half, so that the flat feels equally yours."),),
                reason="In her last relationship, paying more turned into arguments about who decides.",
                private_knowledge="She would be willing to pay the utilities herself.",
                beats=(
                    "Sure. I assumed half each, 700 and 700.",
                    "[non-verbal] nods and waits",
                    "I see why. But in my last relationship, paying more turned into arguments about who decides things.",
                    "What if the rent stays half and half, and I cover the utilities, about 150 a month?",
                    "And in a bad winter month, you tell me early and we adjust that month.",
                    "Good. Let's sign it, then.",
                    "[action] signs below his name",
                    "Book it for the morning. I'll bring coffee.",
                ),
            ),
        ),
    ),
    DemoScenario(
        codename="plant-watering",
        relationship=Relationship.KNOW_BY_NAME,
        difficulty=Difficulty.STANDARD,
        context="Two neighbours who know each other by name meet at the mailboxes of their building.",
        original_context=(
            "Oskar needs someone to look after his cat and his plants while he is away; his neighbour "
            "Lena works from home."
        ),
        roles=(
            DemoRole(
                OSKAR,
                goals=(DemoGoal("Get your neighbour to feed your cat and water your plants for the 10 days you are away."),),
                reason="His usual cat sitter cancelled yesterday.",
                private_knowledge="A professional pet service would cost 25 euros a day, but he does not like giving strangers his key.",
                beats=(
                    "Hi Lena. Sorry to catch you at the mailboxes. Could I ask a favour?",
                    "I'm flying for 10 days from Monday, and my cat sitter cancelled. Could you feed Pilvi and water the plants?",
                    "Mornings are perfect. Pilvi eats one pouch at 8, and the plants need water on Mondays and Thursdays.",
                    "[non-verbal] smiles with relief",
                    "Of course. I'm home all of April.",
                    "[action] writes his phone number and the vet's number on a card and hands it to Lena",
                    "You're a lifesaver. See you on Sunday.",
                ),
            ),
            DemoRole(
                LENA,
                goals=(DemoGoal("Help your neighbour only if it fits around your deadline, and ask for a favour in return in April."),),
                reason="She is away for a week in April and needs someone to collect her post.",
                private_knowledge="She is mildly allergic to cats.",
                beats=(
                    "Hi Oskar. Go ahead.",
                    "Feeding once a day I could do. I'm on a translation deadline, so mornings are best.",
                    "I'm a little allergic to cats, so I won't stay long. Would that be all right?",
                    "One favour in return: I'm away the first week of April. Could you collect my post?",
                    "Then it's a deal. Leave me the key on Sunday evening.",
                    "Thanks. I'll text you a photo of Pilvi every day.",
                    "See you Sunday.",
                ),
            ),
        ),
    ),
)

# --- a scenario of three parties ---------------------------------------------------------------

MEI = DemoCharacter(
    "mei-tanaka", "Mei", "Tanaka", 29, "woman", "she/her", "freelance interface designer",
    big_five("High", "Medium", "Medium", "High", "Medium"), "INFJ",
    "Care, Fairness", "Benevolence, Self-direction",
    "Thoughtful and diplomatic; notices when someone in the room is being left out.",
    "Conceptual",
    "Designs apps from a desk in the corner of the flat's living room.",
    "She has been turning the heating up while the other two are out.",
)
CALLUM = DemoCharacter(
    "callum-reid", "Callum", "Reid", 33, "man", "he/him", "offshore wind technician",
    big_five("Medium", "Medium", "High", "Medium", "Low"), "ESTP",
    "Fairness, Liberty", "Stimulation, Achievement",
    "Practical and upbeat; likes gadgets and would rather fix a problem than talk about it.",
    "Directive",
    "Works two weeks on and two weeks off at a wind farm out at sea.",
    "He has been looking at flats of his own for the summer.",
)
IFEOMA = DemoCharacter(
    "ifeoma-nwosu", "Ifeoma", "Nwosu", 27, "woman", "she/her", "junior doctor",
    big_five("Medium", "High", "Medium", "Medium", "Low"), "ESTJ",
    "Fairness, Authority", "Security, Achievement",
    "Organised and direct; keeps a spreadsheet for everything she can.",
    "Analytical",
    "Works shifts at the city hospital and has the largest room in the flat.",
    "She forgot to pay the internet bill twice last year and paid the late fees without a word.",
)

HEATING_BILL = DemoScenario(
    codename="heating-bill",
    relationship=Relationship.FRIEND,
    difficulty=Difficulty.STANDARD,
    context="Three flatmates sit around the kitchen table with the winter's heating bill.",
    original_context=(
        "Mei, Callum and Ifeoma share a three-bedroom flat. The heating bill for the winter is 540 euros; "
        "Callum was at sea for half of it, Mei works from home, and Ifeoma's room is the largest."
    ),
    turn_cap=24,
    category=Category.PERSONAL_DOMAIN,
    roles=(
        DemoRole(
            MEI,
            communication=Communication.RECEIVER,
            goals=(
                DemoGoal("Pay no more than 200 euros of the heating bill.", goal_type=GoalType.COMPETITION),
                DemoGoal(
                    "Keep the peace, so that the three of you still get on well afterwards.",
                    goal_type=GoalType.RELATIONSHIP_MAINTENANCE,
                ),
            ),
            reason="Her freelance work slowed down this winter and money is tight.",
            private_knowledge="The meter app shows that daytime heating came to about 40 percent of the bill.",
            beats=(
                "Thanks for sitting down, both of you. The heating bill came this morning: 540 euros for the winter.",
                "Simple, yes, but it doesn't seem fair on Callum. And to be honest, my budget is tight this winter.",
                "I'm home all day for work, so I do use more heat in the daytime. I can cover part of that.",
                "Thank you for telling us. Then the landlord should fix it, and we should not pay for a broken radiator.",
                "That works for me. Thank you, Ifeoma.",
                "[action] writes the three amounts on the whiteboard by the fridge",
                "I'll transfer my 200 on Friday.",
            ),
        ),
        DemoRole(
            CALLUM,
            communication=Communication.SENDER,
            goals=(
                DemoGoal(
                    "Pay less than a third of the bill, since you were away for half of the winter.",
                    goal_type=GoalType.COMPETITION,
                ),
                DemoGoal(
                    "Get the others to agree to a smart thermostat that you will set up.", goal_type=GoalType.COOPERATION
                ),
            ),
            reason="He was at sea for six of the twelve weeks the bill covers.",
            private_knowledge="His employer pays back half the price of energy-saving devices for staff homes.",
            beats=(
                "That's a lot. Before we split it, remember I was at sea for six of those twelve weeks.",
                "Thanks, Mei. I'd suggest I pay 120, since I was here half the time.",
                "Here's an idea that would help all of us: a smart thermostat. I found one on sale for 90 euros.",
                "Agreed. And my employer pays back half of the thermostat, so the flat would only pay 45.",
                "Fine by me. So, the thermostat?",
                "Happy for you to handle the bills. I'll order the thermostat tonight.",
                "Mine goes out today. Thanks, both of you, that was easier than I expected.",
            ),
        ),
        DemoRole(
            IFEOMA,
            communication=Communication.SENDER,
            goals=(
                DemoGoal("Split the bill evenly, 180 euros each.", goal_type=GoalType.CONFLICT_RESOLUTION),
                DemoGoal("Take over managing the flat's bills from now on.", goal_type=GoalType.IDENTITY_RECOGNITION),
            ),
            reason="An even split has kept the flat's money simple for two years, and she likes running things well.",
            private_knowledge="The landlord told her the radiator in her room is faulty and uses more than the others.",
            beats=(
                "An even split would be 180 each. That's how we've always done it, and it keeps things simple.",
                "[non-verbal] looks at the bill and nods slowly",
                "Before we decide, I should tell you something. The landlord said the radiator in my room is faulty and uses more than the others.",
                "Then here's a proposal. Callum pays 120, Mei pays 200, and I pay 220, since my radiator ran up part of it. If the landlord refunds anything, it comes to me.",
                "Yes to the thermostat, if you set it up. And I can keep track of the bills and payments from now on, if you both trust me with it.",
                "Good. I'll email the landlord about the radiator tomorrow and send you both the payment details.",
                "[action] pins the bill next to the whiteboard",
            ),
        ),
    ),
    probes=(
        DemoProbe(
            0, "private_info", "By Mei's meter app, how much of the bill did daytime heating come to?",
            ("About 10 percent", "About 25 percent", "About 40 percent", "About 70 percent"), 2,
        ),
        DemoProbe(
            1, "goal", "Besides paying less, what did Callum want the flat to agree to?",
            ("Moving out in the spring", "A smart thermostat he would set up", "A cleaning rota",
             "A new energy supplier"), 1,
        ),
        DemoProbe(
            1, "reason", "Why did Callum think he should pay less than a third?",
            ("His room is the smallest", "He was away for half of the winter", "He earns the least",
             "He paid last winter's bill alone"), 1,
        ),
        DemoProbe(
            2, "private_info", "What had the landlord told Ifeoma about the radiator in her room?",
            ("It was replaced last month", "It is faulty and uses more than the others", "It has been switched off",
             "It will be removed in the summer"), 1,
        ),
        DemoProbe(
            2, "goal", "What did Ifeoma want to take on in the flat?",
            ("The cooking", "Finding a fourth flatmate", "Managing the bills", "Talking to the neighbours"), 2,
            asked_of="anyone",
        ),
    ),
)

# Scenarios of more than two parties: played in the demo with tag ``demo-groups``, so the demo
# annotation studies, which take every ``demo`` episode, stay as they were.
GROUP_SCENARIOS: tuple[DemoScenario, ...] = (HEATING_BILL,)

# The four conditions of every demo scenario: the baseline and SocialVeil's three barriers.
CONDITIONS = ("none", "semantic", "sociocultural", "emotional")
