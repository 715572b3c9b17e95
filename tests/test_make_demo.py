"""``make demo`` run twice: the three demo commands change no row the second time, and each run
prints a participant link nobody has used yet."""

import re
from io import StringIO
from pathlib import Path

import pytest
from django.apps import apps
from django.core.management import call_command
from django.test import Client

from chat.models import Participant

# ``make demo``'s three commands run once per session on an empty database and laid for this module
# (tests/worlds.py); each test's changes roll back.
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("make_demo_world")]

DEMO_COMMANDS = ("load_demo", "load_demo_studies", "load_demo_chat")
LINK = re.compile(r"participant link\s+http://127\.0\.0\.1:8000(/s/demo-chat/\?\S+)")


def make_demo() -> str:
    """What ``make demo`` runs before serving, in its order; the output of all three commands."""
    out = StringIO()
    for command in DEMO_COMMANDS:
        call_command(command, "--base-url", "http://127.0.0.1:8000", stdout=out)
    return out.getvalue()


def every_row() -> dict[str, list[dict]]:
    """Every row of every table, by model, in primary-key order."""
    return {
        model._meta.label: list(model.objects.order_by("pk").values())
        for model in apps.get_models()
        if model._meta.label != "sessions.Session" and model._meta.managed  # Huey's dashboard has no table
    }


def test_running_make_demo_twice_changes_no_row():  # the world is the first run
    before = every_row()

    make_demo()

    after = every_row()
    changed = [label for label in before if before[label] != after[label]]
    assert changed == []


def test_each_run_prints_a_participant_link_that_opens_the_consent_page(make_demo_world):
    first_path = LINK.search(make_demo_world.output["load_demo_chat"]).group(1)  # the first run's
    first = Client()
    first.get(first_path, follow=True)  # someone takes the first link
    assert Participant.objects.count() == 1

    second_path = LINK.search(make_demo()).group(1)

    assert second_path != first_path
    response = Client().get(second_path, follow=True)
    assert response.status_code == 200
    assert response.redirect_chain[-1][0].endswith("/s/demo-chat/consent/")
    assert Participant.objects.count() == 2


def demo_recipe() -> list[str]:
    """The commands of the Makefile's demo target, in order."""
    makefile = (Path(__file__).resolve().parent.parent / "Makefile").read_text()
    recipe = re.search(r"^demo: migrate\n((?:\t.*\n)+)", makefile, re.MULTILINE).group(1)
    return [line.strip().lstrip("@") for line in re.sub(r"\\\n\s*", "", recipe).splitlines()]


def test_make_demo_prints_the_logins_last_before_the_server_and_keeps_migrations_quiet():
    recipe = demo_recipe()
    commands = [line.split()[2] for line in recipe if "manage.py" in line]
    assert commands == [*DEMO_COMMANDS, "demo_logins"]
    assert "--no-logins" in recipe[0]
    assert recipe[-1].startswith("$(BIN)/python -m config.serve") and "--access-log" in recipe[-1]
    logins = next(index for index, line in enumerate(recipe) if "demo_logins" in line)
    assert all("manage.py" not in line for line in recipe[logins + 1 :])
    makefile = (Path(__file__).resolve().parent.parent / "Makefile").read_text()
    assert "demo: MIGRATE_FLAGS = --verbosity 0" in makefile
