"""ProMediate episodes from the database as the plain traces ``benchmark.stats.promediate`` computes on.

One trace per episode, read under one judge's reading of its consensus (``PairAgreement`` rows of one
judge and prompt version): the one the filters name, else the **latest** (the reading whose newest row
was stored last), so a re-evaluation under a new prompt replaces the old one in the report without
deleting it. Topic tags (mentions, addressed topics) come from the same judge and prompt version when it
tagged the episode, else from the latest tagging; the mediator-intelligence scores are the judge answers
to the per-intervention instrument (preset ``promediate-intervention``), one tuple of four per
intervention, ``None`` for "not applicable".

What labels an episode in the tables:

- **mode**: the conflict mode, i.e. the episode's condition (barrier) ``promediate-<mode>``; an episode
  under another condition (``none``) is ``general`` (no persona);
- **condition**: the mediator condition ``settings["promediate"]["mediator"]`` (``none``, ``generic``,
  ``social``, ...); an episode without that setting is ``none`` when it has no mediator seat and
  ``unknown`` otherwise;
- **mediator model**: ``settings["promediate"]["mediator_model"]``, else the mediator seat's model;
- **scenario**: its codename (the cluster of the bootstrap).

Seconds (for response latency in seconds) are each turn's time since the opening turn, read only for
episodes played in Parley (simulated or chatted): an imported episode's turns carry the import's time.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import asdict, dataclass, field
from typing import Any

from django.db.models import Max, QuerySet

from ...instruments.kinds.likert import NOT_APPLICABLE
from ...instruments.presets import PROMEDIATE_INTERVENTION_PRESET
from ...models import Answer, Episode, PairAgreement, Respondent, Response, Seat, Topic, TopicTag, Turn
from ...stats.consensus import PairReading
from ...stats.promediate import MI_DIMENSIONS, EpisodeTrace, Utterance
from ..build import scenario_selection

MODE_PREFIX = "promediate-"
GENERAL = "general"
NO_MEDIATOR = "none"
UNKNOWN = "unknown"
MEDIATOR_NAME = "mediator"
LIVE_SOURCES = (Episode.Source.SIMULATED, Episode.Source.HUMAN_CHAT)


@dataclass(frozen=True)
class ProMediateFilters:
    """Which episodes the report covers and under which reading; empty strings mean 'any' (or 'latest')."""

    tag: str = ""
    scenarios: tuple[str, ...] = ()  # ids, external ids or codenames
    mediator_model: str = ""  # only episodes whose mediator is this model (NoAgent episodes stay, as the baseline)
    judge: str = ""  # the consensus judge (PairAgreement.judge); "" = the latest reading of each episode
    prompt_version: str | None = None  # with judge: its prompt version; None = its latest
    preset: str = "upstream"  # the metric options (benchmark.stats.promediate presets)
    episode: int | None = None  # the episode of the trajectory figure (default: the first with a mediator)

    def to_dict(self) -> dict[str, Any]:
        values = asdict(self)
        values["scenarios"] = list(self.scenarios)
        return values

    def apply(self, episodes: QuerySet[Episode]) -> QuerySet[Episode]:
        if self.tag:
            episodes = episodes.filter(tag=self.tag)
        if self.scenarios:
            episodes = episodes.filter(scenario_selection(self.scenarios, "scenario__"))
        return episodes


@dataclass
class EpisodeRecord:
    """One episode's labels and trace, with the names the figures write (user text, drawn as written)."""

    episode_id: int
    scenario: str
    mode: str
    condition: str
    mediator_model: str
    run_id: int | None
    judge: str
    prompt_version: str
    trace: EpisodeTrace
    party_names: dict[str, str] = field(default_factory=dict)  # trace party key (seat position) -> name
    topic_titles: dict[str, str] = field(default_factory=dict)  # trace topic key (topic id) -> title

    @property
    def mediator_turns(self) -> list[int]:
        """Indices of the mediator's utterances after the opening line."""
        return [index for index, utterance in enumerate(self.trace.utterances) if utterance.mediator and index > 0]


def mode_of(barrier_key: str | None) -> str:
    """The conflict mode named by a condition key: ``promediate-competing`` is ``competing``."""
    if barrier_key and barrier_key.startswith(MODE_PREFIX):
        return barrier_key[len(MODE_PREFIX) :]
    return GENERAL


def _mediator_positions(episode_ids: list[int], settings: dict[int, dict]) -> dict[int, int | None]:
    """The mediator's seat per episode, by the rule of ``instruments.interventions.mediator_position`` (the
    recorded ``settings["promediate"]["mediator_position"]``, else the seat whose character is named Mediator),
    read for all episodes in one query instead of one per episode."""
    found: dict[int, int | None] = {pk: None for pk in episode_ids}
    for episode_id, position in Seat.objects.filter(
        episode_id__in=episode_ids, character__first_name__iexact=MEDIATOR_NAME, character__last_name=""
    ).values_list("episode_id", "position"):
        found[episode_id] = position
    for pk in episode_ids:
        recorded = settings[pk].get("promediate") or {}
        if isinstance(recorded, dict) and "mediator_position" in recorded:
            stated = recorded["mediator_position"]
            found[pk] = stated if isinstance(stated, int) and not isinstance(stated, bool) else None
    return found


