"""The committed SHREC fixture, imported, builds every one of the eight tasks (the import and builders' contract)."""

from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from annotator.external_spans import shrec_study
from benchmark.models import TaskItem, TaskSet
from tests.benchmark.import_checks import import_file
from tests.builders import default_team

pytestmark = pytest.mark.django_db

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "shrec" / "two_videos.csv"
TASKS = ("detection", "error", "attributes", "multiple", "pre", "post", "rationale", "correction")


def build(*args):
    out = StringIO()
    call_command("shrec_tasks", *args, stdout=out)
    return out.getvalue()


@pytest.mark.parametrize("min_eligible", ["4", "5"])
def test_the_imported_fixture_builds_all_eight_tasks(min_eligible):
    import_file(FIXTURE)
    study = shrec_study(default_team(), "shrec-two-videos")
    output = build("--study", study.slug, "--seed", "0", "--min-eligible", min_eligible)
    task_set = TaskSet.objects.get(name="shrec-seed0")
    for task in TASKS:
        assert task_set.items.filter(task=task).exists(), f"{task} built nothing:\n{output}"
    dataset = task_set.params["dataset"]
    # shimport's fixture (since 08:35): 5 A-B pairs and a singleton each side in the first video, 6 pairs in the
    # second; 5 + 5 agreed pairs.
    assert (dataset["overall"]["pairs"], dataset["overall"]["agreed_pairs"]) == (11, 10)
    assert set(dataset["by_source"]) == {"empathic", "wellness-dorm"}
    assert task_set.items.filter(task="error").count() == 10  # one per agreed pair
    assert all(len(sizes) == 3 and min(sizes) >= 1 for sizes in task_set.params["subset_sizes"].values())


def test_excerpts_print_the_transcript_labels():
    import_file(FIXTURE)
    build("--study", shrec_study(default_team(), "shrec-two-videos").slug, "--tasks", "error")
    context = TaskItem.objects.filter(task="error").order_by("item_key").first().context
    user, agent = context.split("\n")
    assert user.startswith("User A: ") and agent.startswith("AI Agent: ")


def test_two_builds_of_the_fixture_are_identical():
    import_file(FIXTURE)
    study = shrec_study(default_team(), "shrec-two-videos")
    build("--study", study.slug, "--name", "first")
    build("--study", study.slug, "--name", "second", "--export", "-")
    fields = ("task", "item_key", "context", "options", "correct", "gold", "provenance", "subsets")

    def rows(name):
        return list(TaskItem.objects.filter(task_set__name=name).order_by("task", "item_key").values_list(*fields))

    assert rows("first") == rows("second") and rows("first")


def test_without_study_the_teams_one_study_with_spans_is_used():
    """The issue's command line, `shrec_tasks --tasks all --seed S --subsets 3 --subset-size N`, after one import."""
    with pytest.raises(CommandError, match="no study with submitted spans"):
        build("--tasks", "all", "--seed", "0")
    import_file(FIXTURE)
    output = build("--tasks", "all", "--seed", "0", "--subsets", "3", "--subset-size", "4")
    assert "of the study 'SHREC: shrec-two-videos'" in output
    assert TaskSet.objects.get(name="shrec-seed0").items.count() > 0


def test_without_study_several_studies_with_spans_are_named():
    import_file(FIXTURE)
    import_file(FIXTURE, tag="again")
    with pytest.raises(CommandError, match=r"2 studies with spans; choose one with --study: .*again"):
        build("--seed", "0")
