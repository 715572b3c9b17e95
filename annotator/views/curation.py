"""Pages curators review and adjudicate items with: an item's ratings side by side, its gold form, the queue.

Who may open them (``curation_study``): the researchers of the study's team, and the trusted annotators of its
pool (``Membership.is_curator``). Anyone else signed in gets 403, or 404 for a researcher of another team,
as on every researcher page. The page is blinded (no condition, scenario or model) for an annotator who
curates, and for researchers too when the study says so (``Study.curators_blinded``). The rules of
adjudication are ``annotator.adjudication``'s.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_POST

from ..adjudication import (
    CurationRefused,
    adjudication_queue,
    cell_forms,
    is_curator,
    rated_it,
    read_decisions,
    save_curation,
)
from ..answer_forms import typed
from ..item_review import review
from ..models import Curation, Study, StudyItem
from ..permissions import is_researcher


def curation_study(request: HttpRequest, slug: str) -> tuple[Study, bool]:
    """The study named by ``slug`` and whether the asker is one of its team's researchers; refused otherwise."""
    studies = Study.objects.select_related("instrument", "team")
    owned = studies.owned_by(request.user).filter(slug=slug).first()
    if owned is not None:
        return owned, True
    study = studies.filter(slug=slug).first()
    if study is not None and is_curator(request.user, study):
        return study, False
    if is_researcher(request.user):
        raise Http404("No such study among your teams'.")
    raise PermissionDenied("Only the study's researchers and curators can open this page.")


def _item(study: Study, item_id: int) -> StudyItem:
    item = get_object_or_404(
        StudyItem.objects.select_related("episode__scenario", "episode__barrier"), pk=item_id, study=study,
    )
    item.study = study
    return item


def _page(request: HttpRequest, study: Study, item: StudyItem, researcher: bool, *,
          posted: object = None, errors: dict[str, str] | None = None, status: int = 200) -> HttpResponse:
    blinded = study.curators_blinded or not researcher
    shown = review(item, blinded=blinded)
    curation = Curation.objects.filter(item=item).select_related("curator", "response").first()
    own_rating = rated_it(request.user, item)
    context = {
        "study": study, "item": item, "review": shown, "blinded": blinded, "researcher": researcher,
        "curation": curation, "own_rating": own_rating, "errors": errors or {},
        "regular": item.kind == StudyItem.Kind.REGULAR,
        "forms": [] if own_rating or item.kind != StudyItem.Kind.REGULAR else cell_forms(shown, curation, posted,
                                                                                        errors),
        "next_item": _next_pending(study, item),
        "seats": [] if blinded else list(item.episode.seats.order_by("position").select_related("character")),
    }
    return render(request, "annotator/research/item_review.html", context, status=status)


def _next_pending(study: Study, item: StudyItem) -> StudyItem | None:
    """The next item of the queue still to finalise (after this one, else from the start), if any."""
    pending = [
        row.item for row in adjudication_queue(study)
        if row.disagreements and row.item.pk != item.pk
        and not (row.curation and row.curation.status == Curation.Status.FINAL)
    ]
    return next((other for other in pending if other.position > item.position), pending[0] if pending else None)


@require_GET
@login_required
def item_review(request: HttpRequest, slug: str, item_id: int) -> HttpResponse:
    """An item's ratings side by side, its agreement, other respondents' answers, and the gold form."""
    study, researcher = curation_study(request, slug)
    return _page(request, study, _item(study, item_id), researcher)


@require_POST
@login_required
def adjudicate(request: HttpRequest, slug: str, item_id: int) -> HttpResponse:
    """Save the item's decisions as a draft (``action=draft``) or finalise them as its gold (``action=final``)."""
    study, researcher = curation_study(request, slug)
    item = _item(study, item_id)
    if rated_it(request.user, item):
        raise PermissionDenied("You rated this item, so you cannot decide its gold.")
    if item.kind != StudyItem.Kind.REGULAR:
        messages.error(request, f"Item {item.position + 1} is a {item.get_kind_display()} item: its known answers are "
                       "set with the item, and only regular items are adjudicated.")
        return redirect("annotator:item-review", slug=study.slug, item_id=item.pk)
    posted = request.POST.copy()
    for key in posted:  # no NUL in what is stored: no keyboard types one, and PostgreSQL stores none
        posted.setlist(key, [typed(value) for value in posted.getlist(key)])
    final = posted.get("action") == "final"
    cells = review(item, blinded=True).cells
    try:
        decided = read_decisions(cells, posted, final=final)
        save_curation(item, request.user, decided, final=final, note=posted.get("note", "").strip(), cells=len(cells))
    except CurationRefused as refused:
        messages.error(request, "Nothing was saved: fix the problems marked below.")
        return _page(request, study, item, researcher, posted=posted, errors=refused.errors, status=400)
    messages.success(request, f"Gold of item {item.position + 1} " + ("finalised." if final else "saved as a draft."))
    return redirect("annotator:item-review", slug=study.slug, item_id=item.pk)


@require_GET
@login_required
def queue(request: HttpRequest, slug: str) -> HttpResponse:
    """The items whose ratings disagree, with their adjudication so far."""
    study, researcher = curation_study(request, slug)
    rows = adjudication_queue(study)
    needing = [row for row in rows if row.disagreements]
    final = sum(1 for row in needing if row.curation and row.curation.status == Curation.Status.FINAL)
    context = {
        "study": study, "rows": rows, "needing": len(needing), "final": final, "researcher": researcher,
        "percent": round(100 * final / len(needing)) if needing else 0,
    }
    return render(request, "annotator/research/adjudication_queue.html", context)
