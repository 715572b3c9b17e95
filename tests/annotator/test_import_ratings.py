"""Importing ratings made outside Parley into a study (``annotator.external_ratings``, ``import_ratings``).

The study rates five of Sotopia's real episodes (imported from ``shared/data/sotopia``, with the
GPT-4 judge's scores they carry) on the Sotopia-EVAL preset; the ratings files in
``tests/data/ratings/`` were written for those episodes: three raters in long format, two in wide.
"""

import csv
import io
import json
from pathlib import Path

import pytest
from django.core.exceptions import PermissionDenied
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse

from annotator.assignment import claim_next
from annotator.exports import export_lines
from annotator.external_ratings import import_ratings
from annotator.models import Annotation
from annotator.reports import build_report
from benchmark.importing import ImportProblem
from benchmark.instruments.presets import install_preset
from benchmark.models import Answer, Episode, Question
from tests.annotator.builders import add_annotators, make_instrument, make_question, make_study
from tests.annotator.test_exports import annotate
from tests.benchmark.import_checks import import_file, row_counts
from tests.builders import make_episode, make_researcher, make_scenario

pytestmark = pytest.mark.django_db

SOTOPIA = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "sotopia"
SOTOPIA_V1 = SOTOPIA / "sotopia_episodes_v1_first5.jsonl"
RATINGS = Path(__file__).resolve().parents[1] / "data" / "ratings"
LONG = RATINGS / "sotopia_eval_long.csv"
WIDE = RATINGS / "sotopia_eval_wide.csv"
JSONL = RATINGS / "sotopia_eval_long.jsonl"
RAW_IDS = ("5f1a2b3c4d5e6f708192a3b4", "60aa17c3e2b94c0012f3d4e5", "611b2c3d4e5f60718293a4b5",
           "62c0ffee0123456789abcdef", "63d1beef9876543210fedcba")
FIRST = "01H8XWN5V57J20F3JG7WWQKDAC"


@pytest.fixture
def study():
    import_file(SOTOPIA_V1)
    episodes = list(Episode.objects.filter(external_id__in=_episode_ids()).order_by("external_id"))
    return make_study(instrument=install_preset("sotopia-eval"), items=episodes, overlap=3, slug="sotopia-humans")


def _episode_ids() -> list[str]:
    return [json.loads(line)["episode_id"] for line in SOTOPIA_V1.read_text().splitlines()]


def rows_of(path: Path) -> list[dict[str, str]]:
    return list(csv.DictReader(path.open(newline="", encoding="utf-8")))


def write_csv(path: Path, rows: list[dict[str, str]], header: list[str] | None = None) -> Path:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=header or list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return path


def refused(path: Path, study, *messages: str) -> str:
    before = row_counts()
    with pytest.raises(ImportProblem) as caught:
        import_ratings(path, study=study)
    for message in messages:
        assert message in str(caught.value)
    assert row_counts() == before  # all or nothing
    return str(caught.value)


# Long and wide files


def test_a_long_file_becomes_submitted_annotations_of_external_annotators(study):
    result = import_ratings(LONG, study=study)

    assert result.format == "long ratings"
    assert result.created["rating"] == 15  # 5 episodes x 3 raters
    assert result.created["answer"] == 210
    assert result.created["external annotator"] == 3
    annotations = Annotation.objects.filter(assignment__item__study=study)
    assert annotations.count() == 15
    assert set(annotations.values_list("status", flat=True)) == {"submitted"}
    assert set(annotations.values_list("response__status", flat=True)) == {"submitted"}
    assert list(study.external_annotators.values_list("number", flat=True)) == [1, 2, 3]
    first = study.external_annotators.get(number=1)
    stored = Answer.objects.get(
        response__annotation__assignment__annotator=first.user, response__episode__external_id=FIRST,
        question__key="relationship", seat_position=0,
    )
    row = next(r for r in rows_of(LONG) if r["annotator_id"] == RAW_IDS[0] and r["episode_id"] == FIRST
               and r["question"] == "relationship" and r["seat"] == "0")
    assert (stored.value, stored.number, stored.reasoning) == (row["value"], float(row["value"]), row["rationale"])


def test_a_wide_file_with_a_seat_column_gives_the_same_kind_of_ratings(study):
    result = import_ratings(WIDE, study=study)

    assert result.format == "wide ratings"
    assert (result.created["rating"], result.created["answer"], result.created["external annotator"]) == (10, 140, 2)


