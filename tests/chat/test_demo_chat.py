"""``manage.py load_demo_chat``: the demo chat studies, created once: three demo scenarios of two
parties, a three-party template's first cast with the participant in one seat, and ProMediate's HMO
negotiation with the participant as the mediator."""

import re
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from benchmark.demo import negotiations
from benchmark.demo.accounts import RESEARCHER
from benchmark.demo.content import SCENARIOS
from benchmark.demo.group_templates import TEMPLATES
from benchmark.demo.install import install_scenario, install_template_instances
from benchmark.importing import import_file
from benchmark.models import Seat
from chat.assignment import design_cells
from chat.management.commands.load_demo_chat import GROUP_TEMPLATE, SCENARIO_CODENAMES
from chat.models import ChatStudy, Participant
from tests.builders import default_team, make_user

pytestmark = pytest.mark.django_db


GROUP_LINK = re.compile(r"participant link\s+http://127\.0\.0\.1:8000(/s/demo-group-chat/\?\S+)")
NEGOTIATION_LINK = re.compile(r"participant link\s+http://127\.0\.0\.1:8000(/s/demo-negotiation/\?\S+)")


def install_pair_scenarios():
    for spec in SCENARIOS:
        if spec.codename in SCENARIO_CODENAMES:
            install_scenario(spec, default_team())


@pytest.fixture
def demo_content():
    install_pair_scenarios()
    install_template_instances(next(t for t in TEMPLATES if t.codename == GROUP_TEMPLATE), default_team())
    import_file(negotiations.CASE, team=default_team(), format="promediate")
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

    assert ChatStudy.objects.count() == 3
    assert ChatStudy.objects.get(slug="demo-chat").title == "Renamed by the researcher"
    assert output.count("already there") == 3


def test_it_creates_a_group_chat_study_on_the_three_party_template_with_the_participant_in_one_seat(demo_content):
    output = run(base_url="http://127.0.0.1:8000")

    study = ChatStudy.objects.get(slug="demo-group-chat")
    scenario = study.scenarios.get()
    assert scenario.template.codename == GROUP_TEMPLATE and scenario.roles.count() == 3
    assert [(cell.barrier.key, cell.target) for cell in design_cells(study)] == [("none", 3)]
    assert (study.human_position, study.agent_model, study.created_by) == (1, "", demo_content)
    assert "http://127.0.0.1:8000/chat/demo-group-chat/" in output
    names = {role.position: role.character.name for role in scenario.roles.all()}
    assert f"the participant plays {names[1]}, agents (scripted) play {names[0]} and {names[2]}" in output


def test_the_group_chat_link_leads_through_consent_to_a_briefing_that_names_both_agents(demo_content):
    path = GROUP_LINK.search(run()).group(1)
    browser = Client()

    consent = browser.get(path, follow=True)
    assert consent.redirect_chain[-1][0].endswith("/s/demo-group-chat/consent/")
    briefing = browser.post("/s/demo-group-chat/consent/", {"decision": "agree"}, follow=True)

    participant = Participant.objects.get(study__slug="demo-group-chat")
    seats = {seat.position: seat for seat in participant.episode.seats.select_related("character")}
    assert {position: seat.player for position, seat in seats.items()} == {
        0: Seat.Player.AGENT, 1: Seat.Player.HUMAN, 2: Seat.Player.AGENT,
    }
    assert briefing.redirect_chain[-1][0].endswith("/s/demo-group-chat/briefing/")
    assert seats[0].character.name in briefing.text and seats[2].character.name in briefing.text


def test_the_negotiation_link_makes_the_participant_the_mediator_of_three_agent_parties(demo_content):
    path = NEGOTIATION_LINK.search(run()).group(1)
    study = ChatStudy.objects.get(slug="demo-negotiation")
    scenario = study.scenarios.get()
    assert scenario.external_id == "promediate-hmo"
    assert {c.barrier.key: c.target for c in design_cells(study)} == {"promediate-competing": 2}
    browser = Client()

    browser.get(path, follow=True)
    briefing = browser.post("/s/demo-negotiation/consent/", {"decision": "agree"}, follow=True)

    participant = Participant.objects.get(study__slug="demo-negotiation")
    seats = {seat.position: seat for seat in participant.episode.seats.select_related("character")}
    mediator = scenario.greeter_position
    assert seats[mediator].character.name == "Mediator" and seats[mediator].player == Seat.Player.HUMAN
    assert all(seat.player == Seat.Player.AGENT for position, seat in seats.items() if position != mediator)
    assert briefing.redirect_chain[-1][0].endswith("/s/demo-negotiation/briefing/")
    assert "Market Share Target Tiers" in briefing.text  # the case's issues, in the mediator's briefing


def test_without_the_negotiation_it_says_to_run_load_demo():
    install_pair_scenarios()
    install_template_instances(next(t for t in TEMPLATES if t.codename == GROUP_TEMPLATE), default_team())
    make_user(username=RESEARCHER, staff=True)

    with pytest.raises(CommandError, match="negotiation is missing"):
        run()


def test_without_the_group_scenario_it_says_to_run_load_demo():
    install_pair_scenarios()
    make_user(username=RESEARCHER, staff=True)

    with pytest.raises(CommandError, match="load_demo"):
        run()


def test_without_load_demo_it_says_what_to_run():
    with pytest.raises(CommandError, match="load_demo"):
        run()
