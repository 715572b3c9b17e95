"""Two scenario templates of three and four characters, written for Parley's demo in AgentSense's shape.

A template is a situation whose roles are character *slots*: each slot says who may fill it (an
age range, here) and carries the role's goals, reason, private knowledge and beats, with
``{role0}``, ``{role1}``, ... standing for the first names of whoever is cast. The demo fills each
template with three casts drawn from the characters below (``benchmark.scenarios.templates``), so
the profile sensitivity index has scenarios of the same template to compare.

Following AgentSense, every goal has one of its eight goal types (together the demo covers the
three ERG needs), every role is labelled sender or receiver, each template has a scenario
category, turns go in random order after a greeting, and an episode stops at 15 turns. Some roles
hold private facts, and the probes ask the others about them. All of the text is original.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..models import Category, Communication, GoalType, Relationship, TurnTaking
from .content import DemoCharacter, DemoGoal, DemoProbe, big_five

CASTS_PER_TEMPLATE = 3
TEMPLATE_TURN_CAP = 15  # AgentSense's cap


@dataclass(frozen=True)
class DemoSlot:
    """A template's role: who may fill it, and what the role wants, knows and says."""

    goals: tuple[DemoGoal, ...]
    reason: str
    private_knowledge: str
    beats: tuple[str, ...]
    communication: str
    min_age: int | None = None
    max_age: int | None = None


@dataclass(frozen=True)
class DemoTemplate:
    codename: str
    relationship: int
    category: str
    context: str  # neutral: no slot's goal or private facts
    original_context: str
    slots: tuple[DemoSlot, ...]
    probes: tuple[DemoProbe, ...]
    characters: tuple[DemoCharacter, ...]  # the pool the casts are drawn from
    greeter: int = 0
    turn_cap: int = TEMPLATE_TURN_CAP
    turn_taking: str = TurnTaking.RANDOM_AFTER_GREETING


# --- the characters who fill the slots ----------------------------------------------------------

