"""Every chat study made before teams belongs to the default team."""

from django.db import migrations


def forwards(apps, schema_editor):
    team = apps.get_model("benchmark", "Team").objects.get(slug="default")
    apps.get_model("chat", "ChatStudy").objects.filter(team__isnull=True).update(team=team)


class Migration(migrations.Migration):
    dependencies = [
        ("chat", "0002_study_team"),
        ("benchmark", "0007_default_team"),
    ]

    operations = [migrations.RunPython(forwards, migrations.RunPython.noop)]
