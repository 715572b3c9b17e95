from django.urls import path

from .views import agreement, annotate, crowd, curation, invites, lifecycle, pool, research, training

app_name = "annotator"
urlpatterns = [
    # Annotators
    path("", annotate.index, name="index"),
    path("join/<str:token>/", invites.join, name="join"),
    path("invitations/<int:invitation_id>/accept/", pool.accept_invitation, name="accept-invitation"),
    path("s/<slug:slug>/", annotate.instructions, name="instructions"),
    path("s/<slug:slug>/next/", annotate.next_item, name="next"),
    path("s/<slug:slug>/qualification/retry/", training.retry, name="training-retry"),
    path("s/<slug:slug>/comprehension/", crowd.comprehension, name="comprehension"),
    path("s/<slug:slug>/end/", crowd.end, name="end"),
    path("crowd/<str:token>/", crowd.link, name="crowd-link"),
    path("a/<int:assignment_id>/", annotate.item, name="item"),
    path("a/<int:assignment_id>/draft/", annotate.save_draft, name="draft"),
    path("a/<int:assignment_id>/recording/", annotate.recording, name="recording"),
    path("a/<int:assignment_id>/submit/", annotate.submit, name="submit"),
    path("a/<int:assignment_id>/edit/", annotate.edit, name="edit"),
    path("a/<int:assignment_id>/cancel-edit/", annotate.cancel_edit, name="cancel-edit"),
    # Researchers
    path("studies/", research.study_list, name="study-list"),
    path("studies/new/", research.study_create, name="study-create"),
    path("studies/new/human-baseline/", research.human_baseline_create, name="human-baseline-create"),
    path("studies/<slug:slug>/", research.dashboard, name="dashboard"),
    # A study's life (annotator.lifecycle, annotator.pool)
    path("studies/<slug:slug>/settings/", lifecycle.settings, name="study-settings"),
    path("studies/<slug:slug>/phase/", lifecycle.phase, name="study-phase"),
    path("studies/<slug:slug>/items/", lifecycle.items, name="study-items"),
    path("studies/<slug:slug>/log/", lifecycle.log, name="study-log"),
    path("studies/<slug:slug>/annotators/", pool.annotators, name="pool"),
    path("studies/<slug:slug>/annotators/<int:user_id>/", pool.annotator_action, name="pool-action"),
    path("studies/<slug:slug>/invite/", pool.invite, name="invite"),
    path("studies/<slug:slug>/annotators/agreement/", agreement.annotator_agreement, name="annotator-agreement"),
    path("studies/<slug:slug>/export.<str:fmt>", research.export, name="export"),
    path("studies/<slug:slug>/items/<int:item_id>/setup/", training.item_setup, name="item-setup"),
    path("studies/<slug:slug>/annotators/<int:user_id>/restore/", training.restore_annotator,
         name="restore-annotator"),
    path("studies/<slug:slug>/ratings/", research.ratings_import, name="ratings-import"),
    path("studies/<slug:slug>/report/", research.report, name="report"),
    path("studies/<slug:slug>/report.<str:fmt>", research.report_download, name="report-download"),
    path("studies/<slug:slug>/report/tables.zip", research.report_tables_download, name="report-tables"),
    path("studies/<slug:slug>/report/tables/<str:name>", research.report_tables_download, name="report-table"),
    path("studies/<slug:slug>/report/bundle/", research.report_bundle, name="report-bundle"),
    path("studies/<slug:slug>/report/bundle/<int:bundle_id>.zip", research.report_bundle_file,
         name="report-bundle-file"),
    # Researchers and curators: per-item review and adjudication into gold
    path("studies/<slug:slug>/adjudication/", curation.queue, name="adjudication-queue"),
    path("studies/<slug:slug>/items/<int:item_id>/", curation.item_review, name="item-review"),
    path("studies/<slug:slug>/items/<int:item_id>/adjudicate/", curation.adjudicate, name="adjudicate"),
]
