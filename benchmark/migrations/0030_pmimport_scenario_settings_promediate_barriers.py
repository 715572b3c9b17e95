"""Scenarios keep their source's settings (a ProMediate case's topics source, proactivity thresholds and
party order), and ProMediate's conflict modes are built-in barriers (``importing.promediate_modes``).

Existing barrier rows are left alone, so a researcher's edits in the admin survive a re-run.
"""

from django.db import migrations, models

from benchmark.importing.promediate_modes import BARRIERS


def seed(apps, schema_editor):
    Barrier = apps.get_model("benchmark", "Barrier")
    for spec in BARRIERS:
        Barrier.objects.get_or_create(key=spec["key"], team=None, defaults={**spec, "builtin": True})


class Migration(migrations.Migration):
    dependencies = [("benchmark", "0029_negotiation_topics_and_consensus_trace")]
    operations = [
        migrations.AddField(
            model_name="scenario",
            name="settings",
            field=models.JSONField(
                blank=True,
                default=dict,
                help_text="What the source says about playing it (a ProMediate case: topics source, thresholds).",
            ),
        ),
        migrations.RunPython(seed, migrations.RunPython.noop),
    ]