def test_a_wide_file_may_name_the_seat_in_each_column(study, tmp_path):
    wide = rows_of(WIDE)
    joined = {}
    for row in wide:
        line = joined.setdefault((row["episode_id"], row["annotator_id"]),
                                 {"episode_id": row["episode_id"], "annotator_id": row["annotator_id"]})
        for key, value in row.items():
            if key not in ("episode_id", "annotator_id", "seat"):
                base, _, rationale = key.partition("_rationale")
                name = f"{base}_rationale:{row['seat']}" if key.endswith("_rationale") else f"{key}:{row['seat']}"
                line[name] = value
    result = import_ratings(write_csv(tmp_path / "by_column.csv", list(joined.values())), study=study)

    assert (result.created["rating"], result.created["answer"]) == (10, 140)


def test_json_lines_read_like_a_long_csv(study):
    result = import_ratings(JSONL, study=study)

    assert (result.format, result.created["rating"], result.created["answer"]) == ("long ratings", 2, 28)


def test_a_dry_run_reports_what_would_be_created_and_keeps_nothing(study):
    before = row_counts()
    result = import_ratings(LONG, study=study, dry_run=True)

    assert result.created["rating"] == 15
    assert "would create" in result.summary()
    assert row_counts() == before


# Bad files are refused, named by row and column, and nothing is kept


def test_a_value_outside_the_scale_names_its_row_and_column(study, tmp_path):
    rows = rows_of(LONG)
    rows[-1]["value"] = "11"  # the last row: goal, 0..10
    message = refused(write_csv(tmp_path / "bad.csv", rows), study, "bad.csv, row 211, field value")

    assert "choose a value from 0 to 10" in message


def test_a_value_off_the_step_or_not_a_number_is_refused(study, tmp_path):
    rows = rows_of(WIDE)
    rows[3]["relationship"] = "2.5"
    refused(write_csv(tmp_path / "wide.csv", rows), study, "row 5, field relationship", "whole number from -5 to 5")
    rows[3]["relationship"] = "a lot"
    refused(write_csv(tmp_path / "wide.csv", rows), study, "row 5, field relationship", "from -5 to 5")


def test_a_rating_missing_a_required_answer_names_the_row_and_the_column(study, tmp_path):
    rows = rows_of(WIDE)
    rows[2]["goal"] = ""
    refused(write_csv(tmp_path / "wide.csv", rows), study, "wide.csv, row 4, field goal:0",
            "choose a value from 0 to 10", "rating of episode '01H8XWN5V57J20F3JG7WWQKDAC', rows 4, 5, gives no")


def test_a_required_rationale_must_be_written(study, tmp_path):
    rows = [row for row in rows_of(LONG)]
    rows[0]["rationale"] = ""
    refused(write_csv(tmp_path / "long.csv", rows), study, "row 2, field believability_rationale:0", "say briefly why")


def test_an_episode_the_team_does_not_have_is_refused(study, tmp_path):
    rows = rows_of(LONG)
    rows[5]["episode_id"] = "01HNOSUCHEPISODE"
    refused(write_csv(tmp_path / "long.csv", rows), study, "row 7, field episode_id", "has no episode with the id "
            "'01HNOSUCHEPISODE'")


def test_an_episode_of_the_team_that_is_not_in_the_study_is_refused(study, tmp_path):
    outside = make_episode(external_id="outside-the-study")
    rows = rows_of(LONG)
    rows[5]["episode_id"] = outside.external_id
    refused(write_csv(tmp_path / "long.csv", rows), study, "row 7, field episode_id",
            "'outside-the-study' is not in study 'sotopia-humans'")


def test_an_unknown_question_or_seat_is_refused(study, tmp_path):
    rows = rows_of(LONG)
    rows[8]["question"] = "overall"
    refused(write_csv(tmp_path / "long.csv", rows), study, "row 10, field question", "no question 'overall'")
    rows = rows_of(LONG)
    rows[8]["seat"] = "2"
    refused(write_csv(tmp_path / "long.csv", rows), study, "row 10, field seat", "its seats are 0, 1")
    rows[8]["seat"] = ""
    refused(write_csv(tmp_path / "long.csv", rows), study, "row 10, field value", "asked once per character")
    header = rows_of(WIDE)
    refused(write_csv(tmp_path / "wide.csv", header, [*header[0], "overall"]), study, "row 2, field overall",
            "no question 'overall'")


def test_one_answer_given_twice_with_different_values_is_refused(study, tmp_path):
    rows = rows_of(LONG)
    rows.append({**rows[0], "value": "3"})
    refused(write_csv(tmp_path / "long.csv", rows), study, "row 212, field value", "row 2")


def test_a_bad_row_at_the_end_keeps_every_good_rating_out(study, tmp_path):
    rows = rows_of(LONG)
    rows[-1]["value"] = "-1"
    refused(write_csv(tmp_path / "long.csv", rows), study)  # refused() checks that no table changed

    assert not Annotation.objects.exists()
    assert not study.external_annotators.exists()


