"""An annotation version takes its answers with it when it goes.

``Annotation.response`` points from the annotator app into the core (the core knows nothing of
annotations), so deleting a version (a cancelled edit, a study deleted in the admin) cannot
cascade to its ``benchmark.Response`` (nor its probes' response) by itself; this receiver deletes them, and their
answers with it, so no orphaned answers linger in reports that read every respondent's answers.
"""

from typing import Any

from django.db.models.signals import post_delete
from django.dispatch import receiver

from benchmark.models import Response

from .models import Annotation


@receiver(post_delete, sender=Annotation, dispatch_uid="annotator_annotation_takes_its_response")
def delete_response(sender: type[Annotation], instance: Annotation, **kwargs: Any) -> None:
    Response.objects.filter(pk__in=[instance.response_id, instance.probes_response_id]).delete()
