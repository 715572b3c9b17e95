"""ProMediate's instruments (spec §1.6, PM-16–18): the original mediator rating, the per-intervention ratings the
J3 judge and annotators answer, the snippet comparison and the conversation quality."""

from __future__ import annotations

from benchmark.models import Question

from .preset_specs import PresetSpec, QuestionSpec
from .preset_specs import anchors as anchor_points

Kind = Question.Kind


def _mediator_question(key: str, prompt: str, help_text: str, *anchors: tuple[int, str, str]) -> QuestionSpec:
    return QuestionSpec(
        key=key, kind=Kind.LIKERT, prompt=prompt, help_text=help_text, rationale="optional",
        options=anchor_points(*anchors),
    )


PROMEDIATE = PresetSpec(
    name="ProMediate mediator rating",
    description=(
        "Rate an AI mediator's message in a multi-party negotiation on four kinds of obstacle it may "
        "address, each on its own, and judge which of two conversation excerpts is closer to agreement "
        "(after ProMediate's human evaluation)."
    ),
    questions=(
        _mediator_question(
            "perception_alignment", "Did the mediator help the parties see the issues the same way?",
            "Read the conversation so far, then the mediator's message. Look for misunderstandings cleared "
            "up and shared goals brought to light.",
            (1, "Missed", "Left diverging views alone, even when a party stated them plainly."),
            (2, "Slight", "Touched a divergence only in passing, or too late to make a difference."),
            (3, "Obvious ones only", "Took up plain divergences but missed subtle or unspoken ones."),
            (4, "Most", "Took up most divergences, including some that were only implied."),
            (5, "Ahead of it", "Kept watch on the group and surfaced subtle divergences before they grew."),
        ),
        _mediator_question(
            "emotional_dynamics", "Did the mediator deal with the feelings in the conversation?",
            "Think of negative emotions such as anger, distrust or grief: did the message ease tension or "
            "build empathy?",
            (1, "Ignored", "Passed over emotional cues and left the tension as it was."),
            (2, "Token", "Noticed the emotion but answered it in a perfunctory way."),
            (3, "Surface only", "Acknowledged open displays of feeling but missed what lay beneath them."),
            (4, "Attentive", "Answered most emotional signals and eased some of the tension."),
            (5, "Skilful", "Handled the emotions well and made it feel safe to speak."),
        ),
        _mediator_question(
            "cognitive_challenges", "Did the mediator help the parties reason more clearly?",
            "Think of faulty reasoning, biases such as anchoring on a first number, or too few options on "
            "the table.",
            (1, "Missed", "Let flawed reasoning and thinking traps pass."),
            (2, "Slight", "Hinted at a reasoning problem without helping to fix it."),
            (3, "Basic fixes", "Corrected plain reasoning errors but not the deeper ones."),
            (4, "Helpful", "Fixed most reasoning problems, including some less obvious ones."),
            (5, "Proactive", "Spotted and resolved complex reasoning problems on its own initiative."),
        ),
        _mediator_question(
            "communication_breakdowns", "Did the mediator get the conversation working again?",
            "Think of restoring dialogue, reframing what was said, summing up key points and helping the "
            "parties reconnect.",
            (1, "No repair", "Did not respond to breakdowns or confusion."),
            (2, "Slight", "Acknowledged a breakdown without really repairing it."),
            (3, "Surface repair", "Repaired the visible breakdowns but left gaps in how the issues were framed."),
            (4, "Good repair", "Repaired most breakdowns and reconnected the parties."),
            (5, "Restored", "Got the dialogue going again and reframed it constructively."),
        ),
        QuestionSpec(
            key="closer_to_agreement", kind=Kind.PAIRWISE, required=False, rationale="optional",
            prompt="Which conversation handled the conflict better: in which are the parties closer to agreement?",
            help_text=(
                "Only for items that pair two excerpts of the same negotiation. Judge how far the parties "
                "agree on the issues, not how polite they are; choose 'About the same' only when you "
                "really cannot tell."
            ),
            options={"choices": [
                {"value": "A", "label": "Conversation A"},
                {"value": "B", "label": "Conversation B"},
                {"value": "tie", "label": "About the same"},
            ]},
        ),
    ),
    seats_needed=3,
    seats_reason=(
        "its questions rate a mediator's turns in a multi-party negotiation, so every episode needs at "
        "least three seats (two parties and the mediator); a two-person conversation has no mediator"
    ),
)


