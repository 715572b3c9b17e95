"""The offline scripted model: Parley's embedded default when no LLM is configured.

It needs no key and no network, and it is deterministic for a seed, so the whole flow (simulate,
chat, annotate, report) runs on a fresh machine. It is not a language model and says so: its
usage is recorded under the model name ``scripted``; its heuristic judge lives in
``benchmark.evaluation.scripted_judge``.

How a scripted seat acts on its turn:

1. It has a list of *beats*, plain lines it would say in order. The demo supplies them per role;
   otherwise a short plan is composed from the scenario's topic and the seat's goal. A beat that
   starts with ``[non-verbal]`` or ``[action]`` is taken as that action type.
2. If someone just asked it to clarify its own last line, it answers (restating its last beat;
   a barrier seat often answers with more of the same, at the barrier's confusion-mechanism rate).
3. If the last line showed signs of a barrier (vague placeholders, face-saving deferrals, a
   flood of feeling), it may ask a clarifying question first: a partner with the ``repair``
   strategy does so far more often and also paraphrases to check understanding. A clarifying
   exchange is an inserted pair of turns, so beats stay aligned.
4. Otherwise it says its next beat; the barrier seat's beat is restyled (see :func:`style_line`).
   With its beats used up it leaves; without supplied beats it also leaves near the turn cap.

With more than two seats it does the same, speaking to the group: it reacts to whoever spoke
last, answers a clarifying question only when the question was about its own line, opens with a
greeting to everyone, sometimes addresses the last speaker by name (when the relationship lets
it know the name), and leaves on its own last turn before the cap, found by the scenario's turn
order (``benchmark.scenarios.turn_taking``, from the same seed the episode's order is drawn from; in
random order a seat's last turn may come well before the cap's last round), and its plan has as
many lines as that order gives it turns. With two seats every reply is exactly what it was before
groups existed.

It never asks another character for their private information (AgentSense's rule, told to a
language model in a scenario with probes): its questions only ask what the last line meant, or
check it by paraphrase, and its beats offer its own view, so whatever the others keep private can
reach it only through what they choose to say.
"""

from __future__ import annotations

import asyncio
import random
import re
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..models import ActionType, TurnTaking
from ..scenarios import turn_taking
from .prompt import Action, AgentContext, BarrierBrief, HistoryEntry

if TYPE_CHECKING:
    from .llm import Usage

SCRIPTED_MODEL = "scripted"

# Share of barrier-seat lines that also carry one of the barrier's exemplar templates.
TEMPLATE_RATE = 0.25
# How often a partner asks for clarification when the last line showed a barrier's signs.
CLARIFY_RATE = 0.3
REPAIR_CLARIFY_RATE = 0.75

_NON_VERBAL_PREFIX = "[non-verbal]"
_ACTION_PREFIX = "[action]"


# --- signals: what a barrier leaves in the text (used by the partner and by the judge) ---------

PLACEHOLDERS = (
    "the thing",
    "that thing",
    "a thing",
    "the stuff",
    "that stuff",
    "my stuff",
    "your stuff",
    "our stuff",
    "the whole thing",
    "that amount",
    "that person",
    "whatever",
    "whenever",
    "at some point",
    "around then",
    "a bunch of",
    "the whatsit",
    "something like that",
    "that one",
    "the other stuff",
    "those things",
    "the other things",
)
# Placeholders that need context to tell them from ordinary speech ('you know?' but not 'do you know').
_PLACEHOLDER_PATTERNS = (
    r"\byou know(?=\s*[?,.!]|\s*$)",
    r"\bthe whole \w+(?: \w+)? thing\b",
)
HEDGES = ("maybe", "sort of", "kind of", "i guess", "i mean")
FEELING_WORDS = (
    "stressed",
    "upset",
    "anxious",
    "overwhelmed",
    "frustrated",
    "worried",
    "scared",
    "hurt",
    "angry",
    "exhausted",
    "furious",
    "panicking",
    "miserable",
    "awful",
    "can't deal",
    "can't cope",
    "so tired of",
)
DEFERRALS = (
    "perhaps",
    "another time",
    "we will consider",
    "we shall see",
    "may be difficult",
    "a little difficult",
    "if i may",
    "forgive me",
    "with respect",
    "let us not",
    "no need to hurry",
    "as they say",
)
AGREEMENT = (
    "deal",
    "agreed",
    "sounds good",
    "works for me",
    "that works",
    "thank",
    "see you",
    "perfect",
    "great",
    "fair enough",
    "let's do that",
    "let's go with",
    "settled",
)
WARMTH = ("thank", "sorry", "appreciate", "glad", "love", "of course", "no worries", "kind of you", "happy to")
RUDENESS = ("shut up", "stupid", "idiot", "ridiculous", "pathetic", "get lost", "useless")

_PLACEHOLDER_RE = re.compile(
    "|".join([*(rf"\b{re.escape(p)}\b" for p in PLACEHOLDERS), *_PLACEHOLDER_PATTERNS]), re.IGNORECASE
)
_CONCRETE_RE = re.compile(
    r"[$€£]\s?\d|\b\d+(?:[.,:]\d+)?\b|\b(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b",
    re.IGNORECASE,
)


