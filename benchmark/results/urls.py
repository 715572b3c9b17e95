from django.urls import path

from . import views
from .agentsense import views as agentsense
from .promediate import views as promediate
from .shrec import views as shrec

urlpatterns = [
    path("", views.results, name="results"),
    path("results.json", views.results_json, name="results-json"),
    path("figures/<slug:name>/", views.results_figure, name="results-figure"),
    path("<slug:table>.csv", views.results_csv, name="results-csv"),
    path("agentsense/", agentsense.agentsense, name="results-agentsense"),
    path("agentsense/agentsense.json", agentsense.agentsense_json, name="results-agentsense-json"),
    path("agentsense/<slug:table>.csv", agentsense.agentsense_csv, name="results-agentsense-csv"),
    path("promediate/", promediate.promediate, name="results-promediate"),
    path("promediate/promediate.json", promediate.promediate_json, name="results-promediate-json"),
    path("promediate/promediate.zip", promediate.promediate_zip, name="results-promediate-zip"),
    path("promediate/<slug:table>.csv", promediate.promediate_csv, name="results-promediate-csv"),
    path("shrec/", shrec.shrec, name="results-shrec"),
    path("shrec/shrec.json", shrec.shrec_json, name="results-shrec-json"),
    path("shrec/shrec.zip", shrec.shrec_zip, name="results-shrec-zip"),
    path("shrec/<slug:table>.csv", shrec.shrec_csv, name="results-shrec-csv"),
]