AGNES = DemoCharacter(
    "agnes-whitlow", "Agnes", "Whitlow", 74, "woman", "she/her", "retired librarian",
    big_five("High", "High", "Low", "Medium", "Low"), "ISTJ",
    "Fairness, Liberty", "Self-direction, Tradition",
    "Sharp, dry and independent; reads two newspapers a day and dislikes being managed.",
    "Analytical",
    "Ran the town's lending library for thirty years and still volunteers at its book sale.",
    "She has stopped driving at night because of her eyesight and tells people she simply prefers the bus.",
)
BERNARD = DemoCharacter(
    "bernard-osei", "Bernard", "Osei", 78, "man", "he/him", "retired bus mechanic",
    big_five("Low", "High", "Medium", "High", "Medium"), "ISFJ",
    "Loyalty, Care", "Tradition, Benevolence",
    "Gentle and stubborn in equal measure; fixes things rather than complain about them.",
    "Behavioral",
    "Kept the city's buses running for forty years and grows prize-winning runner beans.",
    "He has been skipping meals when he eats alone, though he tells everyone he cooks every day.",
)
ROSA = DemoCharacter(
    "rosa-delgado", "Rosa", "Delgado", 52, "woman", "she/her", "school secretary",
    big_five("Medium", "High", "High", "High", "Medium"), "ESFJ",
    "Care, Fairness", "Benevolence, Security",
    "Warm and organised; knows everyone's name and remembers their birthdays.",
    "Behavioral",
    "Has run the front office of Millbrook Primary for fifteen years.",
    "She is quietly applying for early retirement and has told no one at the school.",
)
MARTIN = DemoCharacter(
    "martin-kowalski", "Martin", "Kowalski", 47, "man", "he/him", "electrician",
    big_five("Low", "High", "Medium", "Medium", "Low"), "ISTP",
    "Fairness, Honesty", "Security, Achievement",
    "Plain-spoken and reliable; shows up on time and expects others to do the same.",
    "Directive",
    "Runs a two-person electrical firm and coaches a youth football team on Saturdays.",
    "His firm lost its biggest customer in the spring and he is worried about the winter.",
)
YARA = DemoCharacter(
    "yara-nassar", "Yara", "Nassar", 31, "woman", "she/her", "pharmacy technician",
    big_five("High", "Medium", "High", "High", "Medium"), "ENFP",
    "Care, Liberty", "Universalism, Stimulation",
    "Friendly and curious; starts conversations with strangers at bus stops.",
    "Conceptual",
    "Moved to the neighbourhood last year and works at the pharmacy on the high street.",
    "She failed her driving test three times and has not told her family about the last two.",
)
TOBIAS = DemoCharacter(
    "tobias-reuter", "Tobias", "Reuter", 27, "man", "he/him", "barista and evening student",
    big_five("High", "Low", "Medium", "High", "Medium"), "INFP",
    "Care, Fairness", "Self-direction, Benevolence",
    "Soft-spoken and thoughtful; says yes to things and works out the details later.",
    "Conceptual",
    "Makes coffee by day and studies landscape design two evenings a week.",
    "He is behind on his course fees and may have to drop a module.",
)
SUNITA = DemoCharacter(
    "sunita-rao", "Sunita", "Rao", 63, "woman", "she/her", "retired accountant",
    big_five("Medium", "High", "Medium", "Medium", "Low"), "ESTJ",
    "Fairness, Authority", "Security, Achievement",
    "Precise and practical; trusts figures more than promises.",
    "Analytical",
    "Kept the books of a builders' merchant for thirty years and now does her neighbours' tax returns.",
    "She once covered a shortfall in a club's accounts from her own pocket and never mentioned it.",
)
KENJI = DemoCharacter(
    "kenji-mori", "Kenji", "Mori", 39, "man", "he/him", "bakery owner",
    big_five("Medium", "High", "Medium", "High", "Medium"), "ISFJ",
    "Care, Loyalty", "Benevolence, Achievement",
    "Patient and early to rise; listens more than he talks and remembers what he hears.",
    "Behavioral",
    "Opened a small bakery on Station Road five years ago.",
    "He is thinking of selling the bakery to a chain that made him an offer last month.",
)
CLAIRE = DemoCharacter(
    "claire-dubois", "Claire", "Dubois", 44, "woman", "she/her", "hospital administrator",
    big_five("Medium", "High", "High", "Medium", "Medium"), "ENTJ",
    "Fairness, Authority", "Achievement, Power",
    "Brisk and capable; likes a plan with names and dates next to each step.",
    "Directive",
    "Manages the outpatient clinics of the county hospital.",
    "She has been offered a post in another city and is weighing it up.",
)

POOL = (AGNES, BERNARD, ROSA, MARTIN, YARA, TOBIAS, SUNITA, KENJI, CLAIRE)


# --- a community garden committee: four parties, small society ---------------------------------

