"""How fast the annotation hot paths are: claiming an item, opening it, autosaving, submitting.

Builds a SocialVeil study over the demo episodes repeated into N items (k = 3) with 30
annotators, then, through Django's test client (the full middleware and view stack, no network),
has annotators claim, open, autosave, autosave again with one answer changed (what a draft's
later saves are) and submit items, and prints the median and 95th percentile of each step.

    .venv/bin/python perf/annotation.py [--items 1000] [--rounds 150]
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/parley_bench .venv/bin/python perf/annotation.py

It uses a scratch database: a temporary SQLite file by default; with DATABASE_URL, the studies,
episodes, scenarios and characters in that database are deleted first and last.
"""

import argparse
import io
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=1000, help="Items in the study.")
    parser.add_argument("--rounds", type=int, default=150, help="Claim-open-autosave-submit rounds to time.")
    args = parser.parse_args()

    os.environ.setdefault("PARLEY_VAR_DIR", tempfile.mkdtemp(prefix="parley-bench-"))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("DEBUG", "true")  # development settings, as the published figures were measured
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.db import connection
    from django.test import Client
    from django.test.utils import setup_test_environment

    from annotator.models import Membership, Study, StudyItem
    from benchmark.instruments.presets import install_preset
    from benchmark.models import DEFAULT_TEAM_SLUG, Character, Episode, Respondent, Scenario, Team

    setup_test_environment()
    settings.ALLOWED_HOSTS = ["testserver"]
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

    def empty() -> None:
        Study.objects.all().delete()
        Episode.objects.all().delete()
        Scenario.objects.filter(template__isnull=False).delete()  # a template is protected while it has casts
        Scenario.objects.all().delete()
        Character.objects.all().delete()
        # A person's respondent row outlives their answers (it is protected, like the research data it names).
        Respondent.objects.filter(user__username__startswith="bench-").delete()
        get_user_model().objects.filter(username__startswith="bench-").delete()

    call_command("migrate", verbosity=0)
    empty()
    call_command("load_demo", "--skip-accounts", stdout=io.StringIO())
    episodes = list(Episode.objects.order_by("pk"))
    team = Team.objects.get(slug=DEFAULT_TEAM_SLUG)
    study = Study.objects.create(
        team=team, title="Benchmark", slug="benchmark", instrument=install_preset("socialveil"), instructions="Rate.",
        overlap=3,
    )
    # One episode may appear once per study, so larger studies reuse episodes through copies.
    while len(episodes) < args.items:
        source = episodes[len(episodes) % 48]
        seats = list(source.seats.all())
        turns = list(source.turns.all())
        copy = Episode.objects.create(
            team=team, scenario=source.scenario, barrier=source.barrier, source=source.source, status=source.status
        )
        new_seats = {}
        for seat in seats:
            old = seat.pk
            seat.pk, seat.episode = None, copy
            seat.save()
            new_seats[old] = seat
        for turn in turns:
            turn.pk, turn.episode, turn.seat = None, copy, new_seats[turn.seat_id]
        type(turns[0]).objects.bulk_create(turns)
        episodes.append(copy)
    StudyItem.objects.bulk_create(
        StudyItem(study=study, episode=episode, position=number)
        for number, episode in enumerate(episodes[: args.items])
    )
    users = [get_user_model().objects.create_user(f"bench-{number}", password="bench-password") for number in range(30)]
    for user in users:
        Membership.objects.create(study=study, annotator=user, instructions_read_at=django.utils.timezone.now())
    clients = []
    for user in users:
        client = Client()
        client.force_login(user)
        clients.append(client)

    timings: dict[str, list[float]] = {"claim": [], "open item": [], "autosave": [], "autosave again": [], "submit": []}
    answers = {
        "answer-barrier_type": "semantic",
        "answer-unresolved_confusion": "3",
        "answer-mutual_understanding": "4",
    }

    def revision(response) -> str:  # noqa: ANN001
        return response.content.decode().split('name="revision" id="revision" value="')[1].split('"')[0]

    def timed(step: str, method, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        started = time.perf_counter()
        response = method(*args, **kwargs)
        timings[step].append((time.perf_counter() - started) * 1000)
        return response

    for number in range(args.rounds):
        client = clients[number % len(clients)]
        response = timed("claim", client.get, f"/annotate/s/{study.slug}/next/")
        if response.status_code != 302 or "/annotate/a/" not in response["Location"]:
            break
        item_url = response["Location"]
        timed("open item", client.get, item_url)
        response = timed("autosave", client.post, item_url + "draft/", {**answers, "revision": 0, "seconds": 40})
        assert response.status_code == 200, response.content[:300]
        changed = {**answers, "answer-unresolved_confusion": "2"}
        again = {**changed, "revision": revision(response), "seconds": 20}
        response = timed("autosave again", client.post, item_url + "draft/", again)
        assert response.status_code == 200, response.content[:300]
        response = timed("submit", client.post, item_url + "submit/", {**changed, "revision": revision(response)})
        assert response.status_code == 302, response.content[:300]

    print(
        f"database: {connection.vendor}; study of {args.items} items, k = 3, 30 annotators, "
        f"{len(timings['submit'])} rounds through the full view stack"
    )
    for step, values in timings.items():
        values.sort()
        p95 = values[min(len(values) - 1, int(0.95 * len(values)))]
        print(f"{step:14s} median {statistics.median(values):6.1f} ms   p95 {p95:6.1f} ms")
    empty()


if __name__ == "__main__":
    main()
