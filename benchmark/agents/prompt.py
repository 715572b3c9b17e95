"""What a language agent knows on its turn, what it is told, and how its reply becomes an action.

The prompt follows the shape of SocialVeil's agent prompt (its appendix H.2), itself Sotopia's:
play the character, pursue a goal the other side cannot see, stay natural, and answer with one
action from Sotopia's action space as JSON. Two things are added only where the research adds
them:

- the barrier seat gets the barrier's style directive and its parameterisation (SocialVeil §2.2:
  the partner's instruction stays unmodified, so the barrier is the only source of disruption);
- a partner seat with the ``repair`` strategy is told to ask clarifying questions and paraphrase
  to check understanding (SocialVeil's repair instruction);
- in a scenario with probes (questions about what each character keeps private), every seat is
  told not to ask the others for their private information outright: it may only work it out
  from what they say (AgentSense's rule, so the probes measure inference, not asking).

What a seat may see of the others follows the relationship (``Character.visible_to``): their
goals, reasons, private knowledge and secrets never reach this prompt. A scenario may have more
than two roles; then each seat's prompt lists every other participant and the history names who
said what. With two seats the prompt reads exactly as it always has.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from ..models import (
    PROFILE_LABELS,
    ActionType,
    Character,
    Episode,
    Relationship,
    ScenarioBarrier,
    Seat,
    Turn,
    TurnTaking,
)
from ..models.characters import relationship_label

if TYPE_CHECKING:
    from ..models import Barrier, BarrierCue

UNSET = object()  # an argument not given, where None is a value (a scenario without its own barrier prompt)

AGENT_PROMPT_VERSION = "agent-2025.1"

ALL_ACTION_TYPES: tuple[str, ...] = tuple(ActionType.values)
ACTIONS_WITH_TEXT = frozenset({ActionType.SPEAK, ActionType.NON_VERBAL, ActionType.ACTION})

PRIVATE_INFORMATION_RULE = (
    "Do not ask {others} outright for their private information (their goals, their reasons, their "
    "secrets or what only they know). You may work it out from what they say and do."
)

REPAIR_INSTRUCTION = (
    "Misunderstandings are likely in this conversation. When something the other person says is "
    "vague, indirect or clouded by emotion, ask a clarifying question, and paraphrase what you "
    "think they mean so they can confirm or correct it before you go on."
)


_LEADING_ARTICLE = re.compile(r"^(the|a|an)\s+", re.IGNORECASE)
_DETERMINER_BEFORE = re.compile(r"\b(the|whole|this|that|our|your|my|their|his|her|a|an)\s*$", re.IGNORECASE)


@dataclass(frozen=True)
class HistoryEntry:
    """One earlier turn as every seat saw it."""

    speaker: str
    action_type: str
    content: str
    position: int = -1  # the speaker's seat position, -1 when unknown


@dataclass(frozen=True)
class Cue:
    """A quantitative barrier cue (SocialVeil's parameterisation), copied off the database row."""

    dimension: str
    instruction: str
    rate: float
    unit: str


@dataclass(frozen=True)
class BarrierBrief:
    """The barrier as the barrier seat is told it: directive, four dimensions, cues."""

    key: str
    name: str
    style_directive: str
    narrative_stance: str
    interaction_tactics: str
    confusion_mechanisms: str
    templates: tuple[str, ...]
    cues: tuple[Cue, ...]

    @classmethod
    def from_barrier(cls, barrier: Barrier, cues: Iterable[BarrierCue]) -> BarrierBrief:
        return cls(
            key=barrier.key,
            name=barrier.name,
            style_directive=barrier.style_directive,
            narrative_stance=barrier.narrative_stance,
            interaction_tactics=barrier.interaction_tactics,
            confusion_mechanisms=barrier.confusion_mechanisms,
            templates=tuple(barrier.templates),
            cues=tuple(Cue(c.dimension, c.instruction, c.rate, c.unit) for c in cues),
        )


@dataclass(frozen=True)
class OtherParticipant:
    """Another seat as this seat sees it: a name, and only what the relationship reveals."""

    name: str
    profile: dict[str, str]


@dataclass(frozen=True)
class AgentContext:
    """Everything one seat may know when it acts: its own side in full, the others in part.

    ``turn_index`` is the 0-based index of the turn about to be taken; ``turn_number`` the
    1-based number shown to the model. ``barrier`` is set only for a seat that carries a
    barrier other than the ``none`` baseline; ``strategy`` is ``repair`` only for a partner seat.
    ``goal`` is the role's goals, one a line. ``partner_first_name`` is the other this seat
    addresses: the one who spoke last, else the next to speak (with two seats, the only other).
    ``opens_with_greeting`` is set when the scenario takes turns in random order after a greeting.
    ``seat_positions`` are every seat's, for a model that plans by the turn order (the scripted one).
    ``private_information_rule`` is set when the scenario has probes: the seat must not ask the
    others for their private information outright.
    """

    seat_position: int
    name: str
    first_name: str
    profile: dict[str, str]
    goal: str
    reason: str
    private_knowledge: str
    scenario_context: str
    topic: str
    relationship: int | None  # None: unknown
    others: tuple[OtherParticipant, ...]
    history: tuple[HistoryEntry, ...]
    turn_index: int
    turn_cap: int
    action_types: tuple[str, ...] = ALL_ACTION_TYPES
    barrier: BarrierBrief | None = None
    strategy: str = Seat.Strategy.DEFAULT
    partner_first_name: str = ""
    other_first_names: tuple[str, ...] = ()
    opens_with_greeting: bool = False
    private_information_rule: bool = False
    seat_positions: tuple[int, ...] = ()

    @property
    def turn_number(self) -> int:
        return self.turn_index + 1

    @property
    def seat_count(self) -> int:
        return len(self.others) + 1

    @property
    def in_a_group(self) -> bool:
        """More than one other participant: the prompt and the scripted model speak to a group."""
        return len(self.others) > 1

    @property
    def partner_profile(self) -> dict[str, str]:
        return self.others[0].profile if self.others else {}

    @property
    def knows_partner_by_name(self) -> bool:
        return self.relationship is not None and self.relationship >= Relationship.KNOW_BY_NAME

    @property
    def repairs(self) -> bool:
        return self.strategy == Seat.Strategy.REPAIR

    @classmethod
    def for_seat(
        cls,
        episode: Episode,
        seat: Seat,
        history_turns: Sequence[Turn],
        *,
        seats: Sequence[Seat] | None = None,
        cues: Sequence[BarrierCue] | None = None,
        has_probes: bool | None = None,
        scenario_barrier: ScenarioBarrier | None | object = UNSET,
    ) -> AgentContext:
        """Build the context for ``seat`` from an episode and its earlier turns.

        Pass ``seats`` (with role and character loaded), the barrier's ``cues``, whether the
        scenario ``has_probes`` and its ``scenario_barrier`` (the scenario's own prompt for the
        episode's barrier, or None) to build it without touching the database, as the async runner
        does; otherwise they are fetched.
        """
        if seats is None:
            seats = list(
                episode.seats.select_related("role", "character").prefetch_related("role__goals").order_by("position")
            )
        scenario = episode.scenario
        barrier = episode.barrier
        by_id = {s.pk: s for s in seats}
        others = [s for s in _round_robin_from(seats, seat) if s.pk != seat.pk]
        last_other = next((by_id[t.seat_id] for t in reversed(history_turns) if t.seat_id != seat.pk), None)
        addressed = last_other or (others[0] if others else None)
        brief = None
        character: Character = seat.character
        profile = character.profile()
        if seat.carries_barrier and not barrier.is_baseline:
            brief = BarrierBrief.from_barrier(barrier, barrier.cues.all() if cues is None else cues)
            if scenario_barrier is UNSET:
                scenario_barrier = scenario.barrier_prompts.filter(barrier=barrier).first()
            if isinstance(scenario_barrier, ScenarioBarrier):
                brief, profile = with_scenario_prompt(brief, profile, scenario_barrier)
        if has_probes is None:
            has_probes = scenario.probes.exists()
        return cls(
            seat_position=seat.position,
            name=character.name,
            first_name=character.first_name,
            profile=profile,
            goal=seat.role.goal_text,
            reason=seat.role.reason,
            private_knowledge=seat.role.private_knowledge,
            scenario_context=scenario.context,
            topic=topic_of(scenario.codename),
            relationship=scenario.relationship,
            others=tuple(
                OtherParticipant(o.character.name, o.character.visible_to(scenario.relationship)) for o in others
            ),
            history=tuple(
                HistoryEntry(by_id[t.seat_id].character.name, t.action_type, t.content, by_id[t.seat_id].position)
                for t in history_turns
            ),
            turn_index=len(history_turns),
            turn_cap=episode.turn_cap,
            barrier=brief,
            strategy=seat.strategy if not seat.carries_barrier else Seat.Strategy.DEFAULT,
            partner_first_name=addressed.character.first_name if addressed else "",
            other_first_names=tuple(o.character.first_name for o in others),
            opens_with_greeting=scenario.turn_taking == TurnTaking.RANDOM_AFTER_GREETING,
            private_information_rule=has_probes,
            seat_positions=tuple(sorted(s.position for s in seats)),
        )

    def fill(self, template: str) -> str:
        """Fill a barrier exemplar template's {topic}, {partner} and {goal} for this seat.

        ``{partner}`` becomes the partner's first name when the relationship lets this seat know
        it; otherwise the vocative is dropped ("Please, {partner}, just" -> "Please, just").
        """
        text = template
        if "{partner}" in text:
            if self.knows_partner_by_name and self.partner_first_name:
                text = text.replace("{partner}", self.partner_first_name)
            else:
                text = re.sub(r",\s*\{partner\}", "", text)
                text = re.sub(r"\{partner\},?\s*", "", text)
        text = _fill_topic(text, self.topic)
        if "{goal}" in text:
            text = text.replace("{goal}", goal_phrase(self.goal))
        return text


def with_scenario_prompt(
    brief: BarrierBrief, profile: dict[str, str], prompt: ScenarioBarrier
) -> tuple[BarrierBrief, dict[str, str]]:
    """The barrier as this scenario's own prompt words it, and the seat's profile with its trait note.

    SocialVeil gives each scenario of a barrier file the prompt its barrier agent is told, and adds a
    trait note to that agent's profile; both replace or extend the barrier's generic wording for
    this scenario only. The note joins the personality, where SocialVeil's profile sentence has it.
    """
    brief = replace(brief, style_directive=prompt.style_directive)
    if prompt.trait_note:
        personality = " ".join(filter(None, [profile.get("personality", ""), prompt.trait_note]))
        profile = {**profile, "personality": personality}
    return brief, profile


def _round_robin_from(seats: Sequence[Seat], seat: Seat) -> list[Seat]:
    """The seats in round-robin order starting after ``seat`` (with two seats: the partner)."""
    ordered = sorted(seats, key=lambda s: s.position)
    start = next(i for i, s in enumerate(ordered) if s.pk == seat.pk)
    return ordered[start + 1 :] + ordered[: start + 1]


def topic_of(codename: str) -> str:
    """A bare noun phrase for a scenario, from its codename ('the-shared-car' -> 'shared car')."""
    words = re.sub(r"[-_]+", " ", codename or "").strip()
    words = re.sub(r"\s+\d+$", "", words)  # 'split-bill-2' -> 'split bill'
    words = _LEADING_ARTICLE.sub("", words)
    return words.lower() or "plan"


def _fill_topic(text: str, topic: str) -> str:
    """Insert the topic with 'the' unless the template already puts a determiner before it."""
    parts = text.split("{topic}")
    if len(parts) == 1:
        return text
    out = parts[0]
    for part in parts[1:]:
        out += topic if _DETERMINER_BEFORE.search(out) else f"the {topic}"
        out += part
    return out


def goal_phrase(goal: str) -> str:
    """A goal's first sentence, lower-cased and in the first person, for use inside a sentence."""
    first = re.sub(r"\(.*?\)", "", goal.strip().splitlines()[0] if goal.strip() else "").strip()
    first = re.split(r"(?<=[.!?])\s", first)[0].rstrip(".!? ")
    swaps = {"your": "my", "you": "me", "yourself": "myself", "yours": "mine"}
    words = [swaps.get(w.lower(), w) for w in first.split()]
    phrase = " ".join(words)
    return phrase[:1].lower() + phrase[1:] if phrase else "what I came for"


# --- the prompt ---------------------------------------------------------------------------------


def build_agent_messages(context: AgentContext) -> list[dict[str, str]]:
    """The chat messages that ask an LLM to take this seat's next turn.

    The system message holds the standing instructions; the user message holds the situation,
    the profiles, the private goal and the history so far, and asks for one JSON action.
    """
    return [
        {"role": "system", "content": _system_prompt(context)},
        {"role": "user", "content": _situation_prompt(context)},
    ]


def _system_prompt(context: AgentContext) -> str:
    name = context.name
    if context.in_a_group:
        company = f"a conversation with {len(context.others)} other people"
        privacy = "the others cannot see it, and you learn nothing of theirs except what they say or do."
        others_said = "anyone else"
    else:
        company = "a conversation with another person"
        privacy = "the other side cannot see it, and you learn nothing of theirs except what they say or do."
        others_said = "the other person"
    lines = [
        f"You are role-playing {name} in {company}. Think, speak and act "
        f"as {name} would, with {name}'s personality, values and way of deciding.",
        f"{name} has a social goal. Work toward it the way {name} plausibly would. The goal is "
        f"private: {privacy}",
        "Keep the conversation natural and realistic: respond to what was just said, move things "
        f"forward, and do not repeat what you or {others_said} already said.",
        f"Private knowledge may shape how you play {name}, but reveal it only if doing so serves "
        "the goal. Keep the character's secret to yourself.",
        "You may leave the conversation when the goal is reached, when it makes you uncomfortable, "
        "when you lose patience or interest, or for any other reason the character would have.",
    ]
    if context.private_information_rule:
        lines.insert(-1, PRIVATE_INFORMATION_RULE.format(others=others_said.replace("anyone else", "the others")))
    if context.barrier is not None:
        lines.append(_barrier_section(context))
    if context.repairs:
        lines.append(REPAIR_INSTRUCTION)
    lines.append(_format_section(context))
    return "\n\n".join(lines)


def _barrier_section(context: AgentContext) -> str:
    barrier = context.barrier
    assert barrier is not None
    parts = [
        f"Communication style ({barrier.name}). Throughout this conversation, "
        f"{context.name} speaks this way:",
    ]
    if barrier.style_directive:
        parts.append(barrier.style_directive)
    for label, text in (
        ("Narrative stance", barrier.narrative_stance),
        ("Interaction tactics", barrier.interaction_tactics),
        ("Confusion mechanisms", barrier.confusion_mechanisms),
    ):
        if text:
            parts.append(f"{label}: {text}")
    if barrier.cues:
        parts.append("How often:")
        parts.extend(f"- {cue.instruction}: about {cue.rate:.0%} {cue.unit}." for cue in barrier.cues)
    if barrier.templates:
        parts.append("Lines in this style (patterns to follow, not to copy word for word):")
        parts.extend(f'- "{context.fill(t)}"' for t in barrier.templates)
    parts.append("Keep this style even if the other person is confused by it; do not mention it.")
    return "\n".join(parts)


def _format_section(context: AgentContext) -> str:
    kinds = ", ".join(f'"{t}"' for t in context.action_types)
    return (
        "Answer with one JSON object and nothing else, in this form:\n"
        '{"action_type": <one of the action types>, "argument": <text>}\n'
        f"Action types: {kinds}.\n"
        '- "speak": the argument is what you say, as plain speech without your name in front.\n'
        '- "non-verbal": a gesture or expression, e.g. "smiles and nods".\n'
        '- "action": a physical action, e.g. "hands over the receipt".\n'
        '- "none": stay silent this turn; the argument may be empty.\n'
        '- "leave": leave the conversation; the argument may be empty.'
    )


def _situation_prompt(context: AgentContext) -> str:
    sections = [
        f"Scenario: {context.scenario_context}",
        f"{context.name} (you):\n{_profile_text(context.profile)}",
    ]
    # An unknown relationship (an imported scenario that did not say) is left out rather than guessed.
    relationship = ""
    if context.relationship is not None:
        relationship = f" (your relationship: {relationship_label(context.relationship)})"
    who = "Another person" if context.in_a_group else "The other person"
    for other in context.others:
        visible = {k: v for k, v in other.profile.items() if k != "name"}
        about = _profile_text(visible) or "You know nothing about this person beyond what they say and do."
        sections.append(f"{who}, {other.name}{relationship}:\n{about}")
        sections.append(f"{other.name}'s goal: unknown to you.")
    sections.append(f"{context.name}'s goal: {context.goal}")
    if context.reason:
        sections.append(f"Why it matters to {context.name}: {context.reason}")
    if context.private_knowledge:
        sections.append(
            f"Only you know this: {context.private_knowledge}\n"
            "Let it inform your strategy; reveal it only if that serves the goal."
        )
    sections.append(_history_text(context))
    remaining = context.turn_cap - context.turn_index
    sections.append(
        f"This is turn {context.turn_number} of at most {context.turn_cap} "
        f"({remaining - 1} more after this one). What does {context.name} do now?"
    )
    return "\n\n".join(sections)


def _profile_text(profile: dict[str, str]) -> str:
    return "\n".join(f"- {PROFILE_LABELS.get(k, k)}: {v}" for k, v in profile.items() if v)


def _history_text(context: AgentContext) -> str:
    if not context.history:
        if context.opens_with_greeting:
            return "The conversation has not started yet; you act first: open it with a greeting."
        return "The conversation has not started yet; you act first."
    lines = ["The conversation so far:"]
    for entry in context.history:
        lines.append(describe_turn(entry))
    return "\n".join(lines)


def describe_turn(entry: HistoryEntry) -> str:
    """A turn as one transcript line, e.g. 'Ana said: "..."' or 'Ana [non-verbal]: smiles'."""
    if entry.action_type == ActionType.SPEAK:
        return f'{entry.speaker} said: "{entry.content}"'
    if entry.action_type == ActionType.LEAVE:
        return f"{entry.speaker} left the conversation." + (f' ("{entry.content}")' if entry.content else "")
    if entry.action_type == ActionType.NONE:
        return f"{entry.speaker} did nothing."
    label = ActionType(entry.action_type).label
    if not entry.content:  # a gesture no one described (an imported log)
        return f"{entry.speaker} [{label}], not described."
    return f"{entry.speaker} [{label}]: {entry.content}"


# --- the reply ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Action:
    """One seat's move: an action type from ``ActionType`` and its text (empty for none/leave)."""

    action_type: str
    content: str


_ALIASES = {
    "speak": ActionType.SPEAK,
    "say": ActionType.SPEAK,
    "talk": ActionType.SPEAK,
    "utterance": ActionType.SPEAK,
    "non verbal": ActionType.NON_VERBAL,
    "nonverbal": ActionType.NON_VERBAL,
    "non verbal communication": ActionType.NON_VERBAL,
    "nonverbal communication": ActionType.NON_VERBAL,
    "gesture": ActionType.NON_VERBAL,
    "action": ActionType.ACTION,
    "physical action": ActionType.ACTION,
    "physical": ActionType.ACTION,
    "none": ActionType.NONE,
    "do nothing": ActionType.NONE,
    "nothing": ActionType.NONE,
    "leave": ActionType.LEAVE,
    "exit": ActionType.LEAVE,
}


def normalise_action_type(value: Any) -> str:
    """Map a model's spelling of an action type ('Non_Verbal Communication') onto ``ActionType``."""
    if not isinstance(value, str):
        raise ValueError(f"action_type must be a string, got {type(value).__name__}")
    key = re.sub(r"[\s_\-]+", " ", value).strip().lower()
    if key not in _ALIASES:
        raise ValueError(
            f"unknown action_type {value!r}; use one of {', '.join(repr(t) for t in ALL_ACTION_TYPES)}"
        )
    return _ALIASES[key].value


def parse_action(data: dict[str, Any], allowed: Iterable[str] = ALL_ACTION_TYPES) -> Action:
    """Check a model's JSON action and turn it into an ``Action``.

    Raises ``ValueError`` with a message written for the model, so it doubles as the ``validate``
    hook of ``llm.complete_json`` (the message is shown to the model in the repair request).
    """
    if not isinstance(data, dict):
        raise ValueError("expected a JSON object with 'action_type' and 'argument'")
    if "action_type" not in data:
        raise ValueError("the object has no 'action_type'")
    action_type = normalise_action_type(data["action_type"])
    allowed = tuple(allowed)
    if action_type not in allowed:
        raise ValueError(f"action_type {action_type!r} is not allowed now; use one of {', '.join(allowed)}")
    argument = data.get("argument", "")
    if argument is None:
        argument = ""
    if not isinstance(argument, str):
        raise ValueError(f"'argument' must be a string, got {type(argument).__name__}")
    argument = argument.strip()
    if action_type in ACTIONS_WITH_TEXT and not argument:
        raise ValueError(f"a {action_type!r} action needs a non-empty 'argument'")
    return Action(action_type, argument)