def _latest_readings(episode_ids: list[int], filters: ProMediateFilters) -> dict[int, tuple[str, str]]:
    """(judge, prompt version) of the consensus reading each episode is reported under."""
    rows = PairAgreement.objects.filter(episode_id__in=episode_ids)
    if filters.judge:
        rows = rows.filter(judge=filters.judge)
        if filters.prompt_version is not None:
            rows = rows.filter(prompt_version=filters.prompt_version)
    newest = rows.values("episode_id", "judge", "prompt_version").annotate(last=Max("pk")).order_by("last")
    chosen: dict[int, tuple[str, str]] = {}
    for row in newest:  # ascending, so the newest reading of each episode is written last
        chosen[row["episode_id"]] = (row["judge"], row["prompt_version"])
    return chosen


def _tags(episode_ids: list[int], readings: dict[int, tuple[str, str]]) -> dict[tuple[int, str], dict[int, set[int]]]:
    """(episode, kind) -> turn index -> topics tagged true, under the reading's judge when it tagged, else the
    latest tagger of that kind."""
    rows = list(
        TopicTag.objects.filter(turn__episode_id__in=episode_ids)
        .order_by("pk")
        .values_list("pk", "turn__episode_id", "turn__index", "topic_id", "kind", "value", "judge", "prompt_version")
    )
    taggers: dict[tuple[int, str], list[tuple[str, str]]] = defaultdict(list)
    for _, episode_id, _, _, kind, _, judge, version in rows:
        taggers[episode_id, kind].append((judge, version))
    chosen = {
        key: readings.get(key[0]) if readings.get(key[0]) in found else found[-1] for key, found in taggers.items()
    }
    tags: dict[tuple[int, str], dict[int, set[int]]] = defaultdict(lambda: defaultdict(set))
    for _, episode_id, index, topic_id, kind, value, judge, version in rows:
        if chosen[episode_id, kind] == (judge, version):
            tagged = tags[episode_id, kind][index]  # an untrue tag still marks the turn as read
            if value:
                tagged.add(topic_id)
    return tags


def _intelligence(episode_ids: list[int], readings: dict[int, tuple[str, str]]) -> dict[int, dict[int, tuple]]:
    """episode -> turn index -> the four MI scores (None = not applicable) of one judge per episode: the
    consensus judge when it answered, else the judge with the most answers."""
    answers = list(
        Answer.objects.filter(
            response__episode_id__in=episode_ids,
            response__status=Response.Status.SUBMITTED,
            response__respondent__kind=Respondent.Kind.JUDGE,
            question__instrument__preset=PROMEDIATE_INTERVENTION_PRESET,
            question__key__in=MI_DIMENSIONS,
            turn__isnull=False,
            end_turn__isnull=True,
        ).values_list(
            "response__episode_id",
            "response__respondent__model",
            "response__respondent__prompt_version",
            "turn",
            "question__key",
            "value",
            "number",
        )
    )
    counts: dict[int, dict[tuple[str, str], int]] = defaultdict(lambda: defaultdict(int))
    for episode_id, model, version, *_ in answers:
        counts[episode_id][model, version] += 1
    judges = {
        episode_id: readings.get(episode_id) if readings.get(episode_id) in found else max(found, key=found.get)
        for episode_id, found in counts.items()
    }
    scores: dict[int, dict[int, dict[str, float | None]]] = defaultdict(lambda: defaultdict(dict))
    for episode_id, model, version, turn, key, value, number in answers:
        if judges[episode_id] == (model, version):
            scores[episode_id][turn][key] = None if value == NOT_APPLICABLE else number
    return {
        episode_id: {turn: tuple(by_key.get(key) for key in MI_DIMENSIONS) for turn, by_key in turns.items()}
        for episode_id, turns in scores.items()
    }


