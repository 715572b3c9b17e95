"""The preset instrument *AgentSense goals* (no team: shared, read-only).

One yes/no question asked per goal, "was this goal achieved?", which interviewed agents answer
about their own goals and the others' (AgentSense's self and other perspectives). A migration of
its own: on PostgreSQL the rows it writes (or deletes, going back) would otherwise block the
schema changes of the same transaction.
"""

from django.db import migrations
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
        ("benchmark", "0014_goal_rows_barrier_seats"),
    ]

    operations = [
        migrations.RunPython(add_goals_instrument, remove_goals_instrument),
    ]
