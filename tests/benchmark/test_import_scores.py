"""Scores for episodes already in Parley: Sotopia's GPT-4 judge scores, scores-only files, and re-imports
that add the responses an episode lacks."""

import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command

from benchmark.exporting import write_parley
from benchmark.importing import ImportProblem, detect_format
from benchmark.models import Answer, Episode, Respondent, Response
from benchmark.results.build import ResultFilters, read_scores
from tests.benchmark.import_checks import assert_rejected, import_file, row_counts

pytestmark = pytest.mark.django_db

SOTOPIA = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "sotopia"
GPT4_SCORES = SOTOPIA / "sotopia_humaneval_gpt4_scores_140.json"
BED = SOTOPIA / "human_eval_01H7VM65KGGY7842XGE5A7PEK1.json"  # one of the 140
CONTEXT2 = SOTOPIA / "sotopia_humaneval_context2_variant_01H87HF7X0SZS9Y5PJ2QER6H55.json"  # one of the 140
DISLIKE = SOTOPIA / "human_eval_01HMN74FB8HVPT727QCV3SB27E.json"  # not one of them
DIMENSIONS = 7
SEATS = 2


def gpt4_scores() -> dict:
    return json.loads(GPT4_SCORES.read_text())


def write_scores(tmp_path: Path, scores: dict) -> Path:
    path = tmp_path / "scores.json"
    path.write_text(json.dumps(scores))
    return path


def gpt4_answers(episode: Episode) -> dict[tuple[int, str], float]:
    return {
        (answer.seat_position, answer.question.key): answer.number
        for answer in Answer.objects.filter(
            response__episode=episode, response__respondent__model="gpt-4",
            response__respondent__prompt_version="sotopia",
        ).select_related("question")
    }


# --- the GPT-4 judge scores of Sotopia's human evaluation ------------------------------------------

def test_the_gpt4_file_is_recognised_by_its_shape():
    assert detect_format(GPT4_SCORES, GPT4_SCORES.read_text()) == "sotopia-scores"


def test_gpt4_scores_attach_to_the_human_eval_episodes():
    import_file(BED)
    import_file(CONTEXT2)
    import_file(DISLIKE)

    result = import_file(GPT4_SCORES)

    assert result.format == "sotopia-scores"
    assert result.changed["episode"] == 2
    assert result.created["answer"] == 2 * SEATS * DIMENSIONS
    assert result.created["episode"] == 0
    expected = gpt4_scores()["01H7VM65KGGY7842XGE5A7PEK1"]
    answers = gpt4_answers(Episode.objects.get(external_id="01H7VM65KGGY7842XGE5A7PEK1"))
    assert len(answers) == SEATS * DIMENSIONS
    assert answers[(0, "goal")] == expected["agent1"]["goal"]
    assert answers[(1, "financial")] == expected["agent2"]["financial_and_material_benefits"]
    assert not Answer.objects.filter(response__episode__external_id="01HMN74FB8HVPT727QCV3SB27E").exists()
    response = Response.objects.get(episode__external_id="01H87HF7X0SZS9Y5PJ2QER6H55")
    assert (response.instrument.name, response.respondent.kind) == ("Sotopia-EVAL judge", Respondent.Kind.JUDGE)
    assert "138 episode(s) the file scores are not in Parley" in result.summary()


def test_the_overall_score_is_not_stored():
    import_file(BED)

    import_file(GPT4_SCORES)

    keys = {key for _, key in gpt4_answers(Episode.objects.get(external_id="01H7VM65KGGY7842XGE5A7PEK1"))}
    assert "overall_score" not in keys and len(keys) == DIMENSIONS


def test_alone_the_gpt4_file_lists_every_episode_as_missing_and_creates_nothing():
    before = row_counts()

    result = import_file(GPT4_SCORES)

    assert row_counts() == before
    assert not result.created and not result.changed
    assert result.notes[0].startswith("140 episode(s) the file scores are not in Parley")
    assert len(result.details[0].split(", ")) == 140


