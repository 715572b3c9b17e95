"""``shrec_tasks``: a study's spans into a stored task set, JSONL out and back in (spec SH-3..SH-7, SH-14)."""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from annotator.models import Span, StudyItem
from annotator.shrec_records import study_episode_records
from benchmark.instruments.presets import install_preset
from benchmark.models import SocialAttribute, TaskItem, TaskSet
from tests.annotator.builders import make_study
from tests.builders import make_episode, make_scenario

from .shrec_study import add_external_annotation, shrec_study

pytestmark = pytest.mark.django_db


def run(*args, stderr=None):
    out = StringIO()
    call_command("shrec_tasks", *args, stdout=out, stderr=stderr or StringIO())
    return out.getvalue()


def test_records_keep_the_study_order_of_annotators_and_the_spans_times():
    study = shrec_study()
    records = study_episode_records(study)
    assert [record.key for record in records] == ["video1", "video2", "video3"]
    first = records[0]
    assert [annotator.name for annotator in first.annotators] == ["external 1", "external 2"]
    assert first.source == "empathic" and first.agent_seat == 0 and first.timed
    span = first.annotators[1].spans[0]
    assert (span.start_s, span.end_s, span.label, span.attributes) == (7.0, 13.0, "error", ("emotions",))
    assert first.turns[1].words[0] == (5.0, "Episode")


def test_builds_all_eight_tasks_and_prints_a_line_per_task():
    study = shrec_study()
    progress = StringIO()
    output = run("--study", study.slug, "--seed", "0", "--subsets", "3", "--subset-size", "2", stderr=progress)
    for task in ("pre", "post", "rationale", "correction"):
        assert f"shrec_tasks {task}" in progress.getvalue()
    task_set = TaskSet.objects.get(name="shrec-seed0")
    counts = {task: task_set.items.filter(task=task).count() for task in
              ("detection", "error", "attributes", "multiple", "pre", "post", "rationale", "correction")}
    assert counts == {"detection": 6, "error": 12, "attributes": 12, "multiple": 12, "pre": 6, "post": 6,
                      "rationale": 6, "correction": 6}
    for task, count in counts.items():
        assert f"{task}: {count} items" in output
    assert "Task set 'shrec-seed0'" in output and "66 items from 3 episodes" in output
    rationale = task_set.items.get(task="rationale", item_key="video1:1")
    assert len(rationale.options) == 5 and rationale.gold == rationale.correct[0] + 1
    assert rationale.options[rationale.correct[0]] == "Rationale 1.0"
    pre = task_set.items.get(task="pre", item_key="video1:2:pre")
    assert pre.context == "Episode 1 says line 4." and pre.options[pre.correct[0]] == "Episode 1 says line 3."
    assert (pre.first_turn, pre.last_turn) == (4, 4)  # the turn shown, never the answer's
    assert task_set.params["excerpt"] == "pair" and task_set.params["study"]["slug"] == study.slug
    dataset = task_set.params["dataset"]
    assert dataset["pairing"] == "shrec" and dataset["overall"]["annotations"] == 24
    assert dataset["overall"]["paired_annotations"] == 24 and dataset["overall"]["agreed_pairs"] == 12
    assert dataset["by_source"]["empathic"]["videos"] == 2 and dataset["by_source"]["wellness"]["videos"] == 1
    error = task_set.items.get(task="error", item_key="video1:1")
    assert error.provenance["attributes"] == ["emotions"]
    assert error.provenance["annotators"] == ["external 1", "external 2"]
    overlapping = task_set.params["overlapping_subsets"]
    assert "detection" in overlapping and "error" not in overlapping  # 2 wellness None/agreed items for 3 draws
    assert all(len(item.subsets) <= 1 for item in task_set.items.exclude(task__in=overlapping))


def test_the_same_build_twice_gives_the_same_items():
    study = shrec_study()
    run("--study", study.slug, "--name", "first")
    run("--study", study.slug, "--name", "second")
    fields = ("task", "item_key", "context", "options", "correct", "gold", "subsets")
    first = list(TaskItem.objects.filter(task_set__name="first").order_by("task", "item_key").values_list(*fields))
    second = list(TaskItem.objects.filter(task_set__name="second").order_by("task", "item_key").values_list(*fields))
    assert first == second


def test_a_name_in_use_is_refused_unless_replaced():
    study = shrec_study()
    run("--study", study.slug, "--tasks", "error")
    with pytest.raises(CommandError, match="already has a task set named 'shrec-seed0'"):
        run("--study", study.slug, "--tasks", "detection")
    assert set(TaskItem.objects.values_list("task", flat=True)) == {"error"}
    run("--study", study.slug, "--tasks", "detection", "--replace")
    assert set(TaskItem.objects.values_list("task", flat=True)) == {"detection"}


def test_replacing_a_set_a_human_baseline_study_shows_is_refused():
    study = shrec_study()
    run("--study", study.slug, "--tasks", "error")
    item = TaskItem.objects.first()
    baseline = make_study(instrument=install_preset("shrec-spans"), items=[], team=study.team)
    StudyItem.objects.create(study=baseline, episode=item.episode, position=0, first_turn=0, last_turn=1,
                             task_item=item)
    with pytest.raises(CommandError, match="a human-baseline study shows its items"):
        run("--study", study.slug, "--tasks", "error", "--replace")
    assert TaskItem.objects.filter(pk=item.pk).exists()