def count_phrases(text: str, words: Sequence[str]) -> int:
    lowered = text.lower()
    return sum(len(re.findall(rf"\b{re.escape(w)}", lowered)) for w in words)


def placeholder_count(text: str) -> int:
    """How many vague placeholders ('the thing', 'that stuff', 'whenever'...) a line holds."""
    return len(_PLACEHOLDER_RE.findall(text))


def concrete_count(text: str) -> int:
    """How many concrete referents (numbers, amounts, times, weekdays) a line holds."""
    return len(_CONCRETE_RE.findall(text))


def feeling_count(text: str) -> int:
    return count_phrases(text, FEELING_WORDS)


def deferral_count(text: str) -> int:
    return count_phrases(text, DEFERRALS)


def barrier_signals(text: str) -> dict[str, int]:
    """The traces each built-in barrier leaves in a line; a partner reacts to these."""
    return {
        "semantic": placeholder_count(text),
        "sociocultural": deferral_count(text),
        "emotional": feeling_count(text),
    }


# --- clarification requests -----------------------------------------------------------------

_CLARIFY = {
    "semantic": (
        "Sorry, which thing do you mean?",
        "When you say 'it', what are you actually referring to?",
        "I'm a bit lost. Can you give me the specifics?",
        "Hang on, what exactly are we talking about here?",
    ),
    "sociocultural": (
        "Sorry, I'm not sure how to read that. Is that a yes or a no?",
        "Just so I'm clear: are you saying you'd rather not?",
        "I want to make sure I understand you. What would you actually prefer?",
    ),
    "emotional": (
        "I can see this is stressful. Can we take the details one at a time?",
        "I'm sorry it's so upsetting. What do you need from me, concretely?",
        "Okay, I hear you. Can you walk me through what happened, step by step?",
    ),
    "generic": (
        "Sorry, could you say that more plainly?",
        "I'm not following. What do you mean?",
    ),
}
_PARAPHRASE = (
    "Let me check I've understood: this is about the {topic}, and you want something to change. Is that right?",
    "So if I follow you, you're talking about the {topic}. Have I got that right?",
    "Just to be sure we're on the same page: you mean the {topic}, yes?",
)

CLARIFICATION_MARKERS = (
    "which thing",
    "what do you mean",
    "what exactly",
    "not following",
    "i'm a bit lost",
    "is that a yes",
    "say that more plainly",
    "what are you actually",
    "have i got that right",
    "is that right",
    "on the same page",
    "make sure i understand",
    "step by step",
    "one at a time",
    "what would you actually",
)


def clarification_lines(topic: str) -> frozenset[str]:
    """Every clarifying line the scripted model can say for a topic (to recognise its own inserts)."""
    lines = {line for pool in _CLARIFY.values() for line in pool}
    lines |= {line.format(topic=topic) for line in _PARAPHRASE}
    return frozenset(lines)


def is_clarification_request(text: str) -> bool:
    """Whether a line asks the other side to clarify (for the judge; works on any transcript)."""
    lowered = text.lower()
    return "?" in text and any(marker in lowered for marker in CLARIFICATION_MARKERS)


# --- acting ---------------------------------------------------------------------------------


def scripted_action(context: AgentContext, *, seed: int = 0, beats: Sequence[str] | None = None) -> Action:
    """The scripted seat's next action; a pure function of the context, the seed and the beats."""
    rng = random.Random(f"parley-scripted|{seed}|{context.seat_position}|{context.turn_index}")
    plan = list(beats) if beats else compose_beats(context, seed=seed)
    state = _read_history(context, plan)

    if state.asked_to_clarify:
        return Action(ActionType.SPEAK, _answer_clarification(context, state, rng))

    if state.other_line and state.clarifications_in_a_row < 2:
        kind = _dominant_signal(state.other_line)
        rate = REPAIR_CLARIFY_RATE if context.repairs else CLARIFY_RATE
        if kind == "sociocultural" and state.other_line.rstrip().endswith("?"):
            kind = None  # a courteous question gets an answer, not a query
        if kind and rng.random() < rate / (1 + state.clarifications_in_a_row):
            return Action(ActionType.SPEAK, _clarifying_question(context, kind, rng))

    if state.beats_used >= len(plan):
        return Action(ActionType.LEAVE, "")
    if not beats and state.beats_used > 0 and _last_turn(context, seed):
        return Action(ActionType.LEAVE, "I'm afraid I have to go now.")

    beat = plan[state.beats_used]
    kind, text = split_beat(beat)
    if kind != ActionType.SPEAK:
        return Action(kind, text)
    if context.barrier is not None:
        text = style_line(text, context, rng, partner_line=state.other_line)
    if context.in_a_group and state.other_line and state.beats_used > 0:
        text = _address(text, context, rng)
    return Action(ActionType.SPEAK, text)