def test_the_command_lists_every_missing_episode_at_verbosity_2():
    out = io.StringIO()
    call_command("import_episodes", str(GPT4_SCORES), "--verbosity", "2", stdout=out)

    assert "01H8XN69V9XK68A7KM559RSTAN" in out.getvalue().split("episodes not in Parley:")[1]


def test_importing_the_gpt4_file_twice_changes_nothing():
    import_file(BED)
    import_file(GPT4_SCORES)
    before = row_counts()

    result = import_file(GPT4_SCORES)

    assert row_counts() == before
    assert result.unchanged["episode"] == 1 and not result.changed and not result.created


def test_a_score_that_differs_from_the_stored_one_is_refused(tmp_path):
    import_file(BED)
    import_file(GPT4_SCORES)
    scores = gpt4_scores()
    scores["01H7VM65KGGY7842XGE5A7PEK1"]["agent1"]["goal"] = 1.0 if scores[
        "01H7VM65KGGY7842XGE5A7PEK1"]["agent1"]["goal"] != 1.0 else 2.0

    assert_rejected(
        write_scores(tmp_path, scores),
        "record 01H7VM65KGGY7842XGE5A7PEK1, field agent1.goal: gpt-4 (sotopia) already answered 'goal' for seat 0",
    )


def test_a_different_environment_is_refused(tmp_path):
    import_file(BED)
    scores = gpt4_scores()
    scores["01H7VM65KGGY7842XGE5A7PEK1"]["env_pk"] = "01H7VFHPDZVVCDZR3AARA547CY"

    assert_rejected(write_scores(tmp_path, scores), "field env_pk: episode '01H7VM65KGGY7842XGE5A7PEK1' plays scenario")


def test_episodes_of_early_v1_text_take_the_gpt4_scores_without_an_environment_to_check():
    """Sotopia's early v1 lines carry no environment id, so their scenario is known by its text; the
    GPT-4 file's env_pk cannot be checked against it, which the summary says instead of refusing."""
    v1 = import_file(SOTOPIA / "sotopia_v1_transcript_only_30.jsonl")
    scored = set(json.loads(GPT4_SCORES.read_text())) & set(Episode.objects.values_list("external_id", flat=True))
    assert v1.created["episode"] == 30 and scored

    result = import_file(GPT4_SCORES)

    assert result.changed["episode"] + result.unchanged["episode"] == len(scored)
    assert any("could not be checked" in note for note in result.notes)


def test_a_score_out_of_range_is_refused_naming_record_and_field(tmp_path):
    scores = gpt4_scores()
    scores["01H8XN69V9XK68A7KM559RSTAN"]["agent2"]["secret"] = 3.0

    assert_rejected(
        write_scores(tmp_path, scores),
        "record 01H8XN69V9XK68A7KM559RSTAN, field agent2.secret: 3 is outside [-10, 0] for secret",
    )


def test_a_missing_dimension_is_refused(tmp_path):
    scores = gpt4_scores()
    del scores["01H8XN69V9XK68A7KM559RSTAN"]["agent1"]["knowledge"]

    assert_rejected(write_scores(tmp_path, scores), "field agent1.knowledge: required field is missing")


def test_the_gpt4_scores_are_read_by_the_results_as_that_judge():
    import_file(BED)
    import_file(CONTEXT2)
    import_file(GPT4_SCORES)

    scores = read_scores(ResultFilters(), Episode.objects.all())

    assert {(row[0], row[1]) for row in scores.rows} == {("gpt-4", "sotopia")}
    assert len(scores.rows) == 2 * SEATS * DIMENSIONS


# --- re-importing episodes adds the responses they lack ------------------------------------------------

def exported_with_evaluations(tmp_path: Path, evaluations: list[dict], *, responses: bool = True) -> Path:
    """The stored human-eval episode as exported (with its responses, unless told not), plus ``evaluations``."""
    out = io.StringIO()
    write_parley(Episode.objects.filter(external_id="01H7VM65KGGY7842XGE5A7PEK1"), out)
    record = json.loads(out.getvalue())
    record["evaluations"] = evaluations
    if not responses:
        record["responses"] = []
    path = tmp_path / "episode.jsonl"
    path.write_text(json.dumps(record) + "\n")
    return path


