"""Pages researchers manage studies with: list, create, dashboard, exports, report.

Every view is behind ``researcher_required`` and reaches studies only through
``researcher_studies``: a researcher sees the studies of their teams, a superuser sees all. Each page
costs a fixed number of queries, however many items, annotators and annotations a study has.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.core.handlers.asgi import ASGIRequest
from django.db.models import Count, Q, QuerySet
from django.http import FileResponse, Http404, HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_GET, require_http_methods

from benchmark.episodes.forms import EpisodeFilterForm
from benchmark.importing import ImportProblem
from benchmark.instruments.respondents import pseudonym
from benchmark.jobs.queue import QueueUnavailable
from benchmark.models import Episode

from .. import study_log
from ..assignment import AnnotatorProgress, progress
from ..check_actions import check_records
from ..exports import CONTENT_TYPES, FORMATS, export_lines, in_chunks, in_chunks_async
from ..external_ratings import import_ratings, uploads
from ..forms import (
    FILTER_FIELDS,
    RatingsFileForm,
    StudyForm,
    default_instructions,
    initial_from_query,
    is_default_instructions,
)
from ..human_baseline.forms import HumanBaselineForm
from ..models import Assignment, Membership, ReportBundle, Study, StudyItem
from ..permissions import researcher_required
from ..quality import AnnotatorQuality, study_quality
from ..reports import (
    COMPARABLE,
    bundle_path,
    bundle_state,
    cached_report,
    cached_view,
    compared_kinds,
    latest_submitted,
    render_bundle,
    render_html,
    render_tables_zip,
    report_json,
    report_tables,
    start_bundle,
)
from .crowd import platform_link


def researcher_studies(user: AbstractBaseUser) -> QuerySet[Study]:
    """The studies ``user`` manages: their teams' (every study for a superuser)."""
    return Study.objects.owned_by(user)


def duration(seconds: int) -> str:
    """A short human reading of a number of seconds: '45 s', '12 min 05 s', '3 h 20 min'."""
    minutes, seconds = divmod(seconds, 60)
    hours, minutes = divmod(minutes, 60)
    if hours:
        return f"{hours} h {minutes:02d} min"
    if minutes:
        return f"{minutes} min {seconds:02d} s"
    return f"{seconds} s"


def percent(part: int, whole: int) -> int:
    return round(100 * part / whole) if whole else 0


# The list


@dataclass
class StudyRow:
    study: Study
    items: int = 0
    items_complete: int = 0
    submitted: int = 0
    slots: int = 0

    @property
    def percent(self) -> int:
        return percent(self.submitted, self.slots)


@require_GET
@researcher_required
def study_list(request: HttpRequest) -> HttpResponse:
    studies = list(
        researcher_studies(request.user).select_related("instrument").annotate(members=Count("memberships"))
    )
    rows = {study.pk: StudyRow(study) for study in studies}
    counts = (
        StudyItem.objects.filter(study__in=rows, kind=StudyItem.Kind.REGULAR)
        .annotate(submitted=Count("assignments", filter=Q(assignments__status=Assignment.Status.SUBMITTED)))
        .values_list("study_id", "submitted")
    )
    for study_id, submitted in counts:
        row = rows[study_id]
        row.items += 1
        row.submitted += min(submitted, row.study.overlap)
        row.items_complete += submitted >= row.study.overlap
    for row in rows.values():
        row.slots = row.items * row.study.overlap
    return render(request, "annotator/research/study_list.html", {"rows": list(rows.values())})


# Creating a study


@require_http_methods(["GET", "POST"])
@researcher_required
def study_create(request: HttpRequest) -> HttpResponse:
    """The study form; htmx asks it for the live episode count and for a preset's default instructions."""
    partial = request.GET.get("partial") if request.htmx else None
    if partial == "count":
        return render(
            request, "annotator/research/partials/_episode_count.html", {"count": _count(request.GET, request.user)}
        )
    if partial == "instructions":
        return _instructions_field(request)

    if request.method == "POST":
        form = StudyForm(request.POST, user=request.user)
        if form.is_valid():
            try:
                study = form.save(created_by=request.user)
            except ValueError as problem:
                form.add_error(None, str(problem))
            else:
                messages.success(request, f"Study “{study.title}” created with {study.items.count()} items.")
                return redirect("annotator:dashboard", slug=study.slug)
        count = _count(request.POST, request.user)
    else:
        form = StudyForm(initial=initial_from_query(request.GET), user=request.user)
        count = _count({name: form.initial.get(name, "") for name in FILTER_FIELDS}, request.user)
    return render(request, "annotator/research/study_form.html", {"form": form, "count": count})


