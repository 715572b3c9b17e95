"""The instrument builder's pages: list, create, the builder (questions and preview), versions, copies, files.

Every view is behind ``researcher_required`` and finds its instrument among the asker's teams'
(``Instrument.objects.owned_by``): another team's instrument is a 404. Presets are shared and
read-only: they can be opened, previewed, exported and copied, never edited (their editing URLs 404).
A change to an answered instrument is refused with the reason (``editing.why_not_editable``), and the
page offers a new version instead.
"""

from __future__ import annotations

import json

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Count
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.text import slugify
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from ..instruments import presets, versions
from ..instruments.kinds import find_kind
from ..models import Instrument, Question
from ..permissions import researcher_required
from . import editing, previews, transfer
from .forms import CopyForm, InstrumentForm, KindForm, QuestionForm, UploadForm


def _visible(request: HttpRequest, pk: int) -> Instrument:
    """One of the asker's teams' instruments, or a preset."""
    return get_object_or_404(Instrument.objects.owned_by(request.user).select_related("team"), pk=pk)


def _own(request: HttpRequest, pk: int) -> Instrument:
    """One of the asker's teams' own instruments (not a preset): what may be changed."""
    return get_object_or_404(Instrument.objects.owned_by(request.user).filter(team__isnull=False), pk=pk)


def _workspace(request: HttpRequest, instrument: Instrument) -> dict:
    """What the builder page and its htmx swaps show: the questions, the controls, the previews."""
    refusal = editing.why_not_editable(instrument)
    return {
        "instrument": instrument,
        "questions": list(instrument.questions.order_by("position")),
        "editable": instrument.team_id is not None and not refusal,
        "refusal": refusal,
        "kind_form": KindForm(),
        "panels": previews.panels(request, instrument),
    }


@require_GET
@researcher_required
def instrument_list(request: HttpRequest) -> HttpResponse:
    """The team's instruments, then the shared presets (installed here, so each can be opened and copied)."""
    for key in {**presets.PRESETS, **presets.PARTICIPANT_PRESETS}:
        presets.install_preset(key)
    rows = Instrument.objects.owned_by(request.user).select_related("team").annotate(
        question_count=Count("questions")
    ).order_by("name", "-version")
    own = [row for row in rows if row.team_id is not None]
    shared = [row for row in rows if row.team_id is None]
    return render(request, "benchmark/instruments/list.html", {"own": own, "shared": shared})


@require_http_methods(["GET", "POST"])
@researcher_required
def instrument_new(request: HttpRequest) -> HttpResponse:
    form = InstrumentForm(request.POST or None, user=request.user)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        made = transfer.create_instrument(data["team"], data["name"], data["description"], [])
        messages.success(request, f"“{made}” made: add its first question.")
        return redirect("benchmark:instrument", pk=made.pk)
    return render(request, "benchmark/instruments/new.html", {"form": form})


@require_GET
@researcher_required
def instrument_detail(request: HttpRequest, pk: int) -> HttpResponse:
    return render(request, "benchmark/instruments/builder.html", _workspace(request, _visible(request, pk)))


@require_http_methods(["GET", "POST"])
@researcher_required
def instrument_preview(request: HttpRequest, pk: int) -> HttpResponse:
    """The previews (htmx). A POST carries the question form being edited: the previews then show the
    instrument with that question as it stands, saved in a transaction that is rolled back, so the real
    renderers draw it and nothing is kept."""
    instrument = _visible(request, pk)
    if request.method == "GET":
        return render(request, "benchmark/instruments/partials/_previews.html", _workspace(request, instrument))
    instrument = _own(request, pk)
    replaces = _question_or_none(instrument, request.POST.get("question"))
    kind = find_kind(replaces.kind if replaces else request.POST.get("kind", ""))
    if kind is None:
        raise Http404("no such kind of question")
    form = QuestionForm(request.POST, kind=kind, instrument=instrument, question=replaces)
    context = {"draft_problems": [], "instrument": instrument}
    if not form.is_valid():
        context["draft_problems"] = [str(e) for errors in form.errors.values() for e in errors]
        context["panels"] = previews.panels(request, instrument)
        return render(request, "benchmark/instruments/partials/_previews.html", context)
    with transaction.atomic():
        try:
            editing.save_question(instrument, form.build(form.cleaned_data["options"]), replaces)
        except ValidationError as refused:
            context["draft_problems"] = refused.messages
        context["panels"] = previews.panels(request, instrument)
        transaction.set_rollback(True)
    return render(request, "benchmark/instruments/partials/_previews.html", context)


def _question_or_none(instrument: Instrument, pk: str | None) -> Question | None:
    if not pk:
        return None
    if not pk.isdigit() or len(pk) > 18:  # an id column holds 64-bit integers
        raise Http404("no such question")
    return get_object_or_404(Question, instrument=instrument, pk=int(pk))


@require_http_methods(["GET", "POST"])
@researcher_required
def question_new(request: HttpRequest, pk: int) -> HttpResponse:
    instrument = _own(request, pk)
    kind = KindForm(request.GET or None).kind_or_none()
    if kind is None:
        messages.error(request, "Choose the kind of question to add.")
        return redirect("benchmark:instrument", pk=instrument.pk)
    return _question_page(request, instrument, kind, None)


