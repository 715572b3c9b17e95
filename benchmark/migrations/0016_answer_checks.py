"""Answers checked by the database; responses with a status; the social attributes join the core.

- ``Response.status`` (draft / submitted / superseded): existing responses are submitted.
- A numeric question (Likert, bounded numeric) must have its ``low`` and ``high``.
- ``SocialAttribute`` moves here from the annotator app (state only: the annotator's migration
  renames its table, so the seeded rows and every span's links stay as they are).
- The triggers of ``benchmark.instruments.triggers`` refuse answers their question does not allow
  (SQLite and PostgreSQL). That module now also holds the judge's two triggers of ``0013``: they
  are dropped first (SQLite copies ``benchmark_question`` and ``benchmark_response`` to change
  them, which a trigger naming those tables would break) and installed again with the rest at the
  end. Reversed, the new triggers go and ``0013``'s are put back as that migration made them.
"""

import importlib

from django.db import migrations, models

from benchmark.instruments import triggers


def restore_judge_triggers(apps, schema_editor):
    """The triggers as ``0013_judge_answer_triggers`` left them (the reverse of dropping them all)."""
    importlib.import_module("benchmark.migrations.0013_judge_answer_triggers").add_triggers(apps, schema_editor)


class Migration(migrations.Migration):

    dependencies = [
        ('benchmark', '0015_agentsense_goals_preset'),
    ]

    operations = [
        migrations.RunPython(triggers.uninstall_for_migration, restore_judge_triggers),
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name='SocialAttribute',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('key', models.SlugField(unique=True)),
                        ('name', models.CharField(max_length=100)),
                        ('definition', models.TextField()),
                        ('example', models.TextField(blank=True)),
                        ('position', models.PositiveSmallIntegerField(default=0)),
                    ],
                    options={
                        'ordering': ['position'],
                    },
                ),
            ],
            database_operations=[],
        ),
        migrations.AddField(
            model_name='response',
            name='status',
            field=models.CharField(choices=[('draft', 'draft'), ('submitted', 'submitted'), ('superseded', 'superseded by a later version')], default='submitted', max_length=20),
        ),
        migrations.AddConstraint(
            model_name='question',
            constraint=models.CheckConstraint(condition=models.Q(models.Q(('kind__in', ('likert', 'slider')), _negated=True), models.Q(('high__isnull', False), ('low__isnull', False)), _connector='OR'), name='question_numeric_has_bounds'),
        ),
        migrations.RunPython(triggers.install_for_migration, triggers.uninstall_for_migration),
    ]
