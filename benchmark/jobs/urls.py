from django.urls import path

from . import views

urlpatterns = [
    path("", views.job_list, name="jobs"),
    path("<int:pk>/retry/", views.job_retry, name="job-retry"),
]
