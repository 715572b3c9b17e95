"""Teams own research data: what one team's researchers can reach of another team's, by page, form and command.

The review found a researcher reading another researcher's participant chats through the episode
browser (``?tag=chat:<slug>``) and building an annotation study on them through the tag list; these
tests pin each of those routes shut, plus the commands and the rules of the model.
"""

import io

import pytest
from django.contrib.auth.models import Group
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command
from django.urls import reverse

from benchmark.models import Barrier, Episode, Scenario, Team, TeamMember
from benchmark.models.teams import research_teams, team_for_command
from tests.builders import (
    default_team,
    make_episode,
    make_researcher,
    make_scenario,
    make_team,
    make_user,
)
from tests.chat.builders import make_chat_study, make_participant

pytestmark = pytest.mark.django_db

TURNS = "episode_id,turn_index,speaker,action_type,text\ne1,0,Ann,speak,Hi.\ne1,1,Bo,speak,A line from {team}.\n"


@pytest.fixture
def rival():
    """Another team with a chat study whose participant said something private."""
    team = make_team(name="Rival lab", slug="rival")
    study = make_chat_study(slug="rival-chats", team=team, created_by=make_researcher(team))
    participant = make_participant(study, stage="chat")
    seat = participant.episode.seats.get(player="human")
    participant.episode.turns.create(index=0, seat=seat, content="My private rival confession.")
    Episode.objects.filter(pk=participant.episode_id).update(status=Episode.Status.FINISHED)
    return team, study, participant.episode


@pytest.fixture
def researcher_client(client):
    client.force_login(make_user(staff=True))  # a researcher of the default team
    return client


def test_the_episode_browser_filtered_by_another_teams_chat_tag_shows_nothing(researcher_client, rival):
    _, study, episode = rival

    response = researcher_client.get(reverse("benchmark:index"), {"tag": study.episode_tag})

    assert episode.external_id or episode.pk
    assert response.status_code == 200
    assert not list(response.context["page"].object_list)
    assert study.episode_tag not in response.text


def test_another_teams_episode_is_not_found(researcher_client, rival):
    _, _, episode = rival

    response = researcher_client.get(reverse("benchmark:episode", args=[episode.pk]))

    assert response.status_code == 404
    assert "My private rival confession." not in response.text


def test_the_annotation_study_form_offers_only_the_teams_tags(researcher_client, rival):
    _, study, _ = rival
    make_episode(tag="our-pilot")

    form = researcher_client.get(reverse("annotator:study-create")).context["form"]

    offered = {value for value, _ in form.fields["tag"].choices}
    assert "our-pilot" in offered
    assert study.episode_tag not in offered


def test_a_study_cannot_be_built_on_another_teams_chats(researcher_client, rival):
    _, study, _ = rival
    from annotator.models import Study

    response = researcher_client.post(reverse("annotator:study-create"), {
        "title": "Borrowed", "slug": "borrowed", "preset": "socialveil", "status": "", "tag": study.episode_tag,
        "overlap": "1", "lease_minutes": "60", "min_seconds_per_item": "30", "gold_items": "0",
        "attention_items": "0", "instructions": "Read.",
    })

    assert response.status_code == 200
    assert "tag" in response.context["form"].errors
    assert not Study.objects.filter(slug="borrowed").exists()


def test_the_results_page_reads_only_the_teams_episodes(researcher_client, rival):
    _, study, _ = rival

    response = researcher_client.get(reverse("benchmark:results"), {"tag": study.episode_tag})

    assert response.status_code == 400  # not one of this researcher's tags
    assert "tag" in response.context["form"].errors


def test_chat_study_form_offers_only_the_teams_scenarios(researcher_client, rival):
    team, study, _ = rival
    ours = make_scenario()

    form = researcher_client.get(reverse("chat:study-create")).context["form"]

    offered = set(form.fields["scenarios"].queryset)
    assert ours in offered
    assert not offered & set(study.scenarios.all())


