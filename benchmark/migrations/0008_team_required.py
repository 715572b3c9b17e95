"""Every row now has a team (the data migration filled them): make the team required."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("benchmark", "0007_default_team")]

    operations = [
        migrations.AddConstraint(
            model_name="barrier",
            constraint=models.CheckConstraint(
                condition=models.Q(("builtin", True), ("team__isnull", False), _connector="XOR"),
                name="barrier_builtin_is_shared",
            ),
        ),
        migrations.AlterField(
            model_name="character",
            name="team",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.PROTECT, related_name="characters", to="benchmark.team"
            ),
        ),
        migrations.AlterField(
            model_name="scenario",
            name="team",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.PROTECT, related_name="scenarios", to="benchmark.team"
            ),
        ),
        migrations.AlterField(
            model_name="episode",
            name="team",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.PROTECT, related_name="episodes", to="benchmark.team"
            ),
        ),
        migrations.AlterField(
            model_name="simulationrun",
            name="team",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.PROTECT, related_name="simulation_runs", to="benchmark.team"
            ),
        ),
    ]
