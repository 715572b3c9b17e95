"""The agreement_report command: reference values from CSV fixtures, bad input, and a study's report.

Tests without a django_db mark also check that --from-csv never touches the database.
"""

import csv
import io
import json
import zipfile
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command, execute_from_command_line

from benchmark.models import Answer, Barrier
from tests.annotator.builders import make_study
from tests.annotator.test_exports import annotate
from tests.annotator.test_reports import rated_study

FIXTURES = Path(__file__).resolve().parents[1] / "stats" / "fixtures"
HEADER = "item,annotator,question,value\n"


def run(*args: str) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("agreement_report", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def report_of(fixture: str, tmp_path: Path, *options: str) -> dict:
    out = tmp_path / "report.json"
    run("--from-csv", str(FIXTURES / fixture), "--out", str(out), "--resamples", "200", *options)
    return json.loads(out.read_text(encoding="utf-8"))


# Published reference values, through the command line.


def test_fleiss_1971_kappa(tmp_path):
    diagnosis = report_of("fleiss_1971.csv", tmp_path, "--categorical", "diagnosis")["questions"]["diagnosis"]

    assert diagnosis["type"] == "categorical"
    assert round(diagnosis["fleiss_kappa"]["value"], 3) == 0.430
    low, high = diagnosis["fleiss_kappa"]["ci95"]
    assert low < 0.430 < high
    assert (diagnosis["n_items"], diagnosis["n_ratings"]) == (30, 180)


def test_fleiss_1971_with_the_category_list(tmp_path):
    report = report_of("fleiss_1971.csv", tmp_path, "--categories", "diagnosis=1,2,3,4,5,6")
    diagnosis = report["questions"]["diagnosis"]

    assert round(diagnosis["fleiss_kappa"]["value"], 3) == 0.430
    # Randolph's kappa takes q from the list given (six options), not from the five observed.
    assert diagnosis["randolph_kappa"] == pytest.approx((diagnosis["percent_agreement"] - 1 / 6) / (1 - 1 / 6))
    assert report["input"]["categories"] == {"diagnosis": ["1", "2", "3", "4", "5", "6"]}


def test_shrout_fleiss_1979_iccs(tmp_path):
    icc = report_of("shrout_fleiss_1979.csv", tmp_path)["questions"]["score"]["icc"]

    assert round(icc["icc1k"], 3) == 0.443
    assert round(icc["icc1"], 3) == 0.166
    assert (icc["df1"], icc["df2"], icc["k"]) == (5.0, 18.0, 4.0)
    assert round(icc["twoway"]["icc3"], 3) == 0.715  # fully crossed, so the two-way models are there too


def test_krippendorff_2011_alpha_with_missing_data(tmp_path):
    code = report_of("krippendorff_2011.csv", tmp_path)["questions"]["code"]

    assert round(code["krippendorff_alpha"]["nominal"], 3) == 0.743
    assert round(code["krippendorff_alpha"]["ordinal"], 3) == 0.815
    assert round(code["krippendorff_alpha"]["interval"], 3) == 0.849
    assert code["excluded_items"] == 1


# Output.


def test_prints_a_one_line_summary(tmp_path):
    out, _ = run("--from-csv", str(FIXTURES / "fleiss_1971.csv"), "--out", str(tmp_path / "r.json"),
                 "--categorical", "diagnosis", "--resamples", "50")

    assert out.startswith(
        f"Wrote the json report of fleiss_1971.csv to {tmp_path / 'r.json'}: 1 question(s), 30 item(s), "
        "180 rating(s) in "
    )
    assert out.endswith(" s.\n") and out.count("\n") == 1


def test_dash_writes_the_report_to_standard_output_and_the_summary_to_standard_error():
    out, err = run("--from-csv", str(FIXTURES / "shrout_fleiss_1979.csv"), "--out", "-", "--resamples", "0")

    assert json.loads(out)["questions"]["score"]["type"] == "numeric"
    assert "to standard output: 1 question(s), 6 item(s), 24 rating(s)" in err


def test_a_question_left_blank_throughout_is_in_the_report_and_its_input(monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO(HEADER + "1,A,q,3\n1,B,q,4\n1,A,later,\n2,B,later,\n"))

    out, err = run("--from-csv", "-", "--out", "-", "--resamples", "0")

    report = json.loads(out)
    assert report["input"]["blank_questions"] == ["later"] and report["input"]["blank_values"] == 2
    assert report["questions"]["later"]["notes"][0].startswith("answers: every value of this question is blank")
    assert "2 question(s)" in err


def test_reads_standard_input(monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO(HEADER + "1,A,q,3\n1,B,q,4\n2,A,q,1\n2,B,q,2\n"))

    out, err = run("--from-csv", "-", "--out", "-", "--resamples", "0")

    assert json.loads(out)["input"]["file"] == "standard input"
    assert "report of standard input" in err


def test_same_seed_same_bytes(tmp_path):
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    for target in (first, second):
        run("--from-csv", str(FIXTURES / "fleiss_1971.csv"), "--out", str(target), "--categorical", "diagnosis",
            "--seed", "7", "--resamples", "100")

    assert first.read_bytes() == second.read_bytes()
    assert json.loads(first.read_text())["seed"] == 7


def test_report_records_how_it_was_read(tmp_path):
    report = report_of("shrout_fleiss_1979.csv", tmp_path, "--scale", "score=1:10")

    assert report["input"] == {
        "file": "shrout_fleiss_1979.csv", "categorical": [], "numeric": ["score"], "categories": {},
        "scales": {"score": [1.0, 10.0]}, "blank_values": 0, "blank_questions": [],
    }
    assert (report["resamples"], report["seed"]) == (200, 0)
    assert list(report) == ["input", "resamples", "seed", "questions"]
    assert not any(note.startswith("binned_kappa:") for note in report["questions"]["score"]["notes"])


def test_replaces_an_existing_file_and_leaves_no_temporary_file(tmp_path):
    target = tmp_path / "report.json"
    target.write_text("old")

    run("--from-csv", str(FIXTURES / "shrout_fleiss_1979.csv"), "--out", str(target), "--resamples", "0")

    assert json.loads(target.read_text())["questions"]
    assert [path.name for path in tmp_path.iterdir()] == ["report.json"]


def test_csv_tables_of_a_file_come_in_a_zip(tmp_path):
    target = tmp_path / "tables.zip"

    run("--from-csv", str(FIXTURES / "fleiss_1971.csv"), "--categorical", "diagnosis", "--format", "csv",
        "--out", str(target), "--resamples", "0")

    with zipfile.ZipFile(target) as archive:
        names = archive.namelist()
        assert names and all(name.endswith(".csv") for name in names)


# Bad input: a located message, a non-zero exit, and no output written.

BAD_FILES = {
    "missing-column": (
        "item,annotator,value\n1,A,3\n",
        (),
        "ratings.csv, row 1, column question: the header lacks question",
    ),
    "empty-item": (
        HEADER + "1,A,q,3\n,B,q,4\n",
        (),
        "ratings.csv, row 3, column item: the item is empty",
    ),
    "empty-annotator": (
        HEADER + "1,A,q,3\n1,,q,4\n",
        (),
        "ratings.csv, row 3, column annotator: the annotator is empty",
    ),
    "non-numeric-value": (
        HEADER + "1,A,goal,3\n1,B,goal,4\n2,A,goal,three\n",
        (),
        "ratings.csv, row 4, column value: 'three' is not a number, but question 'goal' has numbers too",
    ),
    "non-numeric-declared": (
        HEADER + "1,A,goal,high\n",
        ("--numeric", "goal"),
        "ratings.csv, row 2, column value: 'high' is not a number, and question 'goal' is numeric",
    ),
    "duplicate-rating": (
        HEADER + "1,A,q,3\n1,B,q,4\n1,A,q,5\n",
        (),
        "ratings.csv, row 4, column value: annotator 'A' rated item '1' on question 'q' already at row 2",
    ),
    "outside-scale": (
        HEADER + "1,A,goal,3\n1,B,goal,7\n",
        ("--scale", "goal=1:5"),
        "ratings.csv, row 3, column value: 7 is outside the scale 1:5",
    ),
    "unknown-question-in-option": (
        HEADER + "1,A,goal,3\n",
        ("--categorical", "goals"),
        "ratings.csv: the options name question 'goals', which the file does not have (its questions: goal)",
    ),
    "no-ratings": (HEADER, (), "ratings.csv: has no ratings"),
    "too-large-value": (
        HEADER + "1,A,goal,3\n1,B,goal,1e999\n2,A,goal,4\n2,B,goal,4\n",
        (),
        "ratings.csv, row 3, column value: '1e999' is not a finite number",
    ),
    "infinite-value": (
        HEADER + "1,A,goal,3\n1,B,goal,Infinity\n",
        (),
        "ratings.csv, row 3, column value: 'Infinity' is not a finite number",
    ),
    "too-large-judge-score": (
        "item,annotator,question,value,judge\n1,A,goal,3,5\n1,B,goal,4,5\n2,A,goal,4,1e400\n2,B,goal,5,1e400\n",
        (),
        "ratings.csv, row 4, column judge: '1e400' is not a finite number",
    ),
    "nan-judge-score": (
        "item,annotator,question,value,judge\n1,A,goal,3,nan\n1,B,goal,4,nan\n",
        (),
        "ratings.csv, row 2, column judge: 'nan' is not a finite number",
    ),
}


@pytest.mark.parametrize("case", BAD_FILES, ids=list(BAD_FILES))
def test_bad_file_is_a_located_command_error_and_writes_nothing(case, tmp_path):
    text, options, message = BAD_FILES[case]
    (tmp_path / "ratings.csv").write_text(text)
    target = tmp_path / "out" / "report.json"
    target.parent.mkdir()

    with pytest.raises(CommandError) as caught:
        run("--from-csv", str(tmp_path / "ratings.csv"), "--out", str(target), *options)

    assert str(caught.value).startswith(message)
    assert list(target.parent.iterdir()) == []


def test_bad_file_exits_with_1_and_keeps_the_previous_output(tmp_path, capsys):
    (tmp_path / "ratings.csv").write_text(HEADER + "1,A,q,3\n1,A,q,4\n")
    target = tmp_path / "report.json"
    target.write_text("previous")

    with pytest.raises(SystemExit) as exit:
        execute_from_command_line(
            ["manage.py", "agreement_report", "--from-csv", str(tmp_path / "ratings.csv"), "--out", str(target)]
        )

    assert exit.value.code == 1
    assert "ratings.csv, row 3, column value: annotator 'A' rated item '1'" in capsys.readouterr().err
    assert target.read_text() == "previous"


BAD_OPTIONS = {
    "scale": (("--scale", "goal=1-5"), "argument --scale: expected QUESTION=LOW:HIGH, e.g. goal=0:10; got 'goal=1-5'"),
    "categories": (("--categories", "barrier"), "argument --categories: expected QUESTION=CATEGORY,CATEGORY"),
    "categorical": (("--categorical", "a,,b"), "argument --categorical: expected QUESTION[,QUESTION...]"),
    "resamples": (("--resamples", "-5"), "argument --resamples: expected a whole number of 0 or more, got '-5'"),
    "seed": (("--seed", "x"), "argument --seed: expected a whole number of 0 or more, got 'x'"),
    "compare-with": (("--compare-with", "judge,oracle"), "argument --compare-with: expected respondent kinds from "
                     "annotator, participant, judge, agent, gold, separated by commas; got 'judge,oracle'"),
}


@pytest.mark.parametrize("case", BAD_OPTIONS, ids=list(BAD_OPTIONS))
def test_bad_option_format_exits_with_2_and_says_what_is_expected(case, tmp_path, capsys):
    options, message = BAD_OPTIONS[case]
    target = tmp_path / "report.json"

    with pytest.raises(SystemExit) as exit:
        execute_from_command_line(
            ["manage.py", "agreement_report", "--from-csv", str(FIXTURES / "shrout_fleiss_1979.csv"),
             "--out", str(target), *options]
        )

    assert exit.value.code == 2
    assert message in capsys.readouterr().err
    assert not target.exists()


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (("--scale", "score=1:5", "--scale", "score=0:10"), "--scale gives question 'score' twice"),
        (("--categorical", "score", "--scale", "score=0:10"), "question 'score' is declared both categorical"),
        (("--format", "html"), "--format html needs --study"),
        (("--format", "zip"), "--format zip needs --study"),
        (("--format", "csv", "--out", "-"), "--format csv writes a ZIP file; give --out a file path, not '-'"),
        (("--compare-with", "agent"), "--compare-with needs --study"),
    ],
)
def test_contradictory_options(options, message, tmp_path):
    args = ["--from-csv", str(FIXTURES / "shrout_fleiss_1979.csv"), *options]
    if "--out" not in options:
        args += ["--out", str(tmp_path / "report")]

    with pytest.raises(CommandError, match=message):
        run(*args)
    assert list(tmp_path.iterdir()) == []