def test_a_researcher_of_two_teams_chooses_the_owner_and_cannot_mix_teams(client):
    mine, other = default_team(), make_team()
    researcher = make_researcher(mine)
    TeamMember.objects.create(team=other, user=researcher, role=TeamMember.Role.RESEARCHER)
    ours, theirs = make_scenario(team=mine), make_scenario(team=other)
    client.force_login(researcher)

    form = client.get(reverse("chat:study-create")).context["form"]
    assert set(form.fields["team"].queryset) == {mine, other}
    response = client.post(reverse("chat:study-create"), {
        "team": str(mine.pk), "title": "Mixed", "slug": "mixed", "scenarios": [ours.pk, theirs.pk],
        "human_position": "1", "agent_model": "", "partner_strategy": "default", "turn_cap": "20",
        "inactivity_timeout": "600", "max_message_chars": "1000", "messages_per_minute": "12",
        "min_participant_turns": "3", "consent_text": "Agree?", "completion_code": "C",
        "return_url": "", "target_none": "1",
    })

    assert response.status_code == 200
    assert "belongs to another of your teams" in response.text


def test_a_researcher_in_no_team_sees_nothing_and_is_told_why(client):
    make_episode()
    loner = make_user()
    loner.groups.add(Group.objects.get_or_create(name="researchers")[0])
    client.force_login(loner)

    assert not list(client.get(reverse("benchmark:index")).context["page"].object_list)
    response = client.post(reverse("benchmark:run-new"), {"conditions": ["none"]})
    assert "not a researcher of any team" in response.text


# Commands


def test_import_goes_into_the_named_team_and_the_same_ids_may_exist_in_two_teams(tmp_path):
    rival = make_team(slug="rival")
    (tmp_path / "ours.csv").write_text(TURNS.format(team="us"))
    (tmp_path / "theirs.csv").write_text(TURNS.format(team="them"))

    call_command("import_episodes", str(tmp_path / "ours.csv"), "--team", "default", stdout=io.StringIO())
    call_command("import_episodes", str(tmp_path / "theirs.csv"), "--team", "rival", stdout=io.StringIO())

    ours, theirs = Episode.objects.get(team=default_team()), Episode.objects.get(team=rival)
    assert ours.external_id == theirs.external_id == "e1"
    assert "us" in ours.turns.get(index=1).content and "them" in theirs.turns.get(index=1).content
    assert ours.seats.get(position=0).character.team == default_team()
    assert theirs.seats.get(position=0).character.team == rival


def test_with_several_teams_a_command_asks_which_and_names_them(tmp_path):
    make_team(slug="rival")
    (tmp_path / "turns.csv").write_text(TURNS.format(team="x"))

    with pytest.raises(CommandError, match="several teams; say which with --team .*default.*rival"):
        call_command("import_episodes", str(tmp_path / "turns.csv"), stdout=io.StringIO())
    with pytest.raises(CommandError, match="No team with the slug 'nope'"):
        call_command("import_episodes", str(tmp_path / "turns.csv"), "--team", "nope", stdout=io.StringIO())
    assert not Episode.objects.exists()


def test_simulate_does_not_find_another_teams_scenario():
    rival = make_team(slug="rival")
    make_scenario(team=rival, codename="their-secret-scenario")
    make_scenario(codename="ours")

    with pytest.raises(CommandError, match="No scenario has the id, external id or codename 'their-secret-scenario'"):
        call_command(
            "simulate", "--team", "default", "--scenarios", "their-secret-scenario", "--conditions", "none",
            stdout=io.StringIO(), stderr=io.StringIO(),
        )
    assert not Episode.objects.exists()


def test_evaluate_and_export_see_only_the_named_team(tmp_path):
    rival = make_team(slug="rival")
    theirs = make_episode(scenario=make_scenario(team=rival), tag="shared-name")
    make_episode(tag="shared-name")

    with pytest.raises(CommandError, match=f"No episode with id {theirs.pk}"):
        call_command("evaluate", "--team", "default", "--ids", str(theirs.pk), stdout=io.StringIO())
    out = tmp_path / "ours.jsonl"
    call_command("export_episodes", "--team", "default", "--out", str(out), stdout=io.StringIO())
    assert len(out.read_text().splitlines()) == 1


# The model's rules


def test_a_teams_barrier_cannot_take_a_built_in_key_and_needs_a_team():
    with pytest.raises(ValidationError, match="built-in barrier"):
        Barrier(team=default_team(), key="semantic", name="Mine", definition="d").full_clean()
    with pytest.raises(ValidationError, match="team"):
        Barrier(key="jargon", name="Jargon", definition="d").full_clean()


