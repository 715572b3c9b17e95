"""The offline stand-ins for the negotiating agents: deterministic, no key, no network.

Every choice is drawn from a hash of (episode seed, turn index, seat, ...), so an episode replays
identically, resumed or not, and two runs with the same seed are byte-identical.

A scripted party argues from its preferences. Each thought names a topic by its title and an option
by its letter (``On Contract Term, I back option (b)``), which is what the scripted attitude
extractor and tracker read. Which option follows the conflict mode's concession schedule: a party
names its first choice until it has spoken on the topic ``CONCEDE_AFTER[mode]`` times, then its next
choice, and so on down its ranking (competing after 3 of its own turns on the topic, accommodating
after 1, others after 2); an avoiding party never raises the most contested topic. A party's second
thought of a turn holds out for its first choice, unless it is accommodating, so a concession can be
taken back and agreement can fall as well as rise.

Scripted mediators: the social one intervenes when the tracked agreement, overall or on one topic, has
fallen at least 0.1 below its highest point since the mediator last spoke and at least two parties
have spoken since (overall alone hardly moves by 0.1 with five topics, one stance changing at a
time); the generic one every 8 party turns.
"""

from __future__ import annotations

from .context import NegotiationContext, PartyView, TopicView, draw
from .prompts import STRATEGY_FAMILIES
from .tracker import TrackedState, largest_fall, most_contested, stated_option, states, track

CONCEDE_AFTER = {"competing": 3, "accommodating": 1}
DEFAULT_CONCESSION = 2
SOCIAL_DROP = 0.1
SOCIAL_SPEAKERS = 2
GENERIC_EVERY = 8
YIELDING = ("accommodating",)  # modes whose parties never take a concession back
SOCIAL_THRESHOLD = 3.5


def own_turns_on(context: NegotiationContext, party: PartyView, topic: TopicView) -> int:
    """How often ``party`` has spoken on ``topic`` (named an option of it after its title)."""
    return sum(1 for u in context.transcript if u.speaker == party.name and stated_option(u.text, topic) is not None)


def offered_option(context: NegotiationContext, party: PartyView, topic: TopicView) -> str | None:
    """The option ``party`` names on ``topic`` now, by its mode's concession schedule."""
    ranking = [key for key in party.rankings.get(topic.title, ()) if key not in party.unacceptable.get(topic.title, ())]
    if not ranking:
        ranking = [key for key, _ in topic.options]
    if not ranking:
        return None
    step = own_turns_on(context, party, topic) // CONCEDE_AFTER.get(party.mode, DEFAULT_CONCESSION)
    return ranking[min(step, len(ranking) - 1)]


def topics_to_raise(context: NegotiationContext, party: PartyView) -> list[TopicView]:
    """The topics ``party`` will talk about: all of them, but an avoiding party skips the most contested."""
    topics = list(context.topics)
    if party.mode == "avoiding" and len(topics) > 1:
        contested = most_contested(context)
        topics = [topic for topic in topics if topic is not contested]
    return topics


def thoughts(context: NegotiationContext, party: PartyView, count: int) -> list[str]:
    """``count`` thoughts, each about one topic the party raises, naming the option it offers."""
    topics = topics_to_raise(context, party)
    found: list[str] = []
    for number in range(count):
        if not topics:
            break
        topic = topics[draw(context.seed, context.turn, party.position, number, "topic") % len(topics)]
        option = offered_option(context, party, topic)
        if option is None:
            found.append(f"Ask where everyone stands on {topic.title}.")
            continue
        first = (party.rankings.get(topic.title) or (option,))[0]
        if number % 2 and party.mode not in YIELDING:
            option = first  # the second thought digs in: a concession made can be taken back
        verb = "hold out for" if option == first else "offer to accept"
        found.append(f"On {topic.title}, {verb} option ({option}).")
    return found


def motivation(context: NegotiationContext, party: PartyView, thought: str, number: int) -> float:
    """A rating from 1.0 to 4.6, half a point more when the thought's topic was just raised."""
    rating = 1.0 + (draw(context.seed, context.turn, party.position, number, "rating") % 37) / 10
    last = context.last
    if last is not None and any(t.title in thought and t.title.lower() in last.text.lower() for t in context.topics):
        rating += 0.5
    return round(min(rating, 5.0), 1)