GARDEN_COMMITTEE = DemoTemplate(
    codename="garden-committee",
    relationship=Relationship.ACQUAINTANCE,
    category=Category.SMALL_SOCIETY,
    context=(
        "Four members of a community garden's committee meet in "
        "the tool shed to talk about the empty plot by the gate."
    ),
    original_context=(
        "{role0} chairs the committee of the Elm Street community garden, {role1} keeps its accounts, "
        "{role2} joined this spring and {role3} has gardened there for twenty years. The plot by the gate "
        "has stood empty since March, and the council wants a plan for it by the end of the month."
    ),
    slots=(
        DemoSlot(
            goals=(
                DemoGoal("Get the committee to agree on one plan for the empty plot before the council's deadline.",
                         goal_type=GoalType.COOPERATION),
                DemoGoal("Keep {role3} on the committee, although {role3} has hinted at stepping down.",
                         goal_type=GoalType.RELATIONSHIP_MAINTENANCE),
            ),
            reason="The council can take back a plot that stays empty for a whole season.",
            private_knowledge=(
                "The council has offered a 300-euro grant if the "
                "plot is used to teach children to grow food."
            ),
            communication=Communication.SENDER,
            min_age=40,
            beats=(
                "Good evening, everyone, and thanks for coming to the shed. The council wants our plan for the "
                "empty plot by the gate before the end of the month.",
                "The council also told me they would give us a 300-euro grant if the plot is used to teach "
                "children to grow food.",
                "{role3}, nobody knows this garden better than you. Twenty "
                "years of work is why it still looks this good.",
                "So here is a plan: a teaching bed with the primary school on weekdays, and the families share "
                "the rest of the plot. Can we agree on that?",
                "Agreed, then. I'll write to the council tomorrow morning.",
            ),
        ),
        DemoSlot(
            goals=(
                DemoGoal("Make sure the others know how little is left in the garden fund before anything is decided.",
                         goal_type=GoalType.INFORMATION_PROVISION),
                DemoGoal("Stop any plan that would cost the fund more than 150 euros.",
                         goal_type=GoalType.COMPETITION),
            ),
            reason="{role1} signs the garden's accounts and would have to explain an overspend to the members.",
            private_knowledge="The water bill went up by 40 percent this year and will take most of the fund.",
            communication=Communication.SENDER,
            min_age=25, max_age=65,
            beats=(
                "Before we plan anything: the fund holds 450 euros, "
                "and the water bill went up by 40 percent this year.",
                "Any plan for that plot has to cost the fund less than 150 euros.",
                "A grant changes things. If the council pays for the teaching bed, the fund only covers the seeds.",
                "[action] opens the accounts book and writes down the grant and the cost of seeds",
                "Fine by me, as long as every receipt comes to me.",
            ),
        ),
        DemoSlot(
            goals=(
                DemoGoal("Find out how plots are given out and whether the empty one could go to people you know.",
                         goal_type=GoalType.INFORMATION_ACQUISITION),
                DemoGoal("Be accepted by the others as a full member of the committee.",
                         goal_type=GoalType.RELATIONSHIP_BUILDING),
            ),
            reason="{role2} is new to the neighbourhood and wants to belong.",
            private_knowledge=(
                "Five families from the new building by the station have "
                "asked {role2} to find them space to grow vegetables."
            ),
            communication=Communication.RECEIVER,
            max_age=35,
            beats=(
                "Hello, I'm still new here. How are plots given out? Is there a list, or does the committee choose?",
                "I ask because five families from the new building by the station want somewhere to grow vegetables.",
                "They would share the plot and help with the watering on weekends.",
                "Thank you for making me feel welcome. I'll tell the families this evening.",
            ),
        ),
        DemoSlot(
            goals=(
                DemoGoal("Have the committee recognise the twenty years of work you have put into the garden.",
                         goal_type=GoalType.IDENTITY_RECOGNITION),
                DemoGoal("End the weekend arguments over the shared water tank.",
                         goal_type=GoalType.CONFLICT_RESOLUTION),
            ),
            reason="{role3} has kept the garden going through many committees and feels taken for granted.",
            private_knowledge="The council has already offered {role3} a seat on its allotments board from the autumn.",
            communication=Communication.RECEIVER,
            min_age=60,
            beats=(
                "[non-verbal] leans on a spade by the door and listens",
                "I've watered this garden for twenty years, and the weekend arguments over the water tank have "
                "to stop before I take on anything more.",
                "A rota on the shed door would settle the tank: each household gets a fixed morning.",
                "Thank you. That means a lot. I'll stay on and draw up the rota.",
            ),
        ),
    ),
    probes=(
        DemoProbe(0, "private_info", "What has the council offered if the plot is used to teach children?",
                  ("A new tool shed", "A 300-euro grant", "Free water for a year", "A second plot"), 1),
        DemoProbe(1, "private_info", "By how much did the garden's water bill go up this year?",
                  ("10 percent", "25 percent", "40 percent", "It went down"), 2),
        DemoProbe(2, "private_info", "Who has asked {role2} to find them space in the garden?",
                  ("The primary school", "Five families from the new building by the station",
                   "A restaurant on the high street", "The council"), 1),
        DemoProbe(3, "private_info", "What has the council offered {role3} from the autumn?",
                  ("A plot in another garden", "A seat on its allotments board", "A paid gardening job",
                   "An award for long service"), 1),
        DemoProbe(3, "goal", "What did {role3} most want from the others at this meeting?",
                  ("A lower membership fee", "Recognition for twenty years of work", "The empty plot",
                   "To become the chair"), 1),
    ),
    characters=POOL,
)


# --- a family deciding on a parent's care: three parties, personal domain ----------------------

