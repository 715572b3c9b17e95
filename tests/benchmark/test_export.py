"""Exporting episodes: deterministic Parley JSON Lines that round-trip byte for byte, and a CSV of turns."""

import csv
import io
import json
from datetime import UTC, datetime

import pytest
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext

from benchmark.exporting import export_episodes, select_episodes
from benchmark.models import Character, Episode, Respondent, Response, Scenario, Turn
from tests.benchmark.import_checks import import_file
from tests.builders import default_team, make_episode, make_scores, make_user

pytestmark = pytest.mark.django_db


def exported(format: str = "parley", **filters: str) -> str:
    out = io.StringIO()
    export_episodes(select_episodes(default_team(), **filters), out, format=format)
    return out.getvalue()


def rich_episode(**fields) -> Episode:
    """An episode with a judge's and imported human answers, settings, odd characters and recorded times."""
    episode = make_episode(
        turns=[("speak", "Hello \u2028 there, caf\u00e9."), ("non-verbal", "nods"), ("none", "")],
        settings={"temperature": 0.7, "seed": 3},
        started_at=datetime(2024, 5, 1, 12, 0, 1, tzinfo=UTC),
        **fields,
    )
    make_scores(episode, [("goal", 0, 7)], evaluator="gpt-4o", reasoning="Mostly.")
    make_scores(episode, [("secret", 1, -2), ("mutual_understanding", None, 4)], evaluator="gpt-4o")
    make_scores(episode, [("goal", 1, 6.5)], evaluator="human mean")
    return episode


def test_each_line_has_sorted_keys_and_no_primary_keys():
    episode = rich_episode()

    line = exported().splitlines()[0]

    assert json.loads(line) == json.loads(json.dumps(json.loads(line), sort_keys=True))
    assert list(json.loads(line)) == sorted(json.loads(line))
    assert '"id"' not in line and '"pk"' not in line
    assert json.loads(line)["external_id"] == episode.external_id


def test_objects_without_external_id_get_stable_ones():
    episode = rich_episode()

    record = json.loads(exported())

    assert record["scenario"]["external_id"] == f"parley-scenario-{episode.scenario.pk}"
    seat_character = episode.seats.get(position=0).character
    assert record["seats"][0]["character"]["external_id"] == f"parley-character-{seat_character.pk}"


def test_characters_that_break_lines_are_escaped():
    rich_episode()

    assert len(exported().splitlines()) == 1


def test_timestamps_are_iso_8601_utc():
    rich_episode()

    record = json.loads(exported())

    assert record["started_at"] == "2024-05-01T12:00:01.000000Z"
    assert record["created_at"].endswith("Z")


def test_episodes_are_ordered_by_external_id():
    rich_episode(external_id="b")
    rich_episode(external_id="a")

    assert [json.loads(line)["external_id"] for line in exported().splitlines()] == ["a", "b"]


def test_export_import_into_an_empty_database_export_is_byte_identical(tmp_path):
    rich_episode()
    rich_episode(external_id="kept-id", tag="pilot", barrier="emotional")
    first = exported()
    Turn.objects.all().delete()  # a turn protects its seat
    Episode.objects.all().delete()
    Scenario.objects.all().delete()
    Character.objects.all().delete()
    path = tmp_path / "episodes.jsonl"
    path.write_text(first, encoding="utf-8")

    import_file(path)

    assert exported() == first


def test_filters_by_source_barrier_and_tag():
    rich_episode(external_id="chat", source="human_chat")
    rich_episode(external_id="veiled", barrier="semantic", tag="run-2")
    rich_episode(external_id="plain")

    def ids(**filters: str) -> list[str]:
        return [json.loads(line)["external_id"] for line in exported(**filters).splitlines()]

    assert ids(source="human_chat") == ["chat"]
    assert ids(barrier="semantic") == ["veiled"]
    assert ids(tag="run-2") == ["veiled"]


def test_query_count_does_not_grow_with_the_number_of_episodes():
    rich_episode()
    rich_episode()
    with CaptureQueriesContext(connection) as two:
        exported()
    for _ in range(4):
        rich_episode()
    with CaptureQueriesContext(connection) as six:
        exported()

    assert len(six) == len(two)


def test_csv_has_a_header_and_one_row_per_turn():
    episode = rich_episode(external_id="e1")

    lines = exported("csv").split("\n")[:-1]

    assert lines[0] == "episode_id,turn_index,speaker,action_type,text,scenario,barrier"
    assert len(lines) == 1 + 3
    speaker = episode.seats.get(position=1).character.name
    assert lines[2] == f"e1,1,{speaker},non-verbal,nods,{episode.scenario.codename},none"


def test_csv_export_imports_back_as_unchanged(tmp_path):
    rich_episode(external_id="e1")
    path = tmp_path / "turns.csv"
    path.write_text(exported("csv"), encoding="utf-8")

    result = import_file(path)

    assert result.unchanged["episode"] == 1 and result.created["episode"] == 0


FORMULA_TURNS = ["=1+1", "'=literal quote", "@mention", "-1", "+", "\t=tabbed", "''-dashes"]


def test_csv_quotes_turns_a_spreadsheet_would_run_as_formulas():
    make_episode(external_id="e1", turns=[("speak", text) for text in FORMULA_TURNS])

    rows = list(csv.DictReader(io.StringIO(exported("csv"), newline="")))

    written = ["'=1+1", "''=literal quote", "'@mention", "-1", "'+", "'\t=tabbed", "'''-dashes"]
    assert [row["text"] for row in rows] == written


