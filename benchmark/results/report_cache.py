"""The results report and its figures, kept between loads while the data they read is unchanged.

Building the report over 720 episodes and drawing its three figures takes seconds; a researcher
reloading the page, changing nothing, or downloading its JSON and CSV asks the same question of the
same data. So the built report with its table, and separately its figures, are kept
(``benchmark.caching``):

- **The report** is keyed by the filters, the episodes the asker may see (their queryset's SQL,
  which names their teams, so no one is served another team's report), and a *stamp* of the data
  read: for those episodes, the count and highest id of episodes, turns and answers, the turns'
  total length and the answers' sum. A new or removed episode, turn, response or answer (an
  import, a judge pass, ``evaluate --force``, a chat turn) changes the stamp, and so does a score or
  a turn's text edited in place in almost every case. What the stamp cannot see (an episode's tag
  or a seat's model edited in the admin) shows at the latest after
  ``settings.PARLEY_REPORT_CACHE_SECONDS``.
- **The figures** are a pure function of the report, so they are keyed by its content (less the
  time it was built): always correct, and drawn once for the same numbers. The page asks for them
  in requests of their own once it is shown (``views.results_figure``), so a cold page answers
  after the report is built, not after three figures are drawn too.

The report's ``generated_at`` says when it was built, which may be before this load.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from django.db.models import Count, Max, QuerySet, Sum
from django.db.models.functions import Length

from ..caching import cached
from ..models import Answer, Episode, Turn
from . import build
from .figures import Figure, results_figures

if TYPE_CHECKING:
    import pandas as pd


def data_stamp(episodes: QuerySet[Episode]) -> tuple[Any, ...]:
    """What changes when the episodes, turns or answers the report reads do (three aggregate queries)."""
    selected = episodes.values("pk")
    shown = episodes.aggregate(n=Count("pk"), last=Max("pk"))
    turns = Turn.objects.filter(episode__in=selected).aggregate(
        n=Count("pk"), last=Max("pk"), length=Sum(Length("content"))
    )
    answers = Answer.objects.filter(response__episode__in=selected).aggregate(
        n=Count("pk"), last=Max("pk"), total=Sum("number")
    )
    return tuple(part[name] for part in (shown, turns, answers) for name in part)


def cached_results(
    filters: build.ResultFilters, episodes: QuerySet[Episode]
) -> tuple[dict[str, Any], pd.DataFrame]:
    """``build.build_results(filters, episodes)``, kept while nothing it reads has changed.

    A ``ResultsProblem`` is raised afresh each time, never kept."""
    return cached(
        lambda: build.build_results(filters, episodes),
        "results", build.SCHEMA_VERSION, filters.to_dict(), str(episodes.values("pk").query), data_stamp(episodes),
    )


def cached_figures(report: dict[str, Any], name: str) -> list[Figure]:
    """The figures ``name`` of ``results_figures(report)``, drawn once per report content: a report built again
    with the same numbers (its cache time over, or a change that moved none of them) reuses them."""
    content = {key: value for key, value in report.items() if key != "generated_at"}  # not drawn

    def draw() -> list[Figure]:
        found = results_figures(report, [name])[name]
        return list(found.values()) if isinstance(found, dict) else [found] if found else []

    return cached(draw, "results-figures", name, json.dumps(content, sort_keys=True, default=str))
