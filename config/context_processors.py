"""Template context every page needs: what the navigation may offer this user."""

from django.http import HttpRequest

from benchmark.permissions import is_researcher


def roles(request: HttpRequest) -> dict[str, bool]:
    """``is_researcher``: staff or a member of the researchers group (see benchmark.permissions).

    An error page can be rendered for a request that a middleware refused before the user was
    attached (a bad Host header is answered with 400 by CommonMiddleware): no user, no researcher.
    """
    user = getattr(request, "user", None)
    return {"is_researcher": user is not None and is_researcher(user)}
