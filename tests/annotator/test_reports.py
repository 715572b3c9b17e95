"""The agreement report of a study: what goes into the statistics, and the numbers that come out.

The fixture (``rated_study``) is small enough to check by hand: 4 regular items, 3 annotators
who rate every one, plus a gold and an attention item that must not count.

    item  scenario  barrier    barrier answers (A, B, C)   confusion (A, B, C)   judge-x
    1     S1        none       none, none, none            5, 4, 5               5
    2     S1        semantic   semantic, semantic, none    3, 3, 2               3
    3     S2        emotional  emotional, none, semantic   1, 2, 1               1
    4     S2        none       none, none, none            4, 4, 4               3

C's answer to item 2 is the second of three versions: the first (submitted) said "semantic" and the
third is a draft saying "emotional"; only the latest submitted version counts.
"""

import json
import re
from datetime import timedelta

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from annotator.models import Annotation, Assignment, Span, StudyItem
from annotator.reports import build_report
from benchmark.models import Answer, Instrument, Question, Respondent, Response, SocialAttribute
from tests.annotator.builders import add_answer, add_items, make_annotation, make_instrument, make_question, make_study
from tests.builders import make_episode, make_scenario, make_scores, make_user
from tests.stats.notes import unexplained_nulls

pytestmark = pytest.mark.django_db

NOW = timezone.now()
BARRIERS = ["none", "semantic", "emotional", "none"]
BARRIER_ANSWERS = [
    ["none", "none", "none"],
    ["semantic", "semantic", "none"],
    ["emotional", "none", "semantic"],
    ["none", "none", "none"],
]
CONFUSION = [[5, 4, 5], [3, 3, 2], [1, 2, 1], [4, 4, 4]]
JUDGE = [5, 3, 1, 3]


ANCHORS = [{"value": v, "label": str(v), "description": f"{v} of 5"} for v in range(1, 6)]


def make_report_instrument():
    """The test instrument's categorical ``barrier`` (truth: the episode's barrier) and one question of each kind."""
    instrument = make_instrument()
    make_question(instrument=instrument, key="confusion", position=1, kind=Question.Kind.LIKERT,
                  prompt="Confusion left?", options={"anchors": ANCHORS}, dimension="unresolved_confusion")
    make_question(instrument=instrument, key="goal", position=2, kind=Question.Kind.SLIDER, prompt="Goal reached?",
                  scope="seat", options={"min": 0, "max": 10, "step": 1}, dimension="goal")
    make_question(instrument=instrument, key="spans", position=3, kind=Question.Kind.SPAN, prompt="Mark errors.",
                  required=False, options={"labels": ["error", "competency"], "attributes": ["emotions", "engagement"]})
    make_question(instrument=instrument, key="comment", position=4, kind=Question.Kind.TEXT, prompt="Anything else?",
                  required=False, options={})
    return instrument


def make_judge_instrument():
    """A judge's rubric of its own: its questions measure the study's dimensions under other keys."""
    instrument = Instrument.objects.create(name="Judge rubric")
    make_question(instrument=instrument, key="confusion_left", position=0, kind=Question.Kind.LIKERT,
                  prompt="How much confusion is left?", options={"anchors": ANCHORS}, dimension="unresolved_confusion")
    make_question(instrument=instrument, key="goal_completion", position=1, kind=Question.Kind.SLIDER,
                  prompt="Goal completion?", scope="seat", options={"min": 0, "max": 10, "step": 1}, dimension="goal")
    return instrument


def respond(kind, name, instrument, episode, answers, *, status=Response.Status.SUBMITTED, prompt_version=""):
    """A response of respondent ``name`` of ``kind`` (a model, or a label) with ``answers`` [(key, seat, number)]."""
    field = "model" if kind in (Respondent.Kind.JUDGE, Respondent.Kind.AGENT) else "label"
    who, _ = Respondent.objects.get_or_create(kind=kind, prompt_version=prompt_version, user=None, **{field: name})
    response = Response.objects.create(instrument=instrument, episode=episode, respondent=who, status=status)
    questions = {question.key: question for question in instrument.questions.all()}
    Answer.objects.bulk_create(
        Answer(response=response, question=questions[key], seat_position=seat, value=f"{number:g}", number=number)
        for key, seat, number in answers
    )
    return response


