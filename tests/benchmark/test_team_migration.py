"""The teams migration keeps everything: rows made before teams land in the default team, people in it."""

import pytest

from tests.migrations.harness import migrate, migrate_to_latest

BEFORE = [
    ("benchmark", "0005_runs_and_neutral_contexts"), ("annotator", "0003_report_bundle"), ("chat", "0001_initial"),
]
AFTER = [("benchmark", "0008_team_required"), ("annotator", "0006_team_required"), ("chat", "0004_team_required")]


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_rows_and_people_from_before_teams_move_into_the_default_team():
    try:
        check_the_migration()
    finally:
        migrate_to_latest()


def check_the_migration() -> None:
    old = migrate(BEFORE)
    try:
        User, Group = old.get_model("auth", "User"), old.get_model("auth", "Group")
        researcher = User.objects.create(username="old-researcher")
        researcher.groups.add(Group.objects.get_or_create(name="researchers")[0])
        staff = User.objects.create(username="old-staff", is_staff=True)
        annotator = User.objects.create(username="old-annotator")
        get = old.get_model
        character = get("benchmark", "Character").objects.create(first_name="Ana", external_id="c1")
        scenario = get("benchmark", "Scenario").objects.create(codename="s", context="c", external_id="s1")
        role = get("benchmark", "Role").objects.create(scenario=scenario, position=0, character=character, goal="g")
        get("benchmark", "Barrier").objects.create(key="jargon", name="Jargon", definition="d")
        none = get("benchmark", "Barrier").objects.get(key="none")
        episode = get("benchmark", "Episode").objects.create(
            scenario=scenario, barrier=none, source="imported", external_id="e1"
        )
        seat = get("benchmark", "Seat").objects.create(episode=episode, position=0, role=role, character=character)
        get("benchmark", "Turn").objects.create(episode=episode, index=0, seat=seat, content="An old line.")
        get("benchmark", "Evaluation").objects.create(
            episode=episode, evaluator="judge", dimension="mutual_understanding", score=3
        )
        get("benchmark", "SimulationRun").objects.create(tag="old-run")
        scheme = get("annotator", "Scheme").objects.create(name="Old scheme")
        study = get("annotator", "Study").objects.create(title="Old study", slug="old-study", scheme=scheme,
                                                         instructions="Read.", created_by=staff)
        get("annotator", "Membership").objects.create(study=study, annotator=annotator)
        get("chat", "ChatStudy").objects.create(slug="old-chat", title="Old chat", created_by=staff,
                                                completion_code="C")
    finally:
        new = migrate(AFTER)

    team = new.get_model("benchmark", "Team").objects.get(slug="default")
    members = dict(new.get_model("benchmark", "TeamMember").objects.values_list("user__username", "role"))
    assert members == {"old-researcher": "researcher", "old-staff": "researcher", "old-annotator": "annotator"}
    for app, name in [("benchmark", "Character"), ("benchmark", "Scenario"), ("benchmark", "Episode"),
                      ("benchmark", "SimulationRun"), ("annotator", "Study"), ("chat", "ChatStudy")]:
        rows = new.get_model(app, name).objects.all()
        assert rows.exists() and set(rows.values_list("team_id", flat=True)) == {team.pk}, name
    barriers = dict(new.get_model("benchmark", "Barrier").objects.values_list("key", "team_id"))
    assert barriers["jargon"] == team.pk and barriers["none"] is None
    assert new.get_model("benchmark", "Turn").objects.get().content == "An old line."
    assert new.get_model("benchmark", "Evaluation").objects.get().score == 3