# In a group, how often a reply opens with the name of the one it answers.
ADDRESS_RATE = 0.4


def _last_turn(context: AgentContext, seed: int) -> bool:
    """Whether this is the seat's last turn before the cap, the ones who left so far stepped round.

    With two seats (and in any round robin) that is a turn of the last round, as it always was; in a
    group taking turns at random it is read from the episode's order drawn from ``seed``.
    """
    if not context.in_a_group or not context.seat_positions:
        return context.turn_index >= context.turn_cap - context.seat_count
    leaves = tuple((n, e.position) for n, e in enumerate(context.history) if e.action_type == ActionType.LEAVE)
    order = _turn_order(context, seed, leaves)
    return context.seat_position not in order[context.turn_index + 1 :]


def _own_turns(context: AgentContext, seed: int) -> int:
    """How many turns before the cap are this seat's, nobody leaving (by the turn order in a group)."""
    if not context.in_a_group or not context.seat_positions:
        seats = context.seat_count
        return (context.turn_cap - context.seat_position + seats - 1) // seats
    return _turn_order(context, seed).count(context.seat_position)


def _turn_order(context: AgentContext, seed: int, leaves: tuple[tuple[int, int], ...] = ()) -> tuple[int, ...]:
    """The seat positions of every turn up to the cap. Under random order the greeter is whoever opened
    (this seat, before anyone has spoken)."""
    if not context.opens_with_greeting:
        positions, cap = context.seat_positions, context.turn_cap
        return turn_taking.speaking_order(TurnTaking.ROUND_ROBIN, positions, cap, leaves=leaves)
    greeter = context.history[0].position if context.history else context.seat_position
    return turn_taking.speaking_order(
        TurnTaking.RANDOM_AFTER_GREETING, context.seat_positions, context.turn_cap, seed=seed, greeter=greeter,
        leaves=leaves,
    )


def _address(text: str, context: AgentContext, rng: random.Random) -> str:
    """In a group, turn to the last speaker by name now and then (only a name this seat may know)."""
    name = _vocative(context)
    if not name or name in text or rng.random() >= ADDRESS_RATE:
        return text
    return f"{name}, {_lower_first(text)}"


def split_beat(beat: str) -> tuple[str, str]:
    """A beat's action type and text: '[non-verbal] shrugs' -> ('non-verbal', 'shrugs')."""
    stripped = beat.strip()
    for prefix, kind in ((_NON_VERBAL_PREFIX, ActionType.NON_VERBAL), (_ACTION_PREFIX, ActionType.ACTION)):
        if stripped.lower().startswith(prefix):
            return kind.value, stripped[len(prefix) :].strip()
    return ActionType.SPEAK.value, stripped


@dataclass
class _HistoryState:
    beats_used: int = 0
    asked_to_clarify: bool = False
    other_line: str = ""  # the other side's line just before this turn, if it spoke
    clarifications_in_a_row: int = 0
    last_beat: str = ""


def _read_history(context: AgentContext, plan: Sequence[str]) -> _HistoryState:
    """Recover where this seat is in its plan from the transcript alone (so resuming works).

    A turn of this seat counts as a beat unless it was an inserted clarifying question, or an
    answer to a clarifying question about its own line (with two seats, every clarifying
    question of the other side is about this seat's line; in a group the question is answered
    on this seat's next turn, whoever spoke in between).
    """
    inserts = clarification_lines(context.topic)
    state = _HistoryState()
    other_asked = False
    previous: HistoryEntry | None = None
    for entry in context.history:
        if _is_mine(entry, context):
            if entry.content in inserts:
                state.clarifications_in_a_row += 1
            elif not other_asked:
                state.beats_used += 1
                state.clarifications_in_a_row = 0
            other_asked = False
        else:
            # A question about this seat's line; in a group it stays open while others speak.
            asked_now = entry.content in inserts and (previous is None or _is_mine(previous, context))
            other_asked = asked_now or (other_asked and context.in_a_group)
        previous = entry
    if state.beats_used:
        state.last_beat = split_beat(plan[min(state.beats_used, len(plan)) - 1])[1]
    last = context.history[-1] if context.history else None
    if last is not None and not _is_mine(last, context):
        state.asked_to_clarify = other_asked and state.beats_used > 0
        if last.action_type == ActionType.SPEAK and not other_asked:
            state.other_line = last.content
    return state


def _is_mine(entry: HistoryEntry, context: AgentContext) -> bool:
    if entry.position >= 0:
        return entry.position == context.seat_position
    return entry.speaker == context.name


def _dominant_signal(line: str) -> str | None:
    signals = barrier_signals(line)
    kind, strength = max(signals.items(), key=lambda item: item[1])
    return kind if strength > 0 else None


def _clarifying_question(context: AgentContext, kind: str, rng: random.Random) -> str:
    if context.repairs and rng.random() < 0.5:
        return _pick(rng, [line.format(topic=context.topic) for line in _PARAPHRASE], context)
    return _pick(rng, _CLARIFY.get(kind, _CLARIFY["generic"]), context)


