from django.urls import path

from . import views

urlpatterns = [
    path("", views.run_list, name="runs"),
    path("new/", views.run_new, name="run-new"),
    path("<int:pk>/", views.run_detail, name="run"),
    path("<int:pk>/progress/", views.run_progress_partial, name="run-progress"),
    path("<int:pk>/cancel/", views.run_cancel, name="run-cancel"),
    path("<int:pk>/resume/", views.run_resume, name="run-resume"),
]