def test_a_file_of_neither_shape_is_refused_by_its_header(study, tmp_path):
    path = tmp_path / "turns.csv"
    path.write_text("episode_id,turn_index,speaker,text\n1,0,A,hello\n", encoding="utf-8")
    refused(path, study, "turns.csv, row 1", "lacks annotator_id")


# Who the external annotators are


def test_the_same_id_in_a_later_file_is_the_same_external_annotator(study, tmp_path):
    rows = rows_of(LONG)
    first = [row for row in rows if row["episode_id"] == FIRST]
    later = [row for row in rows if row["episode_id"] != FIRST]
    import_ratings(write_csv(tmp_path / "first.csv", first), study=study)
    result = import_ratings(write_csv(tmp_path / "later.csv", later), study=study)

    assert result.created["external annotator"] == 0
    assert study.external_annotators.count() == 3
    for annotator in study.external_annotators.all():
        assert Annotation.objects.filter(assignment__annotator=annotator.user).count() == 5


def test_raw_ids_are_not_stored_shown_or_exported(study, researcher_client):
    import_ratings(LONG, study=study)
    import_ratings(WIDE, study=study)

    stored = [(a.source_key, a.user.username, a.user.first_name, a.user.last_name, a.user.email)
              for a in study.external_annotators.select_related("user")]
    page = researcher_client.get(reverse("annotator:dashboard", args=[study.slug])).content.decode()
    report = researcher_client.get(reverse("annotator:report", args=[study.slug])).content.decode()
    exported = "".join(export_lines(study, "csv")) + "".join(export_lines(study, "jsonl"))
    for raw in RAW_IDS:
        assert not any(raw in str(value) for value in stored)
        assert raw not in page and raw not in report and raw not in exported
    assert "external 1" in page and "external 5" in page and "(imported ratings)" in page


def test_external_annotators_cannot_sign_in_nor_be_given_work(study):
    import_ratings(LONG, study=study)

    for annotator in study.external_annotators.select_related("user"):
        user = annotator.user
        assert not user.is_active and not user.has_usable_password()
        browser = Client()
        browser.post(reverse("login"), {"username": user.username, "password": ""})
        assert "_auth_user_id" not in browser.session
        assert not study.memberships.filter(annotator=user).exists()
        with pytest.raises(PermissionDenied):
            claim_next(study, user)
        browser.force_login(user)  # even a session made for the account is not signed in: it is inactive
        assert browser.get(reverse("annotator:index")).status_code == 302


# Re-importing


def test_importing_the_same_file_again_changes_nothing(study):
    import_ratings(LONG, study=study)
    before = row_counts()
    result = import_ratings(LONG, study=study)

    assert result.unchanged["rating"] == 15 and not result.created
    assert row_counts() == before


def test_a_conflicting_value_for_an_imported_rating_is_refused_not_overwritten(study, tmp_path):
    import_ratings(LONG, study=study)
    rows = rows_of(LONG)
    rows[1]["value"] = str(int(rows[1]["value"]) - 1 if rows[1]["value"] != "-5" else -4)
    message = refused(write_csv(tmp_path / "corrected.csv", rows), study, "corrected.csv, row 2", "relationship")

    assert "never overwritten" in message


# The agreement report covers the external annotators with Parley's and with the judge


@pytest.fixture
def mixed_study(study):
    """One Parley annotator rates every item (the judge's scores, shifted), then five external ones are imported."""
    parley = add_annotators(study, 1)[0]
    questions = list(study.instrument.questions.all())
    judge = {
        (answer.response.episode_id, answer.question.dimension, answer.seat_position): answer.number
        for answer in Answer.objects.filter(response__respondent__kind="judge").select_related("question", "response")
    }
    for item in study.items.all():
        answers = []
        for question in questions:
            for seat in (0, 1):
                score = judge[(item.episode_id, question.dimension, seat)]
                value = max(question.low, min(question.high, score - 1))
                answers.append((question, f"{value:g}", value, seat))
        annotate(item, parley, answers)
    import_ratings(LONG, study=study)
    import_ratings(WIDE, study=study)
    return study


def test_the_report_pools_parley_and_external_annotators_and_compares_them_with_the_judge(mixed_study):
    report = build_report(mixed_study, resamples=50)

    assert report["counts"]["annotators"] == 6
    assert report["counts"]["annotations"] == 30
    goal = report["questions"]["goal"]
    assert goal["n_annotators"] == 6 and goal["n_ratings"] == 60
    assert goal["krippendorff_alpha"]["interval"] is not None
    assert goal["judge"] is not None and goal["alignment"]["n"] == 10
    assert any("5 of the 6 annotators rated outside Parley" in note for note in report["notes"])


