"""Scenario templates: slots with constraints filled with casts, deterministically, idempotently, all or nothing."""

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from benchmark.models import Goal, Probe, Scenario
from benchmark.runs.options import RunOptions, RunOptionsError
from benchmark.runs.planning import plan_run
from benchmark.scenarios.templates import TemplateProblem, casts, describe_slot, find_template, fits, instantiate
from tests.builders import default_team, make_character, make_episode, make_role, make_team

pytestmark = pytest.mark.django_db


def make_template(codename: str = "market-stall", team=None, **slots) -> Scenario:
    """A template of two slots: a seller (a woman, 30-50, any baker) and a buyer (anyone)."""
    template = Scenario.objects.create(
        team=team or default_team(), codename=codename, is_template=True, relationship=1,
        context="{role0} sells bread at a market stall; {role1} comes by.", turn_taking="random_after_greeting",
        greeter_position=1, turn_cap=12,
    )
    seller = make_role(template, 0, goal=["Sell the last loaves to {role1}.", "Keep {role1} as a regular."],
                       reason="The day is almost over.", min_age=30, max_age=50, gender="woman",
                       occupation="baker", **slots)
    seller.goals.filter(position=0).update(tags=["existence"])
    make_role(template, 1, goal="Buy bread for less than {role0} asks.")
    Probe.objects.create(scenario=template, about=seller, position=0, topic="goal",
                         text="What does {role0} want?", options=["To close early", "To sell the last loaves"],
                         correct=1)
    return template


def bakers(count: int = 3, team=None) -> list:
    return [make_character(first_name=f"Baker{n}", gender="woman", age=30 + 5 * n, occupation="master baker",
                           team=team or default_team()) for n in range(count)]


def test_a_character_fits_a_slot_by_age_range_gender_and_occupation():
    seller = make_template().roles.get(position=0)
    assert fits(seller, make_character(gender="Woman", age=35, occupation="Master Baker"))
    assert not fits(seller, make_character(gender="woman", age=29, occupation="baker"))
    assert not fits(seller, make_character(gender="woman", age=51, occupation="baker"))
    assert not fits(seller, make_character(gender="woman", age=None, occupation="baker"))
    assert not fits(seller, make_character(gender="man", age=40, occupation="baker"))
    assert not fits(seller, make_character(gender="woman", age=40, occupation="teacher"))
    assert describe_slot(seller) == "role 0 (age 30-50, gender 'woman', occupation 'baker')"


def test_instances_copy_the_template_with_the_cast_and_point_back_at_it():
    template = make_template()
    bakers(2)
    for n in range(2):
        make_character(first_name=f"Buyer{n}", gender="man", occupation="plumber")

    result = instantiate(template, count=3, seed=1)

    assert len(result.created) == 3 and not result.found
    for number, instance in enumerate(result.scenarios, start=1):
        assert instance.template == template and not instance.is_template
        assert instance.codename == f"market-stall-{number}"
        assert (instance.turn_taking, instance.greeter_position, instance.turn_cap, instance.relationship) == (
            "random_after_greeting", 1, 12, 1
        )
        seller, buyer = instance.roles.order_by("position")
        assert fits(template.roles.get(position=0), seller.character)
        assert seller.character != buyer.character
        first = seller.character.first_name
        assert instance.context == f"{first} sells bread at a market stall; {buyer.character.first_name} comes by."
        assert list(seller.goals.values_list("text", "tags")) == [
            (f"Sell the last loaves to {buyer.character.first_name}.", ["existence"]),
            (f"Keep {buyer.character.first_name} as a regular.", []),
        ]
        assert seller.reason == "The day is almost over."
        probe = instance.probes.get()
        assert (probe.about, probe.text, probe.correct) == (seller, f"What does {first} want?", 1)
    casts_made = {tuple(instance.roles.values_list("character_id", flat=True)) for instance in result.scenarios}
    assert len(casts_made) == 3


def test_the_same_seed_gives_the_same_casts_and_running_it_again_makes_nothing_new():
    template = make_template()
    bakers(3)
    for n in range(3):
        make_character(first_name=f"Buyer{n}")
    roles = list(template.roles.order_by("position"))
    pool = list(template.team.characters.all())
    assert casts(roles, pool, 4, seed=5) == casts(roles, pool, 4, seed=5)
    assert casts(roles, pool, 4, seed=5) != casts(roles, pool, 4, seed=6)

    first = instantiate(template, count=2, seed=5)
    again = instantiate(template, count=2, seed=5)
    assert not again.created and [s.pk for s in again.found] == [s.pk for s in first.created]
    more = instantiate(template, count=3, seed=5)
    assert len(more.created) == 1 and len(more.found) == 2
    assert template.instances.count() == 3


