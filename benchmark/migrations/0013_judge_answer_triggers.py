"""``Evaluation`` goes (its rows are answers since ``0012``); two triggers keep what its constraints
guaranteed:

- an answer's seat and goal match its question's scope (a per-seat question needs a seat and no
  goal, a per-goal question a goal, a per-episode question neither);
- a judge answers an instrument about an episode (and seat) once: a second response of the same
  judge respondent is refused, as the unique constraints on evaluations refused a second score.
  People may answer again (an annotator's versions, the same episode in two studies), so this is a
  trigger on the respondent's kind rather than a unique index.
"""

from django.db import migrations

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
        ("benchmark", "0012_judge_answers"),
    ]

    operations = [
        migrations.DeleteModel(name="Evaluation"),
        migrations.RunPython(add_triggers, drop_triggers),
    ]