@require_http_methods(["GET", "POST"])
@researcher_required
def human_baseline_create(request: HttpRequest) -> HttpResponse:
    """A SHREC human-baseline study over a task set's items (``annotator.human_baseline``)."""
    form = HumanBaselineForm(request.POST or None, user=request.user)
    if request.method == "POST" and form.is_valid() and (study := form.save(created_by=request.user)) is not None:
        messages.success(request, f"Study “{study.title}” created with {study.items.count()} task items.")
        return redirect("annotator:dashboard", slug=study.slug)
    context = {"form": form, "has_task_sets": form.fields["task_set"].queryset.exists()}
    return render(request, "annotator/research/human_baseline_form.html", context)


def _count(data: object, user: AbstractBaseUser) -> int:
    """How many of ``user``'s episodes the episode filters in ``data`` select (invalid values are ignored)."""
    return EpisodeFilterForm(data, user=user).filter(Episode.objects.owned_by(user)).count()


def _instructions_field(request: HttpRequest) -> HttpResponse:
    """The instructions box for the chosen preset, keeping whatever the researcher wrote themselves."""
    text = request.GET.get("instructions", "")
    if is_default_instructions(text):
        text = default_instructions(request.GET.get("preset", ""))
    form = StudyForm(initial={"instructions": text}, user=request.user)
    return render(request, "partials/_field.html", {"field": form["instructions"], "wide": True})


# The dashboard


@dataclass
class AnnotatorRow:
    user: AbstractBaseUser
    pseudonym: str
    member: bool
    work: AnnotatorProgress
    quality: AnnotatorQuality
    time_spent: str
    gold_accuracy: int | None
    external: int | None = None  # N of "external N", for someone whose ratings were imported (never a member)

    @property
    def name(self) -> str:
        return f"external {self.external}" if self.external else self.user.get_username()


@dataclass
class ItemRow:
    item: StudyItem
    submitted: int
    in_progress: int
    short: bool


@require_GET
@researcher_required
def dashboard(request: HttpRequest, slug: str) -> HttpResponse:
    study = get_object_or_404(researcher_studies(request.user).select_related("instrument", "created_by"), slug=slug)
    now = timezone.now()
    standing = progress(study, now=now)
    quality = study_quality(study)
    context = {
        "study": study,
        "progress": standing,
        "percent": percent(standing.submitted, standing.slots),
        "annotators": _annotator_rows(study, standing.per_annotator, quality),
        "items": _item_rows(study, now),
        "invite_url": request.build_absolute_uri(reverse("annotator:join", args=[study.invite_token])),
        "crowd_url": platform_link(request, study) if study.crowd_link else "",
        "generated": _generated(study),
        "log": study_log.events(study, limit=5),
        "check_rows": list(check_records(study).values()),
    }
    return render(request, "annotator/research/dashboard.html", context)


def _generated(study: Study) -> list[dict]:
    """How many of the study's current ratings no person gave, by what generated them (the demo's): on
    regular items and on quality items apart, as the progress figures beside them count them."""
    rows = (latest_submitted(study).exclude(generated_by="").values("generated_by", "assignment__item__kind")
            .annotate(count=Count("pk")))
    counts: dict[str, dict[str, int]] = {}
    for row in rows.order_by("generated_by"):
        regular = row["assignment__item__kind"] == StudyItem.Kind.REGULAR
        entry = counts.setdefault(row["generated_by"], {"regular": 0, "quality": 0})
        entry["regular" if regular else "quality"] += row["count"]
    return [{"source": source, **entry} for source, entry in counts.items()]


