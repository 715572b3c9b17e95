from django.urls import path

from . import views
from .agentsense import views as agentsense

urlpatterns = [
    path("", views.results, name="results"),
    path("results.json", views.results_json, name="results-json"),
    path("figures/<slug:name>/", views.results_figure, name="results-figure"),
    path("<slug:table>.csv", views.results_csv, name="results-csv"),
    path("agentsense/", agentsense.agentsense, name="results-agentsense"),
    path("agentsense/agentsense.json", agentsense.agentsense_json, name="results-agentsense-json"),
    path("agentsense/<slug:table>.csv", agentsense.agentsense_csv, name="results-agentsense-csv"),
]
