"""Database triggers that refuse an answer its question does not allow, on SQLite and PostgreSQL.

What the database refuses, as an ``IntegrityError``, whoever writes the row (a form, a judge, an
import, a shell):

- a second answer to a single-valued question: same response, question and target (seat, goal,
  turn; every kind but multi-label, whose answer is one row per label; a unique index cannot say
  this, because the kind lives on the question). A span target is exempt: a question asked of
  spans takes any number of them;
- in a response that is not a draft:
  - a numeric question (Likert, bounded numeric) answered without a number;
  - a number outside the question's ``[low, high]``;
  - a categorical, pairwise, multiple-choice or multi-label value that is not one of the
    question's ``options.choices`` values, and a yes/no value other than ``yes`` or ``no``.

Drafts are exempt from the value checks because an autosaved draft keeps what was typed; when a
response leaves draft (``status`` changes), every one of its answers is checked at once.

The module also holds the two triggers the judge's migration (``0013_judge_answer_triggers``)
introduced, so that one place installs and drops every trigger on these tables: an answer's
target (the ``Answer`` columns of ``benchmark.instruments.targets.COLUMNS``) must be of the kind
its question's scope names, and a judge answers an instrument about an episode (and seat) once.

What a kind's answers must satisfy is the kind's: each kind (``benchmark.instruments.kinds``) lists
its ``db_checks``, each with its SQL for both vendors, and the triggers are written from the
registry when installed (after every ``migrate``), so a new kind's checks need no migration. The
range check applies to every numbered answer; a multi-valued kind is exempt from the one-answer rule.

The SQL differs by vendor (SQLite's ``json_each`` and ``RAISE(ABORT)``; PostgreSQL's plpgsql,
``jsonb`` and SQLSTATE 23505/23514), so ``install`` picks it by ``connection.vendor``; any other
database gets no triggers and says so. On PostgreSQL the answer trigger first takes a
transaction lock on the response (an advisory lock, as the judge's trigger does), so two
transactions adding answers to one response cannot both pass the uniqueness check.

Why migrations do not trip over them: SQLite changes a table by copying it to a new one, dropping
the old and renaming the copy; a trigger that names a dropped table makes that rename fail, and a
trigger on a dropped table is dropped with it. So on SQLite the triggers are dropped before every
``migrate`` (``pre_migrate``) and installed again after it (``post_migrate``), once the migration
that introduced them (``0016_answer_checks``) has run (``benchmark.apps``); before it, the
migrations themselves create and drop them. A migration in the same run that changes
``benchmark_answer``, ``benchmark_question`` or ``benchmark_response`` on SQLite must call
``uninstall`` before its change (``migrations.RunPython(triggers.uninstall_for_migration,
triggers.install_for_migration)``) — the test suite checks the triggers are in place after all
migrations.
"""

from __future__ import annotations

from typing import Any

from django.db.backends.base.base import BaseDatabaseWrapper

from .kinds import all_kinds, names
from .kinds.base import DbCheck

SQLITE_TRIGGERS = (
    "benchmark_answer_single_insert",
    "benchmark_answer_single_update",
    "benchmark_answer_allowed_insert",
    "benchmark_answer_allowed_update",
    "benchmark_response_leaves_draft",
    "benchmark_answer_scope_insert",
    "benchmark_answer_scope_update",
    "benchmark_response_judge_once_insert",
    "benchmark_response_judge_once_update",
)
POSTGRESQL_TRIGGERS = {  # trigger → its table
    "benchmark_answer_checked": "benchmark_answer",
    "benchmark_response_leaves_draft": "benchmark_response",
    "benchmark_answer_scope": "benchmark_answer",
    "benchmark_response_judge_once": "benchmark_response",
}
POSTGRESQL_FUNCTIONS = (
    "benchmark_answer_check()",
    "benchmark_response_check()",
    "benchmark_answer_problem(text, double precision, double precision, jsonb, text, double precision)",
    "benchmark_answer_scope()",
    "benchmark_response_judge_once()",
)

RANGE_ORDER = 10  # the range check's place among the kinds' checks (those before it, then it, then the rest)
_RANGE = (
    "the answer's number lies outside the question's range [low, high]",
    "{a}.number IS NOT NULL AND ((q.low IS NOT NULL AND {a}.number < q.low) "
    "OR (q.high IS NOT NULL AND {a}.number > q.high))",
)


