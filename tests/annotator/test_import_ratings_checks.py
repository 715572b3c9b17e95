"""Checking a ratings file as a whole (issue 21): every problem at once, an empty file, a wide file that rates
some of the instrument's questions, and a check whose cost does not grow with the raters.

The study and the files are ``test_import_ratings``'s: five of Sotopia's real episodes on Sotopia-EVAL.
"""

import io

import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotator.external_ratings import MAX_LISTED, RatingsRefused, import_ratings
from annotator.external_ratings.problems import Problems
from annotator.models import Annotation, Study
from benchmark.importing import ImportProblem
from benchmark.models import Answer
from tests.annotator.test_import_ratings import LONG, WIDE, rows_of, study, write_csv  # noqa: F401 - a fixture
from tests.benchmark.import_checks import row_counts

pytestmark = pytest.mark.django_db


def refused_with_all(path, study) -> RatingsRefused:  # noqa: ANN001, F811
    before = row_counts()
    with pytest.raises(RatingsRefused) as caught:
        import_ratings(path, study=study)
    assert row_counts() == before
    return caught.value


def test_every_problem_of_a_file_is_told_at_once_each_by_row_and_column(study, tmp_path):  # noqa: F811
    rows = rows_of(LONG)
    rows[0]["value"] = "12"  # row 2: off the scale
    rows[40]["question"] = "overall"  # row 42: no such question
    rows[99]["episode_id"] = "01HNOSUCHEPISODE"  # row 101: no such episode, so its rating lacks that answer
    rows[150]["seat"] = "7"  # row 152: no such seat
    refused = refused_with_all(write_csv(tmp_path / "many.csv", rows), study)

    told = str(refused)
    assert refused.total == 5 and told.startswith("many.csv: 5 problems, so nothing was imported:\n")
    for where in ("many.csv, row 2, field value", "many.csv, row 42, field question", "many.csv, row 101, field "
                  "episode_id", "many.csv, row 152, field seat", "gives no such answer"):
        assert where in told


def test_the_same_problem_in_many_rows_is_one_entry_naming_the_rows(study, tmp_path):  # noqa: F811
    rows = rows_of(WIDE)
    for row in rows:
        row["goal"] = "11"
    refused = refused_with_all(write_csv(tmp_path / "wide.csv", rows), study)

    assert refused.total == len(rows) == 20
    assert len(refused.lines) == 8  # one per character: the message names them
    assert refused.lines[0] == ("wide.csv, row 2, field goal: Goal (Samuel Anderson): choose a value from 0 to 10. "
                                "(the same in 3 other rows: 4, 18, 20)")


def test_an_entry_names_five_other_rows_and_counts_the_rest():
    problems = Problems("bad.csv")
    for number in range(2, 10):
        problems.add(ImportProblem("must not be empty", file="bad.csv", place=f"row {number}", field="annotator_id"))
    with pytest.raises(RatingsRefused) as caught:
        problems.raise_any()

    assert caught.value.lines == [
        "bad.csv, row 2, field annotator_id: must not be empty (the same in 7 other rows: 3, 4, 5, 6, 7 and 2 more)"
    ]


def test_a_file_with_more_problems_than_the_page_can_list_says_how_many_there_are(study, tmp_path):  # noqa: F811
    rows = rows_of(LONG)
    for number, row in enumerate(rows[: MAX_LISTED + 20]):
        row["episode_id"] = f"no-such-episode-{number}"  # a different message in each row: nothing to group
    refused = refused_with_all(write_csv(tmp_path / "bad.csv", rows), study)

    assert refused.total >= MAX_LISTED + 20
    assert len(refused.lines) == MAX_LISTED
    assert f"{refused.total} problems" in str(refused)
    assert f"the first {MAX_LISTED} of" in str(refused)


def test_one_problem_is_told_as_before(study, tmp_path):  # noqa: F811
    rows = rows_of(LONG)
    rows[0]["value"] = "12"
    with pytest.raises(ImportProblem) as caught:
        import_ratings(write_csv(tmp_path / "one.csv", rows), study=study)
    assert str(caught.value).startswith("one.csv, row 2, field value: ")
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize("name", ["empty.csv", "empty.jsonl"])
def test_an_empty_file_gets_one_clear_message(study, tmp_path, name):  # noqa: F811
    path = tmp_path / name
    path.write_bytes(b"")
    with pytest.raises(ImportProblem) as caught:
        import_ratings(path, study=study)
    assert str(caught.value) == f"{name}: the file is empty: it holds no header and no ratings"


