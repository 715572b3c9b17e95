"""The chat app's URLs: researchers' pages under /chat/, the participant flow under /s/<slug>/.

Both live in the one ``chat`` namespace (so ``chat:index`` and ``chat:entry`` reverse alike);
config/urls.py includes this module at the site root.
"""

from django.urls import include, path

from .views import research

app_name = "chat"

research_patterns = [
    path("", research.index, name="index"),
    path("new/", research.study_create, name="study-create"),
    path("<slug:slug>/", research.monitor, name="monitor"),
    path("<slug:slug>/live/", research.monitor_live, name="monitor-live"),
    path("<slug:slug>/edit/", research.study_edit, name="study-edit"),
    path("<slug:slug>/participants.csv", research.export, name="export"),
    path("<slug:slug>/participants/<int:pk>/", research.transcript, name="transcript"),
    path("<slug:slug>/participants/<int:pk>/release/", research.release_participant, name="release"),
]

urlpatterns = [
    path("chat/", include(research_patterns)),
    path("s/", include("chat.participant_urls")),
]
