"""Make room for the questionnaire as an instrument (step 1 of 3: schema only).

Adds ``ChatStudy.instrument`` and ``Participant.response``; step 2 fills them from the JSON
questionnaire and answers, step 3 drops the JSON fields.
"""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('benchmark', '0016_answer_checks'),
        ('chat', '0005_participant_binding_and_screen_out'),
    ]

    operations = [
        migrations.AddField(
            model_name='chatstudy',
            name='instrument',
            field=models.ForeignKey(blank=True, help_text='What participants answer after the chat: a preset or one of the team\'s instruments, every question asked once per episode. Empty: no questions, only the completion code.', null=True, on_delete=django.db.models.deletion.PROTECT, related_name='chat_studies', to='benchmark.instrument', verbose_name='questionnaire'),
        ),
        migrations.AddField(
            model_name='participant',
            name='response',
            field=models.OneToOneField(blank=True, help_text="The participant's answers to the study's questionnaire, written when they submit it.", null=True, on_delete=django.db.models.deletion.PROTECT, related_name='participant', to='benchmark.response'),
        ),
    ]
