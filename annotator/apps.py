from collections.abc import Collection

from django.apps import AppConfig
from django.db.models import Q


class AnnotatorConfig(AppConfig):
    name = "annotator"
    verbose_name = "Annotation studies"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from benchmark.evaluation.answer_groups import register_generated_responses
        from benchmark.instrument_builder.previews import register_preview
        from benchmark.results.promediate.build import register_human_validation
        from benchmark.results.shrec.human import register_human_baseline

        from . import check_actions, crowd, external_spans, pool, signals  # noqa: F401  (connect the receivers)
        from .human_baseline.answers import human_answers_of
        from .instrument_preview import annotator_preview
        from .reports.promediate_validation import validation_of_episodes

        register_generated_responses(generated_responses)
        # The ProMediate results report's human-validation section (PM-27) reads this app's studies.
        register_human_validation(validation_of_episodes)
        # SHREC's Human row (SH-13): people's answers to a task set's items, from the human-baseline studies.
        register_human_baseline(human_answers_of)
        # The instrument builder's preview shows the item page's form, drawn by this app's code.
        register_preview("annotator", "Annotators (the item page’s form)", annotator_preview, order=10)
        # The pool page's columns beyond its own: each member's check record and a crowd worker's platform id.
        pool.register_column("Checks", check_actions.pool_cells)
        pool.register_column("Platform id", crowd.pool_cells)


def generated_responses(response_ids: Collection[int]) -> dict[int, str]:
    """Which of these responses hold an annotation version no person gave, and what generated it."""
    from .models import Annotation

    rows = Annotation.objects.filter(
        Q(response_id__in=response_ids) | Q(probes_response_id__in=response_ids)
    ).exclude(generated_by="").values_list("response_id", "probes_response_id", "generated_by")
    found = {}
    for response_id, probes_response_id, generated_by in rows:
        for pk in (response_id, probes_response_id):
            if pk in response_ids:
                found[pk] = generated_by
    return found
