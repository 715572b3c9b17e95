"""ProMediate's own turn-taking (mediator first, then the most motivated party), and the imported
ProMediate cases switched to it: they were played as random order after the mediator's greeting."""

from django.db import migrations, models


def promediate_cases_take_their_own_turns(apps, schema_editor):
    Scenario = apps.get_model("benchmark", "Scenario")
    Scenario.objects.filter(source="promediate", greeter_position__isnull=False).update(turn_taking="promediate")


def back_to_random_after_greeting(apps, schema_editor):
    Scenario = apps.get_model("benchmark", "Scenario")
    Scenario.objects.filter(turn_taking="promediate").update(turn_taking="random_after_greeting")


class Migration(migrations.Migration):
    dependencies = [
        ("benchmark", "0030_scenario_settings_promediate_barriers"),
    ]

    operations = [
        migrations.AlterField(
            model_name="scenario",
            name="greeter_position",
            field=models.PositiveSmallIntegerField(
                blank=True,
                help_text="For random order: the role (0 = first) that opens with a greeting; for ProMediate: the "
                "mediator.",
                null=True,
            ),
        ),
        migrations.AlterField(
            model_name="scenario",
            name="turn_taking",
            field=models.CharField(
                choices=[
                    ("round_robin", "round robin"),
                    ("random_after_greeting", "random order after a greeting"),
                    ("promediate", "mediator first, then the most motivated party (ProMediate)"),
                ],
                default="round_robin",
                help_text="Who speaks next: each role in turn, a greeting by one role and then random order, or a "
                "negotiation where the mediator decides first and then the most motivated party speaks.",
                max_length=30,
            ),
        ),
        migrations.RunPython(promediate_cases_take_their_own_turns, back_to_random_after_greeting),
    ]
