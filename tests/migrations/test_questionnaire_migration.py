"""The chat questionnaire's migration both ways: JSON questionnaires and answers become instruments and responses.

The demo fixture (``test_demo_migration``) has the default questionnaire and one of a study's own,
each answered as the form stored it. This adds what it lacks: two studies with the same questionnaire
(one instrument), an empty questionnaire (none), a choice with outer spaces, and answers given to an
earlier version of a questionnaire (a key it no longer asks, a value off its current scale), which
go to an instrument "as answered" as free text. Backward, every study's JSON and participant's
answers come back.
"""

from __future__ import annotations

import pytest
from django.apps.registry import Apps

from .harness import migrate, migrate_to_latest

BEFORE = [("chat", "0005_participant_binding_and_screen_out"), ("benchmark", "0016_answer_checks")]
OWN = [
    {"key": "trust", "kind": "likert", "label": "Trust?", "low": 0, "high": 6, "low_label": "none", "required": True},
    {"key": "end", "kind": "choice", "label": "How did it end?", "options": [" Agreed", "No deal"], "required": True},
    {"key": "notes", "kind": "text", "label": "Notes?", "max_chars": 300, "required": False},
]
ANSWERS = {  # participant id -> (study slug, answers as the old form stored them)
    "p1": ("own-a", {"trust": 5, "end": " Agreed", "notes": ""}),
    "p2": ("own-b", {"trust": None, "end": "No deal", "notes": "fine"}),
    "p3": ("own-a", {"trust": 9, "end": "No deal", "notes": "", "mood": "grim"}),
}


def store(old: Apps) -> dict:
    get = old.get_model
    team = get("benchmark", "Team").objects.get_or_create(slug="default", defaults={"name": "Default"})[0]
    user = get("auth", "User").objects.create(username="owner")
    scenario = get("benchmark", "Scenario").objects.create(team=team, codename="s", context="Two meet.")
    barrier = get("benchmark", "Barrier").objects.get(key="none")
    studies = {}
    for slug, questionnaire in (("own-a", OWN), ("own-b", OWN), ("silent", [])):
        studies[slug] = get("chat", "ChatStudy").objects.create(
            team=team, slug=slug, title=slug, created_by=user, questionnaire=questionnaire, completion_code="C",
            screen_out_code="S",
        )
    for participant_id, (slug, answers) in ANSWERS.items():
        episode = get("benchmark", "Episode").objects.create(
            team=team, scenario=scenario, barrier=barrier, source="human_chat", external_id=participant_id
        )
        get("chat", "Participant").objects.create(
            study=studies[slug], participant_id=participant_id, stage="done", episode=episode, answers=answers,
        )
    return stored(old)


def stored(old: Apps) -> dict:
    return {
        "studies": dict(old.get_model("chat", "ChatStudy").objects.values_list("slug", "questionnaire")),
        "answers": dict(old.get_model("chat", "Participant").objects.values_list("participant_id", "answers")),
    }


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_questionnaires_become_instruments_answers_responses_and_both_come_back():
    try:
        before = store(migrate(BEFORE))
        new = migrate_to_latest()

        ChatStudy = new.get_model("chat", "ChatStudy")
        instruments = dict(ChatStudy.objects.values_list("slug", "instrument__name"))
        assert instruments == {"own-a": "Chat questionnaire: own-a", "own-b": "Chat questionnaire: own-a",
                               "silent": None}
        Question = new.get_model("benchmark", "Question")
        trust, end, notes = Question.objects.filter(instrument__chat_studies__slug="own-a").order_by("position")
        assert (trust.kind, trust.low, trust.high, trust.options["labels"]) == ("slider", 0, 6, {"min": "none"})
        assert end.options["choices"] == [{"value": "Agreed", "label": " Agreed"}, {"value": "No deal", "label": "No deal"}]
        assert (notes.kind, notes.options, notes.required) == ("text", {"max_length": 300}, False)

        Participant = new.get_model("chat", "Participant")
        Answer = new.get_model("benchmark", "Answer")
        found = {
            p.participant_id: (p.response.instrument.name, p.response.respondent.label, dict(
                Answer.objects.filter(response=p.response).values_list("question__key", "value")))
            for p in Participant.objects.select_related("response__instrument", "response__respondent")
        }
        assert found == {
            "p1": ("Chat questionnaire: own-a", "p1", {"trust": "5", "end": "Agreed"}),
            "p2": ("Chat questionnaire: own-a", "p2", {"end": "No deal", "notes": "fine"}),
            "p3": ("Chat questionnaire: own-a (as answered)", "p3", {"trust": "9", "end": "No deal", "mood": "grim"}),
        }
        as_answered = Question.objects.filter(instrument__name__endswith="(as answered)").order_by("position")
        assert [(q.key, q.kind) for q in as_answered] == [
            ("trust", "text"), ("end", "categorical"), ("notes", "text"), ("mood", "text")]
        answered = new.get_model("benchmark", "Instrument").objects.filter(responses__isnull=False).distinct()
        assert answered.count() == 2 and not answered.filter(frozen_at__isnull=True).exists()

        after = stored(migrate(BEFORE))
        assert after["studies"] == before["studies"] | {"own-a": _as_written(OWN), "own-b": _as_written(OWN)}
        assert after["answers"] == {
            "p1": {"trust": 5, "end": "Agreed", "notes": ""},
            "p2": {"trust": None, "end": "No deal", "notes": "fine"},
            "p3": {"trust": "9", "end": "No deal", "notes": "", "mood": "grim"},
        }
    finally:
        migrate_to_latest()


def _as_written(questions: list[dict]) -> list[dict]:
    """The JSON the reverse writes: choice values without outer spaces, end labels only where given."""
    written = [dict(question) for question in questions]
    written[1]["options"] = [option.strip() for option in written[1]["options"]]
    return written