def judge_scores(evaluator: str, goal: float = 7) -> list[dict]:
    return [
        {"evaluator": evaluator, "dimension": "goal", "seat": seat, "score": goal, "reasoning": "why"}
        for seat in (0, 1)
    ] + [{"evaluator": evaluator, "dimension": "mutual_understanding", "seat": None, "score": 4}]


def test_reimporting_an_episode_with_new_evaluations_adds_them(tmp_path):
    import_file(BED)
    path = exported_with_evaluations(tmp_path, judge_scores("judge-a"))

    result = import_file(path)

    assert result.changed["episode"] == 1
    assert result.created["answer"] == 3
    assert result.created["turn"] == 0
    assert Answer.objects.filter(response__respondent__model="judge-a").count() == 3
    assert import_file(path).unchanged["episode"] == 1


def test_reimporting_adds_a_second_judge_beside_the_first(tmp_path):
    import_file(BED)
    import_file(exported_with_evaluations(tmp_path, judge_scores("judge-a")))
    path = exported_with_evaluations(tmp_path, judge_scores("judge-b"))  # the export now holds judge-a too

    result = import_file(path)

    assert (result.changed["episode"], result.created["answer"]) == (1, 3)
    stored = Response.objects.filter(episode__external_id="01H7VM65KGGY7842XGE5A7PEK1")
    assert stored.count() == 4  # two judges, each answering both judge presets


def test_reimporting_a_different_evaluation_is_refused(tmp_path):
    import_file(BED)
    import_file(exported_with_evaluations(tmp_path, judge_scores("judge-a", goal=7)))
    path = exported_with_evaluations(tmp_path, [])
    record = json.loads(path.read_text())
    for response in record["responses"]:
        for answer in response["answers"]:
            if answer["question"] == "goal":
                answer["number"], answer["value"] = 8, "8"
    path.write_text(json.dumps(record) + "\n")

    assert_rejected(path, "judge-a already answered 'goal' for seat 0 of episode '01H7VM65KGGY7842XGE5A7PEK1' with 7; "
                          "this file gives 8")


def test_new_answers_fill_the_questions_a_stored_response_leaves_open(tmp_path):
    import_file(BED)
    import_file(exported_with_evaluations(tmp_path, judge_scores("judge-a")[:1]))  # goal of seat 0 only

    result = import_file(exported_with_evaluations(tmp_path, judge_scores("judge-a"), responses=False))

    assert (result.changed["episode"], result.created["answer"]) == (1, 2)
    assert Response.objects.filter(respondent__model="judge-a", instrument__name="Sotopia-EVAL judge").count() == 1


# --- scores-only files ---------------------------------------------------------------------------

SCORES_CSV = (
    "episode_id,respondent,question,seat,value,reasoning\n"
    "01H7VM65KGGY7842XGE5A7PEK1,gpt-4o,goal,0,8,Reached the deal.\n"
    "01H7VM65KGGY7842XGE5A7PEK1,gpt-4o,goal,1,6,\n"
    "01H7VM65KGGY7842XGE5A7PEK1,gpt-4o,unresolved_confusion,,4,\n"
    "01H87HF7X0SZS9Y5PJ2QER6H55,scripted,secret,1,-2,Named the secret.\n"
)


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_a_scores_csv_adds_answers_to_stored_episodes(tmp_path):
    import_file(BED)
    import_file(CONTEXT2)
    path = write(tmp_path, "scores.csv", SCORES_CSV)

    result = import_file(path)

    assert result.format == "scores"
    assert (result.changed["episode"], result.created["answer"]) == (2, 4)
    goal = Answer.objects.get(response__respondent__model="gpt-4o", question__key="goal", seat_position=0)
    assert (goal.number, goal.reasoning) == (8, "Reached the deal.")
    assert goal.response.instrument.name == "Sotopia-EVAL judge"
    confusion = Answer.objects.get(question__key="unresolved_confusion")
    assert confusion.response.instrument.name == "SocialVeil judge"
    assert import_file(path).unchanged["episode"] == 2