def test_missing_input_file_and_output_directory(tmp_path):
    with pytest.raises(CommandError, match=r"^nowhere\.csv: no such file$"):
        run("--from-csv", str(tmp_path / "nowhere.csv"), "--out", str(tmp_path / "r.json"))
    with pytest.raises(CommandError, match="the directory .*missing does not exist"):
        run("--from-csv", str(FIXTURES / "fleiss_1971.csv"), "--out", str(tmp_path / "missing" / "r.json"))


def test_a_source_is_required():
    with pytest.raises(CommandError, match="one of the arguments --study --from-csv is required"):
        run("--out", "-")


def test_csv_options_do_not_apply_to_a_study():
    with pytest.raises(CommandError, match="--scale apply to --from-csv only"):
        run("--study", "any", "--scale", "goal=0:10", "--out", "-")


# A study's report.


@pytest.mark.django_db
def test_unknown_study_is_an_error(tmp_path):
    with pytest.raises(CommandError, match="--study 'no-such-study': the team 'default' has no study with this id"):
        run("--study", "no-such-study", "--out", str(tmp_path / "r.json"))
    assert list(tmp_path.iterdir()) == []


@pytest.fixture
def annotated_study():
    """Three items of the builders' instrument (question ``barrier``), each answered by the same two annotators."""
    study = make_study(items=3, overlap=2, annotators=2, slug="cli-study")
    question = study.instrument.questions.get(key="barrier")
    alice, bob = study.annotators.order_by("pk")
    for item, (first, second) in zip(
        study.items.order_by("position"), [("none", "none"), ("semantic", "semantic"), ("emotional", "none")],
        strict=True,
    ):
        annotate(item, alice, [(question, first, None, None)])
        annotate(item, bob, [(question, second, None, None)])
    assert Answer.objects.filter(response__annotation__assignment__item__study=study).count() == 6
    return study


