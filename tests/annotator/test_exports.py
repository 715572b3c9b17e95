"""Long-format exports: one row per answer and per span, pseudonymous, latest version by default."""

import csv
import io
import json
import re
from datetime import timedelta

import pytest
from asgiref.sync import async_to_sync
from django.http import StreamingHttpResponse
from django.test import AsyncRequestFactory
from django.urls import reverse
from django.utils import timezone

from annotator.exports import COLUMNS, records
from annotator.models import Annotation, Assignment, Span
from annotator.views.research import export
from benchmark.models import Question, SocialAttribute
from tests.annotator.builders import add_answer, make_annotation, make_instrument, make_question, make_study
from tests.builders import make_episode, make_user

pytestmark = pytest.mark.django_db


NOW = timezone.now()


def annotate(item, annotator, answers=(), *, version=1, status=Annotation.Status.SUBMITTED, seconds=90):
    """An annotation version of ``item`` by ``annotator`` with ``answers`` [(question, value, number, seat)]."""
    assignment, _ = Assignment.objects.get_or_create(
        item=item, annotator=annotator,
        defaults={
            "status": Assignment.Status.SUBMITTED, "claimed_at": NOW, "lease_expires_at": NOW + timedelta(hours=1),
            "submitted_at": NOW, "seconds_spent": seconds,
        },
    )
    annotation = make_annotation(
        assignment, version=version, status=status,
        submitted_at=NOW if status == Annotation.Status.SUBMITTED else None,
    )
    for question, value, number, seat in answers:
        add_answer(
            annotation, question, value, number=number, seat_position=seat, reasoning=f"because {value}, plainly"
        )
    return annotation


@pytest.fixture
def study():
    """Two regular items and a gold item under an instrument with a categorical and a per-seat slider question."""
    instrument = make_instrument(name="Export scheme")
    make_question(instrument=instrument, key="goal", position=1, kind=Question.Kind.SLIDER, prompt="Goal?",
                            scope="seat", options={"min": -5, "max": 10, "step": 1})
    make_question(instrument=instrument, key="errors", position=2, kind=Question.Kind.SPAN, prompt="Mark spans.",
                            required=False, options={"labels": ["error", "competency"], "attributes": []})
    return make_study(instrument=instrument, items=2, gold=1, overlap=2, slug="export-study")


@pytest.fixture
def people():
    return make_user(username="alice-secret"), make_user(username="bob-secret")


def questions(study):
    return {question.key: question for question in study.instrument.questions.all()}


def test_one_row_per_answer_with_every_column(study, people):
    alice, _ = people
    item = study.items.get(position=0)
    q = questions(study)
    annotate(item, alice, [(q["barrier"], "semantic", None, None), (q["goal"], "7", 7.0, 0), (q["goal"], "3", 3.0, 1)])

    rows = list(records(study))

    assert [list(row) for row in rows] == [list(COLUMNS)] * 3
    assert [(row["question"], row["seat"], row["value"], row["number"]) for row in rows] == [
        ("barrier", None, "semantic", None), ("goal", 0, "7", 7.0), ("goal", 1, "3", 3.0),
    ]
    first = rows[0]
    assert first["study"] == "export-study"
    assert first["item"] == 1
    assert first["item_kind"] == "regular"
    assert first["episode"] == item.episode.external_id
    assert first["annotator"] == f"a{alice.pk}"
    assert first["row_type"] == "answer"
    assert first["rationale"] == "because semantic, plainly"
    assert first["scheme"] == "Export scheme" and first["scheme_version"] == 1
    assert first["annotation_version"] == 1 and first["status"] == "submitted"
    to_the_second = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"
    assert re.fullmatch(to_the_second, first["submitted_at"]) and re.fullmatch(to_the_second, first["created_at"])


def test_gold_rows_are_flagged_by_item_kind(study, people):
    gold = study.items.get(kind="gold")
    annotate(gold, people[0], [(questions(study)["barrier"], "none", None, None)])

    assert [row["item_kind"] for row in records(study)] == ["gold"]


def test_spans_export_anchors_label_attributes_rationale_and_correction(study, people):
    item = study.items.get(position=0)
    annotation = annotate(item, people[0])
    span = Span.objects.create(annotation=annotation, question=questions(study)["errors"], label="error",
                               start_turn=1, end_turn=2, start_char=4, end_char=9, rationale="Rude.",
                               correction="Say thanks.")
    span.attributes.set(SocialAttribute.objects.filter(key__in=["social-norms", "emotions"]))
    Span.objects.create(annotation=annotation, question=questions(study)["errors"], label="competency",
                        start_turn=0, end_turn=0, rationale="Warm greeting.")

    rows = list(records(study))

    assert [(row["row_type"], row["value"], row["start_turn"]) for row in rows] == [
        ("span", "competency", 0), ("span", "error", 1),
    ]
    error = rows[1]
    assert (error["start_char"], error["end_turn"], error["end_char"]) == (4, 2, 9)
    assert error["attributes"] == ["emotions", "social-norms"]  # in the attributes' own order
    assert (error["rationale"], error["correction"]) == ("Rude.", "Say thanks.")
    assert rows[0]["attributes"] == [] and rows[0]["start_char"] is None