def _pick(rng: random.Random, pool: Sequence[str], context: AgentContext) -> str:
    """A random line from ``pool``, preferring one this seat has not said yet."""
    said = " ".join(entry.content for entry in context.history if _is_mine(entry, context))
    fresh = [line for line in pool if line not in said]
    return rng.choice(fresh or list(pool))


def _answer_clarification(context: AgentContext, state: _HistoryState, rng: random.Random) -> str:
    """Restate the last beat plainly, or, for a barrier seat at its confusion rate, obscure it again."""
    plain = state.last_beat or "what I said before"
    barrier = context.barrier
    if barrier is None:
        return f"Sorry, let me put it more clearly. {plain}"
    style = _style_for(barrier.key)
    if rng.random() < style.stays_obscure(barrier):
        return style.obscure_again(plain, context, rng)
    return style.clarify(plain)


# --- barrier styling --------------------------------------------------------------------------


def cue_rate(barrier: BarrierBrief, keywords: Sequence[str], default: float) -> float:
    """The rate of the first cue whose instruction mentions one of ``keywords``, else ``default``.

    Cues are data a researcher may edit, so they are found by what they say, not by position.
    """
    for cue in barrier.cues:
        instruction = cue.instruction.lower()
        if any(k in instruction for k in keywords):
            return cue.rate
    return default


def style_line(text: str, context: AgentContext, rng: random.Random, *, partner_line: str = "") -> str:
    """Restyle a plain line as the seat's barrier would have it said."""
    barrier = context.barrier
    if barrier is None:
        return text
    return _style_for(barrier.key).apply(text, context, rng, partner_line)


class _Style:
    """Generic styling for a researcher-defined barrier: its templates at its mean cue rate."""

    def rate(self, barrier: BarrierBrief) -> float:
        return sum(c.rate for c in barrier.cues) / len(barrier.cues) if barrier.cues else 0.5

    def template(self, context: AgentContext, rng: random.Random) -> str:
        templates = context.barrier.templates if context.barrier else ()
        return _pick(rng, [context.fill(t) for t in templates], context) if templates else ""

    def apply(self, text: str, context: AgentContext, rng: random.Random, partner_line: str) -> str:
        barrier = context.barrier
        assert barrier is not None
        template = self.template(context, rng)
        if not template:
            return text
        roll = rng.random()
        rate = self.rate(barrier)
        if roll < rate / 2:
            return template  # the barrier pushes the content out altogether
        if roll < rate:
            return f"{template} {text}"
        return text

    def stays_obscure(self, barrier: BarrierBrief) -> float:
        return cue_rate(barrier, ("clarification", "asked for", "request"), self.rate(barrier))

    def obscure_again(self, plain: str, context: AgentContext, rng: random.Random) -> str:
        return self.template(context, rng) or plain

    def clarify(self, plain: str) -> str:
        return f"Let me put it plainly. {plain}"


class _Semantic(_Style):
    """Vague referents at the cue rate, hedges, trailing ellipses; see :func:`make_vague`."""

    def apply(self, text: str, context: AgentContext, rng: random.Random, partner_line: str) -> str:
        barrier = context.barrier
        assert barrier is not None
        line = make_vague(
            text,
            rng,
            referent_rate=cue_rate(barrier, ("referent", "placeholder", "pronoun"), 0.6),
            hedge_rate=cue_rate(barrier, ("hedge",), 0.5),
            trail_rate=cue_rate(barrier, ("ellipsis", "trail", "unfinished"), 0.4),
            keep={context.first_name, context.partner_first_name, *context.other_first_names},
        )
        if rng.random() < TEMPLATE_RATE and barrier.templates:
            line = f"{line.rstrip()} {self.template(context, rng)}"
        return line

    def obscure_again(self, plain: str, context: AgentContext, rng: random.Random) -> str:
        vaguer = make_vague(
            plain,
            rng,
            referent_rate=0.9,
            hedge_rate=0.6,
            trail_rate=1.0,
            keep={context.first_name, context.partner_first_name, *context.other_first_names},
        )
        return f"I mean... {_lower_first(vaguer)}"

    def clarify(self, plain: str) -> str:
        return f"Sorry, I mean: {_lower_first(plain)}"


