from django.urls import path

from . import views

app_name = "annotator"
urlpatterns = [
    path("", views.index, name="index"),
]
