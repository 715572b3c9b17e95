"""The instruments Parley ships: SocialVeil's human evaluation, Sotopia-EVAL, SHREC spans, ProMediate,
and the questionnaire chat participants answer by default.

Each preset is a ``PresetSpec`` of ``QuestionSpec`` rows; ``install_preset`` makes the shared
instrument (no team: every team may use it, none may change it) the first time a study asks for it.
"""

from __future__ import annotations

from django.db import IntegrityError, transaction

from benchmark.models import Instrument, Question

from .checks import DEFAULT_TEXT_MAX_LENGTH, SPAN_LABELS
from .preset_specs import PresetSpec as PresetSpec
from .preset_specs import QuestionSpec as QuestionSpec
from .preset_specs import anchors as _anchors
from .preset_specs import slider as _slider
from .promediate_presets import INTERVENTION_DIMENSIONS as INTERVENTION_DIMENSIONS
from .promediate_presets import PROMEDIATE, PROMEDIATE_INTERVENTION, PROMEDIATE_QUALITY, PROMEDIATE_SNIPPETS
from .promediate_presets import PROMEDIATE_INTERVENTION_PRESET as PROMEDIATE_INTERVENTION_PRESET
from .promediate_presets import PROMEDIATE_QUALITY_PRESET as PROMEDIATE_QUALITY_PRESET
from .promediate_presets import PROMEDIATE_SNIPPETS_PRESET as PROMEDIATE_SNIPPETS_PRESET
from .rubrics import JUDGE_DIMENSIONS
from .versions import next_version

Kind = Question.Kind


def _sotopia_question(key: str, prompt: str, help_text: str, low_means: str, high_means: str) -> QuestionSpec:
    _, dimension = JUDGE_DIMENSIONS[key]
    return QuestionSpec(
        key=key, kind=Kind.SLIDER, prompt=prompt, help_text=help_text, scope=Question.Scope.SEAT, rationale="required",
        options=_slider(dimension.low, dimension.high, low_means, high_means), dimension=key,
    )


SOCIALVEIL = PresetSpec(
    name="SocialVeil human evaluation",
    description=(
        "Name the communication barrier one side spoke under, then rate how much confusion was left "
        "and how well the two sides came to understand each other (after SocialVeil's human study)."
    ),
    questions=(
        QuestionSpec(
            key="barrier_type", kind=Kind.CATEGORICAL, rationale="optional", truth="episode.barrier",
            prompt="Which communication barrier, if any, shaped the way one side spoke?",
            help_text=(
                "Go by the dialogue alone. Pick the barrier whose signs are clearest; pick 'No barrier' "
                "when both sides speak plainly and any misunderstanding looks like an ordinary slip."
            ),
            options={"choices": [
                {"value": "semantic", "label": "Semantic vagueness", "description": (
                    "One side leaves things unnamed: 'it', 'that thing' or 'the stuff' stand in for people, "
                    "amounts and times, so the other side has to guess or keep asking what is meant."
                )},
                {"value": "sociocultural", "label": "Sociocultural mismatch", "description": (
                    "The two follow different habits of directness and politeness: hints, face-saving and "
                    "soft refusals get taken literally, so a 'no' passes for 'later' or polite assent for a yes."
                )},
                {"value": "emotional", "label": "Emotional interference", "description": (
                    "Strong feeling such as worry, anger or hurt takes over one side's turns; the facts the "
                    "task needs come late, in fragments or not at all."
                )},
                {"value": "none", "label": "No barrier", "description": (
                    "Both sides say what they mean clearly and directly; nothing systematic gets in the way."
                )},
            ]},
        ),
        QuestionSpec(
            key="unresolved_confusion", kind=Kind.LIKERT, rationale="optional", dimension="unresolved_confusion",
            prompt=(
                "When the conversation ended, how much confusion about the situation and each side's goals "
                "was left?"
            ),
            help_text="Higher means less confusion: 5 when everything was cleared up, 1 when the talk fell apart.",
            options=_anchors(
                (1, "Incoherent", "The talk does not hang together: the situation and goals are ignored or "
                                  "twisted, key questions go unanswered and the two talk past each other."),
                (2, "Much confusion", "Serious misunderstandings about the situation or the goals remain; even "
                                      "if the exchange sounds smooth, what at least one side wants is still unclear."),
                (3, "Some confusion", "Parts of the situation and goals are understood, but at least one key "
                                      "point stays vague, misread or never taken up."),
                (4, "Little confusion", "The situation and the main goals are clear; only side details such as "
                                        "timing, exact limits or small preferences are left open."),
                (5, "No confusion left", "The situation and what each side wants are fully cleared up; "
                                         "nothing remains ambiguous."),
            ),
        ),
        QuestionSpec(
            key="mutual_understanding", kind=Kind.LIKERT, rationale="optional", dimension="mutual_understanding",
            prompt=(
                "When the conversation ended, how well did the two sides understand each other's views, "
                "intentions and goals in this situation?"
            ),
            help_text="Judge understanding of the situation at hand, not general friendliness.",
            options=_anchors(
                (1, "Talking past each other", "They drift off topic or at cross purposes; neither takes up "
                                               "the other's aims and nothing is shared."),
                (2, "Little understanding", "One or both keep misreading the other's aims; they may agree on "
                                            "pleasantries but miss what the situation is about."),
                (3, "Partial understanding", "Each grasps part of the other's aims, but key intentions are "
                                             "still misread or pushed aside."),
                (4, "Good understanding", "Both show they understand each other's aims here, though finer "
                                          "points such as emotional tone or secondary motives slip by."),
                (5, "Full alignment", "Both clearly understand each other's goals, intentions and strategies "
                                      "in this situation, and the talk stays on it."),
            ),
        ),
    ),
)