@pytest.mark.django_db
@pytest.mark.parametrize("reference", ["slug", "pk"])
def test_study_report_as_json(annotated_study, reference, tmp_path):
    target = tmp_path / "report.json"

    out, _ = run("--study", str(getattr(annotated_study, reference)), "--out", str(target), "--resamples", "50")

    barrier = json.loads(target.read_text(encoding="utf-8"))["questions"]["barrier"]
    assert barrier["type"] == "categorical"
    assert barrier["n_ratings"] == 6
    assert barrier["cohen_kappa"] is not None
    assert out.startswith(
        f"Wrote the json report of study 'cli-study' to {target}: 1 question(s), 3 item(s), 6 answer(s), 0 span(s) in "
    )


@pytest.mark.django_db
@pytest.mark.parametrize(("format", "check"), [("html", "html"), ("csv", "zip"), ("zip", "zip")])
def test_study_report_in_other_formats(annotated_study, format, check, tmp_path):
    target = tmp_path / f"report.{format}"

    run("--study", "cli-study", "--format", format, "--out", str(target), "--resamples", "20")

    if check == "zip":
        with zipfile.ZipFile(target) as archive:
            names = archive.namelist()
        assert names and (format == "zip") == ("report.json" in names)
    else:
        assert "<html" in target.read_text(encoding="utf-8").lower()


