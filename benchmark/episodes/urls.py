from django.urls import path

from . import views

urlpatterns = [
    path("", views.index, name="index"),
    path("episodes/<int:pk>/", views.episode, name="episode"),
]