@require_http_methods(["GET", "POST"])
@researcher_required
def question_edit(request: HttpRequest, pk: int, question_pk: int) -> HttpResponse:
    instrument = _own(request, pk)
    question = get_object_or_404(Question, instrument=instrument, pk=question_pk)
    return _question_page(request, instrument, find_kind(question.kind), question)


def _question_page(request: HttpRequest, instrument: Instrument, kind, question: Question | None) -> HttpResponse:
    """The question form (for a new question of ``kind``, or ``question``); saved, back to the builder."""
    refusal = editing.why_not_editable(instrument)
    if refusal:
        messages.error(request, refusal)
        return redirect("benchmark:instrument", pk=instrument.pk)
    form = QuestionForm(request.POST or None, kind=kind, instrument=instrument, question=question)
    if request.method == "POST" and form.is_valid():
        try:
            saved = editing.save_question(instrument, form.build(form.cleaned_data["options"]), question)
        except ValidationError as refused:
            for message in refused.messages:
                form.add_error(None, message)
        else:
            messages.success(request, f"Question “{saved.key}” saved.")
            return redirect("benchmark:instrument", pk=instrument.pk)
    context = {"instrument": instrument, "form": form, "kind": kind, "question": question,
               "panels": previews.panels(request, instrument)}
    return render(request, "benchmark/instruments/question.html", context)


def _changed(request: HttpRequest, instrument: Instrument, change) -> HttpResponse:
    """Apply ``change`` (refused on an answered instrument), then the builder again: its workspace for htmx."""
    try:
        change()
    except ValidationError as refused:
        messages.error(request, " ".join(refused.messages))
    if request.htmx:
        instrument.refresh_from_db()
        context = {**_workspace(request, instrument), "show_messages": True}  # the page's own list is not swapped
        return render(request, "benchmark/instruments/partials/_workspace.html", context)
    return redirect("benchmark:instrument", pk=instrument.pk)


@require_POST
@researcher_required
def question_move(request: HttpRequest, pk: int, question_pk: int) -> HttpResponse:
    instrument = _own(request, pk)
    question = get_object_or_404(Question, instrument=instrument, pk=question_pk)
    step = -1 if request.POST.get("direction") == "up" else 1
    return _changed(request, instrument, lambda: editing.move_question(instrument, question, step))


@require_POST
@researcher_required
def question_delete(request: HttpRequest, pk: int, question_pk: int) -> HttpResponse:
    instrument = _own(request, pk)
    question = get_object_or_404(Question, instrument=instrument, pk=question_pk)
    return _changed(request, instrument, lambda: editing.remove_question(instrument, question))


@require_POST
@researcher_required
def instrument_version(request: HttpRequest, pk: int) -> HttpResponse:
    """A new, editable version of one of the team's instruments (frozen or not), with its questions."""
    made = versions.new_version(_own(request, pk))
    messages.success(request, f"“{made}” made: a new version you can edit; answers given earlier keep theirs.")
    return redirect("benchmark:instrument", pk=made.pk)


@require_http_methods(["GET", "POST"])
@researcher_required
def instrument_copy(request: HttpRequest, pk: int) -> HttpResponse:
    """A copy of a preset or of one of the team's instruments, under a new name, for one of the asker's teams."""
    source = _visible(request, pk)
    form = CopyForm(request.POST or None, user=request.user, initial={"name": f"{source.name} (copy)"})
    if request.method == "POST" and form.is_valid():
        made = editing.copy_instrument(source, form.cleaned_data["team"], form.cleaned_data["name"])
        messages.success(request, f"“{made}” made from “{source}”.")
        return redirect("benchmark:instrument", pk=made.pk)
    return render(request, "benchmark/instruments/copy.html", {"form": form, "source": source})


@require_GET
@researcher_required
def instrument_export(request: HttpRequest, pk: int) -> HttpResponse:
    """The instrument as a JSON file in the instrument format (``transfer``), to import elsewhere."""
    instrument = _visible(request, pk)
    text = json.dumps(transfer.instrument_to_data(instrument), indent=2, ensure_ascii=False)
    response = HttpResponse(text + "\n", content_type="application/json; charset=utf-8")
    name = slugify(f"{instrument.name}-v{instrument.version}") or "instrument"
    response["Content-Disposition"] = f'attachment; filename="{name}.json"'
    return response


@require_http_methods(["GET", "POST"])
@researcher_required
def instrument_import(request: HttpRequest) -> HttpResponse:
    """An instrument file read whole: every problem named by question and field, nothing stored unless all pass."""
    form = UploadForm(request.POST or None, request.FILES or None, user=request.user)
    problems: list[str] = []
    if request.method == "POST" and form.is_valid():
        try:
            about, questions = transfer.read_upload(form.cleaned_data["file"])
        except ValidationError as refused:
            problems = refused.messages
        else:
            name = about.get("name") or form.files["file"].name.rsplit(".", 1)[0]
            made = transfer.create_instrument(form.cleaned_data["team"], name, about.get("description", ""), questions)
            messages.success(request, f"“{made}” imported with {len(questions)} question{'s' * (len(questions) != 1)}.")
            return redirect("benchmark:instrument", pk=made.pk)
    return render(request, "benchmark/instruments/import.html", {"form": form, "problems": problems})