def annotate(item, annotator, answers=(), *, spans=(), version=1, status=Annotation.Status.SUBMITTED):
    """An annotation version of ``item`` by ``annotator``; ``answers`` are (key, seat, value, number)."""
    submitted = status == Annotation.Status.SUBMITTED
    assignment, _ = Assignment.objects.get_or_create(
        item=item, annotator=annotator,
        defaults={"claimed_at": NOW, "lease_expires_at": NOW + timedelta(hours=1), "status": "submitted",
                  "submitted_at": NOW},
    )
    annotation = make_annotation(
        assignment, version=version, status=status,
        submitted_at=NOW + timedelta(minutes=version) if submitted else None,
    )
    questions = {q.key: q for q in item.study.instrument.questions.all()}
    for key, seat, value, number in answers:
        add_answer(annotation, questions[key], value, seat_position=seat, number=number)
    for label, start, end, attributes in spans:
        span = Span.objects.create(
            annotation=annotation, question=questions["spans"], label=label, start_turn=start, end_turn=end,
            rationale="Because.", correction="Do better." if label == "error" else "",
        )
        span.attributes.set(SocialAttribute.objects.filter(key__in=attributes))
    return annotation


def full_answers(item_index, annotator_index):
    barrier = BARRIER_ANSWERS[item_index][annotator_index]
    confusion = CONFUSION[item_index][annotator_index]
    return [
        ("barrier", None, barrier, None),
        ("confusion", None, str(confusion), float(confusion)),
        ("goal", 0, str(item_index + annotator_index), float(item_index + annotator_index)),
        ("goal", 1, "5", 5.0),
        ("comment", None, "Fine.", None),
    ]


