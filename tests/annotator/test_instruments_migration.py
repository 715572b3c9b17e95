"""Moving onto instruments keeps every scheme, question, annotation and answer, and can be undone.

The annotator's own question system (Scheme, Question, Answer) is filled in the old schema, the
database is migrated forward (annotator 0008-0010, benchmark 0014) and every row is looked up in
its new home by its natural key (a scheme by name and version, a question by key, an answer by
its annotation and question) with the same values; then it is migrated back and the old rows are
checked again, so the move is reversible. The presets other migrations make (the judge's, the
AgentSense goals) are left where they are.
"""

from datetime import UTC, datetime

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE = [("annotator", "0007_annotation_generated_by"), ("benchmark", "0010_instruments_goals_probes")]
AFTER = [("annotator", "0010_drop_schemes"), ("benchmark", "0016_answer_checks")]
FROZEN = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)
ANCHORS = [{"value": v, "label": str(v), "description": f"{v} of 5"} for v in range(1, 6)]
CHOICES = [{"value": "semantic", "label": "Semantic"}, {"value": "none", "label": "None"}]


def migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


def migrate_to_latest() -> None:
    """Leave the database as every other test expects it: fully migrated."""
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())


@pytest.fixture
def old_apps(transactional_db):
    """The app registry of the old schema, the database migrated back to it; fully migrated again afterwards."""
    try:
        yield migrate(BEFORE)
    finally:
        migrate_to_latest()


def fill(old) -> dict:
    """Two teams' studies under a preset scheme and a team's own scheme, with versions, drafts, spans and keys."""
    get = old.get_model
    team = get("benchmark", "Team").objects.create(name="Lab", slug="lab")
    other = get("benchmark", "Team").objects.create(name="Other lab", slug="other-lab")
    User = get("auth", "User")
    ann, bea = User.objects.create(username="ann"), User.objects.create(username="bea")
    character = get("benchmark", "Character").objects.create(first_name="Ana", external_id="c1", team=team)
    scenario = get("benchmark", "Scenario").objects.create(codename="s", context="c", external_id="s1", team=team)
    roles = [get("benchmark", "Role").objects.create(scenario=scenario, position=p, character=character, goal="g")
             for p in (0, 1)]
    none = get("benchmark", "Barrier").objects.get(key="none")
    episode = get("benchmark", "Episode").objects.create(
        scenario=scenario, barrier=none, source="imported", external_id="e1", team=team
    )
    for role in roles:
        get("benchmark", "Seat").objects.create(episode=episode, position=role.position, role=role, character=character)

    Scheme, Question = get("annotator", "Scheme"), get("annotator", "Question")
    preset = Scheme.objects.create(name="SocialVeil human evaluation", preset="socialveil", version=1,
                                   description="Rate it.", frozen_at=FROZEN)
    own = Scheme.objects.create(name="Our scheme", version=3, description="Ours.")
    unused = Scheme.objects.create(name="Draft scheme", version=1)
    questions = {
        "barrier": Question.objects.create(
            scheme=preset, key="barrier", position=0, kind="categorical", prompt="Which?", rationale="optional",
            options={"choices": CHOICES}, truth="episode.barrier"),
        "confusion": Question.objects.create(
            scheme=preset, key="confusion", position=1, kind="likert", prompt="Confusion?",
            options={"anchors": ANCHORS}, dimension="unresolved_confusion"),
        "goal": Question.objects.create(
            scheme=preset, key="goal", position=2, kind="slider", prompt="Goal?", per_seat=True, rationale="required",
            options={"min": 0, "max": 10, "step": 1}, dimension="goal"),
        "spans": Question.objects.create(
            scheme=preset, key="spans", position=3, kind="span", prompt="Mark.", required=False,
            options={"labels": ["error"], "attributes": ["emotions"]}),
        "note": Question.objects.create(scheme=own, key="note", position=0, kind="text", prompt="Note?"),
    }
    Study, Item = get("annotator", "Study"), get("annotator", "StudyItem")
    study = Study.objects.create(team=team, title="T", slug="t", scheme=preset, instructions="Read.")
    Study.objects.create(team=other, title="O", slug="o", scheme=preset, instructions="Read.")
    Study.objects.create(team=team, title="Own", slug="own", scheme=own, instructions="Read.")
    item = Item.objects.create(study=study, episode=episode, position=0, kind="gold")
    key = get("annotator", "ItemKey").objects.create(item=item, question=questions["barrier"], value="none")
    assignments = {
        user.username: get("annotator", "Assignment").objects.create(
            item=item, annotator=user, status="submitted", claimed_at=FROZEN, lease_expires_at=FROZEN,
            submitted_at=FROZEN)
        for user in (ann, bea)
    }
    Annotation, Answer = get("annotator", "Annotation"), get("annotator", "Answer")
    versions = [
        Annotation.objects.create(assignment=assignments["ann"], version=1, status="submitted", scheme=preset,
                                  submitted_at=FROZEN),
        Annotation.objects.create(assignment=assignments["ann"], version=2, status="submitted", scheme=preset,
                                  submitted_at=FROZEN, generated_by="a script"),
        Annotation.objects.create(assignment=assignments["ann"], version=3, status="draft", scheme=preset),
        Annotation.objects.create(assignment=assignments["bea"], version=1, status="submitted", scheme=preset,
                                  submitted_at=FROZEN),
    ]
    rows = [
        (versions[0], "barrier", None, "semantic", None, "Vague."),
        (versions[0], "confusion", None, "2", 2.0, ""),
        (versions[1], "barrier", None, "none", None, ""),
        (versions[1], "goal", 0, "7", 7.0, "Got the week."),
        (versions[1], "goal", 1, "0", 0.0, "Nothing."),
        (versions[2], "confusion", None, "12", None, ""),  # a draft keeps what was typed
        (versions[3], "barrier", None, "none", None, ""),
    ]
    answers = [
        Answer.objects.create(annotation=version, question=questions[q], seat_position=seat, value=value,
                              number=number, rationale=rationale)
        for version, q, seat, value, number, rationale in rows
    ]
    span = get("annotator", "Span").objects.create(
        annotation=versions[1], question=questions["spans"], label="error", start_turn=0, end_turn=0,
        rationale="Cold.", correction="Warm up."
    )
    span.attributes.set(get("annotator", "SocialAttribute").objects.filter(key="emotions"))
    return {"schemes": [preset, own, unused], "questions": questions, "versions": versions, "answers": answers,
            "span": span, "key": key, "study": study, "users": (ann, bea), "teams": (team, other)}


