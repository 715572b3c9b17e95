"""``manage.py shrec_human_study``: a human-baseline study from a task set, or a clear refusal."""

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from annotator.models import Study
from tests.annotator.shrec_items import make_task_set
from tests.builders import make_user

pytestmark = pytest.mark.django_db


def _run(*args):
    out = StringIO()
    call_command("shrec_human_study", *args, stdout=out)
    return out.getvalue()


def test_the_command_creates_the_study_and_says_what_it_holds():
    make_task_set()
    annotator = make_user(username="ren")

    printed = _run("--task-set", "shrec-seed0", "--tasks", "pre,post", "--overlap", "2", "--annotators", "ren")

    study = Study.objects.get()
    assert printed.startswith(f"Created study '{study.slug}' over task set 'shrec-seed0': 2 items (pre 1, post 1), "
                              "2 people per item; invite link /annotate/join/")
    assert study.overlap == 2 and list(study.annotators.all()) == [annotator]
    assert study.title == "SHREC human baseline: shrec-seed0"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--task-set", "nope"], "--task-set 'nope': the team 'default' has no task set of this name"),
        (["--task-set", "shrec-seed0", "--tasks", "rationales"], "--tasks: 'rationales' is not a task"),
        (["--task-set", "shrec-seed0", "--subset", "7"], "has no items of detection, error"),
        (["--task-set", "shrec-seed0", "--overlap", "0"], "--overlap must be 1 or more"),
        (["--task-set", "shrec-seed0", "--annotators", "ghost"], "--annotators: no active account named ghost"),
    ],
)
def test_bad_options_are_refused_with_a_clear_message_and_nothing_is_made(args, message):
    make_task_set()

    with pytest.raises(CommandError, match=message.replace("(", r"\(").replace(")", r"\)")):
        _run(*args)
    assert not Study.objects.exists()
