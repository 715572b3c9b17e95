"""The SHREC report on the committed two-video fixture: import, build the tasks, let the scripted answerer answer
them through the runner (``evaluate --shrec``), report; the same bytes twice."""

import io
from pathlib import Path

import pytest
from django.core.management import call_command

from annotator.external_spans import shrec_study
from benchmark.models import TaskAnswer, TaskSet
from benchmark.results.shrec.build import build_shrec
from benchmark.results.tables import report_json
from tests.builders import default_team

# The runner queues its chunks on commit (inline under PARLEY_TASKS_IMMEDIATE): see test_shrec_runs.py.
pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "shrec" / "two_videos.csv"


def _scripted_answers(team_slug: str, variant: str = "zero-shot") -> int:
    call_command("evaluate", "--shrec", "all", "--models", "scripted", "--variant", variant, "--team", team_slug,
                 stdout=io.StringIO(), stderr=io.StringIO())
    return TaskAnswer.objects.filter(variant=variant).count()


@pytest.fixture
def task_set():
    team = default_team()
    call_command("import_episodes", "--format", "shrec", str(FIXTURE), "--team", team.slug, stdout=io.StringIO())
    study = shrec_study(team, "shrec-two-videos")
    call_command("shrec_tasks", "--team", team.slug, "--study", study.slug, "--seed", "0", "--subsets", "3",
                 "--subset-size", "3", stdout=io.StringIO())
    return TaskSet.objects.get(team=team)


def test_every_task_is_scored_for_the_scripted_model_with_its_dataset_statistics(task_set):
    answered = _scripted_answers(task_set.team.slug)
    _scripted_answers(task_set.team.slug, "cot")

    report = build_shrec(task_set, resamples=100)

    assert [row["label"] for row in report["rows"]] == ["(L) scripted", "(L) scripted + cot"]
    cells = report["rows"][0]["tasks"]
    assert sum(cell["answered"] for cell in cells.values()) == answered
    for task, cell in cells.items():
        assert cell["items"] > 0, task
        assert len(cell["n_per_subset"]) == 3, task
        assert cell["metrics"][next(iter(cell["metrics"]))]["mean"] is not None, task
    assert report["dataset"]["recorded"] is True
    assert set(report["dataset"]["by_source"]) == {"empathic", "wellness-dorm"}
    assert 0 < report["dataset"]["overall"]["overlap"] <= 1
    assert report["per_attribute"]["error_items_with_attributes"] > 0
    assert any(entry["n"] for entry in report["per_attribute"]["error_f1"]["(L) scripted"].values())


def test_the_report_is_the_same_bytes_twice(task_set):
    _scripted_answers(task_set.team.slug)

    assert report_json(build_shrec(task_set, resamples=200)) == report_json(build_shrec(task_set, resamples=200))


def test_the_human_row_comes_from_a_human_baseline_study_over_the_same_items(task_set):
    from annotator.human_baseline.generated import generate_human_answers
    from annotator.human_baseline.study import create_human_baseline_study
    from tests.builders import make_user

    study = create_human_baseline_study(task_set=task_set, tasks=["detection", "pre"], overlap=2)
    given = generate_human_answers(study, [make_user(), make_user()], seed=0)

    report = build_shrec(task_set, resamples=50)
    human = report["human"]

    assert human["label"] == "Human" and human["people"] == 2
    assert human["answers"] == given == human["generated"]
    assert human["tasks"]["detection"]["answered"] + human["tasks"]["pre"]["answered"] == given
    assert human["tasks"]["error"]["answered"] == 0
    assert 0 <= human["tasks"]["pre"]["metrics"]["accuracy"]["pooled"] <= 1
    assert len(human["per_person"]) == 2 and set(human["majority"]) == {"detection", "pre"}
    assert any("generated, not given by people" in note for note in report["notes"])