def load_records(episodes: QuerySet[Episode], filters: ProMediateFilters) -> tuple[list[EpisodeRecord], dict[str, int]]:
    """The selected episodes' records in episode order, and how many were left out, by reason."""
    selected = list(
        filters.apply(episodes)
        .order_by("pk")
        .values_list("pk", "scenario_id", "scenario__codename", "barrier__key", "settings", "source")
    )
    ids = [row[0] for row in selected]
    settings = {row[0]: row[4] or {} for row in selected}
    mediators = _mediator_positions(ids, settings)
    readings = _latest_readings(ids, filters)
    seats: dict[int, dict[int, tuple[str, str]]] = defaultdict(dict)
    for episode_id, position, first, last, model in Seat.objects.filter(episode_id__in=ids).values_list(
        "episode_id", "position", "character__first_name", "character__last_name", "model"
    ):
        seats[episode_id][position] = (f"{first} {last}".strip(), model)
    topics: dict[int, list[tuple[int, str]]] = defaultdict(list)
    for scenario_id, pk, title in (
        Topic.objects.filter(scenario_id__in={row[1] for row in selected})
        .order_by("scenario_id", "position")
        .values_list("scenario_id", "pk", "title")
    ):
        topics[scenario_id].append((pk, title))
    turns: dict[int, list[tuple[int, int, Any]]] = defaultdict(list)
    for episode_id, index, position, created in (
        Turn.objects.filter(episode_id__in=ids)
        .order_by("episode_id", "index")
        .values_list("episode_id", "index", "seat__position", "created_at")
    ):
        turns[episode_id].append((index, position, created))
    pairs: dict[int, list[PairReading]] = defaultdict(list)
    for episode_id, judge, version, point, topic, a, b, overall, *dims in PairAgreement.objects.filter(
        episode_id__in=list(readings)
    ).values_list(
        "episode_id",
        "judge",
        "prompt_version",
        "point",
        "topic_id",
        "seat_a__position",
        "seat_b__position",
        "overall",
        *PairAgreement.DIMENSIONS,
    ):
        if readings[episode_id] == (judge, version):
            pairs[episode_id].append(
                PairReading(point=point, topic=str(topic), a=str(a), b=str(b), overall=overall, dims=tuple(dims))
            )
    tags = _tags(list(readings), readings)
    intelligence = _intelligence(list(readings), readings)

    records, skipped = [], defaultdict(int)
    for pk, scenario_id, codename, barrier, _, source in selected:
        promediate = settings[pk].get("promediate") or {}
        mediator = mediators[pk]
        condition = str(promediate.get("mediator") or (NO_MEDIATOR if mediator is None else UNKNOWN))
        model = str(
            promediate.get("mediator_model") or (seats[pk].get(mediator, ("", ""))[1] if mediator is not None else "")
        )
        if filters.mediator_model and condition != NO_MEDIATOR and model != filters.mediator_model:
            skipped["another mediator model"] += 1
            continue
        if pk not in readings:
            skipped["no consensus trace (run evaluate --promediate)"] += 1
            continue
        if not topics[scenario_id]:
            skipped["a scenario without topics"] += 1
            continue
        records.append(
            EpisodeRecord(
                episode_id=pk,
                scenario=codename or f"scenario {scenario_id}",
                mode=mode_of(barrier),
                condition=condition,
                mediator_model=model if condition != NO_MEDIATOR else "",
                run_id=_run_id(promediate.get("run_id")),
                judge=readings[pk][0],
                prompt_version=readings[pk][1],
                trace=_trace(
                    pk,
                    mediator,
                    seats[pk],
                    topics[scenario_id],
                    turns[pk],
                    pairs[pk],
                    tags,
                    intelligence.get(pk, {}),
                    timed=source in LIVE_SOURCES,
                ),
                party_names={str(position): name for position, (name, _) in seats[pk].items() if position != mediator},
                topic_titles={str(pk): title for pk, title in topics[scenario_id]},
            )
        )
    return records, dict(skipped)


def _trace(
    episode_id: int,
    mediator: int | None,
    seats: dict[int, tuple[str, str]],
    topics: list[tuple[int, str]],
    turns: list[tuple[int, int, Any]],
    pairs: list[PairReading],
    tags: dict,
    intelligence: dict[int, tuple],
    *,
    timed: bool,
) -> EpisodeTrace:
    mentions, addressed = tags.get((episode_id, TopicTag.Kind.MENTION)), tags.get((episode_id, TopicTag.Kind.ADDRESSED))
    start = turns[0][2] if turns else None
    utterances = []
    for index, position, created in turns:
        is_mediator = position == mediator
        utterances.append(
            Utterance(
                speaker=str(position),
                mediator=is_mediator,
                seconds=(created - start).total_seconds() if timed and start is not None else None,
                mentions=_keys(mentions[index]) if mentions is not None and index in mentions else None,
                addressed=_keys(addressed[index])
                if is_mediator and addressed is not None and index in addressed
                else None,
                mi=intelligence.get(index) if is_mediator else None,
            )
        )
    return EpisodeTrace(
        parties=tuple(str(position) for position in sorted(seats) if position != mediator),
        topics=tuple(str(pk) for pk, _ in topics),
        utterances=tuple(utterances),
        readings=tuple(pairs),
    )


def _keys(topic_ids: set[int]) -> frozenset[str]:
    return frozenset(str(pk) for pk in topic_ids)


def _run_id(value: Any) -> int | None:
    """A run's number, stored as a number by simulations and as the folder's text by imports."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    return int(value) if isinstance(value, str) and value.strip().isdigit() else None
