"""Importing Parley JSON Lines: one episode per line, all or nothing, located error messages."""

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from django.db import connection

from benchmark.models import Answer, Character, Episode, Instrument, Question, Response, Role, Seat, Turn
from tests.benchmark.import_checks import assert_rejected, import_file, row_counts
from tests.builders import default_team

pytestmark = pytest.mark.django_db


def character(external_id: str, first_name: str) -> dict[str, Any]:
    return {
        "external_id": external_id,
        "first_name": first_name,
        "last_name": "Doe",
        "age": 30,
        "pronouns": "she/her",
        "occupation": "baker",
    }


def episode_record(external_id: str = "ep-1", **overrides: Any) -> dict[str, Any]:
    """A valid Parley record; ``overrides`` replace top-level fields."""
    record = {
        "format_version": 1,
        "external_id": external_id,
        "scenario": {
            "external_id": "scenario-1",
            "codename": "shared-flat",
            "source": "hand-written",
            "context": "Two flatmates talk about the dishes.",
            "relationship": 3,
            "roles": [
                {"position": 0, "goal": "Agree on a rota.", "character": character("char-a", "Ann")},
                {"position": 1, "goal": "Do fewer dishes.", "private_knowledge": "Has a cold."},
            ],
        },
        "barrier": "semantic",
        "source": "simulated",
        "status": "finished",
        "end_reason": "turn_cap",
        "turn_cap": 4,
        "tag": "pilot",
        "settings": {"temperature": 0.7},
        "created_at": "2024-05-01T12:00:00.000000Z",
        "seats": [
            {
                "position": 0,
                "role": 0,
                "character": character("char-a", "Ann"),
                "model": "scripted",
                "carries_barrier": True,
            },
            {"position": 1, "role": 1, "character": character("char-b", "Bea"), "player": "human"},
        ],
        "turns": [
            {"index": 0, "seat": 0, "action_type": "speak", "content": "Hello.", "client_id": "c-0"},
            {"index": 1, "seat": 1, "action_type": "non-verbal", "content": "waves"},
            {"index": 2, "seat": 0, "action_type": "leave"},
        ],
        "evaluations": [
            {"evaluator": "gpt-4o", "seat": 0, "dimension": "goal", "score": 7, "reasoning": "Close."},
            {"evaluator": "gpt-4o", "seat": None, "dimension": "mutual_understanding", "score": 4},
        ],
    }
    record.update(overrides)
    return record


