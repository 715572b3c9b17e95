"""The judge becomes a respondent: its rubrics are instruments, its scores are answers.

1. ``Question.label``: a short name for tables and pages.
2. The two preset instruments of ``benchmark.evaluation.rubrics`` ("Sotopia-EVAL judge", seven
   per-seat questions; "SocialVeil judge", two per-episode questions), team NULL.
3. Every ``Evaluation`` becomes an ``Answer``: the rows of one (episode, evaluator, prompt
   version, instrument) make one ``Response`` of the evaluator's respondent (a judge, or an
   annotator-kind respondent labelled ``human mean``; see ``benchmark.evaluation.respondents``).
   Each answer keeps the score (``number``, and as text in ``value``), the reasoning and the seat's
   position; the response takes the group's earliest time and the usage of its first row that has
   one (a judge call writes the same usage on every row). Reversible: answers to the two presets
   go back to evaluations, each with its response's time and usage.
4. ``Evaluation`` is dropped.
5. Two triggers keep the guarantees its constraints gave: an answer's seat and goal must match its
   question's scope (a per-seat question needs a seat, a per-episode one takes neither), and a
   judge answers an instrument about an episode (and seat) once.
"""

from collections import defaultdict

from django.db import migrations, models

from benchmark.evaluation import respondents, rubrics


def install_presets(apps, schema_editor):
    rubrics.install(apps.get_model("benchmark", "Instrument"), apps.get_model("benchmark", "Question"))


def remove_presets(apps, schema_editor):
    Instrument = apps.get_model("benchmark", "Instrument")
    for rubric in rubrics.JUDGE_RUBRICS:
        Instrument.objects.filter(team=None, preset=rubric.preset, version=rubric.version).delete()


def _number_text(number):
    return str(int(number)) if float(number).is_integer() else repr(float(number))


def evaluations_to_answers(apps, schema_editor):
    Evaluation = apps.get_model("benchmark", "Evaluation")
    Question = apps.get_model("benchmark", "Question")
    Respondent = apps.get_model("benchmark", "Respondent")
    Response = apps.get_model("benchmark", "Response")
    Answer = apps.get_model("benchmark", "Answer")
    presets = [rubric.preset for rubric in rubrics.JUDGE_RUBRICS]
    questions = {
        question.dimension: question
        for question in Question.objects.filter(instrument__team=None, instrument__preset__in=presets)
    }
    groups = defaultdict(list)
    rows = Evaluation.objects.select_related("seat").order_by("pk")
    for evaluation in rows.iterator(chunk_size=2000):
        question = questions[evaluation.dimension]
        key = (evaluation.episode_id, evaluation.evaluator, evaluation.prompt_version, question.instrument_id)
        groups[key].append((evaluation, question))
    found = {}
    answers = []
    for (episode_id, evaluator, prompt_version, instrument_id), members in groups.items():
        fields = respondents.respondent_fields(evaluator, prompt_version)
        key = tuple(sorted(fields.items(), key=lambda item: item[0]))
        if key not in found:
            found[key] = respondents.find_respondent(Respondent, fields)
        used = next((e for e, _ in members if e.latency_ms is not None or e.prompt_tokens is not None
                     or e.completion_tokens is not None), members[0][0])
        response = Response.objects.create(
            instrument_id=instrument_id, episode_id=episode_id, respondent=found[key],
            created_at=min(e.created_at for e, _ in members), latency_ms=used.latency_ms,
            prompt_tokens=used.prompt_tokens, completion_tokens=used.completion_tokens,
        )
        answers.extend(
            Answer(
                response=response, question=question,
                seat_position=None if evaluation.seat_id is None else evaluation.seat.position,
                value=_number_text(evaluation.score), number=evaluation.score, reasoning=evaluation.reasoning,
            )
            for evaluation, question in members
        )
        if len(answers) >= 2000:
            Answer.objects.bulk_create(answers)
            answers = []
    Answer.objects.bulk_create(answers)


