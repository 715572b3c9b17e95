from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import get_user_model, login
from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.forms import PasswordResetForm
from django.contrib.auth.views import LoginView, PasswordResetView
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.encoding import force_str
from django.utils.http import urlsafe_base64_decode
from django.views.decorators.http import require_GET

from benchmark.login_links import login_link_tokens
from benchmark.models import Barrier, Episode, Scenario
from benchmark.permissions import is_researcher
from benchmark.throttle import allowance


def landing_page(user: AbstractBaseUser) -> str:
    """Where a log-in without a ``next`` page lands: where this user's work is.

    Superusers run the site (the admin); researchers their studies; everyone else (annotators, and
    accounts not yet in any study) the annotator's list of studies, never the home page's overview.
    """
    if user.is_superuser:
        return reverse("admin:index")
    if is_researcher(user):
        return reverse("annotator:study-list")
    return reverse("annotator:index")


class ParleyLoginView(LoginView):
    """Django's login, landing on ``landing_page`` when the form names no page to go back to."""

    def get_default_redirect_url(self) -> str:
        return landing_page(self.request.user)


class ParleyPasswordResetView(PasswordResetView):
    """Django's password reset, with at most ``PARLEY_PASSWORD_RESET_RATE`` mails asked for per address.

    The page says the same whether or not an account has that address (Django's own rule), so it
    tells nobody who has an account; the limit keeps it from mailing someone a hundred times.
    """

    def form_valid(self, form: PasswordResetForm) -> HttpResponse:
        allowed = allowance(self.request, "password-reset", settings.PARLEY_PASSWORD_RESET_RATE, spend=True)
        if not allowed:
            form.add_error(None, "Too many password resets were asked for from your address; try again later.")
            response = self.form_invalid(form)
            response.status_code = 429
            response["Retry-After"] = str(allowed.retry_after)
            return response
        return super().form_valid(form)


@require_GET
def home(request: HttpRequest) -> HttpResponse:
    user = request.user
    counts = None
    if is_researcher(user):  # what the researcher's teams hold, and the shared barriers
        counts = {
            "scenarios": Scenario.objects.owned_by(user).count(),
            "episodes": Episode.objects.owned_by(user).count(),
            "barriers": Barrier.objects.owned_by(user).count(),
        }
    return render(request, "home.html", {"counts": counts})


@require_GET
def login_by_link(request: HttpRequest, uidb64: str, token: str) -> HttpResponse:
    """Log in with a one-use link; a used, expired or forged link sends the user to the login form."""
    User = get_user_model()
    try:
        user = User.objects.get(pk=force_str(urlsafe_base64_decode(uidb64)), is_active=True)
    except (ValueError, User.DoesNotExist):
        user = None
    # The token is spent by moving ``last_login`` from the value it was made with, in one conditional
    # UPDATE: of several requests racing with one link, only the first finds the old value.
    if (
        user is None
        or not login_link_tokens.check_token(user, token)
        or not User.objects.filter(pk=user.pk, last_login=user.last_login).update(last_login=timezone.now())
    ):
        messages.error(request, "This login link is used, expired or wrong. Log in with your password.")
        return redirect("login")
    login(request, user, backend="django.contrib.auth.backends.ModelBackend")
    return redirect(landing_page(user))


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