def test_export_then_import_gives_the_same_items(tmp_path):
    study = shrec_study()
    target = tmp_path / "tasks.jsonl"
    run("--study", study.slug, "--export", str(target))
    header = json.loads(target.read_text().splitlines()[0])
    assert header["format"] == "parley-shrec-tasks" and header["name"] == "shrec-seed0"
    output = run("--import", str(target), "--name", "copy")
    assert "Task set 'copy'" in output
    fields = ("task", "item_key", "episode_id", "first_turn", "last_turn", "start_s", "end_s", "label", "context",
              "options", "correct", "gold", "source", "provenance", "subsets")
    def rows(name):
        return list(TaskItem.objects.filter(task_set__name=name).order_by("task", "item_key").values_list(*fields))

    original, copied = rows("shrec-seed0"), rows("copy")
    assert original == copied and len(original) > 0
    assert TaskSet.objects.get(name="copy").params == TaskSet.objects.get(name="shrec-seed0").params


def test_a_bad_task_file_names_line_and_field_and_stores_nothing(tmp_path):
    study = shrec_study()
    target = tmp_path / "tasks.jsonl"
    run("--study", study.slug, "--tasks", "error", "--export", str(target))
    lines = target.read_text().splitlines()
    row = json.loads(lines[2])
    row["correct"] = [7]
    lines[2] = json.dumps(row)
    target.write_text("\n".join(lines) + "\n")
    message = r"tasks.jsonl line 3, field 'correct': positions must be below the 2 options"
    with pytest.raises(CommandError, match=message):
        run("--import", str(target), "--name", "broken")
    assert not TaskSet.objects.filter(name="broken").exists()


def test_a_task_file_naming_an_unknown_episode_stores_nothing(tmp_path):
    study = shrec_study()
    target = tmp_path / "tasks.jsonl"
    run("--study", study.slug, "--tasks", "error", "--export", str(target))
    target.write_text(target.read_text().replace('"episode": "video3"', '"episode": "video9"'))
    with pytest.raises(CommandError, match="no episode with the external id video9"):
        run("--import", str(target), "--name", "elsewhere")
    assert not TaskSet.objects.filter(name="elsewhere").exists()


def test_turn_spans_of_a_parley_study_build_with_iou_pairing():
    """SH-14: a study over the spans preset on Parley's own episodes; spans on turns, the seat they are about."""
    scenario = make_scenario()
    turns = [("speak", text) for text in ("Hello there.", "Hi, I am sad today.", "Great to hear!", "Why great?",
                                          "Sorry, I misheard you.", "Okay.")]
    episode = make_episode(scenario=scenario, turns=turns)
    study = make_study(instrument=install_preset("shrec-spans"), items=[episode], team=scenario.team, slug="parley")
    item = study.items.get()
    for number in (1, 2):
        add_external_annotation(study, item, number, [])
    question = study.instrument.questions.get(key="spans")
    for annotation in item.assignments.order_by("pk"):
        span = Span.objects.create(annotation=annotation.annotations.get(), question=question, label="error",
                                   start_turn=2, end_turn=2, seat_position=0, rationale="Cheerful at sad news.")
        span.attributes.set(SocialAttribute.objects.filter(key="emotions"))
    output = run("--study", "parley", "--tasks", "detection,error,attributes", "--name", "parley")
    assert "error: 1 items" in output and "attributes: 1 items" in output
    error = TaskItem.objects.get(task_set__name="parley", task="error")
    user, agent = turns_speaker(episode, 1), turns_speaker(episode, 2)
    assert error.context == f"{user}: Hi, I am sad today.\n{agent}: Great to hear!"
    with pytest.raises(CommandError, match="SHREC's pairing reads times"):
        run("--study", "parley", "--pairing", "shrec", "--name", "timed")


def turns_speaker(episode, index):
    return episode.turns.get(index=index).seat.character.name


def test_bad_options_and_empty_studies_are_refused():
    study = shrec_study(episodes=1)
    with pytest.raises(CommandError, match="expected all or tasks from"):
        run("--study", study.slug, "--tasks", "summary")
    with pytest.raises(CommandError, match="unknown excerpt mode 'window'"):
        run("--study", study.slug, "--excerpt", "window")
    with pytest.raises(CommandError, match="whole number of 4 or more"):
        run("--study", study.slug, "--min-eligible", "3")
    empty = make_study(instrument=install_preset("shrec-spans"), items=1, team=study.team, slug="empty")
    with pytest.raises(CommandError, match="has no submitted spans"):
        run("--study", empty.slug)
    # Without --study, the team's one study with submitted spans is the one (the empty study has none).
    assert f"of the study {study.title!r}" in run("--name", "without-study")


def test_names_and_seeds_the_database_cannot_hold_are_refused_plainly():
    study = shrec_study(episodes=1)
    with pytest.raises(CommandError, match="at most 100 characters"):
        run("--study", study.slug, "--tasks", "error", "--name", "x" * 101)
    with pytest.raises(CommandError, match="the seed must be a whole number from 0 to 2147483647"):
        run("--study", study.slug, "--tasks", "error", "--seed", str(2**31))
    assert not TaskSet.objects.exists()


def test_subsets_may_ignore_the_sources():
    study = shrec_study()
    run("--study", study.slug, "--tasks", "error", "--subsets", "1", "--subset-size", "3", "--stratify", "none")
    task_set = TaskSet.objects.get()
    assert task_set.params["stratify"] == "none" and task_set.params["subset_sizes"] == {"error": [3]}
    # Stratified, three items split 2 + 1 between the two sources instead.
    run("--study", study.slug, "--tasks", "error", "--subsets", "1", "--subset-size", "3", "--name", "strata")
    drawn = TaskItem.objects.filter(task_set__name="strata", subsets=[0])
    assert sorted(drawn.values_list("source", flat=True)) == ["empathic", "empathic", "wellness"]