SOTOPIA_EVAL = PresetSpec(
    name="Sotopia-EVAL",
    description=(
        "Rate each character on Sotopia's seven dimensions, each on its own range, and give the reason "
        "for every score. The annotator sees both characters' goals and backgrounds, although the "
        "characters themselves only knew part of each other's."
    ),
    questions=(
        _sotopia_question(
            "goal", "How far did this character get toward their own social goal?",
            "Reread the character's goal first. 0 means no progress at all; give points for real effort or "
            "partial success, at least 5 once the main goal is met even if a stretch target was missed, "
            "and 10 when the goal is fully achieved.",
            "No progress", "Goal fully achieved",
        ),
        _sotopia_question(
            "believability", "How natural, and how true to their profile, was this character's behaviour?",
            "Watch for slips such as confusing who is who, echoing the other side for no reason or "
            "politeness that does not fit the moment, and check that choices suit the character's "
            "personality and values. One small slip should cost a little, not everything. "
            "0 = not believable at all, 10 = entirely believable.",
            "Not believable", "Entirely believable",
        ),
        _sotopia_question(
            "relationship", "How did the conversation change this character's relationship with the other side?",
            "Compare the relationship before and after, including the character's standing or reputation. "
            "0 means no real change; above 0 it improved, below 0 it got worse. Keep the ends for extremes: "
            "+5 is strangers becoming close friends, -5 a bond broken for good. Merely reaching an "
            "agreement is worth about 0 or 1.",
            "Broken for good", "Greatly improved",
        ),
        _sotopia_question(
            "knowledge", "How much new and important information did this character gain?",
            "Ask what the character learned, whether it was new to them and whether it matters to them. "
            "0 = nothing new; 10 = new knowledge that is important in general, not just handy in this one "
            "exchange.",
            "Nothing new", "Important new knowledge",
        ),
        _sotopia_question(
            "secret", "Did this character keep what they wanted to keep hidden?",
            "First name the secret or hidden intention, then judge how much of it came out and how much it "
            "mattered. 0 = nothing revealed; -10 = a critical secret given away. Weigh its importance: "
            "letting slip a planned surprise is not -10, confessing a grave secret is.",
            "Critical secret revealed", "Nothing revealed",
        ),
        _sotopia_question(
            "social_rules", "Did this character break social norms or laws in this conversation?",
            "Count only what happens in the conversation. 0 = no rule broken; a lapse of manners costs a "
            "point or two; -10 is kept for serious crimes.",
            "Serious crime", "No rule broken",
        ),
        _sotopia_question(
            "financial", "Did this character gain or lose money or material goods?",
            "Include short-term gains such as cash or food and long-term ones such as a job or shares. Judge "
            "by the real value and by what it means to the character: a meal is worth about +1. Leave out "
            "health, feelings and other non-material effects. 0 = no change, +5 = a large gain, "
            "-5 = a large loss.",
            "Large loss", "Large gain",
        ),
    ),
)