def _annotator_rows(
    study: Study, work: dict[int, AnnotatorProgress], quality: dict[int, AnnotatorQuality]
) -> list[AnnotatorRow]:
    """Every member, then the external annotators (``external N``: ratings imported), then anyone else who holds
    assignments (someone removed from the pool)."""
    members = {m.annotator_id: m.annotator for m in Membership.objects.filter(study=study).select_related("annotator")}
    others = set(work) - set(members)
    # External annotators are never members: they come with the others, their pseudonym read in the same query.
    outside = get_user_model().objects.select_related("external_annotator").in_bulk(others) if others else {}
    users = {**members, **outside}
    external = {
        user_id: user.external_annotator.number
        for user_id, user in outside.items()
        if hasattr(user, "external_annotator") and user.external_annotator.study_id == study.pk
    }
    rows = []
    for user_id, user in users.items():
        figures = quality.get(user_id, AnnotatorQuality())
        done = work.get(user_id, AnnotatorProgress())
        accuracy = figures.gold_accuracy
        rows.append(AnnotatorRow(
            user=user, pseudonym=pseudonym(user_id), member=user_id in members, work=done, quality=figures,
            time_spent=duration(done.seconds_spent), gold_accuracy=None if accuracy is None else round(100 * accuracy),
            external=external.get(user_id),
        ))
    return sorted(rows, key=lambda row: (not row.member, row.external or 0, row.user.get_username()))


@require_http_methods(["GET", "POST"])
@researcher_required
def ratings_import(request: HttpRequest, slug: str) -> HttpResponse:
    """Import ratings made outside Parley: check the uploaded file first (a dry run), then import what was
    checked, which waited on the server meanwhile (``external_ratings.uploads``)."""
    study = get_object_or_404(researcher_studies(request.user).select_related("instrument"), slug=slug)
    form = RatingsFileForm(request.POST or None, request.FILES or None)
    context: dict[str, Any] = {"study": study, "form": form, "summary": [], "problems": None}
    if request.method != "POST" or not form.is_valid():
        return render(request, "annotator/research/ratings_import.html", context)
    upload = form.cleaned_data["file"]
    if upload is not None:
        try:
            token, path = uploads.keep(study.pk, request.user.pk, upload)
        except OSError:
            form.add_error(None, "The file could not be kept on the server to be checked; try again.")
            return render(request, "annotator/research/ratings_import.html", context)
    else:
        token, path = form.cleaned_data["upload"], uploads.kept(study.pk, request.user.pk, form.cleaned_data["upload"])
        if path is None:
            form.add_error(None, "The checked file is no longer on the server (it is kept for a day, and only until "
                           "it is imported): choose it again to check it.")
            return render(request, "annotator/research/ratings_import.html", context)
    dry_run = upload is not None or request.POST.get("action") != "import"
    try:
        result = import_ratings(path, study=study, dry_run=dry_run, curator=request.user)
    except ImportProblem as problem:
        uploads.discard(path)
        context["problems"] = problem
        return render(request, "annotator/research/ratings_import.html", context)
    if not dry_run:
        uploads.discard(path)
        messages.success(request, result.summary())
        return redirect("annotator:dashboard", slug=study.slug)
    context.update(summary=result.summary().split("\n"), form=RatingsFileForm(initial={"upload": token}),
                   file_name=path.name)
    return render(request, "annotator/research/ratings_import.html", context)


def _item_rows(study: Study, now: datetime) -> list[ItemRow]:
    """Every item with its submissions against k; regular items short of k are flagged."""
    claimed = Q(assignments__status=Assignment.Status.CLAIMED, assignments__lease_expires_at__gte=now)
    items = (
        study.items.select_related("episode__scenario", "episode__barrier", "compared_episode")
        .annotate(
            submitted=Count("assignments", filter=Q(assignments__status=Assignment.Status.SUBMITTED)),
            in_progress=Count("assignments", filter=claimed),
        )
        .order_by("position")
    )
    return [
        ItemRow(
            item=item, submitted=item.submitted, in_progress=item.in_progress,
            short=item.kind == StudyItem.Kind.REGULAR and item.submitted < study.overlap,
        )
        for item in items
    ]


# Exports and the report


@require_GET
@researcher_required
def export(request: HttpRequest, slug: str, fmt: str) -> StreamingHttpResponse:
    """The study's annotations in long format, streamed; ``?all_versions=1`` adds every version."""
    if fmt not in FORMATS:
        raise Http404(f"No export format {fmt!r}.")
    study = get_object_or_404(researcher_studies(request.user), slug=slug)
    all_versions = request.GET.get("all_versions") == "1"
    lines = export_lines(study, fmt, all_versions=all_versions)
    # Under ASGI a synchronous iterator would be read whole before sending; hand it an async one.
    content = in_chunks_async(lines) if isinstance(request, ASGIRequest) else in_chunks(lines)
    response = StreamingHttpResponse(content, content_type=CONTENT_TYPES[fmt])
    suffix = "-all-versions" if all_versions else ""
    response["Content-Disposition"] = f'attachment; filename="{study.slug}-annotations{suffix}.{fmt}"'
    return response