PLANTED = '=HYPERLINK("http://evil.example","click")'


def test_csv_tables_of_a_file_quote_categories_and_conditions_named_like_formulas(tmp_path):
    condition = '"' + PLANTED.replace('"', '""') + '"'
    source = tmp_path / "ratings.csv"
    source.write_text(
        "item,annotator,question,value,truth,condition,judge\n"
        f"1,A,goal,2,,{condition},-1\n1,B,goal,3,,{condition},-1\n2,A,goal,5,,plain,4\n2,B,goal,5,,plain,4\n"
        f"3,A,goal,1,,{condition},0\n3,B,goal,2,,{condition},0\n"
        "1,A,tone,@warm,@warm,,\n1,B,tone,-cold,@warm,,\n2,A,tone,-cold,-cold,,\n2,B,tone,-cold,-cold,,\n",
        encoding="utf-8",
    )
    target = tmp_path / "tables.zip"

    run("--from-csv", str(source), "--format", "csv", "--out", str(target), "--resamples", "0")

    with zipfile.ZipFile(target) as archive:
        by_condition = list(csv.DictReader(io.StringIO(archive.read("by_condition.csv").decode())))
        confusion = list(csv.DictReader(io.StringIO(archive.read("confusion.csv").decode())))
    assert {row["condition"] for row in by_condition} == {"'" + PLANTED, "plain"}
    assert {(row["truth"], row["answer"]) for row in confusion} == {
        ("'@warm", "'@warm"), ("'@warm", "'-cold"), ("'-cold", "'@warm"), ("'-cold", "'-cold"),
    }
    judge = {row["condition"]: row["mean"] for row in by_condition if row["rater"] == "judge"}
    assert judge["'" + PLANTED] == "-0.5"  # a negative number stays a number


