"""The SHREC report on the committed two-video fixture: import, build the tasks, answer them with the scripted
answerer (its replies read by the one parser, as the runner stores them), report; the same bytes twice."""

import io
from pathlib import Path

import pytest
from django.core.management import call_command

from annotator.external_spans import shrec_study
from benchmark.models import Respondent, TaskAnswer, TaskItem, TaskSet
from benchmark.results.shrec.build import build_shrec
from benchmark.results.tables import report_json
from benchmark.shrec.answers import parse_answer
from benchmark.shrec.prompts import prompt_version
from benchmark.shrec.scripted import scripted_reply
from tests.builders import default_team

pytestmark = pytest.mark.django_db

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "shrec" / "two_videos.csv"


def _scripted_answers(task_set: TaskSet) -> int:
    items = list(TaskItem.objects.filter(task_set=task_set))
    for item in items:
        respondent, _ = Respondent.objects.get_or_create(
            kind=Respondent.Kind.JUDGE, model="scripted", prompt_version=prompt_version(item.task)
        )
        reply = scripted_reply(item)
        TaskAnswer.objects.create(item=item, respondent=respondent, reply=reply,
                                  answer=parse_answer(item.task, reply, item.options))
    return len(items)


@pytest.fixture
def task_set():
    team = default_team()
    call_command("import_episodes", "--format", "shrec", str(FIXTURE), "--team", team.slug, stdout=io.StringIO())
    study = shrec_study(team, "shrec-two-videos")
    call_command("shrec_tasks", "--team", team.slug, "--study", study.slug, "--seed", "0", "--subsets", "3",
                 "--subset-size", "3", stdout=io.StringIO())
    return TaskSet.objects.get(team=team)


def test_every_task_is_scored_for_the_scripted_model_with_its_dataset_statistics(task_set):
    answered = _scripted_answers(task_set)

    report = build_shrec(task_set, resamples=100)

    assert [row["label"] for row in report["rows"]] == ["(L) scripted"]
    cells = report["rows"][0]["tasks"]
    assert sum(cell["answered"] for cell in cells.values()) == answered
    for task, cell in cells.items():
        assert cell["items"] > 0, task
        assert len(cell["n_per_subset"]) == 3, task
        assert cell["metrics"][next(iter(cell["metrics"]))]["mean"] is not None, task
    assert report["dataset"]["recorded"] is True
    assert set(report["dataset"]["by_source"]) == {"empathic", "wellness-dorm"}
    assert 0 < report["dataset"]["overall"]["overlap"] <= 1


def test_the_report_is_the_same_bytes_twice(task_set):
    _scripted_answers(task_set)

    assert report_json(build_shrec(task_set, resamples=200)) == report_json(build_shrec(task_set, resamples=200))
