"""The participant flow behind a study link: /s/<slug>/ and its stages (included by chat/urls.py)."""

from django.urls import path

from .views import participant

urlpatterns = [
    path("<slug:slug>/", participant.entry, name="entry"),
    path("<slug:slug>/consent/", participant.consent, name="consent"),
    path("<slug:slug>/declined/", participant.declined, name="declined"),
    path("<slug:slug>/briefing/", participant.briefing, name="briefing"),
    path("<slug:slug>/chat/", participant.chat, name="chat"),
    path("<slug:slug>/questionnaire/", participant.questionnaire, name="questionnaire"),
    path("<slug:slug>/done/", participant.done, name="done"),
    path("<slug:slug>/screened-out/", participant.screened_out, name="screened-out"),
    path("<slug:slug>/technical-problem/", participant.technical_problem, name="technical-problem"),
    path("<slug:slug>/resume/", participant.resume, name="resume"),
]
