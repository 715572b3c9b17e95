"""SHREC's human baseline (SH-13): a study over task items, its page, its answers and the Human row's source."""

import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotator.human_baseline.answers import answer_in_space, label_of_option
from annotator.human_baseline.study import HumanStudyProblem, create_human_baseline_study, parse_tasks
from annotator.models import Annotation, Assignment, StudyItem
from benchmark.episodes.recordings import attach_upload
from benchmark.models import Answer, Task, TaskItem
from benchmark.results.shrec.human import HumanAnswer, human_answers
from tests.annotator.builders import add_annotators, make_study
from tests.annotator.shrec_items import ITEMS, LINES, make_task_set
from tests.builders import make_user
from tests.recordings import wav_bytes

pytestmark = pytest.mark.django_db


@pytest.fixture
def task_set():
    return make_task_set()


@pytest.fixture
def annotator():
    return make_user(username="hb-annotator")


def _study(task_set, annotators=(), **options):
    study = create_human_baseline_study(task_set=task_set, overlap=1, **options)
    add_annotators(study, list(annotators))
    study.memberships.update(instructions_read_at="2025-01-01T00:00:00Z")
    return study


def _assignment(study, annotator, task):
    item = study.items.get(task_item__task=task)
    return Assignment.objects.create(item=item, annotator=annotator, claimed_at="2025-01-01T00:00:00Z",
                                     lease_expires_at="2999-01-01T00:00:00Z")


def _entries(response):
    return {entry.question.key: entry for section in response.context["sections"] for entry in section.entries}


# ----- creating the study


def test_a_mixed_study_has_one_item_per_task_item_and_one_question_per_task(task_set):
    study = _study(task_set)

    items = list(study.items.select_related("task_item").order_by("position"))
    assert [item.task_item.task for item in items] == list(Task.values)  # the tasks' own order
    assert all(item.episode_id == item.task_item.episode_id for item in items)
    questions = {q.key: (q.kind, q.options) for q in study.instrument.questions.all()}
    assert list(questions) == list(Task.values)
    assert questions["detection"] == ("item_choice", {"source": "task_item"})
    assert questions["multiple"][0] == "yes_no"
    kind, options = questions["attributes"]
    assert kind == "multi_label"
    assert [choice["label"] for choice in options["choices"]] == ITEMS["attributes"][4]  # the items' options, in order
    assert [choice["value"] for choice in options["choices"]] == [
        "emotions", "engagement", "conversational-mechanics", "knowledge-state", "intention", "social-context",
        "social-norms",
    ]
    assert study.instrument.team_id == task_set.team_id and study.instrument.preset == "shrec-task-items"


def test_windows_are_the_items_turns_and_a_pre_or_post_condition_shows_only_its_context_turn(task_set):
    study = _study(task_set)

    items = study.items.select_related("task_item")
    windows = {item.task_item.task: (item.first_turn, item.last_turn) for item in items}
    assert windows["detection"] == (3, 4) and windows["rationale"] == (3, 5)
    assert windows["pre"] == (2, 2)  # the agent's utterance, not the person's answer before it
    assert windows["post"] == (1, 1)  # the person's utterance, not the agent's answer after it


def test_one_task_and_one_subset(task_set):
    study = _study(task_set, tasks=["rationale", "correction"], subset=2)

    assert list(study.items.values_list("task_item__task", flat=True)) == ["correction"]
    assert list(study.instrument.questions.values_list("key", flat=True)) == ["correction"]


def test_a_task_set_without_such_items_is_refused_with_a_clear_message(task_set):
    with pytest.raises(HumanStudyProblem, match="has no items of pre in subset 2: build them first"):
        create_human_baseline_study(task_set=task_set, tasks=["pre"], subset=2)
    assert not StudyItem.objects.exists()


def test_attribute_items_offering_different_options_are_refused(task_set):
    item = TaskItem.objects.get(task="attributes")
    TaskItem.objects.create(
        task_set=task_set, task="attributes", item_key="v2:attributes", episode=item.episode, first_turn=0,
        last_turn=1, context="x", options=list(reversed(item.options)), correct=[0], gold=["social-norms"],
    )
    with pytest.raises(HumanStudyProblem, match="offer different options"):
        create_human_baseline_study(task_set=task_set, tasks=["attributes"])


def test_task_names_are_read_in_the_tasks_order_and_unknown_ones_refused():
    assert parse_tasks("all") == list(Task.values)
    assert parse_tasks("pre, detection") == ["detection", "pre"]
    with pytest.raises(HumanStudyProblem, match="'emotion' is not a task"):
        parse_tasks("detection,emotion")


# ----- the item page