def answers_to_evaluations(apps, schema_editor):
    Evaluation = apps.get_model("benchmark", "Evaluation")
    Answer = apps.get_model("benchmark", "Answer")
    Response = apps.get_model("benchmark", "Response")
    Seat = apps.get_model("benchmark", "Seat")
    presets = [rubric.preset for rubric in rubrics.JUDGE_RUBRICS]
    responses = Response.objects.filter(instrument__team=None, instrument__preset__in=presets)
    answers = (
        Answer.objects.filter(response__in=responses)
        .select_related("response__respondent", "question")
        .order_by("pk")
    )
    seats = {}
    rows = []
    for answer in answers.iterator(chunk_size=2000):
        response = answer.response
        respondent = response.respondent
        seat_id = None
        if answer.seat_position is not None:
            key = (response.episode_id, answer.seat_position)
            if key not in seats:
                seats[key] = Seat.objects.get(episode_id=response.episode_id, position=answer.seat_position).pk
            seat_id = seats[key]
        rows.append(Evaluation(
            episode_id=response.episode_id, seat_id=seat_id,
            evaluator=respondent.model or respondent.label, prompt_version=respondent.prompt_version,
            dimension=answer.question.dimension, score=answer.number, reasoning=answer.reasoning,
            created_at=response.created_at, latency_ms=response.latency_ms,
            prompt_tokens=response.prompt_tokens, completion_tokens=response.completion_tokens,
        ))
    Evaluation.objects.bulk_create(rows, batch_size=2000)
    responses.delete()


SQLITE_TRIGGERS = [
    """
    CREATE TRIGGER benchmark_answer_scope_insert BEFORE INSERT ON benchmark_answer
    WHEN (SELECT CASE q.scope
                   WHEN 'seat' THEN NEW.seat_position IS NULL OR NEW.goal_id IS NOT NULL
                   WHEN 'goal' THEN NEW.goal_id IS NULL
                   ELSE NEW.seat_position IS NOT NULL OR NEW.goal_id IS NOT NULL END
          FROM benchmark_question q WHERE q.id = NEW.question_id)
    BEGIN
      SELECT RAISE(ABORT, 'benchmark_answer: the seat and goal must match the question''s scope');
    END
    """,
    """
    CREATE TRIGGER benchmark_answer_scope_update BEFORE UPDATE OF question_id, seat_position, goal_id
    ON benchmark_answer
    WHEN (SELECT CASE q.scope
                   WHEN 'seat' THEN NEW.seat_position IS NULL OR NEW.goal_id IS NOT NULL
                   WHEN 'goal' THEN NEW.goal_id IS NULL
                   ELSE NEW.seat_position IS NOT NULL OR NEW.goal_id IS NOT NULL END
          FROM benchmark_question q WHERE q.id = NEW.question_id)
    BEGIN
      SELECT RAISE(ABORT, 'benchmark_answer: the seat and goal must match the question''s scope');
    END
    """,
    """
    CREATE TRIGGER benchmark_response_judge_once_insert BEFORE INSERT ON benchmark_response
    WHEN (SELECT kind FROM benchmark_respondent WHERE id = NEW.respondent_id) = 'judge'
     AND EXISTS (SELECT 1 FROM benchmark_response r
                 WHERE r.episode_id = NEW.episode_id AND r.instrument_id = NEW.instrument_id
                   AND r.respondent_id = NEW.respondent_id AND r.seat_position IS NEW.seat_position)
    BEGIN
      SELECT RAISE(ABORT, 'benchmark_response: a judge answers an instrument about an episode once');
    END
    """,
    """
    CREATE TRIGGER benchmark_response_judge_once_update
    BEFORE UPDATE OF episode_id, instrument_id, respondent_id, seat_position ON benchmark_response
    WHEN (SELECT kind FROM benchmark_respondent WHERE id = NEW.respondent_id) = 'judge'
     AND EXISTS (SELECT 1 FROM benchmark_response r
                 WHERE r.episode_id = NEW.episode_id AND r.instrument_id = NEW.instrument_id
                   AND r.respondent_id = NEW.respondent_id AND r.seat_position IS NEW.seat_position
                   AND r.id != NEW.id)
    BEGIN
      SELECT RAISE(ABORT, 'benchmark_response: a judge answers an instrument about an episode once');
    END
    """,
]
SQLITE_DROP = [
    "DROP TRIGGER IF EXISTS benchmark_answer_scope_insert",
    "DROP TRIGGER IF EXISTS benchmark_answer_scope_update",
    "DROP TRIGGER IF EXISTS benchmark_response_judge_once_insert",
    "DROP TRIGGER IF EXISTS benchmark_response_judge_once_update",
]

