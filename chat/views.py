from django.contrib.admin.views.decorators import staff_member_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from benchmark.models import Scenario


@require_GET
@staff_member_required
def index(request: HttpRequest) -> HttpResponse:
    """The researchers' chat-studies page; the participant flow itself comes with the chat app."""
    return render(request, "chat/index.html", {"scenario_count": Scenario.objects.count()})