def test_the_page_shows_the_task_text_and_the_items_options_in_stored_order(client, task_set, annotator):
    study = _study(task_set, [annotator])
    client.force_login(annotator)

    response = client.get(reverse("annotator:item", args=[_assignment(study, annotator, "rationale").pk]))

    assert response.status_code == 200
    assert list(_entries(response)) == ["rationale"]  # only the item's task is asked
    rationale = _entries(response)["rationale"]
    assert [option.label for option in rationale.options] == ITEMS["rationale"][4]
    assert [option.value for option in rationale.options] == ["0", "1", "2", "3", "4"]
    task = response.context["task"]
    assert "choose the one that says correctly why" in task.instructions
    assert "marked as a Social Error" in task.instructions
    assert task.excerpt == ""  # the transcript window shows the excerpt
    assert [turn.content for turn in response.context["conversations"][0].turns] == LINES[3:6]


def test_the_page_holds_no_marker_of_the_correct_option(client, task_set, annotator):
    study = _study(task_set, [annotator])
    client.force_login(annotator)

    for task in ("detection", "error", "pre", "post", "rationale", "correction"):
        assignment = _assignment(study, annotator, task)
        page = client.get(reverse("annotator:item", args=[assignment.pk])).text
        blocks = re.findall(r'<label class="choice">.*?</label>', page, flags=re.S)
        options = ITEMS[task][4]
        assert len(blocks) == len(options), task
        # Every option is written the same way: with its value, label and shortcut key taken out, the blocks are
        # identical.
        shapes = {
            block.replace(f'value="{position}"', "").replace(text.replace("'", "&#x27;"), "")
            .replace(f'data-shortcut="{position + 1}"', "").replace(f">{position + 1}</kbd>", "></kbd>")
            for position, (block, text) in enumerate(zip(blocks, options, strict=True))
        }
        assert len(shapes) == 1, (task, shapes)
        assert "checked" not in next(iter(shapes))
        assert not re.search(r"correct(?!ly|ion)", page.replace("Correction", ""), flags=re.I), task
        Assignment.objects.filter(pk=assignment.pk).delete()


def test_a_pre_condition_page_shows_the_one_utterance_and_never_the_answers_turn(client, task_set, annotator):
    study = _study(task_set, [annotator])
    client.force_login(annotator)

    response = client.get(reverse("annotator:item", args=[_assignment(study, annotator, "pre").pk]))

    assert response.context["task"].excerpt == ITEMS["pre"][3]
    assert response.context["task"].excerpt_label == "Agent's behaviour"  # the prompt's heading
    # The answer (turn 1) is offered among the options, and nowhere else on the page.
    assert response.text.count("Today I took a walk around my building.") == 1
    assert [turn.index for conv in response.context["conversations"] for turn in conv.turns] == [2]


def test_a_task_item_never_plays_or_serves_its_episodes_recording(client, task_set, annotator, settings, tmp_path):
    """The recording holds every turn, a pre-condition's answer too: a task item shows its excerpt as text only."""
    settings.MEDIA_ROOT = tmp_path / "media"
    study = _study(task_set, [annotator])
    assignment = _assignment(study, annotator, "pre")
    attach_upload(assignment.item.episode, SimpleUploadedFile("s.wav", wav_bytes(0.5), content_type="audio/wav"))
    client.force_login(annotator)

    page = client.get(reverse("annotator:item", args=[assignment.pk])).text

    assert "data-player" not in page and "player.js" not in page
    assert client.get(reverse("annotator:recording", args=[assignment.pk])).status_code == 404


def test_an_annotator_of_another_study_cannot_open_an_item_or_the_study(client, task_set, annotator):
    study = _study(task_set, [annotator])
    assignment = _assignment(study, annotator, "detection")
    stranger = make_user(username="other-study-annotator")
    make_study(annotators=[stranger])
    client.force_login(stranger)

    assert client.get(reverse("annotator:item", args=[assignment.pk])).status_code == 404
    assert client.get(reverse("annotator:next", args=[study.slug])).status_code == 404
    assert client.get(reverse("annotator:instructions", args=[study.slug])).status_code == 404


# ----- answering, and the Human row's source


ANSWERS = {  # task -> (posted values, stored values, in the answer space)
    "detection": (["1"], ["1"], "error"),
    "error": (["0"], ["0"], "no_error"),
    "attributes": (["intention", "emotions"], ["emotions", "intention"], ["emotions", "intention"]),
    "multiple": (["no"], ["no"], False),
    "pre": (["1"], ["1"], 2),
    "post": (["4"], ["4"], 5),
    "rationale": (["2"], ["2"], 3),
    "correction": (["0"], ["0"], 1),
}


def test_answers_are_stored_and_read_back_in_each_tasks_answer_space(client, task_set, annotator):
    study = _study(task_set, [annotator])
    client.force_login(annotator)

    for task, (posted, stored, _) in ANSWERS.items():
        assignment = _assignment(study, annotator, task)
        response = client.post(reverse("annotator:submit", args=[assignment.pk]),
                               {f"answer-{task}": posted, "revision": "0"})
        assert response.status_code == 302, task
        rows = Answer.objects.filter(response__annotation__assignment=assignment, response__status="submitted")
        assert sorted(rows.values_list("question__key", "value")) == [(task, value) for value in stored]

    items = dict(TaskItem.objects.values_list("task", "pk"))
    person = f"a{annotator.pk}"
    assert human_answers(task_set.pk) == sorted(
        (HumanAnswer(items[task], person, answer) for task, (_, _, answer) in ANSWERS.items()),
        key=lambda answer: answer.item_id,
    )


