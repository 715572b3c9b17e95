"""``manage.py load_demo_chat``: the demo chat study over three demo scenarios, created once."""

import re
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from benchmark.demo.content import SCENARIOS
from benchmark.demo.install import install_scenario
from benchmark.management.commands.load_demo import RESEARCHER
from chat.assignment import design_cells
from chat.management.commands.load_demo_chat import SCENARIO_CODENAMES
from chat.models import ChatStudy
from tests.builders import default_team, make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def demo_content():
    for spec in SCENARIOS:
        if spec.codename in SCENARIO_CODENAMES:
            install_scenario(spec, default_team())
    return make_user(username=RESEARCHER, staff=True)


def run(**options):
    out = StringIO()
    call_command("load_demo_chat", stdout=out, **options)
    return out.getvalue()


def test_it_creates_the_demo_study_and_prints_its_links(demo_content, settings):
    settings.PARLEY_MODELS = {**settings.PARLEY_MODELS, "agent": ""}
    output = run(base_url="http://127.0.0.1:8000")

    study = ChatStudy.objects.get(slug="demo-chat")
    assert study.created_by == demo_content
    assert sorted(c.target for c in design_cells(study)) == [2] * 12
    assert {c.barrier.key for c in design_cells(study)} == {"none", "semantic", "sociocultural", "emotional"}
    assert study.agent_model == ""
    link = r"http://127\.0\.0\.1:8000/s/demo-chat/\?PROLIFIC_PID=demo-participant-(\w+)&STUDY_ID=demo&SESSION_ID=demo-\1"
    assert re.search(link, output)
    assert "http://127.0.0.1:8000/chat/demo-chat/" in output
    assert "agent model scripted" in output


def test_running_it_twice_changes_nothing(demo_content):
    run()
    ChatStudy.objects.filter(slug="demo-chat").update(title="Renamed by the researcher")

    output = run()

    assert ChatStudy.objects.count() == 1
    assert ChatStudy.objects.get().title == "Renamed by the researcher"
    assert "already there" in output


def test_without_load_demo_it_says_what_to_run():
    with pytest.raises(CommandError, match="load_demo"):
        run()