def _kinds_sql(kind_names: list[str]) -> str:
    """``('a', 'b')``: an SQL list of kind names (``('')`` when empty, which no kind is called)."""
    return "(" + ", ".join(f"'{_literal(name)}'" for name in kind_names or [""]) + ")"


def _checks() -> list[tuple[DbCheck, list[str]]]:
    """Every registered kind's database checks, in order, each with the kinds that have it."""
    found: dict[str, tuple[DbCheck, list[str]]] = {}
    for kind in all_kinds():
        for check in kind.db_checks:
            found.setdefault(check.key, (check, []))[1].append(kind.name)
    return sorted(found.values(), key=lambda pair: pair[0].order)


def _sqlite_checks() -> list[tuple[str, str]]:
    """SQLite: (message, condition on the answer ``{a}`` and its question ``q``). RAISE takes a literal only."""
    checks = [(check.order, check.message, f"q.kind IN {_kinds_sql(kinds)} AND {check.sqlite}")
              for check, kinds in _checks()]
    checks.append((RANGE_ORDER, *_RANGE))
    return [(message, condition) for _, message, condition in sorted(checks, key=lambda check: check[0])]


def _multi_valued_sql() -> str:
    return _kinds_sql(names(lambda kind: kind.multi_valued))


def _literal(text: str) -> str:
    """``text`` inside an SQL string literal (quotes doubled)."""
    return text.replace("'", "''")


def _sqlite_sql() -> list[str]:
    duplicate = (
        "SELECT RAISE(ABORT, 'benchmark_answer: this question already has an answer in the response for that "
        "target (one answer per single-valued question and seat, goal or turn)') FROM benchmark_question AS q "
        "WHERE q.id = NEW.question_id AND q.kind NOT IN {multi} AND NEW.end_turn IS NULL "
        "AND EXISTS (SELECT 1 FROM benchmark_answer AS o "
        "WHERE o.response_id = NEW.response_id AND o.question_id = NEW.question_id "
        "AND o.seat_position IS NEW.seat_position AND o.goal_id IS NEW.goal_id AND o.turn IS NEW.turn "
        "AND o.end_turn IS NULL{other});"
    )
    checks = _sqlite_checks()
    allowed = " ".join(
        f"SELECT RAISE(ABORT, 'benchmark_answer: {_literal(message)}') FROM benchmark_question AS q "
        f"WHERE q.id = NEW.question_id AND ({condition.format(a='NEW')});"
        for message, condition in checks
    )
    not_draft = "WHEN (SELECT status FROM benchmark_response WHERE id = NEW.response_id) IS NOT 'draft'"
    leaves_draft = " ".join(
        f"SELECT RAISE(ABORT, 'benchmark_response leaves draft with an answer it does not allow: {_literal(message)}') "
        f"WHERE EXISTS (SELECT 1 FROM benchmark_answer AS a JOIN benchmark_question AS q ON q.id = a.question_id "
        f"WHERE a.response_id = NEW.id AND ({condition.format(a='a')}));"
        for message, condition in checks
    )
    return [
        "CREATE TRIGGER benchmark_answer_single_insert BEFORE INSERT ON benchmark_answer "
        f"BEGIN {duplicate.format(other='', multi=_multi_valued_sql())} END",
        "CREATE TRIGGER benchmark_answer_single_update BEFORE UPDATE ON benchmark_answer "
        f"BEGIN {duplicate.format(other=' AND o.id <> OLD.id', multi=_multi_valued_sql())} END",
        f"CREATE TRIGGER benchmark_answer_allowed_insert BEFORE INSERT ON benchmark_answer {not_draft} "
        f"BEGIN {allowed} END",
        f"CREATE TRIGGER benchmark_answer_allowed_update BEFORE UPDATE ON benchmark_answer {not_draft} "
        f"BEGIN {allowed} END",
        "CREATE TRIGGER benchmark_response_leaves_draft BEFORE UPDATE OF status ON benchmark_response "
        f"WHEN OLD.status = 'draft' AND NEW.status <> 'draft' BEGIN {leaves_draft} END",
        *_SQLITE_JUDGE_TRIGGERS,
    ]


