"""Who answers: the one ``Respondent`` row of a person in a role.

A person has one respondent row per kind (an annotator who is also a participant has two), so
every answer they give in that role points at the same row and reports can group by it.
"""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser

from benchmark.models import Respondent


def respondent_for(user: AbstractBaseUser, kind: str) -> Respondent:
    """The respondent row of ``user`` answering as ``kind`` (annotator or participant), made on first use.

    Safe when two requests of the same person make it at once: the loser reads the winner's row.
    """
    if kind not in (Respondent.Kind.ANNOTATOR, Respondent.Kind.PARTICIPANT):
        raise ValueError(f"a person answers as an annotator or a participant, not as {kind!r}")
    respondent, _ = Respondent.objects.get_or_create(kind=kind, user=user)
    return respondent
