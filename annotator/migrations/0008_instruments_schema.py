"""Make room for the move onto benchmark's instruments (step 1 of 3: schema only).

Adds the new links (``Study.instrument``, ``Annotation.response``, and the benchmark question of
spans and item keys, under a temporary name), makes the old ones nullable so the move can be
reversed, and hands the social attributes to the benchmark app by renaming their table (rows,
keys and span links unchanged). Step 2 copies the data; step 3 drops the old tables.
"""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('annotator', '0007_annotation_generated_by'),
        ('benchmark', '0016_answer_checks'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[
                migrations.AlterModelTable(name='socialattribute', table='benchmark_socialattribute'),
            ],
            state_operations=[
                migrations.AlterField(
                    model_name='span',
                    name='attributes',
                    field=models.ManyToManyField(related_name='spans', to='benchmark.socialattribute'),
                ),
                migrations.DeleteModel(name='SocialAttribute'),
            ],
        ),
        migrations.AlterField(
            model_name='study',
            name='scheme',
            field=models.ForeignKey(null=True, on_delete=django.db.models.deletion.PROTECT, related_name='studies', to='annotator.scheme'),
        ),
        migrations.AlterField(
            model_name='annotation',
            name='scheme',
            field=models.ForeignKey(null=True, on_delete=django.db.models.deletion.PROTECT, related_name='annotations', to='annotator.scheme'),
        ),
        migrations.AlterField(
            model_name='span',
            name='question',
            field=models.ForeignKey(null=True, on_delete=django.db.models.deletion.PROTECT, related_name='spans', to='annotator.question'),
        ),
        migrations.AlterField(
            model_name='itemkey',
            name='question',
            field=models.ForeignKey(null=True, on_delete=django.db.models.deletion.CASCADE, related_name='keys', to='annotator.question'),
        ),
        migrations.AddField(
            model_name='study',
            name='instrument',
            field=models.ForeignKey(null=True, on_delete=django.db.models.deletion.PROTECT, related_name='studies', to='benchmark.instrument'),
        ),
        migrations.AddField(
            model_name='annotation',
            name='response',
            field=models.OneToOneField(null=True, help_text="This version's answers (deleted with the version: see annotator.signals).", on_delete=django.db.models.deletion.PROTECT, related_name='annotation', to='benchmark.response'),
        ),
        migrations.AddField(
            model_name='span',
            name='instrument_question',
            field=models.ForeignKey(null=True, on_delete=django.db.models.deletion.PROTECT, related_name='spans', to='benchmark.question'),
        ),
        migrations.AddField(
            model_name='itemkey',
            name='instrument_question',
            field=models.ForeignKey(null=True, on_delete=django.db.models.deletion.CASCADE, related_name='item_keys', to='benchmark.question'),
        ),
    ]
