"""How soon the import page's dry run of a small file is done, on a task consumer that is already up.

Starts one consumer (``manage.py run_huey``, process workers, its own var directory, as ``make demo``
and ``make worker`` do), then uploads a file through the import page's view stack (Django's test
client, no network) ``--repeat`` times and times each from the upload's POST to the import job's row
saying the dry run is over (checked or refused). The first upload after the consumer starts is
printed apart: its worker imports the readers then. The page itself polls every second, so a person
sees the outcome at most a second after the figure printed here. The goal (issue 23) is under 2 s.

    .venv/bin/python perf/import_page.py [--file ../shared/data/sotopia/agent_profiles.json] [--repeat 10]
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/parley_bench_import .venv/bin/python perf/import_page.py

It uses a scratch database (a temporary SQLite file and SQLite queue by default, or the PostgreSQL
database DATABASE_URL names, whose queue is then PostgreSQL's too) and deletes the import jobs it made.
"""

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from perf.simulation import Consumer  # noqa: E402  (the consumer as its own process group)

DEFAULT_FILE = ROOT.parent / "shared" / "data" / "sotopia" / "agent_profiles.json"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--file", type=Path, default=DEFAULT_FILE, help="The file to dry-run (default: Sotopia's "
                        "agent profiles, 34 KB).")
    parser.add_argument("--repeat", type=int, default=10, help="Uploads after the first (default: 10).")
    parser.add_argument("--workers", type=int, default=2, help="Process workers of the consumer (default: 2).")
    args = parser.parse_args()

    scratch = Path(tempfile.mkdtemp(prefix="parley-bench-import-"))
    os.environ.setdefault("PARLEY_VAR_DIR", str(scratch))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("DEBUG", "true")
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    if "DATABASE_URL" not in os.environ:
        os.environ["DATABASE_URL"] = f"sqlite:///{scratch / 'parley.sqlite3'}"
    postgres = os.environ["DATABASE_URL"].startswith(("postgres://", "postgresql://"))
    os.environ["PARLEY_TASKS"] = "postgres" if postgres else "sqlite"
    os.environ["PARLEY_TASKS_NAME"] = "parley-bench-import"
    os.environ["PARLEY_TASKS_IMMEDIATE"] = "false"
    os.environ["PARLEY_SHARED_DIR"] = str(scratch / "shared")  # where the web side leaves uploads for the consumer
    if not postgres:
        os.environ["PARLEY_TASKS_FILE"] = str(scratch / "tasks.sqlite3")
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.core.management import call_command
    from django.db import connection
    from django.test import Client
    from django.urls import reverse

    from benchmark.jobs.queue import HUEY
    from benchmark.models import DEFAULT_TEAM_SLUG, ImportJob, Team

    call_command("migrate", verbosity=0)
    HUEY.flush()
    team = Team.objects.get(slug=DEFAULT_TEAM_SLUG)
    user, _ = get_user_model().objects.get_or_create(username="bench-import", defaults={"is_superuser": True,
                                                                                         "is_staff": True})
    client = Client(HTTP_HOST="127.0.0.1")  # an allowed host of the development settings
    client.force_login(user)
    content = args.file.read_bytes()
    consumer = Consumer(1, dict(os.environ), args.workers, periodic=False, core=None)
    made: list[int] = []
    try:
        consumer.wait_ready()
        print(f"database: {connection.vendor}; queue: {os.environ['PARLEY_TASKS']}; {os.cpu_count()} cores, "
              f"load {os.getloadavg()[0]:.1f}; file {args.file.name} ({len(content) / 1024:.0f} KB)")

        def dry_run() -> float:
            upload = SimpleUploadedFile(args.file.name, content)
            started = time.perf_counter()
            response = client.post(reverse("benchmark:import"), {"team": team.pk, "files": [upload], "format": "auto"})
            if response.status_code != 302:
                raise SystemExit(f"the upload was refused ({response.status_code}):\n{response.content[:2000]!r}")
            job_id = int(response.url.rstrip("/").rsplit("/", 1)[-1])
            made.append(job_id)
            deadline = started + 120
            while True:
                job = ImportJob.objects.get(pk=job_id)
                if not job.working:
                    break
                if time.perf_counter() > deadline:
                    log = consumer.log.read_text()
                    raise SystemExit(f"the dry run of job {job_id} did not end within 120 s:\n{log}")
                time.sleep(0.01)
            if job.status != ImportJob.Status.CHECKED:
                raise SystemExit(f"the dry run ended {job.get_status_display()}: {job.error}")
            return time.perf_counter() - started

        first = dry_run()
        times = [dry_run() for _ in range(args.repeat)]
        print(f"dry run, first upload after the consumer started: {first:.2f} s")
        print(f"dry run, next {len(times)} uploads: median {statistics.median(times):.2f} s "
              f"[{min(times):.2f}–{max(times):.2f}] (goal < 2 s: {'met' if max(times) < 2 else 'missed'})")
    finally:
        consumer.stop()
        ImportJob.objects.filter(pk__in=made).delete()
        HUEY.flush()


if __name__ == "__main__":
    main()