def test_no_character_fitting_a_slot_is_refused_naming_the_slot_and_nothing_is_made():
    template = make_template()
    make_character(gender="man", age=40, occupation="baker")
    with pytest.raises(TemplateProblem, match=r"no character of the team fits role 0 \(age 30-50, gender 'woman'"):
        instantiate(template, count=1)
    assert not template.instances.exists()


def test_asking_for_more_casts_than_there_are_is_refused_with_how_many_exist():
    template = make_template()
    bakers(1)
    make_character(first_name="OnlyBuyer")
    with pytest.raises(TemplateProblem, match=r"only 1 different cast\(s\) of different characters fit the slots"):
        instantiate(template, count=2)
    assert Scenario.objects.filter(template=template).count() == 0


def test_two_slots_only_one_character_fits_cannot_be_cast():
    template = make_template()
    template.roles.filter(position=1).update(gender="woman", occupation="baker")
    bakers(1)
    with pytest.raises(TemplateProblem, match="no cast of different characters fit the slots"):
        instantiate(template, count=1)


def test_another_teams_characters_are_never_cast():
    template = make_template()
    other = make_team()
    bakers(3, team=other)
    make_character(first_name="Buyer")
    with pytest.raises(TemplateProblem, match="no character of the team fits role 0"):
        instantiate(template, count=1)


def test_find_template_by_id_or_codename_within_the_team_only():
    template = make_template()
    assert find_template(default_team(), "market-stall") == template
    assert find_template(default_team(), str(template.pk)) == template
    with pytest.raises(TemplateProblem, match="no scenario with the id or codename 'market-stall'"):
        find_template(make_team(), "market-stall")
    make_episode()  # an ordinary scenario
    ordinary = Scenario.objects.exclude(is_template=True).first()
    with pytest.raises(TemplateProblem, match="is not a template"):
        find_template(default_team(), str(ordinary.pk))


def test_the_command_instantiates_a_template_of_the_team_and_says_what_it_did():
    template = make_template()
    bakers(2)
    make_character(first_name="Buyer")
    out = StringIO()
    call_command("instantiate_template", "market-stall", "--count", "2", "--seed", "3", "--team", "default",
                 stdout=out)
    assert template.instances.count() == 2
    assert "2 new scenario(s), 0 already there" in out.getvalue()
    assert "(new)" in out.getvalue()


def test_the_command_refuses_a_template_no_one_fits_with_a_clear_message():
    make_template()
    with pytest.raises(CommandError, match="Template 'market-stall': no character of the team fits role 0"):
        call_command("instantiate_template", "market-stall", stdout=StringIO())
    with pytest.raises(CommandError, match="--count: ask for at least one cast"):
        call_command("instantiate_template", "market-stall", "--count", "0", stdout=StringIO())


def test_a_template_is_never_played_by_a_run():
    template = make_template()
    bakers(1)
    make_character(first_name="Buyer")
    instantiate(template, count=1)
    plan = plan_run(RunOptions(conditions=("none",)), default_team(), "no-templates")
    assert [scenario.template_id for scenario in plan.scenarios] == [template.pk]
    with pytest.raises(RunOptionsError, match="a template cannot be played") as error:
        plan_run(RunOptions(scenarios=("market-stall",), conditions=("none",)), default_team(), "template-run")
    assert error.value.option == "scenarios"


def test_goals_of_an_instance_are_rows_of_their_own():
    template = make_template()
    bakers(1)
    make_character(first_name="Buyer")
    instance = instantiate(template, count=1).created[0]
    assert Goal.objects.filter(role__scenario=instance).count() == 3
    assert Goal.objects.filter(role__scenario=template).count() == 3


def test_instances_carry_the_category_sender_receiver_labels_and_goal_types():
    template = make_template()
    Scenario.objects.filter(pk=template.pk).update(category="small_society")
    template.refresh_from_db()
    template.roles.filter(position=0).update(communication="sender")
    template.roles.filter(position=1).update(communication="receiver")
    Goal.objects.filter(role__scenario=template, role__position=0, position=0).update(goal_type="competition")
    bakers(1)
    make_character(first_name="Buyer", gender="man", occupation="plumber")

    (instance,) = instantiate(template, count=1).scenarios

    assert instance.category == "small_society"
    assert list(instance.roles.values_list("communication", flat=True)) == ["sender", "receiver"]
    seller_goals = Goal.objects.filter(role__scenario=instance, role__position=0).order_by("position")
    assert [(goal.goal_type, goal.erg) for goal in seller_goals] == [("competition", "growth"), ("", "")]
