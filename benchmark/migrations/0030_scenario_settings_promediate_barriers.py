"""Scenarios keep their source's settings (a ProMediate case's topics source, proactivity thresholds and
party order), and ProMediate's conflict modes are built-in barriers (``importing.promediate_modes``).

The six barriers are written out below as they were when this migration was made, not imported from the
app: a later edit of ``promediate_modes`` must not change what this migration does (such an edit needs a
data migration of its own). Existing barrier rows are left alone, so a researcher's edits in the admin
survive a re-run.
"""

from django.db import migrations, models

# ``importing.promediate_modes.BARRIERS`` as it was when this migration was made.
BARRIERS = [
    {
        "key": "promediate-general",
        "name": "ProMediate: general (no conflict style)",
        "position": 20,
        "definition": "ProMediate's medium setting: the parties get no conflict style and negotiate as their "
        "briefs alone suggest.",
        "style_directive": "No particular conflict style is asked of you: negotiate as the person in your brief "
        "would, guided only by your own preferences and strategy.",
        "example": "I can live with the two-year term if we settle the discount first.",
        "exemplar_templates": "Where do we stand on {topic}?\nI would like us to settle {topic} in a way I can accept.",
    },
    {
        "key": "promediate-competing",
        "name": "ProMediate: competing",
        "position": 21,
        "definition": "ProMediate's hard setting: every party holds its positions firmly and argues for them "
        "assertively, yielding only when offered its second choice.",
        "style_directive": "Hold your positions firmly and argue for them with conviction. Press for your first "
        "choice on every topic, push back on proposals that cost you, and do not give ground "
        "only to keep the peace. When someone offers you your second choice on a topic, you are "
        "willing to soften and settle there.",
        "example": "That rebate schedule does not work for us. We need the exclusive status or there is no deal.",
        "exemplar_templates": "On {topic} my position has not changed, {partner}.\n"
        "I will not accept anything less on {topic}.",
    },
    {
        "key": "promediate-avoiding",
        "name": "ProMediate: avoiding",
        "position": 22,
        "definition": "ProMediate's easy setting (one of two): every party steers away from contentious topics, "
        "puts them off, and re-engages only when a proposal would hurt it.",
        "style_directive": "Steer away from confrontation. When a topic becomes contentious, sidestep it, turn to "
        "something else or suggest coming back to it later, and rarely state your demands "
        "outright. As soon as a proposal on the table would clearly hurt your interests, "
        "though, step back in and say so.",
        "example": "Maybe we can leave the contract term for later and look at marketing first?",
        "exemplar_templates": "Could we come back to {topic} later?\nI would rather not get stuck on {topic} now.",
    },
    {
        "key": "promediate-accommodating",
        "name": "ProMediate: accommodating",
        "position": 23,
        "definition": "ProMediate's easy setting (one of two): every party is open to the others' reasonable "
        "proposals while still defending its own interests.",
        "style_directive": "Be cooperative and easy to work with: listen to the others' proposals, accept those "
        "that seem reasonable, and look for ways to meet their concerns. Still stand up for the "
        "interests in your brief, and do not give away what matters most to you.",
        "example": "That sounds fair to me, as long as the grace period stays in.",
        "exemplar_templates": "That seems reasonable on {topic}, {partner}.\n"
        "I can go along with that on {topic} if my main concern is met.",
    },
    {
        "key": "promediate-compromising",
        "name": "ProMediate: compromising",
        "position": 24,
        "definition": "Every party looks for middle ground, expecting each side to give up part of what it wants.",
        "style_directive": "Look for middle ground: expect everyone, yourself included, to give something up, and "
        "propose and accept trade-offs that split the difference between positions so the group "
        "reaches a deal.",
        "example": "What if we meet halfway: a three-year term and the standard support package?",
        "exemplar_templates": "Let's meet halfway on {topic}.\nI give a little on {topic} if you give a little too.",
    },
    {
        "key": "promediate-collaborating",
        "name": "ProMediate: collaborating",
        "position": 25,
        "definition": "Every party treats the negotiation as a shared problem and looks for options that meet "
        "everyone's key concerns.",
        "style_directive": "Treat the negotiation as a problem you solve together: ask about the others' "
        "underlying interests, share your own, and work towards options that satisfy everyone's "
        "key concerns instead of settling for a split.",
        "example": "What is it about the five-year term that worries you? Maybe we can address that directly.",
        "exemplar_templates": "What matters most to you on {topic}, {partner}?\n"
        "Is there an option on {topic} that works for all of us?",
    },
]


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