SHREC_SPANS = PresetSpec(
    name="SHREC error and competency spans",
    description=(
        "Mark stretches of the conversation where an agent made a social error or showed social "
        "competence, tag the social attributes involved, explain each mark and, for errors, say what "
        "the agent should have done instead (after the SHREC annotation guidelines)."
    ),
    questions=(
        QuestionSpec(
            key="spans", kind=Kind.SPAN, required=False,
            prompt="Mark the moments where an agent made a social error or showed social competence.",
            help_text=(
                "Select the words or turns, then label the span. An error is behaviour that goes against "
                "what the other person could reasonably expect and makes the agent seem less socially "
                "capable; a competency is noticing social cues and answering them the way the other person "
                "would hope. Tag every social attribute involved, say why you marked it and, for an error, "
                "write what the agent should have done. Spans may overlap; leave none if nothing stands out."
            ),
            options={
                "labels": list(SPAN_LABELS),
                "attributes": [
                    "emotions", "engagement", "conversational-mechanics", "knowledge-state",
                    "intention", "social-context", "social-norms",
                ],
            },
        ),
        QuestionSpec(
            key="overall_comment", kind=Kind.TEXT, required=False,
            prompt="Anything else about the agents' social behaviour worth noting?",
            help_text="Optional. Patterns across the whole conversation that no single span captures.",
            options={"max_length": DEFAULT_TEXT_MAX_LENGTH},
        ),
    ),
)


def preset_misfit(key: str, seats: int) -> str:
    """Why episodes with ``seats`` seats cannot be rated with preset ``key``; empty when they can.

    The one check behind the study form and the demo loader, so that no annotator is asked to rate
    someone (a mediator) who is not in the conversation.
    """
    spec = PRESETS.get(key)
    if spec is None or seats >= spec.seats_needed:
        return ""
    return spec.seats_reason


CHAT_QUESTIONNAIRE = PresetSpec(
    name="Chat questionnaire",
    description=(
        "What a participant is asked after chatting with one agent or several: how far they reached their "
        "goal, how much confusion was left and how well everyone in the conversation understood each other "
        "(SocialVeil's scales, from the participant's side), and an optional comment. Its words fit a "
        "two-party chat and a group chat alike."
    ),
    questions=(
        QuestionSpec(
            key="goal", kind=Kind.LIKERT, prompt="How well did you reach your character's goal?",
            options=_anchors(
                (1, "not at all", "Nothing of what your character wanted came about."),
                (2, "a little", "A small part of the goal was reached, or only in words."),
                (3, "partly", "About half of what your character wanted came about."),
                (4, "mostly", "The main goal was reached; some details were not."),
                (5, "completely", "Everything your character wanted came about."),
            ),
        ),
        QuestionSpec(
            key="unresolved_confusion", kind=Kind.LIKERT, dimension="unresolved_confusion",
            prompt="How much confusion was left at the end of the conversation?",
            options=_anchors(
                (1, "a great deal: it never made sense", "You still do not know what was meant."),
                (2, "much", "Important points stayed unclear."),
                (3, "some", "Some points stayed unclear, others were cleared up."),
                (4, "little", "Only small details stayed unclear."),
                (5, "none: everything was cleared up", "By the end you understood everything that was said."),
            ),
        ),
        QuestionSpec(
            key="mutual_understanding", kind=Kind.LIKERT, dimension="mutual_understanding",
            prompt="How well did you and everyone else in the conversation understand each other?",
            options=_anchors(
                (1, "not at all", "You talked past each other."),
                (2, "a little", "You understood each other on a few points only."),
                (3, "partly", "You understood each other on some points and not on others."),
                (4, "well", "You understood each other on most points."),
                (5, "fully", "You understood each other's views and aims."),
            ),
        ),
        QuestionSpec(
            key="comment", kind=Kind.TEXT, required=False,
            prompt="Anything you want to tell us about the conversation? (optional)",
            options={"max_length": DEFAULT_TEXT_MAX_LENGTH},
        ),
    ),
)

AGENTSENSE_PRESET = "agentsense"
AGENTSENSE = PresetSpec(
    name="AgentSense goals and probes",
    description=(
        "For every goal of every character, say whether the character reached it by the end of the "
        "conversation and why; then answer the scenario's multiple-choice questions about what the "
        "characters kept to themselves (after AgentSense's human evaluation). Human answers are set "
        "against the characters' own view (self), the other characters' view (other) and external judges."
    ),
    questions=(
        QuestionSpec(
            key="goal_achieved", kind=Kind.YES_NO, scope=Question.Scope.GOAL, rationale="required",
            dimension="goal_achieved",
            prompt="By the end of the conversation, had the character reached this goal?",
            help_text=(
                "Judge this one goal from what was said and done in the conversation. Answer yes only when "
                "it was reached; a goal half reached, or only promised, is a no. Say in a sentence which "
                "turns decided it."
            ),
        ),
    ),
    asks_probes=True,
)

