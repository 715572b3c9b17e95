"""ProMediate's consensus tracking (paper §3.1, Algorithm 1, App. C), as pure functions.

Each party holds a free-text attitude per topic; every pair of parties is scored per topic in [0, 1];
pairs average into a topic consensus c_T(k) and topics into the overall consensus c(k). The series has
one point before any utterance (k = 0, the starting attitudes) and one after each utterance: c(k+1) is
the state after utterance k. A pair's key is unordered, so a series never depends on the order the
parties are listed in (upstream's code mixes pair slots up; ``promediate_slots`` replays that for
imported runs). The metrics read off the series are in ``promediate``.
"""

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations

PAIR_SCORES = ("llm_overall", "mean_of_dims")


# Spellings of "the topic is not mentioned" the attitude judge uses (compared lower-case, without
# the final period).
_NO_MENTION = frozenset({"no mention", "no explicit mention", "no explicit mention in this speech"})


def normalise_attitude(text: str | None) -> str | None:
    """The attitude text stripped, or None when empty or any "no mention" spelling (case and period ignored).

    The attitude judge (J1) answers "No Mention" in several spellings; a topic with no stance keeps
    the party's previous attitude (Algorithm 1), so all of them must mean the same thing.
    """
    if text is None:
        return None
    stripped = str(text).strip()
    if stripped.rstrip(".").strip().lower() in _NO_MENTION or not stripped:
        return None
    return stripped


# ---------------------------------------------------------------------------------------------------
# Consensus series (PM-10)


@dataclass(frozen=True)
class PairReading:
    """One stored pair score, valid from series point `point` until the pair is rescored.

    `point` 0 holds the starting attitudes' scores, point k+1 the scores after utterance k. The pair
    is unordered: `a` and `b` are sorted on construction, so a series never depends on the order in
    which parties are listed (upstream indexes its updates by a differently ordered dictionary and
    can write a score into another pair's slot).
    """

    point: int
    topic: str
    a: str
    b: str
    overall: float | None
    dims: tuple[float | None, ...] | None = None

    def __post_init__(self) -> None:
        if self.a == self.b:
            raise ValueError(f"pair reading at point {self.point}, topic {self.topic!r}: a party paired with itself")
        if self.b < self.a:
            first, second = self.b, self.a
            object.__setattr__(self, "a", first)
            object.__setattr__(self, "b", second)

    @property
    def pair(self) -> tuple[str, str]:
        return (self.a, self.b)


@dataclass(frozen=True)
class Series:
    """Topic consensus c_T(0…K) per topic and overall consensus c(0…K) (mean over topics)."""

    topics: dict[str, list[float]]
    overall: list[float]


def check_choice(name: str, value: str, allowed: Sequence[str]) -> None:
    if value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(allowed)}; got {value!r}")


def pair_value(reading: PairReading, pair_score: str = "llm_overall") -> float:
    """What one reading adds to its topic's pair sum.

    `llm_overall` (upstream) is the judge's own overall field, null counting as 0; `mean_of_dims`
    (the paper: "the average over five dimensions") is the mean of the dimension scores, a null
    dimension counting as 0 and a reading without dimensions as 0.
    """
    check_choice("pair_score", pair_score, PAIR_SCORES)
    if pair_score == "llm_overall":
        return float(reading.overall) if reading.overall else 0.0
    if not reading.dims:
        return 0.0
    return sum(float(x) if x else 0.0 for x in reading.dims) / len(reading.dims)


