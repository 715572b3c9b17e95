"""Template context every page needs: what the navigation may offer this user."""

from django.http import HttpRequest

from benchmark.permissions import is_researcher


def roles(request: HttpRequest) -> dict[str, bool]:
    """``is_researcher``: staff or a member of the researchers group (see benchmark.permissions)."""
    return {"is_researcher": is_researcher(request.user)}
