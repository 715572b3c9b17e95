"""Seed the barrier-free baseline and SocialVeil's three barriers.

Written for Parley from the definitions in the SocialVeil paper (semantic vagueness,
sociocultural mismatch, emotional interference). Existing rows are left alone, so a
researcher's edits in the admin survive a re-run.
"""

from django.db import migrations

BARRIERS = [
    {
        "key": "none",
        "name": "No barrier",
        "position": 0,
        "definition": (
            "The baseline: both sides speak in their own natural way, as clearly as those people "
            "would. Misunderstandings can still happen, but nothing systematic gets in the way."
        ),
        "example": "Could we settle the rent before Friday? I can pay my half on Thursday.",
        "style_directive": "",
        "narrative_stance": "",
        "interaction_tactics": "",
        "confusion_mechanisms": "",
        "exemplar_templates": "\n".join(
            [
                "Could we talk about {topic}?",
                "Here is what I would suggest about {topic}.",
                "That makes sense to me, {partner}. What would you need from me?",
                "Let me be plain about where I stand on {topic}.",
                "I think we can find something that works for both of us.",
            ]
        ),
        "cues": [],
    },
    {
        "key": "semantic",
        "name": "Semantic vagueness",
        "position": 1,
        "definition": (
            "The speaker leaves what they mean unnamed. Concrete things, people, amounts and times are "
            "swapped for vague pronouns and placeholders ('it', 'that thing', 'the stuff'), so the "
            "message is underspecified and the listener has to guess or ask what it refers to."
        ),
        "example": "So the, um, thing from before... it's kind of like that, right?",
        "style_directive": (
            "Lean on pronouns, placeholders and half-finished sentences; rarely name the concrete thing, "
            "amount or time you mean, and assume the other person already knows."
        ),
        "narrative_stance": (
            "Allusive and underspecified: speak as if your listener already shares your frame of "
            "reference, and never define your terms."
        ),
        "interaction_tactics": (
            "Say 'it', 'that', 'the thing', 'stuff like that' where a noun belongs; hedge with 'sort of', "
            "'kind of', 'maybe'; let sentences trail off with an ellipsis."
        ),
        "confusion_mechanisms": (
            "When asked what you mean, answer with another vague paraphrase; neither confirm nor correct "
            "the other person's reading; leave numbers, names and deadlines unstated."
        ),
        "exemplar_templates": "\n".join(
            [
                "So about that... it's kind of the thing I mentioned, you know?",
                "Yeah, it could maybe work, if the other stuff lines up...",
                "I mean, {partner}, it's sort of like that, but also not really.",
                "It's the whole {topic} thing... you get what I mean.",
                "Maybe we just do the one part and see about the rest later...",
            ]
        ),
        "cues": [
            ("interaction_tactics", "Replace a concrete referent with a vague pronoun or placeholder", 0.6,
             "of concrete referents"),
            ("interaction_tactics", "Add a hedge such as 'sort of', 'kind of' or 'maybe'", 0.5, "of sentences"),
            ("narrative_stance", "Trail off with an ellipsis or an unfinished clause", 0.4, "of messages"),
            ("confusion_mechanisms", "Answer a request for clarification with another vague paraphrase", 0.7,
             "of clarification requests"),
        ],
    },
    {
        "key": "sociocultural",
        "name": "Sociocultural mismatch",
        "position": 2,
        "definition": (
            "The two sides follow different conventions of directness and politeness. The speaker relies "
            "on implication, face-saving and shared context, so a refusal can sound like a postponement "
            "and polite assent can be mistaken for agreement by a partner who takes words literally."
        ),
        "example": "What an interesting idea. Perhaps another time would suit us better.",
        "style_directive": (
            "Speak in a high-context, face-saving way: imply rather than state, soften every refusal into "
            "a deferral, and let ritual politeness carry what you really mean."
        ),
        "narrative_stance": (
            "Indirect and formal: harmony and the other person's face come before explicit content."
        ),
        "interaction_tactics": (
            "Turn refusals into deferrals ('we will consider it'); meet a direct question with a story, a "
            "saying or a question of your own; open with courtesies; show disagreement by changing the "
            "subject rather than by saying so."
        ),
        "confusion_mechanisms": (
            "Never give a plain 'no'; assent politely to what you do not accept; expect the other person "
            "to read the unstated meaning, and be mildly offended when they press for bluntness."
        ),
        "exemplar_templates": "\n".join(
            [
                "That is a thoughtful idea, {partner}. Perhaps we can think about it a little more.",
                "Where I grew up, people say that patience brings the best answers.",
                "Of course, of course. Let us see how things unfold with {topic}.",
                "I would not want to trouble you with the details of {topic} just now.",
                "Yes, I hear you. It may be difficult, but we will consider it.",
            ]
        ),
        "cues": [
            ("interaction_tactics", "Phrase a refusal as a deferral or a condition", 0.8, "of refusals"),
            ("narrative_stance", "Open with a courtesy before coming to the point", 0.5, "of messages"),
            ("interaction_tactics", "Answer a direct question indirectly (a story, a saying or a question)", 0.5,
             "of direct questions"),
            ("confusion_mechanisms", "Agree in words without committing to anything", 0.4,
             "of the partner's proposals"),
        ],
    },
    {
        "key": "emotional",
        "name": "Emotional interference",
        "position": 3,
        "definition": (
            "Strong feeling crowds out information. The speaker's worry, frustration or hurt fills the "
            "message, so the facts the task needs arrive late, in pieces or not at all, and the partner "
            "has to deal with the emotion before they can get to the content."
        ),
        "example": "I can't even think about the numbers right now, everything is falling apart!",
        "style_directive": (
            "Let emotion lead: voice your feelings strongly and often, and let them push the practical "
            "details aside."
        ),
        "narrative_stance": "Emotion-first and self-focused: how you feel is the main topic.",
        "interaction_tactics": (
            "Exclamations, rhetorical questions and intensifiers; first-person statements of feeling; "
            "abrupt jumps to whatever feels most urgent."
        ),
        "confusion_mechanisms": (
            "Hold back or scatter the facts the task needs; react to the other person's tone more than to "
            "what they said; brush off requests for details as insensitive."
        ),
        "exemplar_templates": "\n".join(
            [
                "Honestly, I'm so stressed about {topic} that I can barely think straight!",
                "Why does this always happen to me? I can't deal with the details right now.",
                "Please, {partner}, just... I'm really upset, okay?",
                "I don't even know anymore. Everything about {topic} makes me anxious!",
                "Can you not push me on that right now? I'm overwhelmed.",
            ]
        ),
        "cues": [
            ("narrative_stance", "Open with a statement of how you feel", 0.7, "of messages"),
            ("interaction_tactics", "Use an exclamation or a rhetorical question", 0.6, "of messages"),
            ("confusion_mechanisms", "Leave out a task-relevant fact you were asked for", 0.5,
             "of requests for information"),
            ("interaction_tactics", "Keep the focus on yourself with first-person pronouns", 0.6, "of sentences"),
        ],
    },
]


def seed(apps, schema_editor):
    Barrier = apps.get_model("benchmark", "Barrier")
    BarrierCue = apps.get_model("benchmark", "BarrierCue")
    for spec in BARRIERS:
        spec = dict(spec)
        cues = spec.pop("cues")
        barrier, created = Barrier.objects.get_or_create(key=spec["key"], defaults={**spec, "builtin": True})
        if created:
            BarrierCue.objects.bulk_create(
                BarrierCue(barrier=barrier, dimension=d, instruction=i, rate=r, unit=u) for d, i, r, u in cues
            )


class Migration(migrations.Migration):
    dependencies = [("benchmark", "0001_initial")]
    operations = [migrations.RunPython(seed, migrations.RunPython.noop)]