PROMEDIATE_INTERVENTION_PRESET = "promediate-intervention"
# The four problems a mediator's intervention is rated on, in the order ProMediate lists them (App. C.3).
INTERVENTION_DIMENSIONS = (
    "perception_alignment", "emotional_dynamics", "cognitive_challenges", "communication_breakdowns",
)
_NOT_APPLICABLE = {
    "label": "Not applicable",
    "description": "The conversation before this message showed no such problem, so there was nothing to handle.",
}


def _intervention_question(key: str, prompt: str, help_text: str, low: str, middle: str, high: str) -> QuestionSpec:
    """One of the four per-intervention ratings: 1, 3 and 5 named, 2 and 4 in between, and "not applicable"."""
    return QuestionSpec(
        key=key, kind=Kind.LIKERT, prompt=prompt, help_text=help_text, scope=Question.Scope.TURN,
        dimension=key,
        options={
            "anchors": [
                {"value": 1, "label": "Not handled", "description": low},
                {"value": 2},
                {"value": 3, "label": "Partly handled", "description": middle},
                {"value": 4},
                {"value": 5, "label": "Well handled", "description": high},
            ],
            "not_applicable": dict(_NOT_APPLICABLE),
        },
    )


PROMEDIATE_INTERVENTION = PresetSpec(
    name="ProMediate mediator intelligence (per intervention)",
    description=(
        "Rate one intervention of an AI mediator in a multi-party negotiation: read the turns since the "
        "mediator last spoke, then its message, and say how well the message dealt with each of four kinds of "
        "problem. A problem that did not arise in those turns is not applicable (after ProMediate's mediator "
        "intelligence criteria). Each rating is about the mediator's turn."
    ),
    questions=(
        _intervention_question(
            "perception_alignment", "Did the message bring the parties' views of the issues closer together?",
            "First ask whether the parties saw the issues differently (a misunderstanding, goals they share "
            "without knowing it). If they did not, choose not applicable.",
            "Left diverging views alone, even where a party said plainly how it saw things.",
            "Took up the plain divergences but passed over the subtle or unspoken ones.",
            "Watched the whole group and brought subtle divergences into the open before they grew.",
        ),
        _intervention_question(
            "emotional_dynamics", "Did the message deal with the feelings running through the conversation?",
            "First ask whether there were negative feelings such as anger, distrust or grief. If there were "
            "none, choose not applicable.",
            "Passed over the emotional signals and left the tension where it was.",
            "Acknowledged feelings shown openly but not what lay underneath them.",
            "Handled the feelings with skill and made it safe for everyone to speak.",
        ),
        _intervention_question(
            "cognitive_challenges", "Did the message help the parties reason more clearly?",
            "First ask whether there was faulty reasoning, a bias (such as clinging to a first offer) or an "
            "unhelpful rule of thumb. If there was none, choose not applicable.",
            "Let flawed reasoning and thinking traps pass unremarked.",
            "Put right the simple reasoning errors but left the deeper ones.",
            "Spotted complex reasoning problems on its own initiative and resolved them.",
        ),
        _intervention_question(
            "communication_breakdowns", "Did the message get the parties talking productively again?",
            "First ask whether communication had broken down: parties talking past each other, hostility, "
            "a party left silent, or the talk going round in circles. If not, choose not applicable.",
            "Did not respond to the breakdown or the confusion.",
            "Mended the visible breakdown but left gaps in how the issues were framed.",
            "Restored the dialogue and reframed the conversation in a constructive way.",
        ),
        QuestionSpec(
            key="comment", kind=Kind.TEXT, scope=Question.Scope.TURN, required=False,
            prompt="Anything about this intervention worth noting?", options={"max_length": 1000},
        ),
    ),
    seats_needed=3,
    seats_reason=(
        "it rates a mediator's interventions in a multi-party negotiation, so every episode needs at least "
        "three seats (two parties and the mediator)"
    ),
)


