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
from django.contrib.auth import authenticate
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse

from annotator.external_ratings import import_ratings
from annotator.models import Annotation, Assignment, ExternalAnnotator, Membership
from annotator.reports import build_report
from annotator.assignment import claim_next
from benchmark.importing import ImportProblem
from benchmark.instruments.presets import install_preset
from benchmark.models import Answer, Episode
from tests.annotator.builders import add_annotators, make_study
from tests.benchmark.import_checks import import_file, row_counts
from tests.builders import make_episode, make_researcher, make_team

pytestmark = pytest.mark.django_db

SOTOPIA_V1 = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "sotopia" / "sotopia_episodes_v1_first5.jsonl"
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
