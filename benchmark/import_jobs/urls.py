from django.urls import path

from . import views

urlpatterns = [
    path("", views.import_page, name="import"),
    path("<int:pk>/", views.import_job, name="import-job"),
    path("<int:pk>/progress/", views.import_job_progress, name="import-job-progress"),
    path("<int:pk>/import/", views.import_job_start, name="import-job-start"),
]
