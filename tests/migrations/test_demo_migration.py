"""Today's demo, stored by the code before issue 13, survives every migration since.

``data/demo_before_issue_13.json.gz`` holds what ``make demo`` stores at commit df40544, plus the
rows the demo lacks (see ``make_fixture.py``: a role with a two-line goal, evaluations by ``human
mean`` without a prompt version, a person's submitted and draft annotation versions with spans,
chat participants' questionnaire answers, a gold item's numeric key, a simulation run). The test
migrates the test database back to the nodes of that commit, inserts the rows with the historical
models of that state, migrates forward to the latest nodes and runs every check below. Each check
reads the fixture as plain data (``fixture_rows``, ``fixture_by_pk``) and the migrated database
with the latest *historical* models (``new.get_model``), and all of them run even when one
fails, so a failure lists everything that went wrong. Then the current code serves every download
researchers had from that data (``downloads.py``), which must match what the old code served.

Who replaces which check
------------------------
The checks are written against the schema of today's main, where nothing has moved yet. A helper
whose migration moves a concept replaces that concept's check, in the same commit as the
migration, with one against the new representation that proves the same thing: every stored row
is found there with the same values. A check keeps its ``@covers`` labels (the stored models it
accounts for); ``test_every_stored_model_is_checked`` fails when a stored model is left unchecked.

- ``check_evaluations`` → ``judge``: every old evaluation is a judge's (or the human mean's)
  answer to the Sotopia-EVAL or SocialVeil instrument, with the same score, reasoning and usage.
- ``check_schemes_and_questions``, ``check_annotations``, ``check_annotation_answers``,
  ``check_spans``, ``check_studies``, ``check_social_attributes`` → ``instruments`` (done):
  schemes are instruments, each annotation version a response (versions and drafts kept, with
  their status), answers typed answers, keys and spans still attached, the social attributes
  benchmark's.
- ``check_scenarios_and_roles`` → ``parties``: each role's goal lines are its goals, in order.
- ``check_chat`` → ``questionnaire``: each participant's answers are a participant's response.
- ``check_people_and_shared_data``, ``check_episodes_seats_turns``, ``check_runs``: not moved by
  issue 13 (new columns are fine; a stored value that changes is not).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.apps.registry import Apps
from django.utils.dateparse import parse_datetime

from benchmark.instruments.rubrics import JUDGE_DIMENSIONS
from benchmark.runs.options import RunOptions

from .downloads import assert_downloads_unchanged, fetch_all, stored_downloads
from .harness import (
    BEFORE_ISSUE_13,
    assert_rows_unchanged,
    assert_same,
    fixture_by_pk,
    fixture_labels,
    fixture_rows,
    load_fixture,
    migrate,
    migrate_to_latest,
    nodes_with_other_apps,
)

Check = Callable[[Apps], None]
CHECKS: list[Check] = []


def covers(*labels: str) -> Callable[[Check], Check]:
    """Register a check and the stored models (``app_label.modelname``) whose rows it accounts for."""
    def register(check: Check) -> Check:
        check.covers = labels  # type: ignore[attr-defined]
        CHECKS.append(check)
        return check
    return register


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_every_stored_row_and_download_survives_the_migrations():
    """The stored rows (``CHECKS``), then what researchers download from them (``downloads.py``): one
    backward and forward migration serves both, since it is the slow part."""
    try:
        load_fixture(migrate(nodes_with_other_apps(BEFORE_ISSUE_13)))
        new = migrate_to_latest()
        failures = []
        for check in CHECKS:
            try:
                check(new)
            except AssertionError as error:
                failures.append(f"{check.__name__}: {error}")
        stored = stored_downloads()
        try:
            assert_downloads_unchanged(stored, fetch_all(stored))
        except AssertionError as error:
            failures.append(f"downloads: {error}")
        if failures:
            pytest.fail("\n\n".join(failures), pytrace=False)
    finally:
        migrate_to_latest()


def test_every_stored_model_is_checked():
    checked = {label for check in CHECKS for label in check.covers}
    assert set(fixture_labels()) - checked == set()


def test_the_fixture_holds_what_the_demo_lacks():
    """The cases ``make_fixture.py`` adds are still in the file, so a rebuilt fixture cannot drop them."""
    assert any("\n" in row["goal"].strip() for row in fixture_rows("benchmark.role"))
    assert any(row["evaluator"] == "human mean" and row["prompt_version"] == ""
               for row in fixture_rows("benchmark.evaluation"))
    versions = {}
    for row in fixture_rows("annotator.annotation"):
        versions.setdefault(row["assignment"], {})[row["version"]] = (row["status"], row["generated_by"])
    assert {1: ("submitted", ""), 2: ("draft", "")} in versions.values()
    assert any(row["start_char"] is not None and row["attributes"] for row in fixture_rows("annotator.span"))
    items = fixture_by_pk("annotator.studyitem")
    assert any(items[row["item"]]["kind"] == "gold" and row["tolerance"] for row in fixture_rows("annotator.itemkey"))
    assert any(row["stage"] == "done" and row["answers"] for row in fixture_rows("chat.participant"))
    assert fixture_rows("benchmark.simulationrun")


# --- checks: not moved by issue 13 ------------------------------------------------------------------


@covers("auth.user", "auth.group", "benchmark.team", "benchmark.teammember", "benchmark.barrier",
        "benchmark.barriercue", "benchmark.character")
def check_people_and_shared_data(new: Apps) -> None:
    """Unchanged, but for ProMediate's conflict modes, which migration 0030 adds as built-in barriers."""
    added = {"benchmark.barrier": lambda barrier: barrier.team_id is None and barrier.key in PROMEDIATE_MODES,
             "benchmark.barriercue": lambda cue: cue.barrier.key in PROMEDIATE_MODES}
    for label in check_people_and_shared_data.covers:
        assert_rows_unchanged(new, label, added=added.get(label))
    Barrier = new.get_model("benchmark", "Barrier")
    assert set(Barrier.objects.filter(key__startswith="promediate-").values_list("key", flat=True)) == PROMEDIATE_MODES