def test_the_agreement_report_command_and_page_include_the_external_annotators(mixed_study, tmp_path,
                                                                               researcher_client):
    out = tmp_path / "report.json"
    call_command("agreement_report", "--study", mixed_study.slug, "--out", str(out), "--resamples", "0",
                 stdout=io.StringIO())
    report = json.loads(out.read_text(encoding="utf-8"))
    page = researcher_client.get(reverse("annotator:report", args=[mixed_study.slug])).content.decode()

    assert report["questions"]["believability"]["n_annotators"] == 6
    assert "5 of the 6 annotators rated outside Parley" in page


# The command and the page


def test_the_command_imports_and_dry_runs(study):
    out = io.StringIO()
    call_command("import_ratings", str(LONG), "--study", study.slug, "--dry-run", stdout=out)
    assert "would create 210 answers, 3 external annotators, 15 ratings" in out.getvalue()
    assert not Annotation.objects.exists()

    call_command("import_ratings", str(LONG), "--study", str(study.pk), stdout=out)
    assert Annotation.objects.count() == 15


def test_the_command_names_the_problem_and_refuses_another_teams_study(study, tmp_path):
    rows = rows_of(LONG)
    rows[0]["value"] = "12"
    with pytest.raises(CommandError, match="row 2, field value"):
        call_command("import_ratings", str(write_csv(tmp_path / "bad.csv", rows)), "--study", study.slug)
    with pytest.raises(CommandError, match="has no study"):
        call_command("import_ratings", str(LONG), "--study", "no-such-study")


@pytest.fixture
def researcher_client(study):
    client = Client()
    client.force_login(make_researcher(study.team))
    return client


def test_the_page_checks_a_file_first_then_imports_what_was_checked(study, researcher_client):
    url = reverse("annotator:ratings-import", args=[study.slug])
    assert researcher_client.get(url).status_code == 200

    upload = SimpleUploadedFile("prolific.csv", LONG.read_bytes(), content_type="text/csv")
    checked = researcher_client.post(url, {"file": upload, "action": "check"})
    assert checked.status_code == 200
    assert "would create 210 answers, 3 external annotators, 15 ratings" in checked.content.decode()
    assert not Annotation.objects.exists()

    token = checked.context["form"].initial["upload"]
    imported = researcher_client.post(url, {"upload": token, "action": "import"})
    assert imported.status_code == 302 and imported.url == reverse("annotator:dashboard", args=[study.slug])
    assert Annotation.objects.count() == 15


def test_the_page_shows_the_problem_and_keeps_nothing(study, researcher_client, tmp_path):
    rows = rows_of(LONG)
    rows[0]["value"] = "12"
    upload = SimpleUploadedFile("bad.csv", write_csv(tmp_path / "bad.csv", rows).read_bytes())
    response = researcher_client.post(
        reverse("annotator:ratings-import", args=[study.slug]), {"file": upload, "action": "import"}
    )

    assert response.status_code == 200
    assert "bad.csv, row 2, field value" in response.content.decode()
    assert not Annotation.objects.exists()


def test_another_teams_researcher_cannot_import_into_the_study(study):
    from tests.builders import make_team

    client = Client()
    client.force_login(make_researcher(make_team(slug="elsewhere")))
    upload = SimpleUploadedFile("prolific.csv", LONG.read_bytes())
    response = client.post(reverse("annotator:ratings-import", args=[study.slug]), {"file": upload, "action": "import"})

    assert response.status_code == 404
    assert not Annotation.objects.exists()


# Questions asked per goal


def test_answers_about_goals_name_the_goal_by_role_and_position(tmp_path):
    instrument = make_instrument(name="Goals")
    make_question(instrument=instrument, key="goal_achieved", position=1, kind=Question.Kind.YES_NO,
                  prompt="Was the goal reached?", scope=Question.Scope.GOAL)
    scenario = make_scenario(roles=[{"goal": ["Borrow the car.", "Be home by ten."]}, {"goal": "Keep the car."}])
    episode = make_episode(scenario=scenario, external_id="goals-1")
    goal_study = make_study(instrument=instrument, items=[episode])
    lines = [
        {"episode_id": "goals-1", "annotator_id": "rater-a", "question": "barrier", "value": "none"},
        *({"episode_id": "goals-1", "annotator_id": "rater-a", "question": "goal_achieved", "goal": goal,
           "value": value} for goal, value in (("0.0", "yes"), ("0.1", "no"), ("1.0", "no"))),
    ]
    path = tmp_path / "goals.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")

    import_ratings(path, study=goal_study)
    stored = dict(Answer.objects.filter(question__key="goal_achieved").values_list("goal__text", "value"))
    assert stored == {"Borrow the car.": "yes", "Be home by ten.": "no", "Keep the car.": "no"}

    lines[2]["goal"] = "0.5"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    with pytest.raises(ImportProblem, match="line 3, field goal: .*no goal '0.5'"):
        import_ratings(path, study=goal_study)