class _Sociocultural(_Style):
    """Courtesies first, refusals turned into deferrals, questions met with a saying."""

    def apply(self, text: str, context: AgentContext, rng: random.Random, partner_line: str) -> str:
        barrier = context.barrier
        assert barrier is not None
        deferral_rate = cue_rate(barrier, ("refusal", "deferral"), 0.8)
        sentences = []
        for sentence in _sentences(text):
            if _REFUSAL.search(sentence) and rng.random() < deferral_rate:
                sentence = _pick(rng, _DEFERRALS, context)
            sentences.append(_soften(sentence))
        line = " ".join(sentences)
        if "?" in partner_line and rng.random() < cue_rate(barrier, ("indirect", "story", "saying"), 0.5):
            line = f"{_pick(rng, _SAYINGS, context)} {line}"
        if rng.random() < cue_rate(barrier, ("courtesy", "courtes"), 0.5):
            courtesy = context.fill(rng.choice(_COURTESIES))
            line = courtesy + (_lower_first(line) if courtesy.endswith(", ") else line)
        if _PROPOSAL.search(partner_line) and rng.random() < cue_rate(barrier, ("agree", "committing"), 0.4):
            line = f"{line} {_pick(rng, _NON_COMMITTAL, context)}"
        if rng.random() < TEMPLATE_RATE and barrier.templates:
            line = f"{self.template(context, rng)} {line}"
        return _capitalise_sentences(line)

    def stays_obscure(self, barrier: BarrierBrief) -> float:
        return cue_rate(barrier, ("indirect", "question"), 0.5)

    def obscure_again(self, plain: str, context: AgentContext, rng: random.Random) -> str:
        return f"{_pick(rng, _SAYINGS, context)} {_pick(rng, _DEFERRALS, context)}"

    def clarify(self, plain: str) -> str:
        return f"Forgive me, I was not clear. {plain}"


class _Emotional(_Style):
    """Feelings first and loud; the practical details thin out at the cue rate."""

    def apply(self, text: str, context: AgentContext, rng: random.Random, partner_line: str) -> str:
        barrier = context.barrier
        assert barrier is not None
        sentences = _sentences(text)
        if len(sentences) > 1 and rng.random() < cue_rate(barrier, ("leave out", "fact", "withhold"), 0.5):
            sentences = sentences[:1]  # the rest of the content is pushed aside
            sentences[0] = _CONCRETE_NUMBER.sub("whatever it was", sentences[0])
        first_person = cue_rate(barrier, ("first-person", "first person", "yourself"), 0.6)
        out = []
        for sentence in sentences:
            plain_statement = not sentence.endswith("?") and not sentence.startswith("I") and len(sentence.split()) >= 4
            if plain_statement and rng.random() < first_person / 2:
                sentence = f"I feel like {_lower_first(sentence)}"
            out.append(sentence)
        line = " ".join(out)
        if rng.random() < cue_rate(barrier, ("exclamation", "rhetorical"), 0.6):
            line = re.sub(r"\.$", "!", line) if rng.random() < 0.5 else f"{line} {_pick(rng, _RHETORICAL, context)}"
        if rng.random() < cue_rate(barrier, ("how you feel", "feel"), 0.7):
            opener = self.template(context, rng) if rng.random() < TEMPLATE_RATE else _pick(rng, _FEELINGS, context)
            line = f"{opener} {line}"
        return line

    def stays_obscure(self, barrier: BarrierBrief) -> float:
        return cue_rate(barrier, ("leave out", "fact", "withhold"), 0.5)

    def obscure_again(self, plain: str, context: AgentContext, rng: random.Random) -> str:
        return f"{_pick(rng, _BRUSH_OFFS, context)} {_pick(rng, _FEELINGS, context)}"

    def clarify(self, plain: str) -> str:
        return f"Okay. Sorry. {plain}"


_STYLES: dict[str, _Style] = {"semantic": _Semantic(), "sociocultural": _Sociocultural(), "emotional": _Emotional()}


def _style_for(key: str) -> _Style:
    return _STYLES.get(key, _Style())


_FEELINGS = (
    "Honestly, I'm so stressed about all of this.",
    "I'm really upset, okay?",
    "This whole thing makes me anxious!",
    "I'm so frustrated right now.",
    "I'm exhausted, I really am.",
    "I feel so overwhelmed.",
    "I'm worried sick about it!",
)
_RHETORICAL = (
    "Why is everything always so hard?",
    "Do you know how that makes me feel?",
    "Why does it always land on me?",
    "How am I supposed to think about that now?",
)
_BRUSH_OFFS = (
    "Can we not do the details right now?",
    "Please don't make me spell it all out.",
    "Why are you asking me that now?",
)
_COURTESIES = (
    "If I may, {partner}, ",
    "Forgive me, ",
    "With respect, ",
    "Thank you for saying so, {partner}. ",
    "You are very kind. ",
)
_DEFERRALS = (
    "Perhaps that is something for another time.",
    "It may be a little difficult just now.",
    "We will consider it, of course.",
    "Let us not decide that today.",
)
_SAYINGS = (
    "My mother always said a river never hurries and still reaches the sea.",
    "Where I come from, we say the best answers arrive after tea.",
    "As they say, a slow yes keeps longer than a quick one.",
)
_NON_COMMITTAL = (
    "Yes, yes, of course.",
    "Mm, we shall see.",
    "That could be so.",
)
_REFUSAL = re.compile(r"\b(no|not|can't|cannot|won't|don't|isn't|wouldn't|refuse|never)\b", re.IGNORECASE)
_PROPOSAL = re.compile(r"\b(how about|what if|could we|can we|let's|shall we|why don't|would you)\b", re.IGNORECASE)
_SOFTENINGS = (
    (re.compile(r"\bI want\b"), "I would perhaps hope for"),
    (re.compile(r"\bI need\b"), "it would be a kindness to have"),
    (re.compile(r"\byou should\b", re.IGNORECASE), "perhaps you might"),
    (re.compile(r"\byou have to\b", re.IGNORECASE), "perhaps one could"),
    (re.compile(r"\bLet's\b"), "Perhaps we might"),
    (re.compile(r"\bmust\b"), "might"),
)


