"""Benchmark's pages, one URL list per package; every name stays in the ``benchmark`` namespace."""

from django.urls import include, path

from .authoring import urls as authoring
from .episodes import urls as episodes
from .import_jobs import urls as import_jobs
from .instrument_builder import urls as instrument_builder
from .jobs import urls as jobs
from .results import urls as results
from .runs import urls as runs

app_name = "benchmark"
urlpatterns = [
    path("", include(episodes)),
    path("", include(authoring)),
    path("import/", include(import_jobs)),
    path("instruments/", include(instrument_builder)),
    path("jobs/", include(jobs)),
    path("results/", include(results)),
    path("runs/", include(runs)),
]
