"""Two reports that fill the same turns' features at once both answer, and the stored rows are right."""

import pytest

from benchmark.models import ActionType, Turn, TurnFeatures
from benchmark.results.turn_features import digest, spoken_features
from benchmark.stats import linguistic
from tests.builders import make_episode
from tests.concurrency import at_once

pytestmark = [pytest.mark.concurrency, pytest.mark.django_db(transaction=True, serialized_rollback=True)]

LINES = ("Maybe it is sort of that thing, I guess.", "Thank you, that sounds wonderful to me.",
         "I am not sure that works for me.", "Could you tell me which one you mean, exactly?")


def test_two_reports_filling_the_same_turns_at_once_both_answer_and_store_each_turn_once():
    episodes = [make_episode(turns=[(ActionType.SPEAK, f"{LINES[n % 4]} ({e}.{n})") for n in range(40)])
                for e in range(5)]
    ids = [episode.pk for episode in episodes]

    outcomes = at_once(lambda: spoken_features(ids), lambda: spoken_features(ids))

    assert all(isinstance(outcome, dict) for outcome in outcomes), outcomes
    assert outcomes[0] == outcomes[1]
    assert TurnFeatures.objects.count() == Turn.objects.count() == 200
    for row in TurnFeatures.objects.select_related("turn"):
        fresh = linguistic.utterance(row.turn.content)
        assert row.digest == digest(row.turn.content)
        assert (row.words, row.hedges, row.sentiment) == (fresh.counts.words, fresh.counts.hedges, fresh.sentiment)
