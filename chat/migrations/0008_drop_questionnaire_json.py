"""Drop the JSON questionnaire and answers (step 3 of 3): they live in instruments and responses now.

Reversing re-creates the fields (the old default questionnaire, empty answers) for step 2's reverse
to fill.
"""

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('chat', '0007_questionnaires_to_instruments'),
    ]

    operations = [
        migrations.RemoveField(model_name='chatstudy', name='questionnaire'),
        migrations.RemoveField(model_name='participant', name='answers'),
    ]