# On PostgreSQL a trigger's check does not see a row another transaction has not committed yet, so
# the judge trigger first takes a transaction lock on (episode, respondent): a second writer waits
# for the first to commit and then sees its row, as it would wait on a unique index.
POSTGRESQL_TRIGGERS = [
    """
    CREATE OR REPLACE FUNCTION benchmark_answer_scope() RETURNS trigger AS $$
    DECLARE question_scope text;
    BEGIN
      SELECT scope INTO question_scope FROM benchmark_question WHERE id = NEW.question_id;
      IF (question_scope = 'seat' AND (NEW.seat_position IS NULL OR NEW.goal_id IS NOT NULL))
         OR (question_scope = 'goal' AND NEW.goal_id IS NULL)
         OR (question_scope = 'episode' AND (NEW.seat_position IS NOT NULL OR NEW.goal_id IS NOT NULL)) THEN
        RAISE EXCEPTION 'benchmark_answer: the seat and goal must match the question''s scope'
          USING ERRCODE = 'check_violation';
      END IF;
      RETURN NEW;
    END;
    $$ LANGUAGE plpgsql
    """,
    """
    CREATE TRIGGER benchmark_answer_scope BEFORE INSERT OR UPDATE OF question_id, seat_position, goal_id
    ON benchmark_answer FOR EACH ROW EXECUTE FUNCTION benchmark_answer_scope()
    """,
    """
    CREATE OR REPLACE FUNCTION benchmark_response_judge_once() RETURNS trigger AS $$
    BEGIN
      IF (SELECT kind FROM benchmark_respondent WHERE id = NEW.respondent_id) = 'judge' THEN
        PERFORM pg_advisory_xact_lock(
          hashtextextended('benchmark_response:' || NEW.episode_id || ':' || NEW.respondent_id, 0)
        );
        IF EXISTS (SELECT 1 FROM benchmark_response r
                   WHERE r.episode_id = NEW.episode_id AND r.instrument_id = NEW.instrument_id
                     AND r.respondent_id = NEW.respondent_id
                     AND r.seat_position IS NOT DISTINCT FROM NEW.seat_position AND r.id != NEW.id) THEN
          RAISE EXCEPTION 'benchmark_response: a judge answers an instrument about an episode once'
            USING ERRCODE = 'unique_violation';
        END IF;
      END IF;
      RETURN NEW;
    END;
    $$ LANGUAGE plpgsql
    """,
    """
    CREATE TRIGGER benchmark_response_judge_once
    BEFORE INSERT OR UPDATE OF episode_id, instrument_id, respondent_id, seat_position
    ON benchmark_response FOR EACH ROW EXECUTE FUNCTION benchmark_response_judge_once()
    """,
]
POSTGRESQL_DROP = [
    "DROP TRIGGER IF EXISTS benchmark_answer_scope ON benchmark_answer",
    "DROP FUNCTION IF EXISTS benchmark_answer_scope()",
    "DROP TRIGGER IF EXISTS benchmark_response_judge_once ON benchmark_response",
    "DROP FUNCTION IF EXISTS benchmark_response_judge_once()",
]


def _run(schema_editor, statements):
    for statement in statements:
        schema_editor.execute(statement)


def add_triggers(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    if vendor == "sqlite":
        _run(schema_editor, SQLITE_TRIGGERS)
    elif vendor == "postgresql":
        _run(schema_editor, POSTGRESQL_TRIGGERS)
    else:
        raise NotImplementedError(f"no answer triggers written for {vendor}; Parley runs on SQLite and PostgreSQL")


def drop_triggers(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    _run(schema_editor, SQLITE_DROP if vendor == "sqlite" else POSTGRESQL_DROP)


class Migration(migrations.Migration):

    dependencies = [
        ("benchmark", "0010_instruments_goals_probes"),
    ]

    operations = [
        migrations.AddField(
            model_name="question",
            name="label",
            field=models.CharField(
                blank=True, help_text="A short name for tables, figures and pages; the key when empty.", max_length=100
            ),
        ),
        migrations.RunPython(install_presets, remove_presets),
        migrations.RunPython(evaluations_to_answers, answers_to_evaluations),
        migrations.DeleteModel(name="Evaluation"),
        migrations.RunPython(add_triggers, drop_triggers),
    ]