def _soften(sentence: str) -> str:
    for pattern, replacement in _SOFTENINGS:
        sentence = pattern.sub(replacement, sentence)
    return sentence


def _vocative(context: AgentContext) -> str:
    return context.partner_first_name if context.knows_partner_by_name and context.partner_first_name else ""


# --- semantic vagueness ----------------------------------------------------------------------

_WEEKDAYS = "Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday"
_MONTHS = "January|February|March|April|May|June|July|August|September|October|November|December"
MONEY_PATTERN = re.compile(
    r"[$€£]\s?\d[\d,]*(?:\.\d+)?|\b\d[\d,]*(?:\.\d+)?\s?(?:euros?|dollars?|pounds?|bucks|quid)\b", re.IGNORECASE
)
_CLOCK = re.compile(
    r"(?:\bat\s+)?\b\d{1,2}(?::\d{2})?\s?(?:am|pm|a\.m\.|p\.m\.)|(?:\bat\s+)?\b\d{1,2}:\d{2}\b"
    r"|\bat\s+\d{1,2}\b(?!\s*(?:percent|%|euros?|dollars?|pounds?|[.,]\d))",
    re.IGNORECASE,
)
_DATE = re.compile(
    rf"(?:\b(?:on|by|until|next|this|before|after|in)\s+)?\b(?:{_WEEKDAYS})s?\b"
    rf"(?:\s+(?:morning|afternoon|evening|night)s?\b)?"
    rf"|(?:\b(?:in|by|until|before|after)\s+)?\b(?:{_MONTHS})(?:\s+\d{{1,2}}(?:st|nd|rd|th)?)?\b"
    rf"|\b(?:[Tt]omorrow|[Tt]onight)\b"
)
_DAY_POSSESSIVE = re.compile(rf"\b(?:{_WEEKDAYS})'s\b")
_ORDINAL = re.compile(
    rf"(?:\b(?:on|by|before|after|until|from)\s+)?(?:\bthe\s+)?\b\d{{1,2}}(?:st|nd|rd|th)\b"
    rf"(?:\s+of\s+(?:{_MONTHS})\b)?"
)
_NUMBER = re.compile(
    r"(?:\b(?:the|all)\s+)?(?:\b\d[\d,]*(?:\.\d+)?(?:st|nd|rd|th|%)?\b"
    r"|\b(?:two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|forty|fifty"
    r"|sixty|hundred)\b)",
    re.IGNORECASE,
)
_CONCRETE_NUMBER = re.compile(r"(?:[$€£]\s?)?\b\d[\d,.:]*(?:\s?(?:euros?|dollars?|pounds?|%|am|pm)\b)?")
_DETERMINED_NOUN = re.compile(r"\b(the|a|an|my|your|our|his|her|their)\s+([a-z]+)(\s+[a-z]+)?\b")
_NAME = re.compile(r"(?<![.!?]\s)(?<!^)\b((?:in|at|to|from|near)\s+)?([A-Z][a-z]+(?:\s+[A-Z][a-z]+)*)('s)?\b")

_ADJECTIVE_ENDINGS = ("al", "ly", "ous", "ive", "ful", "ic", "ed", "ing", "ern", "ish", "ary")
_NO_HEDGE = frozenset("hi hey hello thanks thank good yes no sure okay right deal perfect great sorry".split())
_HEDGES = ("Maybe", "I guess", "Sort of...", "I mean,", "Kind of,")
_QUESTION_HEDGES = ("I mean,", "So, um,", "Like,")
_ADJECTIVES = frozenset(
    "new old big small little blue red green black white full spare broken extra front back cheap good bad "
    "long short early late nice quick whole second last first main usual shared rental".split()
)
_NOT_NOUNS = frozenset(
    "same other way end one only most best rest moment point thing things stuff bit lot time whole "
    "money amount person day kind sort few idea whatsit more less least next morning afternoon evening night "
    "week weekend month year two three four five six seven eight nine ten eleven twelve fifteen twenty "
    "thirty forty fifty sixty hundred".split()
)
_STOP_AFTER = frozenset(
    "and or but to for on at in of with by from is was are were be if so that then than as it i you we "
    "they he she me us them not too again now today this these those has have had will would can could "
    "should did does do go goes went".split()
)
_ENDS_WITH_DETERMINER = re.compile(r"\b(the|a|an|my|your|our|his|her|their|this|that)\s+$", re.IGNORECASE)
_PROPER_KEEP = frozenset("I I'm I'll I've I'd OK Okay".split())