PROMEDIATE_SNIPPETS_PRESET = "promediate-snippets"
PROMEDIATE_SNIPPETS = PresetSpec(
    name="ProMediate snippet comparison",
    description=(
        "Two excerpts of the same negotiation, the earlier one first: did the parties move toward agreement or "
        "away from it between them? Checks the consensus tracker's direction against people's (after "
        "ProMediate's validation of consensus tracking)."
    ),
    questions=(
        QuestionSpec(
            key="agreement_direction", kind=Kind.CATEGORICAL, dimension="snippet_agreement_direction",
            prompt="From the first excerpt to the second, did agreement among the parties grow or shrink?",
            help_text=(
                "Compare how close the parties are on the issues in each excerpt: accepted proposals, positions "
                "moving toward each other, fewer objections. Go by what they agree on, not by how friendly they "
                "sound. There is no 'same' answer: pick the direction that fits better."
            ),
            options={"choices": [
                {"value": "increased", "label": "Agreement grew",
                 "description": "In the second excerpt the parties are closer to a shared position."},
                {"value": "decreased", "label": "Agreement shrank",
                 "description": "In the second excerpt the parties are further apart than in the first."},
            ]},
        ),
    ),
    seats_needed=3,
    seats_reason="it compares excerpts of a multi-party negotiation, so every episode needs at least three seats",
)

PROMEDIATE_QUALITY_PRESET = "promediate-quality"
PROMEDIATE_QUALITY = PresetSpec(
    name="ProMediate conversation quality",
    description=(
        "How natural a simulated negotiation reads, and how strongly the parties show the conflict style they were "
        "asked to play, which the page names (after ProMediate's conversation-quality ratings)."
    ),
    questions=(
        QuestionSpec(
            key="naturalness", kind=Kind.LIKERT, dimension="naturalness", rationale="optional",
            prompt="How natural and coherent does this negotiation read?",
            help_text="Judge whether real people could have held this conversation: flow, replies that follow on "
            "from each other, believable wording.",
            options=anchor_points(
                (1, "Not at all natural", "Reads like a machine: replies ignore each other, or repeat themselves."),
                (2, "Mostly artificial", "Some exchanges hold together, but most feel stilted or out of place."),
                (3, "Mixed", "Plausible on the whole, with clear signs that it was generated."),
                (4, "Mostly natural", "Could pass for people, apart from a few odd moments."),
                (5, "Like real people", "You could not tell it from a negotiation among people."),
            ),
        ),
        QuestionSpec(
            key="mode_expression", kind=Kind.LIKERT, dimension="mode_expression", rationale="optional",
            prompt="How strongly do the parties show the conflict style named above?",
            help_text="Compare the parties' behaviour with the description of the style. The top of the scale is "
            "not the best: it means the style took over the conversation.",
            options=anchor_points(
                (1, "Absent", "Nothing in how the parties behave shows the style."),
                (2, "Faint", "A trace of the style now and then."),
                (3, "Present", "The style shows, but unevenly or only in some parties."),
                (4, "Clear", "The parties plainly act in this style, and it still reads as people negotiating."),
                (5, "Overdone", "The style dominates: the parties act it out to the point of caricature."),
            ),
        ),
        QuestionSpec(
            key="comment", kind=Kind.TEXT, required=False,
            prompt="Anything about this conversation worth noting?", options={"max_length": 1000},
        ),
    ),
    seats_needed=3,
    seats_reason="it rates a multi-party negotiation, so every episode needs at least three seats",
    shows_condition=True,
)
