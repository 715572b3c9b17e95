"""Each turn's linguistic features are stored once, read back unchanged, and never kept stale.

The transcripts are real: the first conversations of SocialVeil's GPT-4o-mini run under each
barrier (../shared/realdata/socialveil/runs/), one line a turn, the barrier seat first.
"""

import json
from pathlib import Path

import pytest

from benchmark.models import ActionType, Episode, Turn, TurnFeatures
from benchmark.results import turn_features
from benchmark.results.build import ResultFilters, build_results
from benchmark.stats import linguistic
from tests.builders import make_episode, make_scores

pytestmark = pytest.mark.django_db

RUN = (Path(__file__).resolve().parents[2].parent / "shared" / "realdata" / "socialveil" / "runs"
       / "exp_gpt4o-mini_episode_all_neutralized")
CONDITIONS = {"baseline": "none", "semantic": "semantic", "cultural": "sociocultural", "emotional": "emotional"}


def real_lines(mode: str, scenario: int) -> list[str]:
    log = json.loads((RUN / f"mode_{mode}" / f"scenario_{scenario}" / "conversation_log.json").read_text())
    return [line.partition(": ")[2] for line in log["conversation_log"] if ": " in line]


@pytest.fixture
def real_episodes() -> list[Episode]:
    episodes = []
    for mode, condition in CONDITIONS.items():
        for scenario in (1, 2):
            lines = [text for text in real_lines(mode, scenario) if text.strip()]
            episode = make_episode(barrier=condition, tag="real", external_id=f"{mode}-{scenario}",
                                   turns=[(ActionType.SPEAK, text) for text in lines])
            make_scores(episode, [("goal", 1, 5), ("mutual_understanding", None, 3)], evaluator="judge-a")
            episodes.append(episode)
    return episodes


def expected_features(episode: Episode) -> dict[str, float | None]:
    """The features as the results computed them before they were stored: from the turns' text."""
    spoken = list(episode.turns.filter(action_type=ActionType.SPEAK).order_by("index").select_related("seat"))
    whole = linguistic.signature(turn.content for turn in spoken)
    barrier = linguistic.signature(turn.content for turn in spoken if turn.seat.carries_barrier)
    return {**{f"transcript.{name}": getattr(whole, name) for name in linguistic.FEATURES},
            **{f"barrier_speech.{name}": getattr(barrier, name) for name in linguistic.FEATURES}}


def feature_columns(table) -> dict[int, dict[str, float | None]]:
    columns = [column for column in table.columns if column.startswith(("transcript.", "barrier_speech."))]
    return {row["episode"]: {column: row[column] for column in columns} for _, row in table.iterrows()}


def test_stored_features_equal_features_computed_from_the_text(real_episodes):
    _, first = build_results(ResultFilters(), Episode.objects.all(), resamples=0)

    stored = {row.turn_id: row for row in TurnFeatures.objects.all()}
    spoken = Turn.objects.filter(action_type=ActionType.SPEAK)
    assert len(stored) == spoken.count() > 100
    for turn in spoken:
        fresh = linguistic.utterance(turn.content)
        row = stored[turn.pk]
        assert (row.words, row.vague_pronouns, row.hedges, row.self_focus) == (
            fresh.counts.words, fresh.counts.vague_pronouns, fresh.counts.hedges, fresh.counts.self_focus)
        assert row.sentiment == fresh.sentiment  # exactly: a float column keeps every bit
    _, second = build_results(ResultFilters(), Episode.objects.all(), resamples=0)
    for table in (first, second):
        for episode in real_episodes:
            assert feature_columns(table)[episode.pk] == expected_features(episode)


def test_a_second_report_reads_the_stored_features_without_computing_any(real_episodes, monkeypatch):
    build_results(ResultFilters(), Episode.objects.all(), resamples=0)

    def refuse(text):
        raise AssertionError(f"computed again: {text!r}")

    monkeypatch.setattr(turn_features, "utterance", refuse)
    _, table = build_results(ResultFilters(), Episode.objects.all(), resamples=0)

    assert feature_columns(table)[real_episodes[0].pk] == expected_features(real_episodes[0])


def test_a_turn_edited_after_its_features_were_stored_gets_them_computed_again(real_episodes):
    build_results(ResultFilters(), Episode.objects.all(), resamples=0)
    episode = real_episodes[1]
    turn = episode.turns.get(index=0)
    before = TurnFeatures.objects.get(turn=turn)

    # An edit that bypasses save() and every signal, as a bulk update or a shell would.
    Turn.objects.filter(pk=turn.pk).update(content="I guess maybe it is sort of that thing, I think.")
    _, table = build_results(ResultFilters(), Episode.objects.all(), resamples=0)

    after = TurnFeatures.objects.get(turn=turn)
    assert after.digest != before.digest
    assert after.hedges == linguistic.utterance("I guess maybe it is sort of that thing, I think.").counts.hedges
    assert feature_columns(table)[episode.pk] == expected_features(episode)


def test_features_stored_under_other_definitions_are_computed_again(real_episodes):
    build_results(ResultFilters(), Episode.objects.all(), resamples=0)
    TurnFeatures.objects.update(digest="from an older word list", sentiment=0.5, hedges=99)

    _, table = build_results(ResultFilters(), Episode.objects.all(), resamples=0)

    assert not TurnFeatures.objects.filter(hedges=99).exists()
    assert feature_columns(table)[real_episodes[0].pk] == expected_features(real_episodes[0])


def test_the_digest_names_the_text_and_the_definitions():
    assert turn_features.digest("Hello there.") == turn_features.digest("Hello there.")
    assert turn_features.digest("Hello there.") != turn_features.digest("Hello there!")
    assert len(linguistic.definitions_key()) == 16
