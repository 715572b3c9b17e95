from django.urls import path

from . import views

urlpatterns = [
    path("", views.instrument_list, name="instruments"),
    path("new/", views.instrument_new, name="instrument-new"),
    path("import/", views.instrument_import, name="instrument-import"),
    path("<int:pk>/", views.instrument_detail, name="instrument"),
    path("<int:pk>/preview/", views.instrument_preview, name="instrument-preview"),
    path("<int:pk>/questions/new/", views.question_new, name="instrument-question-new"),
    path("<int:pk>/questions/<int:question_pk>/", views.question_edit, name="instrument-question"),
    path("<int:pk>/questions/<int:question_pk>/move/", views.question_move, name="instrument-question-move"),
    path("<int:pk>/questions/<int:question_pk>/delete/", views.question_delete, name="instrument-question-delete"),
    path("<int:pk>/version/", views.instrument_version, name="instrument-version"),
    path("<int:pk>/copy/", views.instrument_copy, name="instrument-copy"),
    path("<int:pk>/export/", views.instrument_export, name="instrument-export"),
]