def make_vague(
    text: str,
    rng: random.Random,
    *,
    referent_rate: float,
    hedge_rate: float,
    trail_rate: float,
    keep: set[str] | frozenset[str] = frozenset(),
) -> str:
    """Swap concrete referents for placeholders, hedge sentences and let the line trail off.

    Each candidate referent (an amount, a clock time, a date, a number, a name, a determined
    noun) is replaced independently with probability ``referent_rate``; each sentence gets a
    hedge with ``hedge_rate``; the line ends in an ellipsis with ``trail_rate``.
    """

    def chance() -> bool:
        return rng.random() < referent_rate

    def noun(match: re.Match[str]) -> str:
        det, word, tail = match.group(1), match.group(2), match.group(3)
        if word in _NOT_NOUNS or word in _STOP_AFTER or not chance():
            return match.group(0)
        rest, head = "", word
        if tail and _is_adjective(word) and tail.strip() not in _STOP_AFTER:
            head = tail.strip()  # 'the quarterly figures': the whole phrase goes
        elif tail:
            rest = tail  # the second word was not part of the noun phrase
        if det in ("a", "an"):
            return rng.choice(("something", "a thing")) + rest
        if det in ("my", "your", "our", "his", "her", "their"):
            return f"{det} {rng.choice(('stuff', 'thing', 'whatsit'))}{rest}"
        if head.endswith("s") and not head.endswith("ss"):
            return rng.choice(("those things", "the other things")) + rest
        return rng.choice(("the thing", "that stuff", "the whole thing", "that thing", "it")) + rest

    def swap(pool: Sequence[str]) -> Callable[[re.Match[str]], str]:
        return lambda m: rng.choice(pool) if chance() else m.group(0)

    def name(match: re.Match[str]) -> str:
        preposition, proper, possessive = match.group(1), match.group(2), match.group(3)
        if proper in keep or proper in _PROPER_KEEP or proper.split()[0] in _PROPER_KEEP:
            return match.group(0)
        if _ENDS_WITH_DETERMINER.search(match.string[: match.start()]):
            return match.group(0)  # part of a noun phrase, e.g. 'the Northside market'

        if re.fullmatch(rf"(?:{_WEEKDAYS}|{_MONTHS})s?", proper) or not chance():
            return match.group(0)
        if preposition:
            word = preposition.strip().lower()
            return "there" if word in ("in", "at", "to") else f"{preposition}there"
        return "their" if possessive else "that one"

    line = _DETERMINED_NOUN.sub(noun, text)
    line = MONEY_PATTERN.sub(swap(("that amount", "the money thing", "whatever it was")), line)
    line = _CLOCK.sub(swap(("around then", "at some point")), line)
    line = _ORDINAL.sub(swap(("at some point", "whenever", "around then")), line)
    line = _DAY_POSSESSIVE.sub(swap(("that day's", "the other day's")), line)
    line = _DATE.sub(swap(("at some point", "whenever", "around then")), line)
    line = _NUMBER.sub(swap(("a few", "some")), line)
    line = _NAME.sub(name, line)

    hedged = []
    for sentence in _sentences(_capitalise_sentences(line)):
        first_word = sentence.split(" ", 1)[0].strip(",.!?").lower()
        if len(sentence.split()) >= 4 and first_word not in _NO_HEDGE and rng.random() < hedge_rate:
            pool = _QUESTION_HEDGES if sentence.endswith("?") else _HEDGES
            sentence = f"{rng.choice(pool)} {_lower_first(sentence)}"
        hedged.append(sentence)
    line = " ".join(hedged)
    if rng.random() < trail_rate:
        line = line.rstrip().rstrip(".!?") + "..."
    return line


def _is_adjective(word: str) -> bool:
    return word in _ADJECTIVES or word.endswith(_ADJECTIVE_ENDINGS)


def _capitalise_sentences(text: str) -> str:
    return re.sub(r"(^|[.!?]\s+)([a-z])", lambda m: m.group(1) + m.group(2).upper(), text)


def _sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.!?])\s+", text.strip()) if s]


def _lower_first(text: str) -> str:
    first = text.split(" ", 1)[0].rstrip(",.!?")
    if not first or first in _PROPER_KEEP or first.startswith("I'") or not first[0].isupper():
        return text
    if re.fullmatch(rf"(?:{_WEEKDAYS}|{_MONTHS})s?", first):
        return text
    if len(first) > 1 and first[1:].lower() != first[1:]:
        return text  # an acronym or a name like McKay
    return text[0].lower() + text[1:]


# --- composing beats when none are supplied ------------------------------------------------------

