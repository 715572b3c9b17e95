"""Krippendorff's unitizing alpha in a study's agreement report: on turns for every span question, on
seconds when the spans carry times, beside the overlap measures whose numbers it leaves alone."""

import csv
import io

import pytest

from annotator.models import Span, StudyItem
from annotator.reports import build_report
from annotator.reports.display import report_view
from annotator.reports.tables import report_tables
from benchmark.models import Recording, SocialAttribute
from benchmark.stats.unitizing import unitizing_alpha
from tests.annotator.builders import make_study
from tests.annotator.test_reports import annotate, make_report_instrument, module_report, rated_study  # noqa: F401
from tests.builders import make_episode, make_user
from tests.stats.notes import unexplained_nulls

pytestmark = pytest.mark.django_db


def test_unitizing_alpha_on_turns_counts_every_coder_and_every_turn(module_report):  # noqa: F811
    detail = module_report["questions"]["spans"]["spans"]
    turns = detail["unitizing_alpha"]["turns"]
    # Four items of four turns (400 hundredths each), three coders; item 1: A and B mark turns 0-1 as an
    # error; item 2: A marks turn 2 as competency; C marks nothing.
    direct = unitizing_alpha(
        [(0, 0, 200, "error"), (1, 0, 200, "error"), (0, 600, 700, "competency")], [0, 1, 2], 1600,
        boundaries=[400, 800, 1200],
    )
    assert turns["alpha"] == pytest.approx(direct.alpha)
    assert turns["by_label"]["error"]["alpha"] == pytest.approx(direct.by_category["error"]["alpha"])
    assert (turns["n_items"], turns["n_coders"], turns["n_units"]) == (4, 3, 3)
    assert turns["continuum_length"] == pytest.approx(16.0)
    assert "seconds" not in detail["unitizing_alpha"]  # no span has times
    notes = module_report["questions"]["spans"]["notes"]
    assert not any(note.startswith("spans.unitizing_alpha") for note in notes)  # null on seconds: no times
    # The overlap measures are unchanged.
    assert detail["overlap_share"] == pytest.approx(2 / 3)


def timed_study():
    """One episode with a 60 s recording, two annotators marking errors in seconds."""
    episode = make_episode(turns=4)
    Recording.objects.create(episode=episode, kind=Recording.Kind.VIDEO, url="https://example.org/v.mp4", duration_s=60)
    study = make_study(instrument=make_report_instrument(), items=[episode], overlap=2)
    item = study.items.get(kind=StudyItem.Kind.REGULAR)
    question = study.instrument.questions.get(key="spans")
    for name, (start_s, end_s) in {"A": (10.0, 20.0), "B": (12.0, 20.0)}.items():
        annotation = annotate(item, make_user(username=f"timer-{name}"))
        span = Span.objects.create(
            annotation=annotation, question=question, label="error", start_turn=1, end_turn=1,
            start_s=start_s, end_s=end_s, rationale="", correction="",
        )
        span.attributes.set(SocialAttribute.objects.filter(key="emotions"))
    return study


def test_timed_spans_get_unitizing_alpha_on_seconds():
    report = build_report(timed_study(), resamples=50)
    entry = report["questions"]["spans"]
    alphas = entry["spans"]["unitizing_alpha"]
    direct = unitizing_alpha([("A", 1000, 2000, "error"), ("B", 1200, 2000, "error")], ["A", "B"], 6000)
    assert alphas["seconds"]["alpha"] == pytest.approx(direct.alpha)
    assert 0 < alphas["seconds"]["alpha"] < 1
    # On turns both spans are turn 1: the same unit.
    assert alphas["turns"]["alpha"] == 1.0
    assert unexplained_nulls({k: v for k, v in entry.items() if k not in ("question", "judge", "judge_scores")}) == []

    (row,) = csv.DictReader(io.StringIO(report_tables(report)["spans.csv"]))
    assert float(row["unitizing_alpha_seconds"]) == pytest.approx(direct.alpha)
    assert float(row["unitizing_alpha_turns"]) == 1.0
    (view,) = [q for q in report_view(report).questions if q.key == "spans"]
    labels = [row.label for row in view.statistics]
    assert "Unitizing alpha (αu) on seconds" in labels and "Unitizing alpha (αu) on turns" in labels