def rated_study(**fields):
    """The study of the module docstring, with other respondents' answers; returns (study, items, annotators).

    judge-x answers a rubric of its own (same dimensions, other keys); judge-y answers the study's own
    question; "human mean" is an imported human score; agent-z is an interviewed agent, compared
    only when asked for; a judge's draft and superseded answers never count.
    """
    scenarios = [make_scenario(), make_scenario()]
    episodes = [make_episode(scenario=scenarios[i // 2], barrier=barrier) for i, barrier in enumerate(BARRIERS)]
    study = make_study(instrument=make_report_instrument(), items=episodes, overlap=3, gold=1, attention=1, **fields)
    annotators = [make_user(username=f"rater-{name}") for name in "ABC"]
    items = list(study.items.filter(kind=StudyItem.Kind.REGULAR).order_by("position"))
    for i, item in enumerate(items):
        for j, person in enumerate(annotators):
            if (i, j) == (1, 2):
                annotate(item, person, [("barrier", None, "semantic", None)], version=1)
                annotate(item, person, full_answers(i, j), version=2)
                annotate(item, person, [("barrier", None, "emotional", None)], version=3,
                         status=Annotation.Status.DRAFT)
                continue
            spans = []
            if i == 0 and j == 0:
                spans = [("error", 0, 1, ["emotions"])]
            elif i == 0 and j == 1:
                spans = [("error", 0, 1, ["emotions", "engagement"])]
            elif i == 1 and j == 0:
                spans = [("competency", 2, 2, ["engagement"])]
            annotate(item, person, full_answers(i, j), spans=spans)
    for item in study.items.exclude(kind=StudyItem.Kind.REGULAR):
        for person in annotators:
            annotate(item, person, [("barrier", None, "emotional", None), ("confusion", None, "1", 1.0)])
    annotate(items[0], make_user(), [("barrier", None, "semantic", None)], status=Annotation.Status.DRAFT)

    rubric, judge, agent = make_judge_instrument(), Respondent.Kind.JUDGE, Respondent.Kind.AGENT
    for episode, score in zip(episodes, JUDGE, strict=True):
        respond(judge, "judge-x", rubric, episode,
                [("confusion_left", None, score), ("goal_completion", 0, 7), ("goal_completion", 1, 2)])
        respond(Respondent.Kind.ANNOTATOR, "human mean", rubric, episode, [("confusion_left", None, 3)])
        respond(agent, "agent-z", rubric, episode, [("confusion_left", None, 5)])
        respond(judge, "judge-x", rubric, episode, [("confusion_left", None, 1)], status=Response.Status.DRAFT,
                prompt_version="next")
    for episode in episodes[:2]:
        respond(judge, "judge-y", study.instrument, episode, [("confusion", None, 4)])
        respond(judge, "judge-w", rubric, episode, [("confusion_left", None, 2)], status=Response.Status.SUPERSEDED)
    return study, items, annotators


@pytest.fixture(scope="module")
def module_report(django_db_setup, django_db_blocker):
    """The report of ``rated_study``, built once for the module (in a transaction rolled back at the end)."""
    with django_db_blocker.unblock(), transaction.atomic():
        study, _, _ = rated_study()
        report = build_report(study, resamples=200, seed=3)
        transaction.set_rollback(True)
    return report


def test_the_report_is_strict_json(module_report):
    text = json.dumps(module_report, allow_nan=False)

    assert "NaN" not in text and "Infinity" not in text


def test_the_report_names_the_study_and_how_it_was_made(module_report):
    assert module_report["study"]["k"] == 3
    assert module_report["study"]["scheme_version"] == 1
    assert (module_report["resamples"], module_report["seed"]) == (200, 3)
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", module_report["generated_at"])
    assert {"selection", "units", "accuracy", "alignment", "spans", "interpretation"} <= set(module_report["methods"])


def test_gold_and_attention_items_are_counted_and_left_out(module_report):
    counts = module_report["counts"]

    assert counts["excluded_annotations"] == {"gold": 3, "attention": 3}
    assert (counts["items"], counts["items_rated"], counts["annotations"], counts["annotators"]) == (4, 4, 12, 3)
    assert any("3 annotations of gold items and 3 of attention checks" in note for note in module_report["notes"])
    assert module_report["questions"]["barrier"]["n_items"] == 4


def test_categorical_agreement_matches_the_hand_computed_values(module_report):
    barrier = module_report["questions"]["barrier"]

    assert barrier["type"] == "categorical"
    assert (barrier["n_items"], barrier["n_ratings"], barrier["n_annotators"]) == (4, 12, 3)
    assert barrier["percent_agreement"] == pytest.approx(7 / 12)
    assert barrier["fleiss_kappa"]["value"] == pytest.approx(1 / 7)
    assert barrier["randolph_kappa"] == pytest.approx(3 / 8)  # q = 3 choices
    assert barrier["question"]["categories"] == ["none", "semantic", "emotional"]


def test_only_the_latest_submitted_version_counts(module_report):
    # C's item 2: v1 "semantic" (superseded), v2 "none" (used), v3 "emotional" (a draft).
    confusion = module_report["questions"]["barrier"]["accuracy"]["confusion"]

    assert confusion["labels"] == ["none", "semantic", "emotional"]
    assert confusion["matrix"] == [[6, 0, 0], [1, 2, 0], [1, 1, 1]]


def test_accuracy_against_the_episode_barrier_with_a_scenario_bootstrap(module_report):
    accuracy = module_report["questions"]["barrier"]["accuracy"]

    assert accuracy["overall"]["value"] == pytest.approx(9 / 12)
    lo, hi = accuracy["overall"]["ci95"]
    assert lo <= 9 / 12 <= hi
    assert accuracy["by_class"]["none"] == {"value": 1.0, "ci95": [1.0, 1.0], "n": 6}
    assert accuracy["by_class"]["semantic"]["value"] == pytest.approx(2 / 3)
    assert accuracy["by_class"]["emotional"]["value"] == pytest.approx(1 / 3)
    assert accuracy["chance"] == pytest.approx(1 / 3)
    assert (accuracy["cluster"], accuracy["n_clusters"], accuracy["resamples"]) == ("scenario", 2, 200)


def test_numeric_question_aligns_with_the_judge_with_the_most_scores(module_report):
    confusion = module_report["questions"]["confusion"]

    assert confusion["type"] == "numeric"
    assert confusion["percent_agreement"] == pytest.approx(0.5)
    assert confusion["judge"]["evaluator"] == "judge-x"  # 4 scores; judge-y has 2, "human mean" never judges
    assert confusion["judge"]["respondent_kind"] == "judge"
    assert confusion["judge"]["other_evaluators"] == [
        {"evaluator": "judge-y", "respondent_kind": "judge", "prompt_version": "", "scores": 2}
    ]  # judge-w's superseded and judge-x's draft answers never count; agent-z was not asked for
    assert confusion["alignment"]["pearson_r"] == pytest.approx(20 / 472**0.5)
    assert confusion["alignment"]["n"] == 4
    assert confusion["judge_scores"]["units"] == ["1", "2", "3", "4"]
    assert confusion["judge_scores"]["human_mean"] == pytest.approx([14 / 3, 8 / 3, 4 / 3, 4])
    assert confusion["judge_scores"]["judge"] == [5.0, 3.0, 1.0, 3.0]


def test_means_by_condition_use_the_episode_barrier(module_report):
    confusion = module_report["questions"]["confusion"]

    assert confusion["by_condition"]["none"]["mean"] == pytest.approx(13 / 3)
    assert confusion["by_condition"]["none"]["n"] == 2
    assert confusion["by_condition"]["semantic"] == {"mean": pytest.approx(8 / 3), "ci95": None, "n": 1}
    assert confusion["judge_by_condition"]["none"]["mean"] == pytest.approx(4.0)
    assert module_report["conditions"]["none"]


def test_binned_kappas_use_the_questions_full_scale(module_report):
    confusion = module_report["questions"]["confusion"]

    assert set(confusion["binned_kappa"]) == {"3", "4", "5"}
    assert confusion["binned_kappa"]["5"]["percent_agreement"] == pytest.approx(0.5)  # 1-5 in 5 bins: exact
    assert not any("observed range" in note for note in confusion["notes"])
    assert confusion["question"]["scale"] == [1.0, 5.0]


def test_per_seat_questions_rate_each_seat_as_its_own_unit(module_report):
    goal = module_report["questions"]["goal"]

    assert goal["question"]["unit"] == "item:seat"
    assert (goal["n_items"], goal["n_ratings"]) == (8, 24)
    scores = dict(zip(goal["judge_scores"]["units"], goal["judge_scores"]["judge"], strict=True))
    assert scores["1:0"] == 7.0 and scores["1:1"] == 2.0
    # Human means 1, 2, 3, 4 on seat 0 (judge 7) and 5 on seat 1 (judge 2), for items 1-4.
    assert goal["alignment"]["pearson_r"] == pytest.approx(-25 / 875**0.5)
    assert goal["alignment"]["n"] == 8


def test_span_agreement_counts_everyone_who_submitted_the_item(module_report):
    spans = module_report["questions"]["spans"]

    assert spans["type"] == "spans"
    assert spans["n_items"] == 4  # every regular item has three coders, marks or not
    detail = spans["spans"]
    assert (detail["n_spans"], detail["n_pairs"]) == (3, 1)
    assert detail["overlap_share"] == pytest.approx(2 / 3)
    assert detail["label_agreement"] == 1.0
    assert detail["attributes"]["f1"] == pytest.approx(2 / 3)
    assert (detail["attributes"]["partial_match"], detail["attributes"]["exact_match"]) == (1.0, 0.0)


def test_free_text_questions_are_skipped_with_a_reason(module_report):
    assert "comment" not in module_report["questions"]
    assert "free text" in module_report["skipped_questions"]["comment"]


def test_interpretation_labels_come_with_the_values(module_report):
    barrier = module_report["questions"]["barrier"]

    assert barrier["interpretation"]["fleiss_kappa"] == "slight"  # 1/7
    assert barrier["interpretation"]["randolph_kappa"] == "fair"  # 3/8


def test_a_study_without_annotations_has_nothing_to_report():
    study = make_study(instrument=make_report_instrument(), items=2)

    report = build_report(study, resamples=50)

    assert report["questions"] == {}
    assert report["counts"]["annotations"] == 0
    assert any("nothing to report" in note for note in report["notes"])
    json.dumps(report, allow_nan=False)


def test_character_offsets_refine_span_positions():
    from annotator.reports.spans import span_position

    assert span_position(2, 3, None, None, 0, 0) == (2.0, 4.0)
    assert span_position(2, 2, 10, 30, 40, 40) == (2.25, 2.75)


def test_the_number_of_queries_does_not_grow_with_the_study():
    study, items, annotators = rated_study()

    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            build_report(study, resamples=20)
        return len(captured)

    few = queries()
    more = add_items(study, [make_episode(barrier="semantic") for _ in range(3)])
    for item in more:
        for j, person in enumerate(annotators):
            annotate(item, person, full_answers(1, j), spans=[("error", 0, 0, ["emotions"])])

    assert queries() == few


def test_undefined_statistics_are_null_with_a_reason():
    study = make_study(instrument=make_report_instrument(), items=3, overlap=2)
    raters = [make_user(), make_user()]
    for item in study.items.all():
        for person in raters:
            annotate(item, person, [("barrier", None, "none", None), ("confusion", None, "5", 5.0)])

    report = build_report(study, resamples=50)

    confusion = report["questions"]["confusion"]
    assert confusion["icc"]["icc1"] is None
    assert confusion["binned_kappa"]["3"]["fleiss"] is None
    one_bin = "binned_kappa.3.fleiss: Fleiss' kappa is undefined: every rating falls in one bin (chance agreement is 1)"
    assert one_bin in confusion["notes"]
    assert any(note.startswith("icc:") for note in confusion["notes"])
    barrier = report["questions"]["barrier"]
    assert barrier["fleiss_kappa"] is None
    assert any("every rating is in one category" in note for note in barrier["notes"])
    json.dumps(report, allow_nan=False)


def test_figures_are_accessible_svg_with_text_kept_as_text(module_report):
    from annotator.figures import report_figures

    figures = report_figures(module_report)

    assert set(figures["barrier"]) == {"accuracy", "confusion"}
    assert set(figures["confusion"]) == {"judge", "conditions"}
    assert "spans" not in figures or figures["spans"] == {}
    svg = figures["barrier"]["accuracy"].svg
    assert svg.startswith("<svg") and 'role="img"' in svg
    assert '<title id="barrier-accuracy-title">' in svg and "<desc" in svg
    assert "chance = 0.333" in svg  # words on the chance line, not colour alone
    assert "r = 0.921" in figures["confusion"]["judge"].svg


def test_figures_are_the_same_twice_and_ids_never_clash(module_report):
    import re

    from annotator.figures import report_figures

    first, second = report_figures(module_report), report_figures(module_report)
    svgs = [figure.svg for by_kind in first.values() for figure in by_kind.values()]

    assert svgs == [figure.svg for by_kind in second.values() for figure in by_kind.values()]
    ids = [found for svg in svgs for found in re.findall(r'id="([^"]+)"', svg)]
    assert len(ids) == len(set(ids))


def test_a_model_judge_wins_a_tie_with_the_scripted_heuristics():
    from types import SimpleNamespace

    from annotator.reports.comparison import judge_of
    from benchmark.instruments.answers import RespondentAnswer
    from benchmark.instruments.targets import Target

    def row(name, version, number):
        return RespondentAnswer(1, Target.episode(), "judge", name, version, None, "unresolved_confusion",
                                f"{number:g}", number)

    rows = [row("scripted", "heuristic-1", 3.0), row("zz-local/judge", "judge-2025.1", 4.0)]
    question = SimpleNamespace(pk=None, dimension="unresolved_confusion", per_seat=False, scope="episode")

    judge = judge_of(question, rows)

    assert (judge["evaluator"], judge["prompt_version"]) == ("zz-local/judge", "judge-2025.1")


def test_the_comparison_can_be_with_interviewed_agents_instead_of_judges():
    study, _, _ = rated_study()

    report = build_report(study, resamples=20, respondent_kinds=["agent"])

    confusion = report["questions"]["confusion"]
    assert report["compared_with"] == ["agent"]
    assert (confusion["judge"]["evaluator"], confusion["judge"]["respondent_kind"]) == ("agent-z", "agent")
    assert confusion["judge_scores"]["judge"] == [5.0, 5.0, 5.0, 5.0]
    assert report["questions"]["goal"]["judge"] is None  # agent-z was asked nothing per seat
    assert any("no answers by agent respondents" in note for note in report["questions"]["goal"]["notes"])


def test_other_studies_annotators_can_be_the_comparison_but_never_the_studys_own():
    study, items, _ = rated_study()
    other = make_study(instrument=study.instrument, items=[item.episode for item in items])
    outsider = make_user(username="outsider")
    for item in other.items.all():
        annotate(item, outsider, [("confusion", None, "2", 2.0)])

    report = build_report(study, resamples=20, respondent_kinds=["annotator"])

    judge = report["questions"]["confusion"]["judge"]
    assert (judge["evaluator"], judge["respondent_kind"], judge["scores"]) == (f"a{outsider.pk}", "annotator", 4)
    assert [other["evaluator"] for other in judge["other_evaluators"]] == ["human mean"]


def test_the_judges_own_preset_answers_are_compared_by_dimension():
    study = make_study(instrument=make_report_instrument(), items=2, overlap=2)
    raters = [make_user(), make_user()]
    for item in study.items.all():
        make_scores(item.episode, [("unresolved_confusion", None, 2)], evaluator="preset-judge")
        make_scores(item.episode, [("unresolved_confusion", None, 4)], evaluator="human mean")
        for person in raters:
            annotate(item, person, [("barrier", None, "none", None), ("confusion", None, "3", 3.0)])

    confusion = build_report(study, resamples=20)["questions"]["confusion"]

    assert (confusion["judge"]["evaluator"], confusion["judge"]["scores"]) == ("preset-judge", 2)
    assert confusion["judge"]["other_evaluators"] == []  # "human mean" is an annotator, not asked for


def test_every_null_statistic_comes_with_a_note(module_report):
    for key, entry in module_report["questions"].items():
        statistics = {name: value for name, value in entry.items() if name not in ("question", "judge", "judge_scores")}
        assert unexplained_nulls(statistics) == [], key
