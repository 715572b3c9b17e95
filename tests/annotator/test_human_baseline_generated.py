"""The demo's generated human-baseline answers: seeded, mostly right, labelled as generated, given once."""

import pytest

from annotator.human_baseline.generated import GENERATED_BY, generate_human_answers
from annotator.human_baseline.study import create_human_baseline_study
from annotator.models import Assignment
from benchmark.models import Answer, TaskItem
from benchmark.results.shrec.human import human_answers
from tests.annotator.shrec_items import make_task_set
from tests.builders import make_episode, make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def task_set():
    """Eight items of each task, over four episodes."""
    task_set = make_task_set()
    for copy in range(1, 8):
        episode = make_episode(turns=[("speak", f"Line {n}.") for n in range(6)]) if copy % 2 else None
        for item in TaskItem.objects.filter(task_set=task_set, item_key__startswith="v1:"):
            item.pk, item.item_key = None, f"v{copy + 1}:{item.task}"
            item.episode = episode or item.episode
            item.save()
    return task_set


def test_every_item_is_answered_by_each_person_mostly_right_and_labelled(task_set):
    study = create_human_baseline_study(task_set=task_set, overlap=3)
    people = [make_user(username=f"generated-{n}") for n in range(3)]

    assert generate_human_answers(study, people, seed=0) == 64 * 3

    answers = human_answers(task_set.pk)
    assert len(answers) == 64 * 3 and {answer.generated_by for answer in answers} == {GENERATED_BY}
    gold = {item.pk: item.gold for item in TaskItem.objects.filter(task_set=task_set)}
    right = {person: sum(a.answer == gold[a.item_id] for a in answers if a.person == person) / 64
             for person in sorted({a.person for a in answers})}
    assert all(0.5 < share < 0.97 for share in right.values()), right  # 0.85, 0.75, 0.65 in expectation
    assert all(answer.answer is not None for answer in answers)  # every generated answer reads in its space


def test_the_same_seed_gives_the_same_answers_and_a_second_run_adds_none(task_set):
    study = create_human_baseline_study(task_set=task_set, overlap=1)
    person = make_user(username="generated-person")

    generate_human_answers(study, [person], seed=3)
    first = _answers(study)
    assert generate_human_answers(study, [make_user(username="late")], seed=3) == 0  # already generated
    Assignment.objects.filter(item__study=study).delete()  # the versions, their responses and answers go too
    generate_human_answers(study, [person], seed=3)

    assert len({row[0] for row in first}) == 64 and _answers(study) == first


def _answers(study):
    """(task item, question key, value) of every answer given in ``study``."""
    return sorted(
        Answer.objects.filter(response__annotation__assignment__item__study=study).values_list(
            "response__annotation__assignment__item__task_item_id", "question__key", "value"
        )
    )


def test_each_item_gets_no_more_answers_than_its_overlap_leaves_room_for(task_set):
    study = create_human_baseline_study(task_set=task_set, overlap=2)
    people = [make_user(username=f"overlap-{n}") for n in range(3)]

    assert generate_human_answers(study, people) == 64 * 2

    assert sorted({answer.person for answer in human_answers(task_set.pk)}) == sorted(
        f"a{person.pk}" for person in people[:2])
    assert not Assignment.objects.filter(annotator=people[2]).exists()
