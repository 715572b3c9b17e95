"""A library scenario's negotiation parts: its ``topics``, each role's ``preferences`` and its ``settings``.

A ProMediate scenario is more than roles and goals: the negotiation loop reads its topics with their
options, each party's stated preferences on them, and ``settings["promediate"]`` (the case's texts,
the parties' proactivity thresholds, the party names, the turn budget); the evaluation pass reads the
same. A library moves them with the scenario (``benchmark.scenarios.library_export`` writes them), and
this module reads them back with the checks the case importer (``promediate``, ``promediate_topics``)
applies: a topic needs a title and options, a preference names a topic of the scenario and only options
that topic has, thresholds are numbers. A record without these keys (an older library) reads as before:
no topics, no preferences, empty settings.
"""

from __future__ import annotations

from typing import Any

from ..models import Scenario, Topic
from .promediate import SOURCE, THRESHOLDS
from .records import MAX_SMALL_INTEGER, Fields, PreferenceDraft, ScenarioDraft, TopicDraft, check_text, max_length


def read_negotiation(fields: Fields, draft: ScenarioDraft) -> None:
    """Give ``draft`` the record's settings, topics and its roles' preferences (``fields``: the scenario record)."""
    draft.values["settings"] = settings(fields, draft)
    draft.topics = [topic(item) for item in fields.objects("topics")]
    for item, role in zip(fields.objects("roles"), draft.roles, strict=True):
        role.preferences = preferences(item, draft.topics)


def topic(fields: Fields) -> TopicDraft:
    """A topic with its options; one without options is refused, as the case importer refuses it."""
    title = fields.text("title", required=True, blank=False, max_length=max_length(Topic, "title"))
    options = []
    seen: dict[str, int] = {}
    for index, item in enumerate(fields.objects("options", required=True)):
        key = item.text("key", required=True, blank=False)
        first = seen.setdefault(key, index)
        if first != index:
            raise item.origin.at("key").problem(
                f"option {key!r} appears twice in this topic (first at options[{first}])"
            )
        options.append({"key": key, "text": item.text("text", required=True)})
    if not options:
        raise fields.origin.at("options").problem(f"topic {title!r} has no options: a topic needs at least one")
    return TopicDraft(title=title, question=fields.text("question"), options=options)


def preferences(role: Fields, topics: list[TopicDraft]) -> list[PreferenceDraft]:
    """A role's stated preferences, at most one per topic, naming only the options its topic has."""
    found: list[PreferenceDraft] = []
    first: dict[int, int] = {}
    for index, item in enumerate(role.objects("preferences")):
        if not topics:
            raise item.origin.at("topic").problem("the scenario has no topics: give them in 'topics'")
        number = item.integer("topic", required=True, low=0, high=MAX_SMALL_INTEGER)
        if number >= len(topics):
            raise item.origin.at("topic").problem(f"{number} is not a topic's index (0 to {len(topics) - 1})")
        if first.setdefault(number, index) != index:
            raise item.origin.at("topic").problem(
                f"the role states a preference on topic {number} twice (first at preferences[{first[number]}])"
            )
        keys = [option["key"] for option in topics[number].options]
        found.append(
            PreferenceDraft(
                topic=number,
                ranking=option_keys(item, "ranking", keys, topics[number].title),
                unacceptable=option_keys(item, "unacceptable", keys, topics[number].title),
                text=item.text("text"),
            )
        )
    return found


def option_keys(fields: Fields, name: str, keys: list[str], title: str) -> list[str]:
    """A list of the topic's option keys, each once."""
    origin = fields.origin.at(name)
    found: list[str] = []
    for index, value in enumerate(fields.sequence(name)):
        key = check_text(value, origin.at(index), blank=False)
        if key not in keys:
            raise origin.at(index).problem(
                f"names option {key!r}, which topic {title!r} does not have (options: {', '.join(keys)})"
            )
        if key in found:
            raise origin.at(index).problem(f"option {key!r} appears twice in {name}")
        found.append(key)
    return found


def settings(fields: Fields, draft: ScenarioDraft) -> dict[str, Any]:
    """What the source says about playing the scenario: any object; its ProMediate part is checked as the case
    importer writes it, since the negotiation loop reads it."""
    found = fields.mapping("settings")
    if SOURCE in found:
        check_promediate(Fields(found[SOURCE], fields.origin.at("settings").at(SOURCE)), draft)
    return found


def check_promediate(fields: Fields, draft: ScenarioDraft) -> None:
    """``config`` (party -> numeric thresholds), ``parties`` (names), ``mediator_position`` (a role's) and
    ``turn_budget`` (a positive integer), each when given."""
    for party, thresholds in fields.mapping("config").items():
        values = Fields(thresholds, fields.origin.at("config").at(party))
        for name in THRESHOLDS:
            values.number(name)
    fields.texts("parties")
    position = fields.integer("mediator_position", low=0, high=MAX_SMALL_INTEGER)
    positions = sorted(role.position for role in draft.roles)
    if position is not None and position not in positions:
        raise fields.origin.at("mediator_position").problem(
            f"no role at position {position} (roles: {', '.join(map(str, positions))})"
        )
    fields.integer("turn_budget", low=1)


def negotiation_differences(draft: ScenarioDraft, stored: Scenario) -> list[str]:
    """``topics`` and ``preferences`` when the file's differ from the stored scenario's (expects ``topics`` and
    ``roles__preferences__topic`` prefetched); settings are compared with the other values."""
    topics = sorted(stored.topics.all(), key=lambda topic: topic.position)
    changed = []
    if [(t.title, t.question, t.options) for t in draft.topics] != [(t.title, t.question, t.options) for t in topics]:
        changed.append("topics")
    index = {topic.pk: number for number, topic in enumerate(topics)}
    wanted = {
        (role.position, p.topic): (p.ranking, p.unacceptable, p.text) for role in draft.roles for p in role.preferences
    }
    kept = {
        (role.position, index[p.topic_id]): (list(p.ranking), list(p.unacceptable), p.text)
        for role in stored.roles.all()
        for p in role.preferences.all()
    }
    if wanted != kept:
        changed.append("preferences")
    return changed
