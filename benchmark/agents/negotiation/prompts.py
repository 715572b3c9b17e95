"""Every prompt the negotiating agents are given, in Parley's own words (spec §1.3, after ProMediate's
Tables 6–14), each family with a version stored beside what it produced.

Families: the party's (thoughts, motivation, articulation, who is expected to speak next), the
mediator's (the generic assistant's when and how; the socially intelligent mediator's when, its
candidate strategies, their rating and the spoken intervention), and the consensus-state tracker's.
Change a wording, change its family's version.
"""

from __future__ import annotations

import json

from .context import NegotiationContext, PartyView, TopicView, lines

PARTY_PROMPT_VERSION = "pm-party-1"
MEDIATOR_PROMPT_VERSION = "pm-mediator-1"
TRACKER_PROMPT_VERSION = "pm-tracker-1"

Messages = list[dict[str, str]]


def versions() -> dict[str, str]:
    """The wording each family was asked with, kept with the episode (``Episode.settings["promediate"]``)."""
    return {"party": PARTY_PROMPT_VERSION, "mediator": MEDIATOR_PROMPT_VERSION, "tracker": TRACKER_PROMPT_VERSION}


OPENING_LINE = "Welcome, everyone. Let's begin our discussion."
STRATEGY_FAMILIES = ("facilitative", "evaluative", "transformative", "problem-solving")


def issues_text(topics: tuple[TopicView, ...]) -> str:
    parts = []
    for number, topic in enumerate(topics, start=1):
        options = "; ".join(f"({key}) {text}" for key, text in topic.options)
        parts.append(
            f"{number}. {topic.title}"
            + (f": {topic.question}" if topic.question else "")
            + (f"\n   Options: {options}" if options else "")
        )
    return "\n".join(parts)


# Parties


def _party_system(context: NegotiationContext, party: PartyView) -> str:
    persona = f"\n\n# How you negotiate\n{party.persona}" if party.persona else ""
    return (
        f"You are {party.name}, one of the parties at a negotiation table.\n\n"
        f"# The situation everyone at the table knows\n{context.shared}\n\n"
        f"# The issues to settle\n{issues_text(context.topics)}\n\n"
        f"# What only you know\n{party.brief}{persona}\n\n"
        "Talk as a real person in a meeting would: in your own words, never reciting your notes."
    )


def party_thoughts(context: NegotiationContext, party: PartyView, count: int) -> Messages:
    """H3: form ``count`` short candidate thoughts about what to say next."""
    task = (
        f"The conversation so far (latest last):\n{lines(context.recent())}\n\n"
        f"Think about what you, {party.name}, might say next to move the negotiation your way. Form {count} "
        "different thoughts, each under 15 words, some more pressing to you than others. Stay with the terms "
        "that are still open. Your negotiating style is a guide: you may depart from it when you have a reason, "
        "and say so. If you are content with where things stand, you may return no thoughts.\n\n"
        'Answer with JSON only: {"thoughts": [{"content": "...", "stimuli": "what prompted it"}]}'
    )
    return [{"role": "system", "content": _party_system(context, party)}, {"role": "user", "content": task}]


def party_motivation(context: NegotiationContext, party: PartyView, thought: str) -> Messages:
    """H4: how much would this party want to voice this thought right now, 1 to 5."""
    task = (
        f"The conversation so far (latest last):\n{lines(context.recent())}\n\n"
        f'You are considering saying this thought: "{thought}"\n\n'
        "How likely are you to speak it now, from 1 (not at all) to 5 (you must say it)? Weigh: whether it "
        "ties to what you know and care about; whether it supplies missing information or fills a silence; "
        "the difference it could make; how urgent it is; whether it follows from the last remark; whether it "
        "adds something new; whether you have been talking too much or too little; and where the discussion "
        "is heading. Give the reasons for and against, then the number (one decimal).\n\n"
        'Answer with JSON only: {"reasoning": "...", "rating": 3.5}'
    )
    return [{"role": "system", "content": _party_system(context, party)}, {"role": "user", "content": task}]


