"""A study's agreement report and its page view, kept between loads until the study's answers change.

The demo's Sotopia-EVAL report takes about a second to build and several to draw its figures, and
reopening it, or downloading its files, asks the same question of the same answers. So the built
report and the page's view of it (tables and figures, keyed by the report's content) are kept
(``benchmark.caching``), the report keyed by the respondent kinds compared and a stamp of what it reads:

- the study's annotations: their count, highest id and latest change (``updated_at``, which
  every autosave, submit and edit moves, and which new versions and imported ratings add to);
- its items: count and highest id (items added, gold and attention checks);
- every answer about the study's episodes, of any respondent (annotators of this and other
  studies, judges, interviewed agents, participants): count, highest id and the sum of numbers;
- the study's curations (gold): count and latest change (a draft made final moves no answer);
- the study's instrument and overlap.

What the stamp cannot see (an item turned into a gold item in place) shows at the latest after
``settings.PARLEY_REPORT_CACHE_SECONDS``. The report's ``generated_at`` says when it was built.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from django.db.models import Count, Max, Sum

from benchmark.caching import cached
from benchmark.models import Answer

from ..models import Annotation, Curation, Study, StudyItem
from .build import SCHEMA_VERSION, build_report
from .display import ReportView, report_view


def study_stamp(study: Study) -> tuple[Any, ...]:
    """What changes when the answers, annotations, items or gold a study's report reads do (four queries)."""
    annotations = Annotation.objects.filter(assignment__item__study=study).aggregate(
        n=Count("pk"), last=Max("pk"), changed=Max("updated_at")
    )
    items = StudyItem.objects.filter(study=study).aggregate(n=Count("pk"), last=Max("pk"))
    answers = Answer.objects.filter(response__episode__study_items__study=study).aggregate(
        n=Count("pk"), last=Max("pk"), total=Sum("number")
    )
    curations = Curation.objects.filter(item__study=study).aggregate(n=Count("pk"), changed=Max("updated_at"))
    parts = (annotations, items, answers, curations)
    return (study.pk, study.instrument_id, study.overlap, *(part[name] for part in parts for name in part))


def cached_report(study: Study, respondent_kinds: Sequence[str]) -> dict[str, Any]:
    """``build_report(study, respondent_kinds=...)``, kept while nothing it reads has changed."""
    kinds = [str(kind) for kind in respondent_kinds]
    return cached(lambda: build_report(study, respondent_kinds=kinds),
                  "agreement", SCHEMA_VERSION, kinds, study_stamp(study))


def cached_view(report: dict[str, Any]) -> ReportView:
    """``report_view(report)``: its tables and figures, drawn once per report (keyed by its content)."""
    return cached(lambda: report_view(report), "agreement-view", json.dumps(report, sort_keys=True, default=str))