SCHEME_FIELDS = ("name", "preset", "version", "description", "frozen_at")  # (name, version) is unique
QUESTION_FIELDS = ("key", "position", "kind", "prompt", "help_text", "required", "rationale", "options", "dimension",
                   "truth")
ANSWER_FIELDS = ("seat_position", "value", "number")


def schemes(apps, model):
    """Instruments or schemes by (name, version): their fields, and their questions by key."""
    rows = {}
    for row in apps.get_model(*model).objects.all():
        questions = {
            q.key: [*(getattr(q, f) for f in QUESTION_FIELDS), q.scope == "seat" if hasattr(q, "scope") else q.per_seat]
            for q in row.questions.all()
        }
        rows[row.name, row.version] = ([getattr(row, f) for f in SCHEME_FIELDS], questions)
    return rows


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_every_scheme_question_annotation_and_answer_moves_and_moves_back(old_apps):
    made = fill(old_apps)
    schemes_before = schemes(old_apps, ("annotator", "Scheme"))
    answers_before = sorted(old_apps.get_model("annotator", "Answer").objects.values_list(
        "annotation_id", "question__key", *ANSWER_FIELDS, "rationale"
    ))
    names = {name for name, _ in schemes_before}

    new = migrate(AFTER)

    get = new.get_model
    Instrument, Question = get("benchmark", "Instrument"), get("benchmark", "Question")
    instruments = schemes(new, ("benchmark", "Instrument"))
    moved = {key: value for key, value in instruments.items() if key[0] in names}
    assert moved == schemes_before  # fields, questions, and per_seat as scope "seat"
    others = Instrument.objects.exclude(name__in=names).values_list("preset", "team")
    assert all(preset and team is None for preset, team in others)  # only presets other migrations made
    team, _ = made["teams"]
    owners = dict(Instrument.objects.filter(name__in=[name for name, _ in moved]).values_list("name", "team_id"))
    assert owners == {
        "SocialVeil human evaluation": None,  # a preset: shared, as before
        "Our scheme": team.pk,  # only this team's studies use it
        "Draft scheme": None,  # no study uses it: shared, as every scheme was
    }
    bounds = {key: (low, high) for key, low, high in Question.objects.filter(
        instrument__name__in=owners).values_list("key", "low", "high")}
    assert bounds == {"barrier": (None, None), "confusion": (1, 5), "goal": (0, 10), "spans": (None, None),
                      "note": (None, None)}

    Annotation, Response = get("annotator", "Annotation"), get("benchmark", "Response")
    preset = Instrument.objects.get(name="SocialVeil human evaluation")
    ann, bea = made["users"]
    statuses = {
        annotation.pk: (annotation.response.status, annotation.response.respondent.user_id,
                        annotation.response.respondent.kind, annotation.response.instrument_id,
                        annotation.response.episode_id)
        for annotation in Annotation.objects.select_related("response__respondent")
    }
    first, edit, draft, other = made["versions"]
    episode = made["study"].items.get().episode_id
    assert statuses == {
        first.pk: ("superseded", ann.pk, "annotator", preset.pk, episode),
        edit.pk: ("submitted", ann.pk, "annotator", preset.pk, episode),
        draft.pk: ("draft", ann.pk, "annotator", preset.pk, episode),
        other.pk: ("submitted", bea.pk, "annotator", preset.pk, episode),
    }
    assert Response.objects.filter(respondent__kind="annotator").count() == 4
    answers_after = sorted(get("benchmark", "Answer").objects.filter(response__annotation__isnull=False).values_list(
        "response__annotation__id", "question__key", *ANSWER_FIELDS, "reasoning"
    ))
    assert answers_after == answers_before
    assert get("annotator", "Annotation").objects.get(pk=edit.pk).generated_by == "a script"

    span = get("annotator", "Span").objects.get()
    assert (span.question.instrument_id, span.question.key) == (preset.pk, "spans")
    # The social attributes moved with their links.
    assert list(span.attributes.values_list("key", flat=True)) == ["emotions"]
    assert get("benchmark", "SocialAttribute").objects.count() == 7
    key = get("annotator", "ItemKey").objects.get()
    assert (key.question.instrument_id, key.question.key, key.value) == (preset.pk, "barrier", "none")
    assert dict(get("annotator", "Study").objects.values_list("slug", "instrument__name")) == {
        "t": preset.name, "o": preset.name, "own": "Our scheme",
    }

    old = migrate(BEFORE)

    get = old.get_model
    assert schemes(old, ("annotator", "Scheme")) == schemes_before
    assert sorted(get("annotator", "Answer").objects.values_list(
        "annotation_id", "question__key", *ANSWER_FIELDS, "rationale"
    )) == answers_before
    assert set(get("annotator", "Annotation").objects.values_list("scheme__name", flat=True)) == {preset.name}
    assert get("annotator", "Span").objects.get().question.key == "spans"
    assert get("annotator", "ItemKey").objects.get().question.key == "barrier"
    assert get("annotator", "SocialAttribute").objects.count() == 7
    assert not get("benchmark", "Instrument").objects.filter(name__in=names).exists()
    assert not get("benchmark", "Response").objects.exists()


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_a_submitted_answer_the_database_would_refuse_stops_the_move_with_its_name(old_apps):
    made = fill(old_apps)
    answer = made["answers"][1]  # the confusion rating of a submitted version
    old_apps.get_model("annotator", "Answer").objects.filter(pk=answer.pk).update(number=9)

    with pytest.raises(RuntimeError, match=rf"answer {answer.pk} \(annotation {answer.annotation_id}, "
                                           r"question 'confusion'\): the number 9 is outside 1..5"):
        migrate(AFTER)
    old_apps.get_model("annotator", "Answer").objects.filter(pk=answer.pk).update(number=2)
