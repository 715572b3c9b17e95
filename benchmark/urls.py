"""Benchmark's pages, one URL list per package; every name stays in the ``benchmark`` namespace."""

from django.urls import include, path

from .episodes import urls as episodes
from .results import urls as results
from .runs import urls as runs

app_name = "benchmark"
urlpatterns = [
    path("", include(episodes)),
    path("results/", include(results)),
    path("runs/", include(runs)),
]
