from django.urls import path

from . import views

urlpatterns = [
    path("", views.results, name="results"),
    path("results.json", views.results_json, name="results-json"),
    path("<slug:table>.csv", views.results_csv, name="results-csv"),
]