def test_built_in_barriers_are_shared_and_a_teams_own_are_not():
    rival = make_team()
    jargon = Barrier.objects.create(team=rival, key="jargon", name="Jargon", definition="d")
    researcher = make_user(staff=True)

    visible = set(Barrier.objects.owned_by(researcher))

    assert {b.key for b in visible} >= {"none", "semantic", "sociocultural", "emotional"}
    assert jargon not in visible
    assert jargon in set(Barrier.objects.of_team(rival))


def test_research_teams_are_the_researcher_memberships_only():
    team = make_team()
    annotator = make_user()
    TeamMember.objects.create(team=team, user=annotator, role=TeamMember.Role.ANNOTATOR)

    assert not research_teams(annotator).exists()
    assert set(research_teams(make_user(superuser=True))) == set(Team.objects.all())
    assert Scenario.objects.owned_by(annotator).count() == 0


def test_the_only_team_is_the_commands_default():
    assert team_for_command(None) == default_team()


def test_add_team_member_creates_the_team_and_sets_the_role():
    user = make_user(username="dana")
    out = io.StringIO()

    call_command("add_team_member", "Vision Lab", "dana", stdout=out)
    call_command("add_team_member", "vision-lab", "dana", "--role", "annotator", stdout=out)

    team = Team.objects.get(slug="vision-lab")
    assert team.name == "Vision Lab"
    assert list(TeamMember.objects.filter(user=user).values_list("team__slug", "role")) == [("vision-lab", "annotator")]
    assert "created the team and added dana as researcher" in out.getvalue()
    with pytest.raises(CommandError, match="No user named .ghost.; create the account with --create"):
        call_command("add_team_member", "vision-lab", "ghost", stdout=out)


def test_a_team_researcher_added_by_the_command_opens_the_researcher_pages(client):
    """Issue 21: add_team_member --role researcher gave a 403 "Only researchers can open this page"."""
    user = make_user(username="dana")
    call_command("add_team_member", "Vision Lab", "dana", "--role", "researcher", stdout=io.StringIO())
    client.force_login(user)

    for name in ("benchmark:results", "annotator:study-list", "chat:index", "benchmark:index"):
        assert client.get(reverse(name)).status_code == 200, name


def test_a_team_annotator_is_not_a_researcher(client):
    user = make_user(username="dana")
    call_command("add_team_member", "Vision Lab", "dana", "--role", "annotator", stdout=io.StringIO())
    client.force_login(user)

    assert client.get(reverse("benchmark:results")).status_code == 403


def test_add_team_member_creates_the_user_with_a_typed_password(monkeypatch):
    monkeypatch.setattr("sys.stdin.isatty", lambda: True)
    monkeypatch.setattr("getpass.getpass", lambda prompt: "a long and fresh passphrase")

    call_command("add_team_member", "vision-lab", "erin", "--create", "--email", "erin@example.org",
                 stdout=io.StringIO())

    user = TeamMember.objects.select_related("user").get(team__slug="vision-lab", role="researcher").user
    assert user.username == "erin" and user.email == "erin@example.org"
    assert user.check_password("a long and fresh passphrase")


def test_add_team_member_creates_the_user_with_a_one_use_login_link(client):
    out = io.StringIO()

    call_command("add_team_member", "vision-lab", "erin", "--create", "--link", "--base-url",
                 "https://parley.example.org/", stdout=out)

    link = out.getvalue().split("One-use login link for erin: ")[1].strip()
    assert link.startswith("https://parley.example.org/login/")
    response = client.get(link.removeprefix("https://parley.example.org"))
    assert response.status_code == 302 and client.session["_auth_user_id"]
    assert not TeamMember.objects.get(user__username="erin").user.has_usable_password()


def test_add_team_member_will_not_prompt_without_a_terminal(monkeypatch):
    monkeypatch.setattr("sys.stdin.isatty", lambda: False)
    with pytest.raises(CommandError, match="use --link"):
        call_command("add_team_member", "vision-lab", "erin", "--create", stdout=io.StringIO())
    assert not TeamMember.objects.exists()