TURN_RATING_PRESET = "turn-rating"
TURN_RATING = PresetSpec(
    name="Rate each reply",
    description=(
        "Rate every reply a language agent gives, one turn at a time: how much it helped the conversation at that "
        "point, and, if you like, why (after ProMediate's per-intervention ratings). Each rating is about one turn."
    ),
    questions=(
        QuestionSpec(
            key="helpfulness", kind=Kind.LIKERT, scope=Question.Scope.TURN, dimension="turn_helpfulness",
            prompt="How helpful was this reply?",
            help_text="Judge the reply where it stands: what came before it and what the speaker was trying to do.",
            options=_anchors(
                (1, "Harmful", "Made things worse: misread the other person, ignored them or shut the talk down."),
                (2, "Unhelpful", "Added little or sent the conversation sideways; the other person has to repair it."),
                (3, "Neutral", "Kept the conversation going without moving it forward."),
                (4, "Helpful", "Answered what was asked or moved toward a goal, with room for improvement."),
                (5, "Very helpful", "Just what the moment needed: clear, attentive, and moved the conversation on."),
            ),
        ),
        QuestionSpec(
            key="comment", kind=Kind.TEXT, scope=Question.Scope.TURN, required=False,
            prompt="Anything about this reply worth noting?", options={"max_length": 500},
            help_text="Optional: a few words on what made the reply helpful or not.",
        ),
    ),
)

PRESETS: dict[str, PresetSpec] = {
    "socialveil": SOCIALVEIL,
    "sotopia-eval": SOTOPIA_EVAL,
    "shrec-spans": SHREC_SPANS,
    "promediate": PROMEDIATE,
    AGENTSENSE_PRESET: AGENTSENSE,
    TURN_RATING_PRESET: TURN_RATING,
    PROMEDIATE_INTERVENTION_PRESET: PROMEDIATE_INTERVENTION,
    PROMEDIATE_SNIPPETS_PRESET: PROMEDIATE_SNIPPETS,
    PROMEDIATE_QUALITY_PRESET: PROMEDIATE_QUALITY,
}
# Presets participants answer after a chat (not offered to annotation studies).
CHAT_PRESET = "chat-questionnaire"
PARTICIPANT_PRESETS: dict[str, PresetSpec] = {CHAT_PRESET: CHAT_QUESTIONNAIRE}


def install_preset(key: str) -> Instrument:
    """The newest shared instrument made from preset ``key``, created (with its questions) if there is none,
    or if the preset's questions in the code have changed since (then as the next version: answers given
    to an earlier version keep the words they answered).

    Presets have no team: every team may use them, none may change them. Safe to call twice, or
    from two processes at once. Should an instrument of another origin already use the preset's
    name, the preset takes the next free version of that name.
    """
    known = {**PRESETS, **PARTICIPANT_PRESETS}
    try:
        spec = known[key]
    except KeyError:
        raise ValueError(f"unknown preset {key!r}; known presets: {', '.join(known)}") from None
    for attempt in range(3):
        existing = Instrument.objects.filter(preset=key, team__isnull=True).order_by("-version", "-pk").first()
        if existing is not None and _asks_as_shipped(existing, spec):
            return existing
        try:
            with transaction.atomic():
                instrument = Instrument.objects.create(
                    name=spec.name, version=next_version(spec.name), preset=key, description=spec.description
                )
                Question.objects.bulk_create(q.build(instrument, position) for position, q in enumerate(spec.questions))
                return instrument
        except IntegrityError:  # someone else created it (or took the version) meanwhile: look again
            if attempt == 2:
                raise
    raise AssertionError("unreachable")


QUESTION_FIELDS = ("key", "kind", "prompt", "help_text", "required", "scope", "rationale", "options", "dimension",
                   "truth", "low", "high")


def _asks_as_shipped(instrument: Instrument, spec: PresetSpec) -> bool:
    """Whether ``instrument`` asks exactly the questions ``spec`` ships now, in its order."""
    stored = list(instrument.questions.order_by("position").values_list(*QUESTION_FIELDS))
    shipped = [q.build(instrument, position) for position, q in enumerate(spec.questions)]
    return stored == [tuple(getattr(question, field) for field in QUESTION_FIELDS) for question in shipped]