def party_articulation(context: NegotiationContext, party: PartyView, thought: str) -> Messages:
    """H5: say the chosen thought as the next turn."""
    task = (
        f"The conversation so far (latest last):\n{lines(context.recent())}\n\n"
        f'You have decided to speak, starting from this thought: "{thought}"\n\n'
        "Say it as your next turn in the negotiation: three or four sentences at most, in your own manner and "
        "in keeping with how you negotiate. Name the issue and the option you mean. Do not end every turn "
        "with a question.\n\n"
        'Answer with JSON only: {"articulation": "..."}'
    )
    return [{"role": "system", "content": _party_system(context, party)}, {"role": "user", "content": task}]


def next_speaker(context: NegotiationContext) -> Messages:
    """Who does the last utterance hand the floor to: a named participant, or anyone."""
    names = context.party_names() + ([context.mediator_name] if context.mediator_name else [])
    task = (
        f"Participants: {', '.join(names)}.\n\nThe latest part of a meeting (latest last):\n"
        f"{lines(context.recent())}\n\n"
        "Does the last remark hand the floor to one participant in particular (a question or request put to "
        "them by name)? If so, name them; otherwise answer anyone.\n\n"
        'Answer with JSON only: {"next_speaker": "<a participant\'s name or anyone>"}'
    )
    return [{"role": "user", "content": task}]


# Mediators


def _mediator_system(context: NegotiationContext) -> str:
    persona = f"\n\n# Your manner\n{context.mediator_persona}" if context.mediator_persona else ""
    brief = f"\n\n# Your brief\n{context.mediator_brief}" if context.mediator_brief else ""
    return (
        f"You are {context.mediator_name or 'the mediator'}, the neutral facilitator of a negotiation between "
        f"{', '.join(context.party_names())}.\n\n"
        f"# The situation\n{context.shared}\n\n# The issues to settle\n{issues_text(context.topics)}{brief}\n\n"
        "Help the parties reach an agreement they can all accept: keep the discussion moving and fair, sum up "
        "where they stand, encourage joint problem solving, watch the time, handle disagreement calmly, stay "
        "professional and neutral, note what has been agreed, suggest creative options, make sure every issue "
        f"gets discussed and remind them of those still open, and confirm agreements when they are reached.{persona}"
    )


def _state(context: NegotiationContext) -> str:
    if not context.consensus:
        return ""
    return f"\n\nWhere the parties stand on each issue:\n{json.dumps(context.consensus, ensure_ascii=False)}"


def generic_when(context: NegotiationContext) -> Messages:
    """M2, when: a helpful assistant decides whether to join in."""
    task = (
        f"The latest messages (latest last):\n{lines(context.recent())}\n\n"
        "You are a helpful assistant in this group conversation. Decide whether to speak now. Join in when "
        "the discussion has stalled, when someone asks something you could help with, when there is confusion "
        "or disagreement, when it drifts from the goal, or when you can add a useful insight. Stay quiet when "
        "it flows well, when the last message was yours, or when the exchange is personal.\n\n"
        'Answer with JSON only: {"should_engage": true, "reason": "..."}'
    )
    return [{"role": "system", "content": _mediator_system(context)}, {"role": "user", "content": task}]


def generic_how(context: NegotiationContext) -> Messages:
    """M2, how: what the helpful assistant says."""
    task = (
        f"The latest messages (latest last):\n{lines(context.recent())}\n\n"
        "You have decided to speak in this group conversation as a helpful assistant. Write your message.\n\n"
        'Answer with JSON only: {"message": "..."}'
    )
    return [{"role": "system", "content": _mediator_system(context)}, {"role": "user", "content": task}]