REPORT_FORMATS = {
    "json": "application/json",
    "html": "text/html; charset=utf-8",
    "zip": "application/zip",
}


def _report_study(request: HttpRequest, slug: str) -> Study:
    return get_object_or_404(researcher_studies(request.user).select_related("instrument"), slug=slug)


def _attachment(content: str | bytes, content_type: str, filename: str) -> HttpResponse:
    response = HttpResponse(content, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


@require_GET
@researcher_required
def report(request: HttpRequest, slug: str) -> HttpResponse:
    """The agreement report with its figures, how it was computed, and its downloads.

    ``?compare=agent`` (repeatable) compares the annotators with other respondent kinds than the
    automated judges; the downloads linked from the page follow the same choice.
    """
    study = _report_study(request, slug)
    kinds = compared_kinds(request.GET.getlist("compare"))
    built = cached_report(study, kinds)
    context = {
        "study": study,
        "compare": [(str(kind), label, str(kind) in kinds) for kind, label in COMPARABLE.items()],
        "compare_query": "" if built["compared_with"] == ["judge"] else urlencode({"compare": kinds}, doseq=True),
        "report": built,
        "view": cached_view(built),
        "tables": list(report_tables(built)),
        "bundle": bundle_state(study),
    }
    return render(request, "annotator/research/report.html", context)


@require_GET
@researcher_required
def report_download(request: HttpRequest, slug: str, fmt: str) -> HttpResponse:
    """report.json, report.html or report.zip; a large study's ZIP comes from the background build."""
    if fmt not in REPORT_FORMATS:
        raise Http404(f"No report format {fmt!r}.")
    study = _report_study(request, slug)
    if fmt == "zip":
        state = bundle_state(study)
        if state.background:
            if state.fresh:
                return _bundle_file(study, state.bundle)
            messages.info(request, "This study is large, so its ZIP bundle is prepared in the background: see below.")
            return redirect(reverse("annotator:report", args=[study.slug]) + "#bundle")
    built = cached_report(study, compared_kinds(request.GET.getlist("compare")))
    if fmt == "json":
        content: str | bytes = report_json(built)
    elif fmt == "html":
        content = render_html(study, built)
    else:
        content = render_bundle(study, built)
    return _attachment(content, REPORT_FORMATS[fmt], f"{study.slug}-report.{fmt}")


@require_GET
@researcher_required
def report_tables_download(request: HttpRequest, slug: str, name: str | None = None) -> HttpResponse:
    """One CSV table of the report by file name, or all of them zipped."""
    study = _report_study(request, slug)
    built = cached_report(study, compared_kinds(request.GET.getlist("compare")))
    if name is None:
        return _attachment(render_tables_zip(built), "application/zip", f"{study.slug}-report-tables.zip")
    tables = report_tables(built)
    if name not in tables:
        raise Http404(f"No report table {name!r}.")
    return _attachment(tables[name], "text/csv; charset=utf-8", f"{study.slug}-{name}")


@require_http_methods(["GET", "POST"])
@researcher_required
def report_bundle(request: HttpRequest, slug: str) -> HttpResponse:
    """The bundle panel, which htmx polls while a bundle is prepared; POST starts preparing one."""
    study = _report_study(request, slug)
    refused = ""
    if request.method == "POST":
        try:
            start_bundle(study, request.user)
        except QueueUnavailable as down:
            refused = str(down)
        if not request.htmx:
            if refused:
                messages.error(request, refused)
            return redirect(reverse("annotator:report", args=[study.slug]) + "#bundle")
    context = {"study": study, "bundle": bundle_state(study), "refused": refused}
    return render(request, "annotator/research/partials/_report_bundle.html", context)


@require_GET
@researcher_required
def report_bundle_file(request: HttpRequest, slug: str, bundle_id: int) -> FileResponse:
    study = _report_study(request, slug)
    bundle = get_object_or_404(ReportBundle, pk=bundle_id, study=study, status=ReportBundle.Status.READY)
    return _bundle_file(study, bundle)


def _bundle_file(study: Study, bundle: ReportBundle) -> FileResponse:
    path = bundle_path(bundle)
    if not path.is_file():
        raise Http404("The bundle's file is gone; prepare it again.")
    return FileResponse(
        path.open("rb"), as_attachment=True, filename=f"{study.slug}-report.zip", content_type="application/zip"
    )