@covers("benchmark.episode", "benchmark.seat", "benchmark.turn")
def check_episodes_seats_turns(new: Apps) -> None:
    for label in check_episodes_seats_turns.covers:
        assert_rows_unchanged(new, label)


@covers("benchmark.simulationrun", "benchmark.neutralcontext")
def check_runs(new: Apps) -> None:
    """A run's worker pid went with the forked workers (runs are chunks on the task queue now): it named a
    process of the old machinery and is dropped; every stored run's options, worker count included, still load."""
    assert_rows_unchanged(new, "benchmark.simulationrun", ignore=["worker_pid"])
    assert_rows_unchanged(new, "benchmark.neutralcontext")
    for row in fixture_rows("benchmark.simulationrun"):
        RunOptions.from_dict(row["options"])


# --- checks: each to be replaced by the helper who moves the concept ----------------------------------


@covers("benchmark.scenario", "benchmark.role")
def check_scenarios_and_roles(new: Apps) -> None:
    """Each role's goal text is its goals now: one per non-empty line, stripped, in order, without tags."""
    assert_rows_unchanged(new, "benchmark.scenario")
    stored = {
        row["pk"]: [(line.strip(), []) for line in row["goal"].splitlines() if line.strip()]
        for row in fixture_rows("benchmark.role")
    }
    Goal, Role = new.get_model("benchmark", "Goal"), new.get_model("benchmark", "Role")
    found: dict[int, list[tuple[str, list[str]]]] = {pk: [] for pk in Role.objects.values_list("pk", flat=True)}
    for role_id, text, tags in Goal.objects.order_by("role_id", "position").values_list("role_id", "text", "tags"):
        found.setdefault(role_id, []).append((text, tags))
    positions = [list(Goal.objects.filter(role_id=pk).order_by("position").values_list("position", flat=True))
                 for pk in stored]
    assert_same(stored, found, "goals of each role, one per line of its goal text")
    assert all(numbers == list(range(len(numbers))) for numbers in positions), "goal positions count from 0"
    assert_rows_unchanged(new, "benchmark.role", ignore=["goal"])