# The scope trigger (0013_judge_answer_triggers created it for seats and goals; turns and spans
# since) and the judge's. A target's kind, as ``Target.kind`` reads it: a goal (whatever else is
# set), a seat (nothing but the seat), a turn (nothing but the turn), a span (its turns, perhaps its
# characters, nothing else); the episode has no column set.
_TARGET_IS = {
    "seat": "NEW.seat_position IS NOT NULL AND NEW.goal_id IS NULL AND NEW.turn IS NULL",
    "goal": "NEW.goal_id IS NOT NULL AND NEW.turn IS NULL",
    "turn": "NEW.turn IS NOT NULL AND NEW.end_turn IS NULL AND NEW.seat_position IS NULL AND NEW.goal_id IS NULL",
    "span": "NEW.turn IS NOT NULL AND NEW.end_turn IS NOT NULL AND NEW.seat_position IS NULL "
            "AND NEW.goal_id IS NULL",
    "episode": "NEW.seat_position IS NULL AND NEW.goal_id IS NULL AND NEW.turn IS NULL AND NEW.end_turn IS NULL "
               "AND NEW.start_char IS NULL AND NEW.end_char IS NULL",
}
_SCOPE_MISMATCH = """(SELECT CASE q.scope
                   {whens}
                   ELSE NOT ({episode}) END
          FROM benchmark_question q WHERE q.id = NEW.question_id)""".format(
    whens="\n                   ".join(
        f"WHEN '{scope}' THEN NOT ({condition})" for scope, condition in _TARGET_IS.items() if scope != "episode"
    ),
    episode=_TARGET_IS["episode"],
)
_SCOPE_MESSAGE = "benchmark_answer: the target (seat, goal, turn, span) must be of the kind the question''s scope names"
_SCOPE_RAISE = f"SELECT RAISE(ABORT, '{_SCOPE_MESSAGE}');"
_SCOPE_MISMATCH_POSTGRESQL = "(CASE question_scope {whens} ELSE NOT ({episode}) END)".format(
    whens=" ".join(
        f"WHEN '{scope}' THEN NOT ({condition})" for scope, condition in _TARGET_IS.items() if scope != "episode"
    ),
    episode=_TARGET_IS["episode"],
)
_TARGET_COLUMNS = "question_id, seat_position, goal_id, turn, end_turn, start_char, end_char"
_JUDGE_AGAIN = """(SELECT kind FROM benchmark_respondent WHERE id = NEW.respondent_id) = 'judge'
     AND EXISTS (SELECT 1 FROM benchmark_response r
                 WHERE r.episode_id = NEW.episode_id AND r.instrument_id = NEW.instrument_id
                   AND r.respondent_id = NEW.respondent_id AND r.seat_position IS NEW.seat_position{other})"""
_JUDGE_RAISE = "SELECT RAISE(ABORT, 'benchmark_response: a judge answers an instrument about an episode once');"
_SQLITE_JUDGE_TRIGGERS = (
    f"CREATE TRIGGER benchmark_answer_scope_insert BEFORE INSERT ON benchmark_answer WHEN {_SCOPE_MISMATCH} "
    f"BEGIN {_SCOPE_RAISE} END",
    f"CREATE TRIGGER benchmark_answer_scope_update BEFORE UPDATE OF {_TARGET_COLUMNS} "
    f"ON benchmark_answer WHEN {_SCOPE_MISMATCH} BEGIN {_SCOPE_RAISE} END",
    f"CREATE TRIGGER benchmark_response_judge_once_insert BEFORE INSERT ON benchmark_response "
    f"WHEN {_JUDGE_AGAIN.format(other='')} BEGIN {_JUDGE_RAISE} END",
    "CREATE TRIGGER benchmark_response_judge_once_update "
    "BEFORE UPDATE OF episode_id, instrument_id, respondent_id, seat_position ON benchmark_response "
    f"WHEN {_JUDGE_AGAIN.format(other=' AND r.id != NEW.id')} BEGIN {_JUDGE_RAISE} END",
)


def _postgresql_problem_sql() -> str:
    """The function that names what is wrong with an answer (NULL when nothing is), from the kinds' checks."""
    branches = [
        (check.order, f"        WHEN p_kind IN {_kinds_sql(kinds)} AND {check.postgresql}\n"
                      f"            THEN {check.postgresql_message}")
        for check, kinds in _checks()
    ]
    branches.append((RANGE_ORDER, """        WHEN p_number IS NOT NULL AND ((p_low IS NOT NULL AND p_number < p_low)
                                       OR (p_high IS NOT NULL AND p_number > p_high))
            THEN format('the number %s lies outside the question''s range [%s, %s]', p_number, p_low, p_high)"""))
    cases = "\n".join(branch for _, branch in sorted(branches, key=lambda branch: branch[0]))
    return f"""
CREATE OR REPLACE FUNCTION benchmark_answer_problem(
    p_kind text, p_low double precision, p_high double precision, p_options jsonb, p_value text,
    p_number double precision
) RETURNS text LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE
{cases}
    END
$$"""


