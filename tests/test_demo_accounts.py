"""The demo's accounts: ``load_demo`` makes them and prints their links unless told not to, and
``demo_logins`` (``make demo``'s last step) gives each a new password and link and makes the superuser.

These start from the demo's episodes without accounts (``load_demo --skip-accounts``), built once per
session and laid for this module (tests/worlds.py); each test's changes roll back.
"""

import re
from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("demo_episodes_world")]


def test_load_demo_logs_in_a_demo_account_by_its_link(client, demo_episodes_world):
    output = demo_episodes_world.output["load_demo"]  # its run with --skip-accounts
    assert "0 accounts" in output and not User.objects.filter(external_annotator=None).exists()  # SHREC's annotators
    output = StringIO()
    call_command("load_demo", stdout=output)
    path = re.search(r"http://127\.0\.0\.1:8000(/login/\S+)", output.getvalue()).group(1)
    response = client.get(path)
    assert response.status_code in (200, 302)
    assert int(client.session["_auth_user_id"]) == User.objects.get(username="researcher").pk


def test_demo_logins_gives_every_demo_account_a_new_password_and_a_working_link():
    out = StringIO()
    call_command("demo_logins", "--base-url", "http://127.0.0.1:8000", stdout=out)  # over the episodes only
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
    assert not get_user_model().objects.filter(external_annotator=None).exists()  # only the SHREC file's annotators
    out = StringIO()
    call_command("load_demo", "--no-logins", stdout=out)
    assert "/login/" not in out.getvalue() and "password" not in out.getvalue()
    assert get_user_model().objects.filter(username__in=["researcher", "annotator1"]).count() == 2