def test_a_different_reasoning_for_a_stored_answer_is_counted_as_not_kept(tmp_path):
    import_file(BED)
    import_file(CONTEXT2)
    import_file(write(tmp_path, "scores.csv", SCORES_CSV))

    result = import_file(write(tmp_path, "again.csv", SCORES_CSV.replace("Reached the deal.", "Other words.")))

    assert result.unchanged["episode"] == 2 and result.ignored["reasoning"] == 1
    assert Answer.objects.get(reasoning="Reached the deal.")


def test_scores_json_lines_read_like_the_csv(tmp_path):
    import_file(BED)
    lines = [
        {"episode_id": "01H7VM65KGGY7842XGE5A7PEK1", "respondent": "human mean", "question": "goal", "seat": 0,
         "value": 5.5},
        {"episode_id": "01H7VM65KGGY7842XGE5A7PEK1", "respondent": "human mean", "question": "goal", "seat": 1,
         "value": 3, "reasoning": "mean of 3 raters"},
    ]
    path = write(tmp_path, "scores.jsonl", "".join(json.dumps(line) + "\n" for line in lines))

    result = import_file(path)

    assert result.format == "scores"
    assert result.created["answer"] == 2
    response = Response.objects.get()
    assert (response.respondent.kind, response.respondent.label) == (Respondent.Kind.ANNOTATOR, "human mean")


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ("01H7VM65KGGY7842XGE5A7PEK1,gpt-4o,goal,0,11,", "row 3, field value: 11 is outside [0, 10] for goal"),
        ("01H7VM65KGGY7842XGE5A7PEK1,gpt-4o,goal,0,high,", "row 3, field value: expected a number, got string 'high'"),
        ("01H7VM65KGGY7842XGE5A7PEK1,gpt-4o,charm,0,3,", "row 3, field question: 'charm' is not one of"),
        ("01H7VM65KGGY7842XGE5A7PEK1,gpt-4o,goal,,3,", "row 3, field seat: goal is scored per seat"),
        ("01H7VM65KGGY7842XGE5A7PEK1,gpt-4o,goal,5,3,", "row 3, field seat: episode '01H7VM65KGGY7842XGE5A7PEK1' "
                                                        "has no seat 5 (seats: 0, 1)"),
        ("01H7VM65KGGY7842XGE5A7PEK1,gpt-4o,goal,one,3,", "row 3, field seat: expected a seat position"),
        ("nope,gpt-4o,goal,0,3,", "row 3, field episode_id: episode 'nope' is not in Parley"),
        ("01H7VM65KGGY7842XGE5A7PEK1,gpt-4o,goal,0,8,", "row 3, field question: gpt-4o scores 'goal' of episode "
                                                        "'01H7VM65KGGY7842XGE5A7PEK1' for the same seat twice"),
    ],
)
def test_a_bad_scores_row_is_refused_naming_row_and_column(tmp_path, row, message):
    import_file(BED)
    first = "episode_id,respondent,question,seat,value,reasoning\n01H7VM65KGGY7842XGE5A7PEK1,gpt-4o,goal,0,8,\n"

    assert_rejected(write(tmp_path, "scores.csv", first + row + "\n"), message)


def test_a_scores_csv_that_contradicts_a_stored_score_is_refused_whole(tmp_path):
    import_file(BED)
    import_file(write(tmp_path, "first.csv", SCORES_CSV.split("01H87HF7")[0]))
    changed = SCORES_CSV.replace("goal,1,6,", "goal,1,7,").replace("Reached the deal.", "") + (
        "01H7VM65KGGY7842XGE5A7PEK1,gpt-4o,knowledge,0,3,\n"
    )
    import_file(CONTEXT2)

    refusal = "row 3: gpt-4o already answered 'goal' for seat 1 .* with 6; this file gives 7"
    with pytest.raises(ImportProblem, match=refusal):
        import_file(write(tmp_path, "second.csv", changed))
    assert not Answer.objects.filter(question__key__in=["knowledge", "secret"]).exists()
