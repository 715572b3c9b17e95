"""The results report and its figures, kept between loads while the data they read is unchanged.

Building the report over 720 episodes and drawing its three figures takes seconds; a researcher
reloading the page, changing nothing, or downloading its JSON and CSV asks the same question of the
same data. So the built report and its table, and separately the figures, are kept in Django's
cache (each process's own memory by default; shared by every process with ``REDIS_URL``):

- **The report** is keyed by the filters, the episodes the asker may see (their queryset's SQL,
  which names their teams, so no one is served another team's report), and a *stamp* of the data
  read: for those episodes, the count and highest id of episodes, turns and answers, the turns'
  total length and the answers' sum. A new or removed episode, turn, response or answer (an
  import, a judge pass, ``evaluate --force``, a chat turn) changes the stamp, and so does a score or
  a turn's text edited in place in almost every case. What the stamp cannot see (an episode's tag
  or a seat's model edited in the admin) shows at the latest after
  ``settings.PARLEY_REPORT_CACHE_SECONDS`` (10 minutes unless set; 0 keeps nothing).
- **The figures** are a pure function of the report, so they are keyed by a digest of it: always
  correct, and drawn once per report.

The report's ``generated_at`` says when it was built, which may be before this load.
"""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.core.cache import cache
from django.db.models import Count, Max, QuerySet, Sum
from django.db.models.functions import Length

from ..models import Answer, Episode, Turn
from . import build
from .figures import Figure, results_figures

if TYPE_CHECKING:
    import pandas as pd

PREFIX = "results-report"


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


def _key(*parts: Any) -> str:
    return f"{PREFIX}:{hashlib.sha256(repr(parts).encode()).hexdigest()}"


def cached_results(
    filters: build.ResultFilters, episodes: QuerySet[Episode]
) -> tuple[dict[str, Any], pd.DataFrame]:
    """``build.build_results(filters, episodes)``, from the cache when nothing it reads has changed.

    A ``ResultsProblem`` is raised afresh each time, never cached."""
    key = _key(build.SCHEMA_VERSION, filters.to_dict(), str(episodes.values("pk").query), data_stamp(episodes))
    found = cache.get(key)
    if found is None:
        found = build.build_results(filters, episodes)
        cache.set(key, found, settings.PARLEY_REPORT_CACHE_SECONDS)
    return found


def cached_figures(report: dict[str, Any]) -> dict[str, Any]:
    """``results_figures(report)``, drawn once per report (keyed by a digest of its content)."""
    key = _key("figures", json.dumps(report, sort_keys=True, default=str))
    found: dict[str, Figure | dict[str, Figure] | None] | None = cache.get(key)
    if found is None:
        found = results_figures(report)
        cache.set(key, found, settings.PARLEY_REPORT_CACHE_SECONDS)
    return found