@pytest.mark.django_db
def test_study_bundle_draws_a_barrier_named_like_maths_as_text(tmp_path):
    rated_study(slug="maths-study")
    Barrier.objects.filter(key="semantic").update(name=r"$\foo$ & <i>")
    target = tmp_path / "report.zip"

    execute_from_command_line(
        ["manage.py", "agreement_report", "--study", "maths-study", "--format", "zip", "--out", str(target),
         "--resamples", "20"]
    )  # a failure would raise or exit non-zero

    with zipfile.ZipFile(target) as archive:
        figure = archive.read("figures/confusion-conditions.svg").decode()
    assert r"$\foo$ &amp; &lt;i&gt;" in figure


@pytest.mark.django_db
def test_a_studys_report_compares_with_the_respondent_kinds_asked_for(tmp_path):
    study, _, _ = rated_study(slug="compared")
    target = tmp_path / "report.json"

    run("--study", "compared", "--out", str(target), "--resamples", "0", "--compare-with", "agent,judge")

    report = json.loads(target.read_text(encoding="utf-8"))
    assert report["compared_with"] == ["agent", "judge"]
    judge = report["questions"]["confusion"]["judge"]
    # agent-z ties judge-x at 4 answers; the kind decides the tie.
    assert (judge["evaluator"], judge["respondent_kind"]) == ("agent-z", "agent")
    assert {other["evaluator"] for other in judge["other_evaluators"]} == {"judge-x", "judge-y"}
