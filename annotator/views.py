from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET


@require_GET
@login_required
def index(request: HttpRequest) -> HttpResponse:
    """The annotator's landing page. Studies and assignments arrive with the annotation app."""
    return render(request, "annotator/index.html")