def test_csv_with_formulas_exports_imports_and_exports_again_byte_for_byte(tmp_path):
    make_episode(external_id="e1", turns=[("speak", text) for text in FORMULA_TURNS])
    first = exported("csv")
    assert ",'=1+1," in first  # the file holds the quoted formulas
    Turn.objects.all().delete()  # a turn protects its seat
    Episode.objects.all().delete()
    Scenario.objects.all().delete()
    Character.objects.all().delete()
    path = tmp_path / "turns.csv"
    path.write_bytes(first.encode("utf-8"))

    import_file(path)

    assert list(Turn.objects.order_by("index").values_list("content", flat=True)) == FORMULA_TURNS
    assert exported("csv") == first


def test_command_writes_the_file_and_reports_the_count(tmp_path):
    rich_episode()
    out = io.StringIO()

    call_command("export_episodes", "--out", str(tmp_path / "all.jsonl"), stdout=out)

    assert (tmp_path / "all.jsonl").read_text(encoding="utf-8") == exported()
    assert "Exported 1 episode(s)" in out.getvalue()


def test_command_writes_to_standard_output_with_a_dash():
    rich_episode()
    out, err = io.StringIO(), io.StringIO()

    call_command("export_episodes", "--out", "-", "--format", "csv", stdout=out, stderr=err)

    assert out.getvalue() == exported("csv")
    assert "Exported 1 episode(s) as csv" in err.getvalue()


def test_every_new_episode_has_an_external_id():
    assert make_episode().external_id
    assert make_episode().external_id != make_episode().external_id


def test_export_then_import_into_the_same_team_changes_nothing(tmp_path):
    rich_episode(source=Episode.Source.HUMAN_CHAT)
    def counts():
        return [model.objects.count() for model in (Episode, Scenario, Character, Turn)]

    before = counts()
    path = tmp_path / "episodes.jsonl"
    path.write_text(exported(), encoding="utf-8")

    result = import_file(path)

    assert result.created["episode"] == 0 and result.unchanged["episode"] == 1
    assert counts() == before


def test_responses_carry_their_instrument_respondent_and_answers():
    rich_episode()

    responses = json.loads(exported())["responses"]

    assert [(r["instrument"]["name"], r["respondent"]["kind"], r["respondent"]["model"] or r["respondent"]["label"])
            for r in responses] == [
        ("SocialVeil judge", "judge", "gpt-4o"), ("Sotopia-EVAL judge", "annotator", "human mean"),
        ("Sotopia-EVAL judge", "judge", "gpt-4o"),
    ]
    judged = responses[2]
    assert judged["answers"] == [
        {"question": "goal", "seat": 0, "goal": None, "value": "7", "number": 7.0, "reasoning": "Mostly."},
        {"question": "secret", "seat": 1, "goal": None, "value": "-2", "number": -2.0, "reasoning": ""},
    ]
    assert "evaluations" not in json.loads(exported())


def test_answers_of_people_with_accounts_stay_with_their_studies():
    episode = rich_episode()
    person = Respondent.objects.create(kind="annotator", user=make_user())
    Response.objects.create(episode=episode, respondent=person, instrument=Response.objects.first().instrument)

    assert len(json.loads(exported())["responses"]) == 3


def test_an_answer_about_a_turn_or_a_span_carries_its_turn_keys_and_no_other_answer_does():
    from benchmark.instruments.targets import TURN_KEYS, Target
    from benchmark.models import Answer, Instrument
    from tests.annotator.builders import make_question

    episode = rich_episode()
    instrument = Instrument.objects.create(name="Per turn", team=default_team())
    anchors = {"anchors": [{"value": v, "label": str(v)} for v in range(1, 6)]}
    helpful = make_question(instrument=instrument, key="helpful", position=0, kind="likert", prompt="Helpful?",
                            options=anchors, scope="turn")
    marks = make_question(instrument=instrument, key="marks", position=1, kind="text", prompt="Why?", scope="span")
    judge, _ = Respondent.objects.get_or_create(kind=Respondent.Kind.JUDGE, model="gpt-4o")
    response = Response.objects.create(instrument=instrument, episode=episode, respondent=judge)
    for question, target, value in ((marks, Target.of_span(1, 1), "y"), (helpful, Target.of_turn(1), "4"),
                                    (marks, Target.of_span(0, 2, 3, 5), "x")):
        Answer.objects.create(response=response, question=question, value=value,
                              number=4 if question == helpful else None, **target.columns())

    responses = json.loads(exported())["responses"]

    answers = next(r["answers"] for r in responses if r["instrument"]["name"] == "Per turn")
    base = {"seat": None, "goal": None, "reasoning": ""}
    assert answers == [
        {**base, "question": "helpful", "turn": 1, "value": "4", "number": 4.0},
        {**base, "question": "marks", "turn": 0, "end_turn": 2, "start_char": 3, "end_char": 5, "value": "x",
         "number": None},
        {**base, "question": "marks", "turn": 1, "end_turn": 1, "value": "y", "number": None},
    ]
    others = [answer for r in responses if r["instrument"]["name"] != "Per turn" for answer in r["answers"]]
    assert others and not any(key in answer for answer in others for key in TURN_KEYS)
