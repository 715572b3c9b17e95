from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import get_user_model, login
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.encoding import force_str
from django.utils.http import urlsafe_base64_decode
from django.views.decorators.http import require_GET

from benchmark.login_links import login_link_tokens
from benchmark.models import Barrier, Episode, Scenario


@require_GET
def home(request: HttpRequest) -> HttpResponse:
    user = request.user  # counts of what this visitor may see: their teams' data and the shared barriers
    context = {
        "counts": {
            "scenarios": Scenario.objects.owned_by(user).count(),
            "episodes": Episode.objects.owned_by(user).count(),
            "barriers": Barrier.objects.owned_by(user).count(),
        },
    }
    return render(request, "home.html", context)


@require_GET
def login_by_link(request: HttpRequest, uidb64: str, token: str) -> HttpResponse:
    """Log in with a one-use link; a used, expired or forged link sends the user to the login form."""
    User = get_user_model()
    try:
        user = User.objects.get(pk=force_str(urlsafe_base64_decode(uidb64)), is_active=True)
    except (ValueError, User.DoesNotExist):
        user = None
    if user is None or not login_link_tokens.check_token(user, token):
        messages.error(request, "This login link is used, expired or wrong. Log in with your password.")
        return redirect("login")
    login(request, user, backend="django.contrib.auth.backends.ModelBackend")
    return redirect("home")


def locked_out(request: HttpRequest, *args: Any) -> HttpResponse:
    """The page django-axes shows (AXES_LOCKOUT_CALLABLE) instead of a login once the limit is reached.

    Status 429: the client should wait. axes passes the login's response and credentials too
    (in an order that depends on sync or async serving); the page needs neither.
    """
    cooloff = settings.AXES_COOLOFF_TIME
    address = getattr(request, "parley_address_locked_out", False)  # config.login_throttle
    context = {
        "address": address,
        "failure_limit": settings.LOGIN_ADDRESS_FAILURE_LIMIT if address else settings.AXES_FAILURE_LIMIT,
        "cooloff_minutes": round(cooloff.total_seconds() / 60) if cooloff else None,
    }
    return render(request, "registration/locked_out.html", context, status=429)
