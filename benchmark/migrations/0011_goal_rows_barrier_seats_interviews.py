"""Goals become rows, a condition may name several barrier seats, and agents can be interviewed.

- Each role's ``goal`` text becomes ``Goal`` rows, one per non-empty line in order (a Sotopia goal
  kept its hints on lines of their own, so they become goals of their own), and the column goes.
  Backwards, a role's goals are joined again, one a line.
- The constraint of one barrier seat per episode goes: a run may put several seats under the
  condition. (Backwards it comes back, and fails if an episode has two barrier seats.)
- ``Instrument.scenario`` links an instrument built from a scenario's probes to that scenario.
- The preset instrument *AgentSense goals* is added (no team: shared, read-only): one yes/no
  question asked per goal, "was this goal achieved?", which interviewed agents answer about their
  own goals and the others' (AgentSense's self and other perspectives).
"""

import django.db.models.deletion
from django.db import migrations, models
from django.utils import timezone

GOALS_PRESET = "agentsense-goals"
GOALS_INSTRUMENT = {
    "name": "AgentSense goals",
    "description": (
        "Goal completion judged yes or no, one goal at a time (after AgentSense). Asked of every agent "
        "after its episode about its own goals and the other characters' goals, so its view of itself "
        "can be set against the others' view of it and against external judges."
    ),
}
GOALS_QUESTION = {
    "key": "goal_achieved",
    "kind": "yes_no",
    "prompt": "By the end of the conversation, was this goal achieved?",
    "help_text": (
        "Answer for the goal shown, from what happened in the conversation: yes if it was reached, "
        "no if it was not or only in part."
    ),
    "scope": "goal",
    "rationale": "optional",
    "options": {"choices": [{"value": "yes", "label": "Yes"}, {"value": "no", "label": "No"}]},
    "dimension": "goal_achieved",
}


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


def add_goals_instrument(apps, schema_editor):
    Instrument = apps.get_model("benchmark", "Instrument")
    Question = apps.get_model("benchmark", "Question")
    if Instrument.objects.filter(team=None, preset=GOALS_PRESET).exists():
        return
    instrument = Instrument.objects.create(
        team=None, preset=GOALS_PRESET, version=1, frozen_at=timezone.now(), **GOALS_INSTRUMENT
    )
    Question.objects.create(instrument=instrument, position=0, required=True, **GOALS_QUESTION)


def remove_goals_instrument(apps, schema_editor):
    Instrument = apps.get_model("benchmark", "Instrument")
    Question = apps.get_model("benchmark", "Question")
    Response = apps.get_model("benchmark", "Response")
    Answer = apps.get_model("benchmark", "Answer")
    alias = schema_editor.connection.alias
    presets = list(Instrument.objects.filter(team=None, preset=GOALS_PRESET).values_list("pk", flat=True))
    # The interviews answered with it go too (plain row deletes, as in role_text_from_goals).
    Answer.objects.filter(response__instrument__in=presets)._raw_delete(alias)
    Response.objects.filter(instrument__in=presets)._raw_delete(alias)
    Question.objects.filter(instrument__in=presets)._raw_delete(alias)
    Instrument.objects.filter(pk__in=presets)._raw_delete(alias)


class Migration(migrations.Migration):

    dependencies = [
        ("benchmark", "0010_instruments_goals_probes"),
    ]

    operations = [
        # A default, so that going back re-adds the column to rows that exist before it is filled.
        migrations.AlterField(
            model_name="role",
            name="goal",
            field=models.TextField(blank=True, default=""),
        ),
        migrations.RunPython(goals_from_role_text, role_text_from_goals),
        migrations.RemoveField(model_name="role", name="goal"),
        migrations.RemoveConstraint(model_name="seat", name="one_barrier_seat_per_episode"),
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
        migrations.RunPython(add_goals_instrument, remove_goals_instrument),
    ]

