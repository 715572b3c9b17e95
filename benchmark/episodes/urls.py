from django.urls import path

from . import views

urlpatterns = [
    path("", views.index, name="index"),
    path("episodes/<int:pk>/", views.episode, name="episode"),
    path("episodes/<int:pk>/recording/", views.recording, name="episode-recording"),
    path("episodes/<int:pk>/recording/attach/", views.attach_recording, name="episode-recording-attach"),
    path("episodes/<int:pk>/recording/remove/", views.remove_recording, name="episode-recording-remove"),
]
