"""Every study made before teams belongs to the default team; its annotators join that team."""

from django.db import migrations


def forwards(apps, schema_editor):
    Team = apps.get_model("benchmark", "Team")
    TeamMember = apps.get_model("benchmark", "TeamMember")
    Study = apps.get_model("annotator", "Study")
    Membership = apps.get_model("annotator", "Membership")
    team = Team.objects.get(slug="default")
    Study.objects.filter(team__isnull=True).update(team=team)
    annotator_ids = set(Membership.objects.values_list("annotator_id", flat=True))
    TeamMember.objects.bulk_create(
        [TeamMember(team=team, user_id=user_id, role="annotator") for user_id in sorted(annotator_ids)],
        ignore_conflicts=True,
    )


class Migration(migrations.Migration):
    dependencies = [
        ("annotator", "0004_study_team"),
        ("benchmark", "0007_default_team"),
    ]

    operations = [migrations.RunPython(forwards, migrations.RunPython.noop)]