def write_lines(tmp_path: Path, *records: Any, name: str = "episodes.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records), encoding="utf-8")
    return path


def test_line_becomes_episode_with_scenario_seats_turns_and_scores(tmp_path):
    result = import_file(write_lines(tmp_path, episode_record()))

    episode = Episode.objects.get(external_id="ep-1")
    assert episode.barrier.key == "semantic"
    assert episode.scenario.roles.count() == 2
    assert [seat.character.first_name for seat in episode.seats.all()] == ["Ann", "Bea"]
    assert list(episode.turns.values_list("action_type", flat=True)) == ["speak", "non-verbal", "leave"]
    assert Answer.objects.filter(response__episode=episode).count() == 2
    assert result.created["episode"] == 1 and result.created["character"] == 2 and result.created["answer"] == 2


def test_same_character_in_role_and_seat_is_created_once(tmp_path):
    import_file(write_lines(tmp_path, episode_record()))

    assert Character.objects.filter(external_id="char-a").count() == 1
    assert Role.objects.get(position=0).character == Seat.objects.get(position=0).character


def test_reimport_leaves_everything_unchanged(tmp_path):
    path = write_lines(tmp_path, episode_record())
    import_file(path)
    before = row_counts()

    result = import_file(path)

    assert row_counts() == before
    assert result.created["episode"] == 0
    assert result.unchanged["episode"] == 1


def test_existing_character_is_reused_not_updated(tmp_path):
    Character.objects.create(team=default_team(), external_id="char-a", first_name="Original")

    import_file(write_lines(tmp_path, episode_record()))

    assert Character.objects.get(external_id="char-a").first_name == "Original"


def test_recorded_timestamps_are_kept(tmp_path):
    import_file(write_lines(tmp_path, episode_record()))

    assert Episode.objects.get().created_at == datetime(2024, 5, 1, 12, tzinfo=UTC)


def test_line_breaks_in_turns_are_stored_as_the_page_shows_them(tmp_path):
    record = episode_record()
    record["turns"][0]["content"] = "Hello.\r\nAre you there?\rHm."
    import_file(write_lines(tmp_path, record))

    assert Turn.objects.get(index=0).content == "Hello.\nAre you there?\nHm."


def test_dry_run_writes_nothing(tmp_path):
    before = row_counts()

    result = import_file(write_lines(tmp_path, episode_record()), dry_run=True)

    assert row_counts() == before
    assert result.created["episode"] == 1


def test_malformed_json_names_file_and_line(tmp_path):
    path = write_lines(tmp_path, episode_record(), '{"external_id": "ep-2",')
    assert_rejected(path, "episodes.jsonl, line 2: not valid JSON")


def test_missing_required_field_is_named(tmp_path):
    record = episode_record()
    del record["scenario"]["context"]
    assert_rejected(write_lines(tmp_path, record), "line 1, field scenario.context: required field is missing")


def test_unknown_action_type_is_named_with_the_choices(tmp_path):
    record = episode_record("ep-3")
    record["turns"][2]["action_type"] = "shout"
    path = write_lines(tmp_path, episode_record("ep-1"), episode_record("ep-2"), record)
    assert_rejected(
        path,
        "episodes.jsonl, line 3, field turns[2].action_type: "
        "'shout' is not one of speak, non-verbal, action, none, leave",
    )


def test_turn_by_unknown_seat_is_rejected(tmp_path):
    record = episode_record()
    record["turns"][1]["seat"] = 5
    assert_rejected(write_lines(tmp_path, record), "field turns[1].seat: no seat at position 5 (seats: 0, 1)")


def test_duplicate_turn_index_is_rejected(tmp_path):
    record = episode_record()
    record["turns"][2]["index"] = 1
    assert_rejected(write_lines(tmp_path, record), "field turns[2].index: turn index 1 appears twice")


def test_string_where_integer_required_is_rejected(tmp_path):
    record = episode_record()
    record["turns"][0]["index"] = "0"
    assert_rejected(write_lines(tmp_path, record), "field turns[0].index: expected an integer, got string '0'")


def test_unknown_barrier_key_is_rejected(tmp_path):
    assert_rejected(
        write_lines(tmp_path, episode_record(barrier="mumbling")),
        "line 1, field barrier: 'mumbling' is not a barrier key",
    )


def test_score_out_of_range_for_its_dimension_is_rejected(tmp_path):
    record = episode_record()
    record["evaluations"][0]["score"] = 11
    assert_rejected(write_lines(tmp_path, record), "field evaluations[0].score: 11 is outside [0, 10] for goal")


def test_scenario_with_fewer_than_two_roles_is_rejected(tmp_path):
    record = episode_record()
    record["scenario"]["roles"] = record["scenario"]["roles"][:1]
    assert_rejected(write_lines(tmp_path, record), "field scenario.roles: a scenario needs at least two roles, got 1")


def test_speaking_turn_without_content_is_rejected(tmp_path):
    record = episode_record()
    record["turns"][0]["content"] = "  "
    assert_rejected(write_lines(tmp_path, record), "field turns[0].content: a speak turn needs content")


def test_seat_for_a_role_the_scenario_lacks_is_rejected(tmp_path):
    record = episode_record()
    record["seats"][1]["role"] = 2
    assert_rejected(
        write_lines(tmp_path, record), "field seats[1].role: scenario 'scenario-1' has no role at position 2"
    )


def test_episode_dimension_scored_for_a_seat_is_rejected(tmp_path):
    record = episode_record()
    record["evaluations"][1]["seat"] = 0
    assert_rejected(write_lines(tmp_path, record), "mutual_understanding is scored per episode; the seat must be null")


def test_problem_on_a_later_line_writes_nothing_from_earlier_lines(tmp_path):
    path = write_lines(tmp_path, episode_record("ep-1"), episode_record("ep-2", barrier="mumbling"))
    assert_rejected(path, "line 2, field barrier")
    assert not Episode.objects.filter(external_id="ep-1").exists()


# --- input no database can store, or that would exhaust the importer ----------------------------


def test_an_episode_id_repeated_in_the_file_is_refused_naming_both_lines(tmp_path):
    path = write_lines(tmp_path, episode_record("ep-1"), episode_record("ep-2"), episode_record("ep-1"))
    assert_rejected(
        path, "episodes.jsonl, line 3, field external_id: episode 'ep-1' appears twice in this file (first at line 1)"
    )


def test_a_key_repeated_in_an_object_is_refused(tmp_path):
    line = json.dumps(episode_record()).replace('"content": "Hello."', '"content": "Hello.", "content": "Bye."')
    assert_rejected(
        write_lines(tmp_path, line), "line 1, field turns[0].content: given twice in one object; keys must be unique"
    )


def test_nesting_far_beyond_the_cap_is_refused_without_a_traceback(tmp_path):
    deep = "[" * 200_000 + "]" * 200_000
    line = json.dumps(episode_record(settings={})).replace('"settings": {}', f'"settings": {deep}')
    assert_rejected(write_lines(tmp_path, line), "episodes.jsonl, line 1: nested more than 64 levels deep")


def test_nesting_just_beyond_the_cap_is_refused_naming_the_field(tmp_path):
    deep: object = "bottom"
    for _ in range(70):
        deep = [deep]
    assert_rejected(
        write_lines(tmp_path, episode_record(settings={"deep": deep})),
        "line 1, field settings: nested more than 64 levels deep",
    )


def test_a_lone_surrogate_is_refused_naming_the_field(tmp_path):
    record = episode_record()
    record["turns"][1]["content"] = "waves \ud800"  # json.dumps writes the escape "\ud800"
    assert_rejected(
        write_lines(tmp_path, record),
        "line 1, field turns[1].content: holds a lone surrogate \\ud800 (character 7), half of a UTF-16 pair",
    )


def test_a_lone_surrogate_in_a_key_is_refused_naming_the_object(tmp_path):
    assert_rejected(
        write_lines(tmp_path, episode_record(settings={"note\udfff": 1})),
        "line 1, field settings: the key 'note\\udfff' holds a lone surrogate",
    )


def test_a_nul_character_is_refused_naming_the_field(tmp_path):
    record = episode_record()
    record["scenario"]["context"] = "Two flatmates\u0000 talk."
    assert_rejected(
        write_lines(tmp_path, record),
        "line 1, field scenario.context: holds a NUL character (\\u0000, character 14), which PostgreSQL cannot store",
    )


def test_a_nul_character_in_free_form_settings_is_refused(tmp_path):
    assert_rejected(
        write_lines(tmp_path, episode_record(settings={"prompt": "a\u0000b"})),
        "line 1, field settings.prompt: holds a NUL character",
    )


def test_a_number_that_is_not_finite_is_refused(tmp_path):
    line = json.dumps(episode_record(settings={"temperature": 0.7})).replace("0.7", "NaN")
    assert_rejected(write_lines(tmp_path, line), "line 1, field settings.temperature: NaN is not a JSON number")


def test_an_integer_too_long_to_read_is_refused(tmp_path):
    line = json.dumps(episode_record(settings={"seed": 1})).replace('"seed": 1', '"seed": ' + "9" * 5000)
    assert_rejected(write_lines(tmp_path, line), "line 1: not valid JSON: an integer has more than 4300 digits")


def test_a_40_digit_turn_index_is_refused_naming_the_field(tmp_path):
    record = episode_record()
    record["turns"][2]["index"] = 10**39
    assert_rejected(write_lines(tmp_path, record), f"field turns[2].index: {10**39} is above the maximum 2147483647")


def test_a_token_count_beyond_the_integer_column_is_refused(tmp_path):
    record = episode_record()
    record["turns"][0]["prompt_tokens"] = 2**31
    assert_rejected(write_lines(tmp_path, record), "field turns[0].prompt_tokens: 2147483648 is above the maximum")


def test_a_score_too_large_for_a_float_is_refused_naming_the_field(tmp_path):
    record = episode_record()
    record["evaluations"][0]["score"] = 10**400
    assert_rejected(write_lines(tmp_path, record), "field evaluations[0].score: a 401-digit integer is too large")


@pytest.mark.parametrize(
    "moment",
    ["9999-12-31T23:00:00-05:00", "0001-01-01T00:30:00+01:00"],
    ids=["after-year-9999-in-utc", "before-year-1-in-utc"],
)
def test_a_timestamp_outside_the_years_databases_store_is_refused(tmp_path, moment):
    record = episode_record()
    record["turns"][1]["created_at"] = moment
    assert_rejected(
        write_lines(tmp_path, record), f"field turns[1].created_at: string '{moment}' is outside years 1 to 9999 in UTC"
    )


@pytest.mark.parametrize("moment", ["0000-01-01T00:00:00Z", "99999-01-01T00:00:00Z", "next tuesday"])
def test_a_timestamp_that_is_no_date_is_refused(tmp_path, moment):
    assert_rejected(
        write_lines(tmp_path, episode_record(started_at=moment)),
        f"line 1, field started_at: string '{moment}' is not an ISO 8601 timestamp",
    )


def test_a_line_over_the_size_cap_is_refused(tmp_path):
    path = write_lines(tmp_path, episode_record("ep-1"), episode_record("ep-2", settings={"notes": "x" * 5_000_000}))
    assert_rejected(path, "episodes.jsonl, line 2: is 5,001,")
    assert_rejected(path, "bytes long; a line may hold at most 5,000,000 bytes (5 MB)")


def test_a_turn_over_the_size_cap_is_refused(tmp_path):
    record = episode_record()
    record["turns"][0]["content"] = "word " * 20_001
    assert_rejected(
        write_lines(tmp_path, record), "line 1, field turns[0].content: is 100005 characters long; at most 100000 fit"
    )


def test_a_write_the_database_refuses_late_in_the_import_leaves_no_row_in_any_table(tmp_path):
    """The last episode's last turn trips a trigger, after every other row of the file was inserted."""
    last = episode_record("ep-3")
    last["turns"][1]["content"] = "refused by the database"
    path = write_lines(tmp_path, episode_record("ep-1"), episode_record("ep-2"), last)
    with connection.cursor() as cursor:
        for statement in REFUSING_TRIGGER[connection.vendor]:
            cursor.execute(statement)

    assert_rejected(path, "episodes.jsonl: the database refused the data: refused by a test trigger")


# A trigger the importer cannot foresee, as a site's own audit or policy trigger would be. On
# PostgreSQL its plain RAISE EXCEPTION reaches Django as a ProgrammingError, not an integrity error.
REFUSING_TRIGGER = {
    "sqlite": [
        "CREATE TRIGGER refuse_turn BEFORE INSERT ON benchmark_turn WHEN NEW.content = 'refused by the database' "
        "BEGIN SELECT RAISE(ABORT, 'refused by a test trigger'); END",
    ],
    "postgresql": [
        "CREATE FUNCTION refuse_turn() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
        "IF NEW.content = 'refused by the database' THEN RAISE EXCEPTION 'refused by a test trigger'; END IF; "
        "RETURN NEW; END $$",
        "CREATE TRIGGER refuse_turn BEFORE INSERT ON benchmark_turn FOR EACH ROW EXECUTE FUNCTION refuse_turn()",
    ],
}


# --- responses and their answers ------------------------------------------------------------------


def test_older_evaluations_become_one_response_per_judge_and_preset(tmp_path):
    record = episode_record()
    record["evaluations"][0].update(created_at="2024-05-01T12:05:00Z", latency_ms=900, prompt_tokens=1200)
    record["evaluations"].append({"evaluator": "human mean", "seat": 1, "dimension": "goal", "score": 6.5})
    import_file(write_lines(tmp_path, record))

    responses = {
        (r.respondent.kind, r.respondent.model, r.respondent.label, r.instrument.name): r
        for r in Response.objects.select_related("respondent", "instrument")
    }
    assert set(responses) == {
        ("judge", "gpt-4o", "", "Sotopia-EVAL judge"), ("judge", "gpt-4o", "", "SocialVeil judge"),
        ("annotator", "", "human mean", "Sotopia-EVAL judge"),
    }
    goal = responses[("judge", "gpt-4o", "", "Sotopia-EVAL judge")]
    assert (goal.latency_ms, goal.prompt_tokens) == (900, 1200)
    assert goal.created_at == datetime(2024, 5, 1, 12, 5, tzinfo=UTC)
    answer = goal.answers.get()
    assert (answer.question.key, answer.seat_position, answer.number, answer.value, answer.reasoning) == (
        "goal", 0, 7, "7", "Close."
    )
    assert responses[("annotator", "", "human mean", "Sotopia-EVAL judge")].respondent.user is None


def response_record(**fields: Any) -> dict[str, Any]:
    return {
        "instrument": {"name": "SocialVeil judge", "version": 1},
        "respondent": {"kind": "judge", "model": "openai/gpt-4o", "prompt_version": "v2", "label": ""},
        "seat": None,
        "answers": [{"question": "mutual_understanding", "seat": None, "value": "4", "number": 4.0,
                     "reasoning": "They agreed."}],
        **fields,
    }


def test_responses_import_with_their_answers(tmp_path):
    import_file(write_lines(tmp_path, episode_record(evaluations=[], responses=[response_record()])))

    answer = Answer.objects.select_related("response__respondent").get()
    assert (answer.question.key, answer.number, answer.reasoning) == ("mutual_understanding", 4, "They agreed.")
    assert (answer.response.respondent.model, answer.response.respondent.prompt_version) == ("openai/gpt-4o", "v2")


def test_a_team_instrument_is_found_by_name_and_version(tmp_path):
    instrument = Instrument.objects.create(team=default_team(), name="Warmth", version=2)
    Question.objects.create(instrument=instrument, key="warm", position=0, kind="yes_no", prompt="Warm?")
    response = response_record(
        instrument={"name": "Warmth", "version": 2},
        respondent={"kind": "agent", "model": "scripted", "prompt_version": "interview-1", "label": ""}, seat=1,
        answers=[{"question": "warm", "seat": None, "value": "yes", "number": None, "reasoning": ""}],
    )
    import_file(write_lines(tmp_path, episode_record(evaluations=[], responses=[response])))

    stored = Response.objects.get()
    assert (stored.instrument, stored.seat_position, stored.respondent.kind) == (instrument, 1, "agent")


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"instrument": {"name": "Nothing like it", "version": 1}},
         "field responses[0].instrument: instrument 'Nothing like it' version 1 is neither a preset nor one of "
         "this team's"),
        ({"answers": [{"question": "warmth", "number": 2}]},
         "field responses[0].answers[0].question: SocialVeil judge v1 has no question 'warmth' (its questions: "
         "unresolved_confusion, mutual_understanding)"),
        ({"answers": [{"question": "mutual_understanding", "number": 6, "value": "6"}]},
         "field responses[0].answers[0].number: 6 is outside [1, 5] for mutual_understanding"),
        ({"answers": [{"question": "mutual_understanding", "value": "4"}]},
         "field responses[0].answers[0].number: 'mutual_understanding' takes a number"),
        ({"answers": [{"question": "mutual_understanding", "seat": 0, "number": 4}]},
         "field responses[0].answers[0].seat: 'mutual_understanding' is asked once per episode"),
        ({"answers": [{"question": "mutual_understanding", "seat": 5, "number": 4}]},
         "field responses[0].answers[0].seat: no seat at position 5 (seats: 0, 1)"),
        ({"respondent": {"kind": "judge", "model": "", "prompt_version": "", "label": "x"}},
         "field responses[0].respondent.model: a respondent of kind 'judge' needs its model's name"),
        ({"respondent": {"kind": "oracle", "model": "m"}},
         "field responses[0].respondent.kind: 'oracle' is not one of"),
    ],
)
def test_a_response_that_does_not_fit_is_refused_naming_the_field(tmp_path, change, problem):
    record = episode_record(evaluations=[], responses=[response_record(**change)])
    assert_rejected(write_lines(tmp_path, record), problem)
    assert not Response.objects.exists()


def test_the_same_judge_answering_an_instrument_twice_is_refused(tmp_path):
    record = episode_record(evaluations=[], responses=[response_record(), response_record()])
    assert_rejected(write_lines(tmp_path, record), "answers SocialVeil judge v1 about this episode twice")
