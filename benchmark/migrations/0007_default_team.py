"""Put everything that existed before teams into one default team, so nothing is lost.

Researchers (staff, or the ``researchers`` group) join it as researchers and members of the
``annotators`` group as annotators; every scenario, character, custom barrier, episode and run
moves into it. Built-in barriers stay shared (no team). A fresh install gets the empty default
team, which commands use when no ``--team`` is given and it is the only team.
"""

from django.db import migrations
from django.db.models import Q


def forwards(apps, schema_editor):
    Team = apps.get_model("benchmark", "Team")
    TeamMember = apps.get_model("benchmark", "TeamMember")
    User = apps.get_model(*_user_model().split("."))
    team, _ = Team.objects.get_or_create(slug="default", defaults={"name": "Default team"})
    researchers = User.objects.filter(Q(is_staff=True) | Q(groups__name="researchers")).distinct()
    annotators = User.objects.filter(groups__name="annotators").exclude(pk__in=researchers.values("pk")).distinct()
    TeamMember.objects.bulk_create(
        [TeamMember(team=team, user=user, role="researcher") for user in researchers]
        + [TeamMember(team=team, user=user, role="annotator") for user in annotators],
        ignore_conflicts=True,
    )
    for name in ("Character", "Scenario", "Episode", "SimulationRun"):
        apps.get_model("benchmark", name).objects.filter(team__isnull=True).update(team=team)
    apps.get_model("benchmark", "Barrier").objects.filter(team__isnull=True, builtin=False).update(team=team)


def _user_model() -> str:
    from django.conf import settings

    return settings.AUTH_USER_MODEL


class Migration(migrations.Migration):
    dependencies = [
        ("benchmark", "0006_teams"),
        ("auth", "0012_alter_user_first_name_max_length"),
    ]

    operations = [migrations.RunPython(forwards, migrations.RunPython.noop)]
