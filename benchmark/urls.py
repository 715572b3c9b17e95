from django.urls import path

from . import views, views_results, views_runs

app_name = "benchmark"
urlpatterns = [
    path("", views.index, name="index"),
    path("episodes/<int:pk>/", views.episode, name="episode"),
    path("results/", views_results.results, name="results"),
    path("results/results.json", views_results.results_json, name="results-json"),
    path("results/<slug:table>.csv", views_results.results_csv, name="results-csv"),
    path("runs/", views_runs.run_list, name="runs"),
    path("runs/new/", views_runs.run_new, name="run-new"),
    path("runs/<int:pk>/", views_runs.run_detail, name="run"),
    path("runs/<int:pk>/progress/", views_runs.run_progress_partial, name="run-progress"),
    path("runs/<int:pk>/cancel/", views_runs.run_cancel, name="run-cancel"),
    path("runs/<int:pk>/resume/", views_runs.run_resume, name="run-resume"),
]
