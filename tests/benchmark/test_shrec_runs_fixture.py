"""The answerers on items built for real: the SHREC fixture imported, its eight tasks built, then answered."""

from io import StringIO
from pathlib import Path

import pytest
from asgiref.sync import async_to_sync
from django.core.management import call_command

from annotator.external_spans import shrec_study
from benchmark.models import Task, TaskAnswer, TaskSet
from benchmark.shrec import running
from benchmark.shrec.answers import option_value, parse_answer
from benchmark.shrec.prompts import build_prompt, option_mark, task_instructions
from tests.benchmark.import_checks import import_file
from tests.builders import default_team

pytestmark = pytest.mark.django_db

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "shrec" / "two_videos.csv"


@pytest.fixture
def task_set() -> TaskSet:
    import_file(FIXTURE)
    study = shrec_study(default_team(), "shrec-two-videos")
    call_command("shrec_tasks", "--study", study.slug, "--seed", "0", "--subsets", "3", "--subset-size", "2",
                 stdout=StringIO())
    return TaskSet.objects.get(name="shrec-seed0")


def test_every_built_item_has_its_gold_at_its_correct_option_as_the_parser_reads_it(task_set):
    items = list(task_set.items.all())
    assert {item.task for item in items} == set(Task.values)
    for item in items:
        if item.task == Task.ATTRIBUTES:
            assert sorted(option_value(item.task, p, item.options) for p in item.correct) == item.gold, item
        else:
            assert option_value(item.task, item.correct[0], item.options) == item.gold, item
        if item.task != Task.MULTIPLE:
            marks = ", ".join(option_mark(item.task, p) for p in item.correct)
            assert parse_answer(item.task, f"Answer: {marks}", item.options) == item.gold, item


def test_every_prompt_shows_the_items_options_in_order_and_its_task_text(task_set):
    for item in task_set.items.all():
        prompt = build_prompt(item)
        assert task_instructions(item.task, item.label) in prompt and item.context.strip() in prompt
        if item.task != Task.MULTIPLE:
            positions = [prompt.index(f"{option_mark(item.task, i)} {text}") for i, text in enumerate(item.options)]
            assert positions == sorted(positions)


def test_the_scripted_answerer_answers_every_item_readably_and_the_same_each_time(task_set):
    ids = list(task_set.items.values_list("pk", flat=True))
    run = running.RunSettings(model="scripted")
    outcomes = async_to_sync(running.answer_items)(ids, run)
    assert {outcome.outcome for outcome in outcomes} == {"answered"}
    first = dict(TaskAnswer.objects.values_list("item_id", "answer"))
    assert len(first) == len(ids) and None not in first.values()

    forced = running.RunSettings(model="scripted", force=True)
    async_to_sync(running.answer_items)(ids, forced)
    assert dict(TaskAnswer.objects.values_list("item_id", "answer")) == first
    assert running.tally(ids, run) == running.Tally(answered=len(ids), unparsed=0, missing=0)
