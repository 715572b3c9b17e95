"""Finding the study a research command names by ``--study ID_OR_SLUG``, within the command's team."""

from django.core.management.base import CommandError

from benchmark.models import Team

from ..models import Study


def find_study(reference: str, team: Team) -> Study:
    """The team's study with this id or slug; another team's study is not found, as if it did not exist."""
    studies = Study.objects.of_team(team)
    study = None
    if reference.isdigit():
        study = studies.filter(pk=int(reference)).first()
    study = study or studies.filter(slug=reference).first()
    if study is None:
        raise CommandError(f"--study {reference!r}: the team {team.slug!r} has no study with this id or slug")
    return study
