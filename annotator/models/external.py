from django.conf import settings
from django.db import models


class ExternalAnnotator(models.Model):
    """Someone who rated a study's episodes outside Parley (a Prolific form, a spreadsheet), whose ratings were
    imported (``annotator.external_ratings``).

    Their ratings are ordinary assignments and annotations of ``user``: an account made for them that
    cannot sign in (inactive, no usable password) and is never a member of the study's pool, so it is
    never offered work. Pages name them ``external <number>``, numbered per study in the order they
    were first imported; exports and reports use the usual pseudonym of the account.

    ``source_key`` is a SHA-256 of the study and the id the file gave them, not the id itself: the same
    id in a later file finds the same annotator, while Parley never holds a Prolific id or a name
    that the researcher's own files already keep.
    """

    study = models.ForeignKey("Study", on_delete=models.CASCADE, related_name="external_annotators")
    number = models.PositiveIntegerField(help_text="N in 'external N', from 1 within the study.")
    source_key = models.CharField(max_length=64, help_text="SHA-256 (hex) of the study and the file's annotator id.")
    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="external_annotator")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["study", "number"]
        constraints = [
            models.UniqueConstraint(fields=["study", "number"], name="external_annotator_number_unique"),
            models.UniqueConstraint(fields=["study", "source_key"], name="external_annotator_source_unique"),
            models.CheckConstraint(condition=models.Q(number__gte=1), name="external_annotator_number_positive"),
        ]

    def __str__(self) -> str:
        return self.label

    @property
    def label(self) -> str:
        return f"external {self.number}"
