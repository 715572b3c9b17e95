"""Seed SHREC's seven social attributes, with definitions written for Parley."""

from django.db import migrations

ATTRIBUTES = [
    ("emotions", "Emotions",
     "Noticing and reading feelings, one's own and the other person's, and answering them with empathy.",
     "Hearing a shaky voice and slowing down to ask whether the other person is all right."),
    ("engagement", "Engagement",
     "Tracking how involved the other person is, from signs of interest to signs of boredom, and adjusting.",
     "Cutting a story short when the listener keeps glancing at the door."),
    ("conversational-mechanics", "Conversational mechanics",
     "Handling the flow of talk: taking turns, not interrupting, knowing when to speak and when to wait.",
     "Letting someone finish a sentence before answering it."),
    ("knowledge-state", "Knowledge state",
     "Keeping track of what the other person knows or believes, and of what one knows oneself.",
     "Not explaining the plan again to someone who drew it up."),
    ("intention", "Intention",
     "Working out what the other person is trying to achieve from what they say and do.",
     "Understanding that 'I have to catch a train' means the meeting should end soon."),
    ("social-context", "Social context and relationships",
     "Reading the relationship and the setting, and letting them shape what is appropriate.",
     "Speaking differently to a close friend than to a new landlord."),
    ("social-norms", "Social norms and routines",
     "Knowing the accepted ways of behaving in a group, and spotting behaviour that breaks them.",
     "Greeting someone before asking them for a favour."),
]


def seed(apps, schema_editor):
    SocialAttribute = apps.get_model("annotator", "SocialAttribute")
    for position, (key, name, definition, example) in enumerate(ATTRIBUTES):
        SocialAttribute.objects.get_or_create(
            key=key, defaults={"name": name, "definition": definition, "example": example, "position": position}
        )


class Migration(migrations.Migration):
    dependencies = [("annotator", "0001_initial")]
    operations = [migrations.RunPython(seed, migrations.RunPython.noop)]
