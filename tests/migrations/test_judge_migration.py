"""The judge's migration both ways: evaluations become answers, and answers to the judge presets go back.

The demo fixture (``test_demo_migration``) has no usage and one time per judge call; this adds what it
lacks: a model judge's usage, scores of one judge written at different times, an episode-level and a
per-seat score, and imported human means. Forward, each (episode, evaluator, prompt version, preset)
is one response; backward, every evaluation comes back with the same values, its time the earliest of
its response (an answer has no time of its own).
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.apps.registry import Apps

from .harness import migrate, migrate_to_latest

BEFORE = [("benchmark", "0010_instruments_goals_probes")]
EARLY, LATE = datetime(2024, 5, 1, 12, 0, tzinfo=UTC), datetime(2024, 5, 1, 12, 3, tzinfo=UTC)
EVALUATIONS = [  # seat position, evaluator, prompt version, dimension, score, reasoning, time, usage
    (0, "openai/gpt-4o", "judge-2025.1", "goal", 7.0, "Most of it.", LATE, (900, 1200, 300)),
    (1, "openai/gpt-4o", "judge-2025.1", "secret", -2.0, "A hint slipped.", EARLY, (900, 1200, 300)),
    (None, "openai/gpt-4o", "judge-2025.1", "mutual_understanding", 4.0, "They agreed.", LATE, (900, 1200, 300)),
    (0, "Human Mean", "", "goal", 6.5, "", EARLY, (None, None, None)),
]


def old_rows(old: Apps) -> list[tuple]:
    Evaluation = old.get_model("benchmark", "Evaluation")
    return sorted(
        ((e.episode.external_id, e.seat and e.seat.position, e.evaluator, e.prompt_version, e.dimension, e.score,
          e.reasoning, (e.latency_ms, e.prompt_tokens, e.completion_tokens))
         for e in Evaluation.objects.select_related("episode", "seat")),
        key=repr,
    )


def old_times(old: Apps) -> dict[str, datetime]:
    return dict(old.get_model("benchmark", "Evaluation").objects.values_list("dimension", "created_at"))


def store_evaluations(old: Apps) -> list[tuple]:
    get = old.get_model
    team = get("benchmark", "Team").objects.get_or_create(slug="default", defaults={"name": "Default"})[0]
    character = get("benchmark", "Character").objects.create(team=team, first_name="Ana")
    scenario = get("benchmark", "Scenario").objects.create(team=team, codename="s", context="Two meet.")
    roles = [get("benchmark", "Role").objects.create(scenario=scenario, position=n, goal="g") for n in (0, 1)]
    barrier = get("benchmark", "Barrier").objects.get(key="none")
    episode = get("benchmark", "Episode").objects.create(
        team=team, scenario=scenario, barrier=barrier, source="imported", external_id="judged"
    )
    seats = [get("benchmark", "Seat").objects.create(episode=episode, position=n, role=roles[n], character=character)
             for n in (0, 1)]
    for seat, evaluator, version, dimension, score, reasoning, moment, (latency, prompt, completion) in EVALUATIONS:
        get("benchmark", "Evaluation").objects.create(
            episode=episode, seat=None if seat is None else seats[seat], evaluator=evaluator, prompt_version=version,
            dimension=dimension, score=score, reasoning=reasoning, created_at=moment, latency_ms=latency,
            prompt_tokens=prompt, completion_tokens=completion,
        )
    return old_rows(old)


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_evaluations_become_one_response_per_judge_and_preset_and_come_back_unchanged():
    try:
        stored = store_evaluations(migrate(BEFORE))
        new = migrate_to_latest()

        Response = new.get_model("benchmark", "Response")
        responses = {
            (r.respondent.kind, r.respondent.model, r.respondent.label, r.respondent.prompt_version, r.instrument.name):
                (r.created_at, (r.latency_ms, r.prompt_tokens, r.completion_tokens), r.answers.count())
            for r in Response.objects.select_related("respondent", "instrument")
        }
        assert responses == {
            ("judge", "openai/gpt-4o", "", "judge-2025.1", "Sotopia-EVAL judge"): (EARLY, (900, 1200, 300), 2),
            ("judge", "openai/gpt-4o", "", "judge-2025.1", "SocialVeil judge"): (LATE, (900, 1200, 300), 1),
            ("annotator", "", "Human Mean", "", "Sotopia-EVAL judge"): (EARLY, (None, None, None), 1),
        }
        Answer = new.get_model("benchmark", "Answer")
        secret = Answer.objects.get(question__key="secret")
        assert (secret.seat_position, secret.number, secret.value, secret.reasoning) == (1, -2, "-2", "A hint slipped.")
        assert Answer.objects.get(question__key="goal", response__respondent__kind="annotator").value == "6.5"

        old = migrate(BEFORE)
        assert old_rows(old) == stored
        assert old_times(old) == {"goal": EARLY, "secret": EARLY, "mutual_understanding": LATE}
    finally:
        migrate_to_latest()
