"""Goals become rows, a condition may name several barrier seats, instruments can be a scenario's.

- Each role's ``goal`` text becomes ``Goal`` rows, one per non-empty line in order (a Sotopia goal
  kept its hints on lines of their own, so they become goals of their own), and the column goes.
  Backwards, a role's goals are joined again, one a line.
- The constraint of one barrier seat per episode goes: a run may put several seats under the
  condition. (Backwards it comes back, and fails if an episode has two barrier seats.)
- ``Instrument.scenario`` links an instrument built from a scenario's probes to that scenario, and
  an instrument's name and version are unique within its team (a preset's among presets), so a
  team can import instruments another team made.

The other schema changes come before the data: on PostgreSQL a table with rows written (or
deleted, going back) in this transaction cannot be altered in it. The preset instrument that
interviews use is added by the next migration, for the same reason.
"""

import django.db.models.deletion
from django.db import migrations, models


def goals_from_role_text(apps, schema_editor):
    Role = apps.get_model("benchmark", "Role")
    Goal = apps.get_model("benchmark", "Goal")
    goals = []
    for role_id, text in Role.objects.order_by("pk").values_list("pk", "goal").iterator():
        lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
        goals.extend(Goal(role_id=role_id, position=n, text=line, tags=[]) for n, line in enumerate(lines))
    Goal.objects.bulk_create(goals, batch_size=1000)


def role_text_from_goals(apps, schema_editor):
    Role = apps.get_model("benchmark", "Role")
    Goal = apps.get_model("benchmark", "Goal")
    Answer = apps.get_model("benchmark", "Answer")
    texts: dict[int, list[str]] = {}
    for role_id, text in Goal.objects.order_by("role_id", "position").values_list("role_id", "text").iterator():
        texts.setdefault(role_id, []).append(text)
    for role_id, lines in texts.items():
        Role.objects.filter(pk=role_id).update(goal="\n".join(lines))
    # Answers about a goal (interviews) have no place before goals were rows; they go with it.
    # Deleted as plain rows: the collector cannot follow the historical models' relations here.
    Answer.objects.filter(goal__isnull=False)._raw_delete(schema_editor.connection.alias)
    Goal.objects.all()._raw_delete(schema_editor.connection.alias)


class Migration(migrations.Migration):

    dependencies = [
        ("benchmark", "0013_judge_answer_triggers"),
    ]

    operations = [
        migrations.RemoveConstraint(model_name="seat", name="one_barrier_seat_per_episode"),
        migrations.RemoveConstraint(model_name="instrument", name="instrument_name_version_unique"),
        migrations.AddConstraint(
            model_name="instrument",
            constraint=models.UniqueConstraint(
                condition=models.Q(("team__isnull", True)), fields=("name", "version"),
                name="instrument_preset_name_version_unique",
            ),
        ),
        migrations.AddConstraint(
            model_name="instrument",
            constraint=models.UniqueConstraint(
                condition=models.Q(("team__isnull", False)), fields=("team", "name", "version"),
                name="instrument_team_name_version_unique",
            ),
        ),
        migrations.AlterField(
            model_name="episode",
            name="barrier",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.PROTECT, related_name="episodes", to="benchmark.barrier",
                help_text="The condition; the seats marked as barrier seats speak under it.",
            ),
        ),
        migrations.AddField(
            model_name="instrument",
            name="scenario",
            field=models.ForeignKey(
                blank=True, null=True, on_delete=django.db.models.deletion.CASCADE,
                related_name="probe_instruments", to="benchmark.scenario",
                help_text="For an instrument built from a scenario's probes: that scenario.",
            ),
        ),
        # A default, so that going back re-adds the column to rows that exist before it is filled.
        migrations.AlterField(
            model_name="role",
            name="goal",
            field=models.TextField(blank=True, default=""),
        ),
        migrations.RunPython(goals_from_role_text, role_text_from_goals),
        migrations.RemoveField(model_name="role", name="goal"),
    ]