def articulation(context: NegotiationContext, party: PartyView, thought: str) -> str:
    """The thought said as a turn, in the party's manner."""
    topic = next((t for t in context.topics if t.title in thought), None)
    if topic is None:
        return thought
    option = stated_option(thought, topic)
    if option is None:
        return f"Before we go on, could everyone say where they stand on {topic.title}?"
    detail = _short(topic.option_text(option))
    offered = f"option ({option})" + (f", {detail}" if detail else "")
    first = (party.rankings.get(topic.title) or (option,))[0]
    if option != first:
        return f"On {topic.title}, I can move to {offered}, if that helps us close."
    return {
        "competing": f"On {topic.title}, I must insist on {offered}. That is where I stand.",
        "avoiding": f"On {topic.title}, {offered} would suit me; I would rather not dwell on it.",
        "accommodating": f"On {topic.title}, I would like {offered}, but I am listening.",
    }.get(party.mode, f"On {topic.title}, I prefer {offered}.")


def next_speaker(context: NegotiationContext) -> str:
    """A party named in a last remark that asks a question; otherwise anyone."""
    last = context.last
    if last is None or "?" not in last.text:
        return "anyone"
    return next((name for name in context.party_names() if name != last.speaker and name in last.text), "anyone")


# Mediators


def social_when(context: NegotiationContext) -> tuple[bool, float, str]:
    """Intervene when agreement fell by ``SOCIAL_DROP`` from its peak since the mediator last spoke, overall or
    on one topic, once at least ``SOCIAL_SPEAKERS`` parties have spoken since."""
    since = context.since_mediator()
    drop, topic = largest_fall(states(context, len(context.transcript) - len(since)))
    speakers = {u.speaker for u in since if not u.mediator}
    engage = drop >= SOCIAL_DROP - 1e-9 and len(speakers) >= SOCIAL_SPEAKERS
    rating = round(min(5.0, SOCIAL_THRESHOLD + 0.5 + drop) if engage else min(SOCIAL_THRESHOLD, 2.0 + drop), 1)
    where = f"on {topic}" if topic else "overall"
    reason = (
        f"Agreement {where} fell by {drop:.2f} since I last spoke; {len(speakers)} parties have spoken since."
        if engage
        else f"No fall of {SOCIAL_DROP} since I last spoke (largest {drop:.2f} {where}); "
        f"{len(speakers)} parties have spoken."
    )
    return engage, rating, reason


def generic_when(context: NegotiationContext) -> tuple[bool, None, str]:
    """Speak up every ``GENERIC_EVERY`` party turns."""
    party_turns = sum(1 for u in context.since_mediator() if not u.mediator)
    engage = party_turns >= GENERIC_EVERY
    return engage, None, f"{party_turns} party turns since I last spoke."


def social_strategies(context: NegotiationContext, count: int) -> list[tuple[str, float]]:
    """``count`` candidate strategies about the most contested topic, each with a rating."""
    state = track(context)
    topic = _focus(context, state)
    title = topic.title if topic else "the open issues"
    templates = {
        "facilitative": f"Give each party a turn to restate their position on {title}.",
        "evaluative": f"Compare the options on {title} against each party's stated needs.",
        "transformative": f"Acknowledge the frustration and ask each party what matters most on {title}.",
        "problem-solving": f"Propose a middle option on {title} that meets core interests.",
    }
    start = draw(context.seed, context.turn, "mediator", "strategies") % len(STRATEGY_FAMILIES)
    chosen = [STRATEGY_FAMILIES[(start + n) % len(STRATEGY_FAMILIES)] for n in range(count)]
    return [
        (templates[family], round(1.0 + (draw(context.seed, context.turn, "mediator", n, "rating") % 41) / 10, 1))
        for n, family in enumerate(chosen)
    ]


def social_articulation(context: NegotiationContext, strategy: str) -> str:
    state = track(context)
    topic = _focus(context, state)
    return f"{strategy} {_positions(context, state, topic)}".strip()


def generic_message(context: NegotiationContext) -> str:
    state = track(context)
    topic = most_contested(context, state)
    return f"Let me sum up where we are. {_positions(context, state, topic)} What would make a middle ground work?"


def _focus(context: NegotiationContext, state: TrackedState) -> TopicView | None:
    """The topic whose agreement fell most since the mediator last spoke, else the most contested one."""
    since = context.since_mediator()
    _, fallen = largest_fall(states(context, len(context.transcript) - len(since)))
    return next((t for t in context.topics if t.title == fallen), None) or most_contested(context, state)


def _positions(context: NegotiationContext, state: TrackedState, topic: TopicView | None) -> str:
    if topic is None:
        return ""
    stated = [
        f"{party} favours ({stance})"
        for party, stances in state.stances.items()
        if (stance := stances.get(topic.title)) is not None
    ]
    return f"On {topic.title}, {', '.join(stated)}." if stated else f"Where does everyone stand on {topic.title}?"


def _short(text: str, words: int = 8) -> str:
    parts = text.split()
    return " ".join(parts[:words]).rstrip(",;:.") + ("…" if len(parts) > words else "")
