"""Pages annotators work in: their studies, a study's instructions, the item page, drafts and submits."""

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET


@require_GET
@login_required
def index(request: HttpRequest) -> HttpResponse:
    return render(request, "annotator/index.html")


def _todo(request: HttpRequest, *args: object, **kwargs: object) -> HttpResponse:
    raise NotImplementedError


instructions = next_item = item = save_draft = submit = edit = _todo
