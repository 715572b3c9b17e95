"""The shared worlds (tests/worlds.py) lay exactly what their build left: new rows, changed rows and
deleted rows, with the same primary keys, and the id sequences past them."""

import pytest
from django.db import transaction

from benchmark.models import Team
from tests.builders import default_team, make_team, make_user
from tests.worlds import World, difference, lay, snapshot

pytestmark = pytest.mark.django_db


def test_laying_a_world_gives_back_every_row_its_build_added_changed_or_deleted():
    default_team()
    doomed = make_team(name="Doomed", slug="doomed")
    before = snapshot()
    with transaction.atomic():
        make_user(staff=True)  # a user, a membership of the default team
        make_team(name="Added", slug="added")
        Team.objects.filter(slug=default_team().slug).update(name="Renamed by the build")
        doomed.delete()
        after = snapshot()
        rows, gone = difference(before, after)
        transaction.set_rollback(True)
    assert snapshot() == before and rows and gone

    lay(World("test", rows, {}, gone))

    assert snapshot() == after
    assert Team.objects.get(slug=default_team().slug).name == "Renamed by the build"
    assert not Team.objects.filter(slug="doomed").exists()
    make_team(name="After", slug="after")  # the sequences are past the laid rows