PARENT_CARE = DemoTemplate(
    codename="parent-care",
    relationship=Relationship.FAMILY,
    category=Category.PERSONAL_DOMAIN,
    context="A parent and two grown-up children stay at the table after Sunday lunch to talk about the months ahead.",
    original_context=(
        "{role0} fell on the stairs in March and has lived alone since being widowed. {role1} lives twenty "
        "minutes away; {role2} lives abroad and visits twice a year. The family has to choose between help "
        "at home, sheltered housing, or {role0} moving in with {role1}."
    ),
    slots=(
        DemoSlot(
            goals=(
                DemoGoal("Stay in your own house for at least another year.", goal_type=GoalType.COMPETITION),
                DemoGoal("Be treated as someone who still runs their own life, not as a problem to be solved.",
                         goal_type=GoalType.IDENTITY_RECOGNITION),
            ),
            reason="{role0} has lived in the house for forty years and still gardens, cooks and pays the bills.",
            private_knowledge=(
                "The doctor found that the fall came from new blood "
                "pressure pills, which have since been changed."
            ),
            communication=Communication.SENDER,
            min_age=70,
            beats=(
                "Thank you both for staying after lunch. I know why we're here, so let's talk about it openly.",
                "The doctor found the fall came from my new blood pressure "
                "pills. They've been changed, and I've been steady since.",
                "I'd like to stay in this house for at least another year. I still cook, garden and pay my own bills.",
                "Help in the mornings I could accept, as long as I choose who comes.",
                "Then we have a plan. Thank you both for listening to me.",
            ),
        ),
        DemoSlot(
            goals=(
                DemoGoal("Agree a plan in which the caring is shared, so it does not all fall on you.",
                         goal_type=GoalType.COOPERATION),
                DemoGoal(
                    "Tell the others plainly how many hours a week you already give to {role0}'s shopping "
                    "and appointments.",
                    goal_type=GoalType.INFORMATION_PROVISION,
                ),
            ),
            reason="{role1} does the shopping and drives {role0} to every appointment.",
            private_knowledge=(
                "{role1} has been offered a transfer to another "
                "city from January and has not decided yet."
            ),
            communication=Communication.SENDER,
            min_age=35, max_age=60,
            beats=(
                "I want you safe, and I want us to share this. Right now I do the shopping and the appointments, "
                "about eight hours a week.",
                "[non-verbal] nods and pours more tea",
                "If the pills explain the fall, staying at home could work with some help.",
                "A carer three mornings a week would take a lot off my plate. Who would pay for it?",
                "Good. I'll call the care agency on Monday and send you both the details.",
            ),
        ),
        DemoSlot(
            goals=(
                DemoGoal("Find out what the doctor said about the fall.", goal_type=GoalType.INFORMATION_ACQUISITION),
                DemoGoal("Stay on good terms with {role1}, who has carried most of the caring alone.",
                         goal_type=GoalType.RELATIONSHIP_MAINTENANCE),
            ),
            reason="{role2} lives abroad and feels bad about being far away.",
            private_knowledge="{role2} could pay for a carer three mornings a week, about 600 euros a month.",
            communication=Communication.RECEIVER,
            min_age=25, max_age=55,
            beats=(
                "How did the doctor explain the fall? So far I've only heard about it from others.",
                "I know I'm far away, and most of this has landed on you. Thank you for everything you do.",
                "I can pay for a carer three mornings a week. It comes to about 600 euros a month.",
                "And I'll come home for two weeks in the summer, so you can take a proper break.",
                "Then it's settled. I'll set up the monthly payment tonight.",
            ),
        ),
    ),
    probes=(
        DemoProbe(0, "private_info", "What did the doctor find had caused {role0}'s fall?",
                  ("Weak knees", "New blood pressure pills", "A loose stair carpet", "Poor eyesight"), 1),
        DemoProbe(1, "private_info", "What has {role1} been offered from January?",
                  ("A promotion in the same office", "A transfer to another city", "Early retirement",
                   "A year's unpaid leave"), 1),
        DemoProbe(1, "goal", "What did {role1} want most from the plan?",
                  ("To have {role0} move in", "That the caring be shared", "To sell the house",
                   "A live-in nurse"), 1),
        DemoProbe(2, "private_info", "How much could {role2} pay towards a carer each month?",
                  ("About 200 euros", "About 400 euros", "About 600 euros", "Nothing at all"), 2),
    ),
    characters=POOL,
)

TEMPLATES: tuple[DemoTemplate, ...] = (GARDEN_COMMITTEE, PARENT_CARE)
