"""``make demo`` run twice: the three demo commands change no row the second time, and each run
prints a participant link nobody has used yet."""

import re
from io import StringIO
from pathlib import Path

import pytest
from django.apps import apps
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client

from chat.models import Participant

pytestmark = pytest.mark.django_db

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
        if model._meta.label != "sessions.Session"
    }


def test_running_make_demo_twice_changes_no_row():
    make_demo()
    before = every_row()

    make_demo()

    after = every_row()
    changed = [label for label in before if before[label] != after[label]]
    assert changed == []


def test_each_run_prints_a_participant_link_that_opens_the_consent_page():
    first_path = LINK.search(make_demo()).group(1)
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


def test_demo_logins_gives_every_demo_account_a_new_password_and_a_working_link():
    out = StringIO()
    call_command("load_demo", "--skip-accounts", stdout=StringIO())  # episodes only
    call_command("demo_logins", "--base-url", "http://127.0.0.1:8000", stdout=out)
    first = out.getvalue()
    out = StringIO()
    call_command("demo_logins", "--base-url", "http://127.0.0.1:8000", stdout=out)
    second = out.getvalue()

    passwords = re.findall(r"password (\S+)", first)
    assert len(passwords) == 5 and set(passwords).isdisjoint(re.findall(r"password (\S+)", second))
    User = get_user_model()
    admin = User.objects.get(username="admin")
    assert admin.is_superuser and admin.is_staff and not admin.team_memberships.exists()
    assert "then http://127.0.0.1:8000/admin/" in second
    assert admin.check_password(re.search(r"admin\s+superuser\s+password (\S+)", second)[1])
    researcher = re.search(r"researcher\s+researchers\s+password \S+\n\s+http://127\.0\.0\.1:8000(/login/\S+)", second)
    client = Client()
    client.get(researcher[1])
    assert int(client.session["_auth_user_id"]) == User.objects.get(username="researcher").pk


def test_load_demo_no_logins_creates_the_accounts_without_printing_them():
    out = StringIO()
    call_command("load_demo", "--no-logins", stdout=out)
    assert "/login/" not in out.getvalue() and "password" not in out.getvalue()
    assert get_user_model().objects.filter(username__in=["researcher", "annotator1"]).count() == 2