def test_an_option_the_item_does_not_offer_is_refused(client, task_set, annotator):
    study = _study(task_set, [annotator])
    assignment = _assignment(study, annotator, "pre")
    client.force_login(annotator)

    response = client.post(reverse("annotator:submit", args=[assignment.pk]), {"answer-pre": "7", "revision": "0"},
                           follow=True)

    assert "is not one of the choices" in response.text
    assert not Annotation.objects.filter(assignment=assignment, status="submitted").exists()


def test_only_the_latest_submitted_version_counts_and_drafts_never(client, task_set, annotator):
    study = _study(task_set, [annotator], tasks=["detection"])
    assignment = _assignment(study, annotator, "detection")
    client.force_login(annotator)
    client.post(reverse("annotator:submit", args=[assignment.pk]), {"answer-detection": "0", "revision": "0"})
    client.post(reverse("annotator:edit", args=[assignment.pk]), {"version": "1"})
    client.post(reverse("annotator:submit", args=[assignment.pk]), {"answer-detection": "2", "revision": "0"})
    other = make_user(username="drafting")
    add_annotators(study, [other])
    draft = Assignment.objects.create(item=assignment.item, annotator=other, claimed_at="2025-01-01T00:00:00Z",
                                      lease_expires_at="2999-01-01T00:00:00Z")
    client.force_login(other)
    client.post(reverse("annotator:draft", args=[draft.pk]), {"answer-detection": "1", "revision": "0"})

    assert [answer.answer for answer in human_answers(task_set.pk)] == ["none"]


def test_another_task_sets_answers_are_not_returned(client, task_set, annotator):
    study = _study(task_set, [annotator], tasks=["detection"])
    client.force_login(annotator)
    client.post(reverse("annotator:submit", args=[_assignment(study, annotator, "detection").pk]),
                {"answer-detection": "1", "revision": "0"})

    other = make_task_set("other-set", episode=TaskItem.objects.first().episode)

    assert human_answers(other.pk) == []
    assert len(human_answers(task_set.pk)) == 1


def test_a_detection_or_error_option_is_read_by_its_words_unless_it_is_the_correct_one():
    assert label_of_option("detection", "Social Competence") == "competency"
    assert label_of_option("detection", "(C) None") == "none"
    assert label_of_option("detection", "Social Error") == "error"
    assert label_of_option("error", "No Social Error") == "no_error"
    assert label_of_option("error", "Social Error") == "error"
    assert label_of_option("error", "Maybe") is None
    item = TaskItem(task="detection", options=["A", "B", "C"], correct=[1], gold="error")
    assert answer_in_space(item, ["1"]) == "error"  # the correct position reads as the gold
    assert answer_in_space(item, ["0"]) is None  # words that name no label: unparsed
    assert answer_in_space(item, ["9"]) is None
    assert answer_in_space(TaskItem(task="attributes", options=[]), []) is None


def test_the_studys_agreement_report_scores_each_choice_against_its_task_items_correct_option(client, task_set):
    from annotator.reports.build import build_report

    study = _study(task_set, tasks=["rationale"])
    study.overlap = 2
    study.save()
    people = [make_user(username="right"), make_user(username="wrong")]
    add_annotators(study, people)
    for person, value in zip(people, ("2", "0"), strict=True):  # option 3 is the item's correct one
        client.force_login(person)
        assignment = _assignment(study, person, "rationale")
        client.post(reverse("annotator:submit", args=[assignment.pk]), {"answer-rationale": value, "revision": "0"})

    entry = build_report(study, resamples=50)["questions"]["rationale"]

    assert entry["accuracy"]["overall"]["value"] == pytest.approx(0.5)


def test_the_page_context_of_every_task_holds_no_model_instance(task_set, annotator):
    from annotator.answer_forms import FormValues
    from annotator.item_page import ItemPage
    from tests.annotator.test_item_page_context import model_objects

    study = _study(task_set, [annotator])
    for task in Task.values:
        page = ItemPage(_assignment(study, annotator, task))
        context = page.context(annotator, FormValues.stored(page.annotation))
        assert context["task"] is not None and model_objects(context) == [], task


def test_the_researchers_dashboard_export_and_report_open_for_a_human_baseline_study(client, task_set, annotator):
    study = _study(task_set, [annotator], tasks=["detection", "attributes"])
    client.force_login(annotator)
    for task, values in (("detection", ["0"]), ("attributes", ["emotions", "intention"])):
        client.post(reverse("annotator:submit", args=[_assignment(study, annotator, task).pk]),
                    {f"answer-{task}": values, "revision": "0"})
    client.force_login(make_user(staff=True))

    for url in (reverse("annotator:dashboard", args=[study.slug]), reverse("annotator:report", args=[study.slug]),
                reverse("annotator:export", args=[study.slug, "csv"])):
        assert client.get(url).status_code == 200, url