@covers("benchmark.evaluation")
def check_evaluations(new: Apps) -> None:
    """Every old evaluation is an answer of its evaluator (a judge, or the annotator-kind "human mean") to the
    judge preset that asks its dimension, with the same score, reasoning and usage; each response takes the
    earliest time of the evaluations it holds."""
    episodes, seats = fixture_by_pk("benchmark.episode"), fixture_by_pk("benchmark.seat")
    presets = {key: rubric.name for key, (rubric, _) in JUDGE_DIMENSIONS.items()}
    stored, earliest = {}, {}
    for row in fixture_rows("benchmark.evaluation"):
        kind = "annotator" if row["evaluator"].lower() == "human mean" else "judge"
        key = (episodes[row["episode"]]["external_id"], row["seat"] and seats[row["seat"]]["position"], kind,
               row["evaluator"], row["prompt_version"], presets[row["dimension"]], row["dimension"])
        text = str(int(row["score"])) if float(row["score"]).is_integer() else repr(float(row["score"]))
        stored[key] = (row["score"], text, row["reasoning"], row["latency_ms"], row["prompt_tokens"],
                       row["completion_tokens"])
        group = key[0], kind, row["evaluator"], row["prompt_version"], key[5]
        moment = parse_datetime(row["created_at"])
        earliest[group] = min(earliest.get(group, moment), moment)
    Answer = new.get_model("benchmark", "Answer")
    answers = Answer.objects.filter(response__respondent__user__isnull=True).exclude(
        response__respondent__kind="participant"  # chat participants' answers: check_chat
    ).select_related(
        "response__episode", "response__respondent", "response__instrument", "question"
    )
    found, times = [], {}
    for answer in answers:
        response, respondent = answer.response, answer.response.respondent
        key = (response.episode.external_id, answer.seat_position, respondent.kind,
               respondent.model or respondent.label, respondent.prompt_version, response.instrument.name,
               answer.question.dimension)
        found.append((key, (answer.number, answer.value, answer.reasoning, response.latency_ms, response.prompt_tokens,
                            response.completion_tokens)))
        times[(key[0], *key[2:6])] = response.created_at
    assert_same(stored, found, "each evaluation as an answer: score, its text, reasoning and usage")
    assert_same(earliest, times, "each response's time: the earliest of its evaluations")


# --- checks: the annotator's question system, moved onto benchmark's instruments (``instruments``) ---------


PROMEDIATE_MODES = {f"promediate-{mode}" for mode in
                    ("competing", "avoiding", "accommodating", "general", "compromising", "collaborating")}
SCHEME_FIELDS = ("preset", "description", "frozen_at")
QUESTION_FIELDS = ("position", "kind", "prompt", "help_text", "required", "rationale", "options", "dimension", "truth")


def _stored_time(text: str | None):
    return parse_datetime(text) if text else None


def _scheme_of_question() -> dict[int, tuple[str, int]]:
    schemes = fixture_by_pk("annotator.scheme")
    return {pk: (schemes[row["scheme"]]["name"], schemes[row["scheme"]]["version"])
            for pk, row in fixture_by_pk("annotator.question").items()}


@covers("annotator.socialattribute")
def check_social_attributes(new: Apps) -> None:
    """The social attributes are benchmark's now, every row under its pk with its values (spans keep their links)."""
    fields = ("key", "name", "definition", "example", "position")
    stored = {row["pk"]: tuple(row[field] for field in fields) for row in fixture_rows("annotator.socialattribute")}
    found = ((row[0], tuple(row[1:])) for row in new.get_model("benchmark", "SocialAttribute").objects.values_list(
        "pk", *fields))
    assert_same(stored, found, "each social attribute")


@covers("annotator.scheme", "annotator.question")
def check_schemes_and_questions(new: Apps) -> None:
    """Each scheme is an instrument of the same name and version, with the same fields, shared (no team) as every
    scheme was or its one team's; each question one of its questions under the same key, ``per_seat`` its scope
    and a numeric question's bounds its options' ends."""
    stored_schemes = {
        (row["name"], row["version"]): (row["preset"], row["description"], _stored_time(row["frozen_at"]))
        for row in fixture_rows("annotator.scheme")
    }
    Instrument = new.get_model("benchmark", "Instrument")
    instruments = Instrument.objects.filter(preset__in=[preset for preset, *_ in stored_schemes.values()] + [""])
    found = (((name, version), (preset, description, frozen_at))
             for name, version, preset, description, frozen_at in instruments.exclude(preset__endswith="-judge")
             .filter(chat_studies__isnull=True, responses__participant__isnull=True).distinct()  # chats': check_chat
             .values_list("name", "version", *SCHEME_FIELDS))
    assert_same(stored_schemes, found, "each scheme as an instrument: preset, description, freeze time")
    shared = Instrument.objects.filter(name__in=[name for name, _ in stored_schemes], preset__gt="", team__isnull=False)
    assert not shared.exists(), "a preset's instrument must stay shared (no team)"

    scheme_of = _scheme_of_question()
    stored = {}
    for row in fixture_rows("annotator.question"):
        values = [row[field] for field in QUESTION_FIELDS]
        options = row["options"] or {}
        if row["kind"] == "likert":
            ends = [anchor["value"] for anchor in options["anchors"]]
            low, high = float(min(ends)), float(max(ends))
        elif row["kind"] == "slider":
            low, high = float(options["min"]), float(options["max"])
        else:
            low = high = None
        stored[(*scheme_of[row["pk"]], row["key"])] = (*values, "seat" if row["per_seat"] else "episode", low, high)
    Question = new.get_model("benchmark", "Question")
    found = (
        ((name, version, key), tuple(rest))
        for name, version, key, *rest in Question.objects.filter(instrument__name__in=[n for n, _ in stored_schemes])
        .values_list("instrument__name", "instrument__version", "key", *QUESTION_FIELDS, "scope", "low", "high")
    )
    assert_same(stored, found, "each question of each scheme: its fields, scope and bounds")


