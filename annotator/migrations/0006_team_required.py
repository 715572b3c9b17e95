"""Every row now has a team (the data migration filled them): make the team required."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("annotator", "0005_default_team")]

    operations = [
        migrations.AlterField(
            model_name="study",
            name="team",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.PROTECT, related_name="annotation_studies", to="benchmark.team"
            ),
        ),
    ]