def social_when(context: NegotiationContext) -> Messages:
    """M3: a socially intelligent mediator looks for trouble it should address."""
    task = (
        f"The latest messages (latest last):\n{lines(context.recent())}{_state(context)}\n\n"
        "Look for four kinds of trouble, and say which parties and issues show each: (1) the parties see the "
        "issues or each other differently than they are (misaligned perceptions); (2) frustration, anger or "
        "other negative feelings; (3) faulty reasoning or biases; (4) communication breaking down, such as a "
        "party falling silent or the talk circling one issue. Do not step in before every party has spoken "
        "since your last intervention, nor every other turn; roughly every five to seven turns is right. Ask "
        "yourself: is a problem present? Would stepping in now help more than waiting? Has everyone had a say "
        "since I last spoke? Then rate how much an intervention is needed now, from 1.0 to 5.0.\n\n"
        'Answer with JSON only: {"reason": {"perception": "...", "emotion": "...", "cognition": "...", '
        '"communication": "..."}, "stimuli": ["..."], "should_engage": true, "rating": 4.0}'
    )
    return [{"role": "system", "content": _mediator_system(context)}, {"role": "user", "content": task}]


def social_strategies(context: NegotiationContext, count: int) -> Messages:
    """M4, generation: candidate intervention strategies."""
    task = (
        f"The latest messages (latest last):\n{lines(context.recent())}{_state(context)}\n\n"
        f"You have decided to intervene. Propose {count} different strategies, each under 15 words, drawing on "
        "facilitative (structure the talk), evaluative (assess the options' merits), transformative (improve "
        "how the parties relate and understand each other) and problem-solving (build options that serve "
        "everyone's interests) mediation.\n\n"
        'Answer with JSON only: {"strategies": [{"family": "facilitative", "content": "..."}]}'
    )
    return [{"role": "system", "content": _mediator_system(context)}, {"role": "user", "content": task}]


def social_strategy_rating(context: NegotiationContext, strategy: str) -> Messages:
    """M4, evaluation: how well would this strategy address the trouble at the table."""
    task = (
        f"The latest messages (latest last):\n{lines(context.recent())}{_state(context)}\n\n"
        f'A candidate intervention: "{strategy}"\n\n'
        "How well would it help now, from 1.0 to 5.0, considering whether it aligns how the parties see the "
        "issues, eases negative feelings, corrects faulty reasoning and repairs communication?\n\n"
        'Answer with JSON only: {"reasoning": "...", "rating": 4.0}'
    )
    return [{"role": "system", "content": _mediator_system(context)}, {"role": "user", "content": task}]


def social_articulation(context: NegotiationContext, strategy: str) -> Messages:
    """M5: speak the chosen strategy as the mediator."""
    task = (
        f"The latest messages (latest last):\n{lines(context.recent())}{_state(context)}\n\n"
        f'Your strategy: "{strategy}"\n\n'
        "Say it to the parties as their mediator: three or four sentences at most, calm and even-handed, "
        "taking no side; ask a clarifying question where it helps.\n\n"
        'Answer with JSON only: {"message": "..."}'
    )
    return [{"role": "system", "content": _mediator_system(context)}, {"role": "user", "content": task}]


# Tracker


def tracker_update(context: NegotiationContext, previous: object) -> Messages:
    """The consensus state after the last utterance, given the previous state."""
    last = context.last
    said = f"{last.speaker}: {last.text}" if last else ""
    task = (
        f"Issues:\n{issues_text(context.topics)}\n\nPrevious state:\n{json.dumps(previous, ensure_ascii=False)}\n\n"
        f"Latest utterance:\n{said}\n\n"
        "Update the state: for every issue say whether the parties have settled it (resolved or unresolved), "
        "each party's position as far as it is known, and a one-line conclusion.\n\n"
        'Answer with JSON only: {"<issue title>": {"label": "unresolved", "mind_state": {"<party>": "..."}, '
        '"conclusion": "..."}}'
    )
    return [{"role": "user", "content": task}]
