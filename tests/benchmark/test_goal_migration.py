"""The goals migration (0011): a role's goal text becomes one Goal per non-empty line, and back again."""

import pytest

from tests.migrations.harness import migrate, migrate_to_latest

BEFORE = [("benchmark", "0013_judge_answer_triggers")]
AFTER = [("benchmark", "0015_agentsense_goals_preset")]


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_goal_lines_become_goals_in_order_and_join_again_going_back():
    try:
        old = migrate(BEFORE)
        team = old.get_model("benchmark", "Team").objects.create(name="Goal team", slug="goal-team")
        scenario = old.get_model("benchmark", "Scenario").objects.create(team=team, codename="s", context="c")
        Role = old.get_model("benchmark", "Role")
        two = Role.objects.create(scenario=scenario, position=0, goal="Win the vote.\n\n  Hint: be kind.  \n")
        one = Role.objects.create(scenario=scenario, position=1, goal="Keep the peace.")

        new = migrate(AFTER)
        Goal = new.get_model("benchmark", "Goal")
        assert list(Goal.objects.filter(role_id=two.pk).values_list("position", "text", "tags")) == [
            (0, "Win the vote.", []), (1, "Hint: be kind.", [])
        ]
        assert list(Goal.objects.filter(role_id=one.pk).values_list("text", flat=True)) == ["Keep the peace."]
        assert new.get_model("benchmark", "Instrument").objects.filter(preset="agentsense-goals").count() == 1

        back = migrate(BEFORE)
        goals = dict(back.get_model("benchmark", "Role").objects.values_list("pk", "goal"))
        assert goals == {two.pk: "Win the vote.\nHint: be kind.", one.pk: "Keep the peace."}
        assert not back.get_model("benchmark", "Instrument").objects.filter(preset="agentsense-goals").exists()
    finally:
        migrate_to_latest()