def test_only_the_latest_submitted_version_by_default(study, people):
    item = study.items.get(position=0)
    barrier = questions(study)["barrier"]
    annotate(item, people[0], [(barrier, "semantic", None, None)], version=1)
    annotate(item, people[0], [(barrier, "emotional", None, None)], version=2)
    annotate(item, people[0], [(barrier, "none", None, None)], version=3, status=Annotation.Status.DRAFT)

    latest = list(records(study))
    every = list(records(study, all_versions=True))

    assert [(row["annotation_version"], row["value"]) for row in latest] == [(2, "emotional")]
    assert [(row["annotation_version"], row["value"], row["status"]) for row in every] == [
        (1, "semantic", "submitted"), (2, "emotional", "submitted"), (3, "none", "draft"),
    ]


def test_drafts_alone_are_not_exported_by_default(study, people):
    annotate(study.items.first(), people[0], [(questions(study)["barrier"], "none", None, None)],
             status=Annotation.Status.DRAFT)

    assert list(records(study)) == []


def test_rows_come_in_item_then_annotator_order_whatever_the_insert_order(study, people):
    alice, bob = people
    barrier = questions(study)["barrier"]
    second, first = study.items.get(position=1), study.items.get(position=0)
    annotate(second, bob, [(barrier, "none", None, None)])
    annotate(second, alice, [(barrier, "none", None, None)])
    annotate(first, bob, [(barrier, "none", None, None)])

    rows = [(row["item"], row["annotator"]) for row in records(study)]

    assert rows == [(1, f"a{bob.pk}"), (2, f"a{alice.pk}"), (2, f"a{bob.pk}")]


def test_other_studies_are_not_exported(study, people):
    other = make_study(items=1)
    annotate(other.items.first(), people[0], [(other.instrument.questions.first(), "none", None, None)])

    assert list(records(study)) == []


# Over HTTP


@pytest.fixture
def researcher_client(client, study):
    researcher = make_user(staff=True)
    study.created_by = researcher
    study.save()
    client.force_login(researcher)
    return client


def test_csv_export_streams_the_rows_without_usernames(researcher_client, study, people):
    q = questions(study)
    annotate(study.items.get(position=0), people[0], [(q["barrier"], "semantic", None, None)])
    annotate(study.items.get(position=0), people[1], [(q["goal"], "4", 4.0, 1)])

    response = researcher_client.get(reverse("annotator:export", args=[study.slug, "csv"]))

    assert response.status_code == 200
    assert isinstance(response, StreamingHttpResponse)
    assert response["Content-Type"].startswith("text/csv")
    assert 'filename="export-study-annotations.csv"' in response["Content-Disposition"]
    text = b"".join(response.streaming_content).decode()
    table = list(csv.DictReader(io.StringIO(text)))
    assert list(table[0]) == list(COLUMNS)
    assert [(row["annotator"], row["question"], row["value"], row["number"], row["seat"]) for row in table] == [
        (f"a{people[0].pk}", "barrier", "semantic", "", ""),
        (f"a{people[1].pk}", "goal", "4", "4.0", "1"),
    ]
    assert '"because semantic, plainly"' in text  # a comma inside a cell is quoted
    assert table[0]["rationale"] == "because semantic, plainly"
    assert "secret" not in text


def test_csv_joins_span_attributes_with_semicolons(researcher_client, study, people):
    annotation = annotate(study.items.get(position=0), people[0])
    span = Span.objects.create(annotation=annotation, question=questions(study)["errors"], label="error",
                               start_turn=0, end_turn=0, rationale="Cold.", correction="Smile.")
    span.attributes.set(SocialAttribute.objects.filter(key__in=["emotions", "engagement"]))

    response = researcher_client.get(reverse("annotator:export", args=[study.slug, "csv"]))

    table = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert table[0]["attributes"] == "emotions;engagement"
    assert table[0]["correction"] == "Smile."


def test_csv_quotes_text_a_spreadsheet_would_run_as_a_formula(researcher_client, study, people):
    planted = '=HYPERLINK("http://evil.example","click")'
    annotation = annotate(study.items.get(position=0), people[0], [(questions(study)["goal"], "-1", -1.0, 1)])
    Span.objects.create(annotation=annotation, question=questions(study)["errors"], label="error",
                        start_turn=0, end_turn=0, rationale=planted, correction="@SUM(A1:A9)")

    response = researcher_client.get(reverse("annotator:export", args=[study.slug, "csv"]))

    answer, span = csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode()))
    assert (span["rationale"], span["correction"]) == ("'" + planted, "'@SUM(A1:A9)")
    assert (answer["value"], answer["number"]) == ("-1", "-1.0")  # numbers stay numbers


