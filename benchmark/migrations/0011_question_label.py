"""``Question.label``: a short name for a question in tables, figures and pages (the key when empty).

Its own migration, so that on PostgreSQL the data migrations after it (``0012``) run in their own
transaction: a column cannot be added or dropped in a transaction that still has pending
constraint checks from rows it wrote.
"""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("benchmark", "0010_instruments_goals_probes"),
    ]

    operations = [
        migrations.AddField(
            model_name="question",
            name="label",
            field=models.CharField(
                blank=True, help_text="A short name for tables, figures and pages; the key when empty.", max_length=100
            ),
        ),
    ]