@covers("annotator.annotation")
def check_annotations(new: Apps) -> None:
    """Each annotation version is still there (same pk, status, author, revision, times), and its answers are a
    response of the annotator (kind ``annotator``) about the item's episode under the scheme's instrument, whose
    status follows the version: draft, submitted for the assignment's latest submitted version, else superseded."""
    schemes, assignments = fixture_by_pk("annotator.scheme"), fixture_by_pk("annotator.assignment")
    items, episodes = fixture_by_pk("annotator.studyitem"), fixture_by_pk("benchmark.episode")
    rows = fixture_rows("annotator.annotation")
    latest: dict[int, int] = {}
    for row in rows:
        if row["status"] == "submitted":
            latest[row["assignment"]] = max(latest.get(row["assignment"], 0), row["version"])
    stored = {}
    for row in rows:
        assignment = assignments[row["assignment"]]
        status = "draft" if row["status"] == "draft" else (
            "submitted" if latest[row["assignment"]] == row["version"] else "superseded")
        scheme = schemes[row["scheme"]]
        episode = episodes[items[assignment["item"]]["episode"]]["external_id"]
        stored[row["pk"]] = (status, "annotator", assignment["annotator"], episode, scheme["name"], scheme["version"])
    Annotation = new.get_model("annotator", "Annotation")
    found = ((pk, tuple(rest)) for pk, *rest in Annotation.objects.values_list(
        "pk", "response__status", "response__respondent__kind", "response__respondent__user",
        "response__episode__external_id", "response__instrument__name", "response__instrument__version"))
    assert_same(stored, found, "each annotation version's response: status, respondent, episode, instrument")
    assert_rows_unchanged(new, "annotator.annotation", ignore=["scheme"])


@covers("annotator.answer")
def check_annotation_answers(new: Apps) -> None:
    """Each answer is an answer of its annotation version's response, to the same question, with the same seat,
    value, number and rationale (now ``reasoning``); no answer of an annotation is new."""
    questions = fixture_by_pk("annotator.question")
    stored = {
        (row["annotation"], questions[row["question"]]["key"], row["seat_position"]):
            (row["value"], row["number"], row["rationale"])
        for row in fixture_rows("annotator.answer")
    }
    Answer = new.get_model("benchmark", "Answer")
    found = (
        ((annotation, key, seat), (value, number, reasoning))
        for annotation, key, seat, value, number, reasoning in Answer.objects.filter(
            response__annotation__isnull=False
        ).values_list("response__annotation", "question__key", "seat_position", "value", "number", "reasoning")
    )
    assert_same(stored, found, "value, number and rationale of each annotation answer")


@covers()  # the answers themselves: check_evaluations, check_annotation_answers, check_chat
def check_answer_targets(new: Apps) -> None:
    """Issue 22's turn and span columns (``0024_answer_targets``) are empty on every stored answer, so each
    keeps the target it had: the episode, a seat or a goal."""
    Answer = new.get_model("benchmark", "Answer")
    answers = Answer.objects.all()
    assert answers.exists(), "the fixture's answers are there"
    with_turns = answers.exclude(turn=None, end_turn=None, start_char=None, end_char=None)
    assert not with_turns.exists(), f"{with_turns.count()} stored answer(s) gained a turn or span target"


@covers("annotator.span")
def check_spans(new: Apps) -> None:
    """Spans keep their anchors, label, rationale, correction and attributes; their question is the same question
    of the instrument their scheme became."""
    scheme_of = _scheme_of_question()
    questions = fixture_by_pk("annotator.question")
    stored = {row["pk"]: (*scheme_of[row["question"]], questions[row["question"]]["key"])
              for row in fixture_rows("annotator.span")}
    Span = new.get_model("annotator", "Span")
    found = ((pk, tuple(rest)) for pk, *rest in Span.objects.values_list(
        "pk", "question__instrument__name", "question__instrument__version", "question__key"))
    assert_same(stored, found, "each span's question")
    assert_rows_unchanged(new, "annotator.span", ignore=["question"])


@covers("annotator.study", "annotator.membership", "annotator.studyitem", "annotator.itemkey",
        "annotator.assignment")