_OPENINGS_KNOWN = (
    "Hi {partner}, have you got a minute? I wanted to talk about {topic}.",
    "Hey {partner}. Can we sit down and sort out {topic}?",
)
_OPENINGS_STRANGER = (
    "Excuse me, sorry to bother you. Could we talk about {topic} for a moment?",
    "Hello. Do you have a moment? It's about {topic}.",
)
_OPENINGS_GROUP = (
    "Hi everyone, thanks for making the time. I wanted us to talk about {topic}.",
    "Hello, all. Shall we sort out {topic} together?",
)
_REPLIES_FIRST = (
    "Sure, I've got time. What about {topic}?",
    "Of course. I've been meaning to bring up {topic} as well.",
)
_MIDDLE = (
    "What I'm hoping for, honestly, is to {goal}.",
    "Here's an idea: what if we each give a little on {topic}?",
    "I see where you're coming from, and I think we can make this work.",
    "That's fair. I hadn't looked at it that way.",
    "It matters to me more than it might seem.",
    "Could we try a middle way on {topic}?",
    "Okay, that could work for me, with one small change.",
)
_GESTURES = (
    "[non-verbal] nods slowly",
    "[non-verbal] smiles",
    "[non-verbal] takes a deep breath",
    "[action] pours two cups of tea",
)
_CLOSINGS = (
    "Thanks for hearing me out. Let's go with that.",
    "Good, I think we have a plan. Talk soon.",
    "Great, that works for me. Thanks.",
)


def compose_beats(context: AgentContext, *, seed: int = 0) -> list[str]:
    """A short plan of plain lines from the scenario's topic and the seat's goal.

    Used when no beats are supplied. The plan depends only on the seed and the seat, so every
    turn of the seat recomputes the same plan.
    """
    rng = random.Random(f"parley-plan|{seed}|{context.seat_position}")
    size = max(2, min(rng.randint(5, 8), _own_turns(context, seed) - 1))
    if not _opens(context):
        opening = rng.choice(_REPLIES_FIRST)
    elif context.in_a_group:
        opening = rng.choice(_OPENINGS_GROUP)
    else:
        opening = rng.choice(_OPENINGS_KNOWN if context.knows_partner_by_name else _OPENINGS_STRANGER)
    middle = rng.sample(_MIDDLE, k=min(len(_MIDDLE), max(0, size - 2)))
    if middle and rng.random() < 0.4:
        middle.insert(rng.randrange(1, len(middle) + 1), rng.choice(_GESTURES))
        middle.pop()
    lines = [opening, *middle, rng.choice(_CLOSINGS)]
    return [
        line.replace("{goal}", "{goal_phrase}")
        .format(partner=_vocative(context) or "there", topic=f"the {context.topic}", goal_phrase=_goal_phrase(context))
        .replace(" there,", ",")
        for line in lines
    ]


def _opens(context: AgentContext) -> bool:
    """Whether this seat speaks first: nobody has spoken yet, or the first turn was its own."""
    return not context.history or _is_mine(context.history[0], context)


def _goal_phrase(context: AgentContext) -> str:
    from .prompt import goal_phrase

    phrase = goal_phrase(context.goal)
    return re.sub(r"^(to|i want to|my goal is to)\s+", "", phrase, flags=re.IGNORECASE)


# --- the model interface ------------------------------------------------------------------------


def _usage(started: float) -> Usage:
    from .llm import Usage

    return Usage(
        model=SCRIPTED_MODEL,
        latency_ms=round((time.monotonic() - started) * 1000),
        prompt_tokens=None,
        completion_tokens=None,
        attempts=0,
    )


async def act(context: AgentContext, *, seed: int = 0, beats: Sequence[str] | None = None) -> tuple[Action, Usage]:
    """The scripted seat's next action and its usage (model 'scripted', no tokens)."""
    started = time.monotonic()
    action = scripted_action(context, seed=seed, beats=beats)
    return action, _usage(started)


class ScriptedStream:
    """The scripted reply word by word, shaped like ``llm.Stream``: ``text`` and ``usage`` after.

    ``action`` is known up front (its type may be non-verbal or leave); the words stream its text.
    ``delay`` seconds pass between words so a chat can show typing.
    """

    def __init__(self, context: AgentContext, *, seed: int, beats: Sequence[str] | None, delay: float) -> None:
        self._started = time.monotonic()
        self.action = scripted_action(context, seed=seed, beats=beats)
        self.model = SCRIPTED_MODEL
        self.text = ""
        self.usage: Usage | None = None
        self._delay = delay
        self._iterated = False

    def __aiter__(self) -> AsyncIterator[str]:
        if self._iterated:
            raise RuntimeError("a ScriptedStream can be iterated only once")
        self._iterated = True
        return self._words()

    async def _words(self) -> AsyncIterator[str]:
        words = self.action.content.split(" ")
        for number, word in enumerate(words):
            delta = word if number == len(words) - 1 else f"{word} "
            if self._delay:
                await asyncio.sleep(self._delay)
            self.text += delta
            if delta:
                yield delta
        self.usage = _usage(self._started)

    async def aclose(self) -> None:
        """Nothing to close; here so callers can treat it like ``llm.Stream``."""


def scripted_stream(
    context: AgentContext, *, seed: int = 0, beats: Sequence[str] | None = None, delay: float = 0.0
) -> ScriptedStream:
    """Stream the scripted seat's next reply word by word (for the live chat)."""
    return ScriptedStream(context, seed=seed, beats=beats, delay=delay)
