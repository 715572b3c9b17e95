"""The external-id migration gives every episode made before it a stable external id, and keeps given ones."""

import pytest

from tests.migrations.harness import migrate, migrate_to_latest


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_episodes_without_an_external_id_get_one_and_others_keep_theirs():
    try:
        old = migrate([("benchmark", "0008_team_required")])
        get = old.get_model
        team = get("benchmark", "Team").objects.create(name="Old team", slug="old-team")
        scenario = get("benchmark", "Scenario").objects.create(team=team, codename="s", context="c")
        none = get("benchmark", "Barrier").objects.get(key="none")
        kept = get("benchmark", "Episode").objects.create(team=team, scenario=scenario, barrier=none,
                                                          source="imported", external_id="e1")
        chats = [get("benchmark", "Episode").objects.create(team=team, scenario=scenario, barrier=none,
                                                            source="human_chat") for _ in range(2)]

        new = migrate([("benchmark", "0009_episode_external_ids")])

        Episode = new.get_model("benchmark", "Episode")
        assert Episode.objects.get(pk=kept.pk).external_id == "e1"
        ids = [Episode.objects.get(pk=chat.pk).external_id for chat in chats]
        assert all(ids) and ids[0] != ids[1]
    finally:
        migrate_to_latest()
