"""Drop the annotator's own question system (step 3 of 3): schemes, questions and answers now live in benchmark.

Every row was copied in step 2; reversing this step recreates the empty tables (and nullable
links) for step 2's reverse to fill.
"""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('annotator', '0009_copy_schemes_to_instruments'),
        ('benchmark', '0016_answer_checks'),
    ]

    operations = [
        migrations.RemoveConstraint(model_name='itemkey', name='item_key_unique'),
        migrations.RemoveField(model_name='study', name='scheme'),
        migrations.RemoveField(model_name='annotation', name='scheme'),
        migrations.RemoveField(model_name='span', name='question'),
        migrations.RemoveField(model_name='itemkey', name='question'),
        migrations.DeleteModel(name='Answer'),
        migrations.DeleteModel(name='Question'),
        migrations.DeleteModel(name='Scheme'),
        migrations.RenameField(model_name='span', old_name='instrument_question', new_name='question'),
        migrations.RenameField(model_name='itemkey', old_name='instrument_question', new_name='question'),
        migrations.AlterField(
            model_name='study',
            name='instrument',
            field=models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='studies', to='benchmark.instrument'),
        ),
        migrations.AlterField(
            model_name='annotation',
            name='response',
            field=models.OneToOneField(help_text="This version's answers (deleted with the version: see annotator.signals).", on_delete=django.db.models.deletion.PROTECT, related_name='annotation', to='benchmark.response'),
        ),
        migrations.AlterField(
            model_name='span',
            name='question',
            field=models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='spans', to='benchmark.question'),
        ),
        migrations.AlterField(
            model_name='itemkey',
            name='question',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='item_keys', to='benchmark.question'),
        ),
        migrations.AddConstraint(
            model_name='itemkey',
            constraint=models.UniqueConstraint(fields=('item', 'question', 'seat_position'), name='item_key_unique'),
        ),
    ]