def test_jsonl_export_has_one_object_per_row(researcher_client, study, people):
    annotate(study.items.get(position=0), people[0], [(questions(study)["barrier"], "none", None, None)])

    response = researcher_client.get(reverse("annotator:export", args=[study.slug, "jsonl"]))

    assert response["Content-Type"].startswith("application/x-ndjson")
    lines = b"".join(response.streaming_content).decode().splitlines()
    assert [json.loads(line)["value"] for line in lines] == ["none"]
    assert list(json.loads(lines[0])) == list(COLUMNS)


def test_all_versions_over_http(researcher_client, study, people):
    item = study.items.get(position=0)
    barrier = questions(study)["barrier"]
    annotate(item, people[0], [(barrier, "semantic", None, None)], version=1)
    annotate(item, people[0], [(barrier, "none", None, None)], version=2)
    url = reverse("annotator:export", args=[study.slug, "jsonl"])

    latest = b"".join(researcher_client.get(url).streaming_content).decode().splitlines()
    every = researcher_client.get(url, {"all_versions": "1"})

    assert len(latest) == 1
    assert len(b"".join(every.streaming_content).decode().splitlines()) == 2
    assert "all-versions" in every["Content-Disposition"]


def test_an_unknown_format_is_a_404(researcher_client, study):
    assert researcher_client.get(reverse("annotator:export", args=[study.slug, "xlsx"])).status_code == 404


def test_exporting_is_the_same_twice(researcher_client, study, people):
    for item in study.items.all():
        for person in people:
            annotate(item, person, [(questions(study)["barrier"], "none", None, None)])
    url = reverse("annotator:export", args=[study.slug, "csv"])

    first = b"".join(researcher_client.get(url).streaming_content)
    second = b"".join(researcher_client.get(url).streaming_content)

    assert first == second
    assert first.count(b"\n") == 1 + 6


def test_under_asgi_the_export_is_an_async_stream(study, people):
    """Daphne serves Parley: a sync iterator would be read whole before sending, so ASGI gets an async one."""
    annotate(study.items.first(), people[0], [(questions(study)["barrier"], "none", None, None)])
    researcher = make_user(staff=True)
    study.created_by = researcher
    study.save()
    request = AsyncRequestFactory().get(reverse("annotator:export", args=[study.slug, "csv"]))
    request.user = researcher

    response = export(request, slug=study.slug, fmt="csv")

    async def read() -> bytes:
        return b"".join([chunk async for chunk in response.streaming_content])

    assert response.is_async
    body = async_to_sync(read)().decode()
    assert body.count("\n") == 2 and ",none," in body


def test_span_rows_carry_the_selected_text_and_every_row_the_condition(people):
    episode = make_episode(barrier="none", turns=[("speak", "Hello there, friend."), ("speak", "Go away now."),
                                                  ("speak", "Why so cold?")])
    instrument = make_instrument(name="Span scheme")
    spans = make_question(instrument=instrument, key="errors", position=2, kind=Question.Kind.SPAN,
                                    prompt="Mark spans.", required=False,
                                    options={"labels": ["error", "competency"], "attributes": []})
    study = make_study(instrument=instrument, items=[episode])
    annotation = annotate(study.items.get(), people[0], [(questions(study)["barrier"], "none", None, None)])
    Span.objects.create(annotation=annotation, question=spans, label="competency", start_turn=0, end_turn=0,
                        start_char=0, end_char=5, rationale="Warm.")
    Span.objects.create(annotation=annotation, question=spans, label="error", start_turn=0, end_turn=2,
                        start_char=13, end_char=3, rationale="Curt.", correction="Be kind.")
    Span.objects.create(annotation=annotation, question=spans, label="error", start_turn=1, end_turn=1,
                        rationale="Whole turn.", correction="Soften it.")

    rows = list(records(study))

    assert [(row["row_type"], row["text"]) for row in rows] == [
        ("answer", None), ("span", "Hello"), ("span", "friend.\nGo away now.\nWhy"), ("span", "Go away now."),
    ]
    assert {row["condition"] for row in rows} == {"none"}


def test_the_csv_export_names_the_text_and_the_condition(researcher_client, study, people):
    annotate(study.items.get(position=0), people[0], [(questions(study)["barrier"], "none", None, None)])

    response = researcher_client.get(reverse("annotator:export", args=[study.slug, "csv"]))

    header = b"".join(response.streaming_content).decode().splitlines()[0].split(",")
    assert "text" in header and "condition" in header