def check_studies(new: Apps) -> None:
    """Studies rate with the instrument their scheme became, item keys answer the same question of it; everything
    else about studies, items, keys, members and assignments is as stored."""
    schemes = fixture_by_pk("annotator.scheme")
    stored = {row["pk"]: (schemes[row["scheme"]]["name"], schemes[row["scheme"]]["version"])
              for row in fixture_rows("annotator.study")}
    Study = new.get_model("annotator", "Study")
    found = ((pk, (name, version)) for pk, name, version in Study.objects.values_list(
        "pk", "instrument__name", "instrument__version"))
    assert_same(stored, found, "each study's instrument")
    scheme_of, questions = _scheme_of_question(), fixture_by_pk("annotator.question")
    stored = {row["pk"]: (*scheme_of[row["question"]], questions[row["question"]]["key"])
              for row in fixture_rows("annotator.itemkey")}
    ItemKey = new.get_model("annotator", "ItemKey")
    found = ((pk, tuple(rest)) for pk, *rest in ItemKey.objects.values_list(
        "pk", "question__instrument__name", "question__instrument__version", "question__key"))
    assert_same(stored, found, "each item key's question")
    assert_rows_unchanged(new, "annotator.study", ignore=["scheme"])
    assert_rows_unchanged(new, "annotator.itemkey", ignore=["question"])
    for label in ("annotator.membership", "annotator.studyitem", "annotator.assignment"):
        assert_rows_unchanged(new, label)


def _old_question(question: dict) -> tuple:
    """What a JSON question asked: key, text, required, and its answers (a scale's ends, the options, a length)."""
    answers = {"likert": lambda: ("number", question["low"], question["high"]),
               "choice": lambda: ("choice", *question["options"]),
               "text": lambda: ("text", question.get("max_chars", 2000))}[question["kind"]]()
    return question["key"], question["label"], question.get("required", True), answers


def _new_question(question) -> tuple:
    """The same for an instrument's question: Likert and slider are both a scale of whole numbers."""
    if question.kind in ("likert", "slider"):
        answers = ("number", int(question.low), int(question.high))
    elif question.kind == "categorical":
        answers = ("choice", *(choice["label"] for choice in question.options["choices"]))
    else:
        answers = (question.kind, question.options.get("max_length", 2000))
    return question.key, question.prompt, question.required, answers


@covers("chat.chatstudy", "chat.chatcondition", "chat.participant")
def check_chat(new: Apps) -> None:
    """Each questionnaire is an instrument asking the same questions (the default one the shared preset), and
    each participant's answers are their participant respondent's submitted response with the same values."""
    studies = fixture_by_pk("chat.chatstudy")
    ChatStudy = new.get_model("chat", "ChatStudy")
    Question = new.get_model("benchmark", "Question")
    stored_questions = {row["slug"]: [_old_question(q) for q in row["questionnaire"]] for row in studies.values()}
    found_questions = {}
    for study in ChatStudy.objects.select_related("instrument"):
        found_questions[study.slug] = [
            _new_question(q) for q in Question.objects.filter(instrument_id=study.instrument_id).order_by("position")
        ]
        if study.instrument_id is not None and study.instrument.team_id is None:
            assert study.instrument.preset == "chat-questionnaire", study.slug
    assert_same(stored_questions, found_questions.items(), "each chat study's questions")

    def text(value):
        return str(int(value)) if isinstance(value, int | float) else value

    stored = {
        (studies[row["study"]]["slug"], row["participant_id"]): {
            key: text(value) for key, value in row["answers"].items() if value not in (None, "")
        }
        for row in fixture_rows("chat.participant") if row["answers"]
    }
    Participant = new.get_model("chat", "Participant")
    Answer = new.get_model("benchmark", "Answer")
    found = {}
    for participant in Participant.objects.filter(response__isnull=False).select_related(
        "study", "response__respondent"
    ):
        response = participant.response
        assert (response.respondent.kind, response.respondent.label, response.respondent.user_id, response.status,
                response.episode_id) == ("participant", participant.participant_id, None, "submitted",
                                         participant.episode_id), participant.participant_id
        found[(participant.study.slug, participant.participant_id)] = dict(
            Answer.objects.filter(response=response).values_list("question__key", "value")
        )
    assert_same(stored, found.items(), "questionnaire answers of each participant")
    assert_rows_unchanged(new, "chat.chatstudy", ignore=["questionnaire"])
    assert_rows_unchanged(new, "chat.chatcondition")
    assert_rows_unchanged(new, "chat.participant", ignore=["answers"])