def test_the_command_tells_every_problem(study, tmp_path):  # noqa: F811
    rows = rows_of(LONG)
    rows[0]["value"] = "12"
    rows[5]["value"] = "99"
    with pytest.raises(CommandError) as caught:
        call_command("import_ratings", str(write_csv(tmp_path / "bad.csv", rows)), "--study", study.slug,
                     stdout=io.StringIO())
    assert "row 2, field value" in str(caught.value) and "row 7, field value" in str(caught.value)


def test_a_wide_file_may_rate_some_of_the_instruments_questions(study, tmp_path):  # noqa: F811
    rows = [{key: row[key] for key in ("episode_id", "annotator_id", "seat", "goal", "goal_rationale")}
            for row in rows_of(WIDE)]
    result = import_ratings(write_csv(tmp_path / "goal_only.csv", rows), study=study)

    assert (result.created["rating"], result.created["answer"]) == (5 * 2, 5 * 2 * 2)
    rated = Answer.objects.filter(response__respondent__kind="annotator")
    assert set(rated.values_list("question__key", flat=True)) == {"goal"}
    assert Annotation.objects.filter(status="submitted").count() == 10


def test_a_question_the_file_names_must_still_be_answered(study, tmp_path):  # noqa: F811
    rows = [{key: row[key] for key in ("episode_id", "annotator_id", "seat", "goal", "goal_rationale")}
            for row in rows_of(WIDE)]
    rows[2]["goal"] = ""
    with pytest.raises(ImportProblem, match="goal_only.csv, row 4, field goal:0"):
        import_ratings(write_csv(tmp_path / "goal_only.csv", rows), study=study)


def test_a_wide_file_without_a_question_column_is_refused_by_its_header(study, tmp_path):  # noqa: F811
    path = tmp_path / "ids.csv"
    path.write_text("episode_id,annotator_id,seat\n01H8XWN5V57J20F3JG7WWQKDAC,rater,0\n", encoding="utf-8")
    with pytest.raises(ImportProblem, match="ids.csv, row 1: the header names no question"):
        import_ratings(path, study=study)


def _queries(path, study) -> int:  # noqa: ANN001, F811
    """Queries of a check, but for the inserts, which the database's limit on a statement's size batches by rows."""
    study = Study.objects.select_related("instrument", "team").get(pk=study.pk)  # nothing cached from before
    with CaptureQueriesContext(connection) as queries:
        import_ratings(path, study=study, dry_run=True)
    return sum(not query["sql"].lstrip().upper().startswith("INSERT") for query in queries)


def test_checking_a_file_costs_the_same_queries_for_more_raters(study, tmp_path):  # noqa: F811
    rows = rows_of(LONG)
    few = [row for row in rows if row["annotator_id"] == rows[0]["annotator_id"]]
    many = [{**row, "annotator_id": f"{row['annotator_id']}-{copy}"} for copy in range(6) for row in few]
    few_queries = _queries(write_csv(tmp_path / "few.csv", few), study)
    many_queries = _queries(write_csv(tmp_path / "many.csv", many), study)

    assert many_queries == few_queries  # not a query (nor an item page) per rating or per rater


def test_importing_again_costs_the_same_queries_for_more_raters(study, tmp_path):  # noqa: F811
    rows = rows_of(LONG)
    few = [row for row in rows if row["annotator_id"] == rows[0]["annotator_id"]]
    many = [{**row, "annotator_id": f"{row['annotator_id']}-{copy}"} for copy in range(6) for row in few]
    import_ratings(write_csv(tmp_path / "few.csv", few), study=study)
    import_ratings(write_csv(tmp_path / "many.csv", many), study=study)

    assert _queries(tmp_path / "many.csv", study) == _queries(tmp_path / "few.csv", study)


def test_a_cell_the_database_cannot_store_is_named_by_row_and_column(study, tmp_path):  # noqa: F811
    rows = rows_of(LONG)
    rows[3]["rationale"] = "fine\x00print"
    refused = refused_with_all(write_csv(tmp_path / "nul.csv", rows), study)

    assert "nul.csv, row 5, field rationale: holds a NUL character" in str(refused)
