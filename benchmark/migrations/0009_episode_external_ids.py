"""Give every episode that has none a stable external id, as new episodes get on creation.

Before, an episode without one was exported as ``parley-episode-<pk>``, an id the importer did not
know, so exporting and re-importing human chats duplicated them. The ids are random, as
``Episode.new_external_id`` makes them; reversing leaves them in place (they are harmless).
"""

import uuid

from django.db import migrations


def fill_external_ids(apps, schema_editor):
    Episode = apps.get_model("benchmark", "Episode")
    missing = Episode.objects.filter(external_id__isnull=True) | Episode.objects.filter(external_id="")
    for episode in missing.only("pk").iterator():
        Episode.objects.filter(pk=episode.pk).update(external_id=f"episode-{uuid.uuid4().hex}")


class Migration(migrations.Migration):
    dependencies = [("benchmark", "0008_team_required")]

    operations = [migrations.RunPython(fill_external_ids, migrations.RunPython.noop)]