def _postgresql_sql() -> list[str]:
    return [_postgresql_problem_sql(), _POSTGRESQL_ANSWER_CHECK.replace("{multi}", _multi_valued_sql()),
            *_POSTGRESQL_REST]


_POSTGRESQL_ANSWER_CHECK = """
CREATE OR REPLACE FUNCTION benchmark_answer_check() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    found_row record;
    problem text;
BEGIN
    -- Serialise the answers of one response, so two writers cannot both pass the duplicate check.
    PERFORM pg_advisory_xact_lock(hashtextextended('benchmark_answer:' || NEW.response_id, 0));
    SELECT response.status, question.id, question.key, question.kind, question.low, question.high, question.options
    INTO found_row
    FROM benchmark_question AS question JOIN benchmark_response AS response ON response.id = NEW.response_id
    WHERE question.id = NEW.question_id;
    IF NOT FOUND THEN
        RETURN NEW;  -- the foreign keys refuse it
    END IF;
    IF found_row.kind NOT IN {multi} AND NEW.end_turn IS NULL AND EXISTS (
        SELECT 1 FROM benchmark_answer AS other
        WHERE other.response_id = NEW.response_id AND other.question_id = NEW.question_id
          AND other.seat_position IS NOT DISTINCT FROM NEW.seat_position
          AND other.goal_id IS NOT DISTINCT FROM NEW.goal_id
          AND other.turn IS NOT DISTINCT FROM NEW.turn AND other.end_turn IS NULL AND other.id <> NEW.id
    ) THEN
        RAISE EXCEPTION 'benchmark_answer: question "%" already has an answer in response % (seat %, goal %, turn %)',
            found_row.key, NEW.response_id, NEW.seat_position, NEW.goal_id, NEW.turn
            USING ERRCODE = 'unique_violation';
    END IF;
    IF found_row.status IS DISTINCT FROM 'draft' THEN
        problem := benchmark_answer_problem(found_row.kind, found_row.low, found_row.high, found_row.options,
                                            NEW.value, NEW.number);
        IF problem IS NOT NULL THEN
            RAISE EXCEPTION 'benchmark_answer to question "%" (id %): %', found_row.key, found_row.id, problem
                USING ERRCODE = 'check_violation';
        END IF;
    END IF;
    RETURN NEW;
END
$$"""
_POSTGRESQL_REST = [
    """
CREATE OR REPLACE FUNCTION benchmark_response_check() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    found_row record;
BEGIN
    IF OLD.status = 'draft' AND NEW.status <> 'draft' THEN
        FOR found_row IN
            SELECT q.key, answer.id AS answer_id,
                   benchmark_answer_problem(q.kind, q.low, q.high, q.options, answer.value, answer.number) AS problem
            FROM benchmark_answer AS answer JOIN benchmark_question AS q ON q.id = answer.question_id
            WHERE answer.response_id = NEW.id
            ORDER BY answer.id
        LOOP
            IF found_row.problem IS NOT NULL THEN
                RAISE EXCEPTION 'benchmark_response % leaves draft with answer % to question "%": %',
                    NEW.id, found_row.answer_id, found_row.key, found_row.problem USING ERRCODE = 'check_violation';
            END IF;
        END LOOP;
    END IF;
    RETURN NEW;
END
$$""",
    "DROP TRIGGER IF EXISTS benchmark_answer_checked ON benchmark_answer",
    "CREATE TRIGGER benchmark_answer_checked BEFORE INSERT OR UPDATE ON benchmark_answer "
    "FOR EACH ROW EXECUTE FUNCTION benchmark_answer_check()",
    "DROP TRIGGER IF EXISTS benchmark_response_leaves_draft ON benchmark_response",
    "CREATE TRIGGER benchmark_response_leaves_draft BEFORE UPDATE OF status ON benchmark_response "
    "FOR EACH ROW EXECUTE FUNCTION benchmark_response_check()",
    # The judge's two, as 0013_judge_answer_triggers created them. A trigger's check does not see a
    # row another transaction has not committed yet, so the judge trigger first takes a transaction
    # lock on (episode, respondent): a second writer waits for the first to commit and then sees it.
    """
CREATE OR REPLACE FUNCTION benchmark_answer_scope() RETURNS trigger AS $$
DECLARE question_scope text;
BEGIN
  SELECT scope INTO question_scope FROM benchmark_question WHERE id = NEW.question_id;
  IF """ + _SCOPE_MISMATCH_POSTGRESQL + """ THEN
    RAISE EXCEPTION '""" + _SCOPE_MESSAGE + """'
      USING ERRCODE = 'check_violation';
  END IF;
  RETURN NEW;
END;
$$ LANGUAGE plpgsql""",
    "DROP TRIGGER IF EXISTS benchmark_answer_scope ON benchmark_answer",
    f"CREATE TRIGGER benchmark_answer_scope BEFORE INSERT OR UPDATE OF {_TARGET_COLUMNS} "
    "ON benchmark_answer FOR EACH ROW EXECUTE FUNCTION benchmark_answer_scope()",
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
$$ LANGUAGE plpgsql""",
    "DROP TRIGGER IF EXISTS benchmark_response_judge_once ON benchmark_response",
    "CREATE TRIGGER benchmark_response_judge_once "
    "BEFORE INSERT OR UPDATE OF episode_id, instrument_id, respondent_id, seat_position "
    "ON benchmark_response FOR EACH ROW EXECUTE FUNCTION benchmark_response_judge_once()",
]


def install(connection: BaseDatabaseWrapper) -> bool:
    """Create (or replace) the triggers; False on a database Parley has no triggers for."""
    if connection.vendor == "sqlite":
        statements = [f"DROP TRIGGER IF EXISTS {name}" for name in SQLITE_TRIGGERS] + _sqlite_sql()
    elif connection.vendor == "postgresql":
        statements = _postgresql_sql()
    else:
        return False
    with connection.cursor() as cursor:
        for statement in statements:
            cursor.execute(statement)
    return True


def uninstall(connection: BaseDatabaseWrapper) -> None:
    """Drop the triggers (and, on PostgreSQL, their functions) if they are there."""
    if connection.vendor == "sqlite":
        statements = [f"DROP TRIGGER IF EXISTS {name}" for name in SQLITE_TRIGGERS]
    elif connection.vendor == "postgresql":
        statements = [f"DROP TRIGGER IF EXISTS {name} ON {table}" for name, table in POSTGRESQL_TRIGGERS.items()]
        statements += [f"DROP FUNCTION IF EXISTS {function}" for function in POSTGRESQL_FUNCTIONS]
    else:
        return
    with connection.cursor() as cursor:
        for statement in statements:
            cursor.execute(statement)


def installed(connection: BaseDatabaseWrapper) -> set[str]:
    """The names of this module's triggers that exist in the database."""
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            cursor.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")
            names = SQLITE_TRIGGERS
        elif connection.vendor == "postgresql":
            cursor.execute("SELECT tgname FROM pg_trigger WHERE NOT tgisinternal")
            names = tuple(POSTGRESQL_TRIGGERS)
        else:
            return set()
        return {row[0] for row in cursor.fetchall()} & set(names)


def install_for_migration(apps: Any, schema_editor: Any) -> None:
    """``RunPython`` forward step: install the triggers, once the columns they read exist.

    A migration before ``0024_answer_targets`` that installs them (``0016_answer_checks``) finds the
    target columns missing and leaves the install to ``0024`` (and ``post_migrate``).
    """
    if tables_ready(schema_editor.connection):
        install(schema_editor.connection)


def uninstall_for_migration(apps: Any, schema_editor: Any) -> None:
    """``RunPython`` step that drops the triggers (before a change SQLite makes by copying a table)."""
    uninstall(schema_editor.connection)


def tables_ready(connection: BaseDatabaseWrapper) -> bool:
    """Whether the tables and columns the triggers read exist (the migrations that added them have run)."""
    with connection.cursor() as cursor:
        tables = set(connection.introspection.table_names(cursor))
        if not {"benchmark_answer", "benchmark_question", "benchmark_response", "benchmark_respondent"} <= tables:
            return False
        responses = {column.name for column in connection.introspection.get_table_description(
            cursor, "benchmark_response")}
        answers = {column.name for column in connection.introspection.get_table_description(
            cursor, "benchmark_answer")}
    return "status" in responses and "end_char" in answers