def consensus_series(
    parties: Sequence[str],
    topics: Sequence[str],
    points: int,
    readings: Iterable[PairReading],
    *,
    pair_score: str = "llm_overall",
) -> Series:
    """c_T(k) and c(k) for k = 0 … points−1 from pair readings, carried forward between rescorings.

    c_T(k) = (sum of the C(N,2) pairs' latest scores at or before k) / C(N,2); a pair never scored
    counts as 0, as upstream divides by the number of pairs and sums only truthy scores (spec §1.4
    item 4). c(k) = mean of c_T(k) over topics. Pairs are summed in the order of
    `itertools.combinations(parties)`, which is upstream's own pair list order when `parties` are in
    the case file's `names` order. Two readings for one (point, topic, pair): the later one wins.
    """
    check_choice("pair_score", pair_score, PAIR_SCORES)
    parties, topics = list(parties), list(topics)
    if len(set(parties)) != len(parties) or len(parties) < 2:
        raise ValueError(f"consensus needs at least two distinct parties; got {parties}")
    if not topics or len(set(topics)) != len(topics):
        raise ValueError(f"consensus needs at least one topic, each named once; got {topics}")
    if points < 1:
        raise ValueError(f"a consensus series has at least one point (the starting attitudes); got {points}")
    pairs = [tuple(sorted(pair)) for pair in combinations(parties, 2)]
    changes: dict[int, dict[tuple[str, tuple[str, str]], float]] = {}
    known_parties, known_topics = set(parties), set(topics)
    for reading in readings:
        if reading.topic not in known_topics:
            raise ValueError(f"pair reading at point {reading.point}: unknown topic {reading.topic!r}")
        for party in reading.pair:
            if party not in known_parties:
                raise ValueError(
                    f"pair reading at point {reading.point}, topic {reading.topic!r}: unknown party {party!r}"
                )
        if not 0 <= reading.point < points:
            raise ValueError(
                f"pair reading for topic {reading.topic!r}, pair {reading.pair}: point {reading.point} "
                f"is outside 0…{points - 1}"
            )
        changes.setdefault(reading.point, {})[(reading.topic, reading.pair)] = pair_value(reading, pair_score)
    current = {(topic, pair): 0.0 for topic in topics for pair in pairs}
    by_topic: dict[str, list[float]] = {topic: [] for topic in topics}
    overall: list[float] = []
    for point in range(points):
        current.update(changes.get(point, {}))
        values = []
        for topic in topics:
            value = sum(current[(topic, pair)] for pair in pairs) / len(pairs)
            by_topic[topic].append(value)
            values.append(value)
        overall.append(sum(values) / len(values))
    return Series(by_topic, overall)


Score = float | None | tuple[float | None, tuple[float | None, ...] | None]
Scorer = Callable[[str, str | None, str | None], Score]


def rescore(
    parties: Sequence[str],
    topics: Sequence[str],
    initial: Mapping[str, Mapping[str, str | None]],
    utterances: Sequence[tuple[str, Mapping[str, str | None] | None]],
    scorer: Scorer,
) -> list[PairReading]:
    """Pair readings from attitudes, rescoring only what an utterance can have changed (Algorithm 1).

    Point 0 scores every pair on every topic from `initial`. After utterance k by a party, each topic
    on which it states an attitude (not a "no mention" spelling) replaces its attitude, and only the
    pairs containing that party on those topics are rescored, at point k+1; a speaker who is not a
    party (the mediator) changes nothing. `scorer(topic, attitude_a, attitude_b)` receives the pair
    in sorted order and returns the overall score, or `(overall, dims)`.
    """
    parties, topics = list(parties), list(topics)
    missing = [party for party in parties if party not in initial]
    if missing:
        raise ValueError(f"starting attitudes missing for {', '.join(missing)}")
    attitude = {party: {topic: normalise_attitude(initial[party].get(topic)) for topic in topics} for party in parties}

    def reading(point: int, topic: str, pair: tuple[str, str]) -> PairReading:
        a, b = sorted(pair)
        score = scorer(topic, attitude[a][topic], attitude[b][topic])
        overall, dims = score if isinstance(score, tuple) else (score, None)
        return PairReading(point, topic, a, b, overall, tuple(dims) if dims is not None else None)

    out = [reading(0, topic, pair) for topic in topics for pair in combinations(parties, 2)]
    for k, (speaker, stated) in enumerate(utterances):
        if speaker not in attitude or not stated:
            continue
        unknown = [topic for topic in stated if topic not in attitude[speaker]]
        if unknown:
            raise ValueError(f"utterance {k} by {speaker}: unknown topic {unknown[0]!r}")
        changed = [topic for topic in topics if normalise_attitude(stated.get(topic)) is not None]
        for topic in changed:
            attitude[speaker][topic] = normalise_attitude(stated[topic])
        for topic in changed:
            out.extend(reading(k + 1, topic, (speaker, other)) for other in parties if other != speaker)
    return out
