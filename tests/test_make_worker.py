"""``make worker`` starts a task consumer; ``PERIODIC=0`` leaves the periodic upkeep to another one."""

import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize(("periodic", "command"), [
    ("", "manage.py run_huey"),
    ("PERIODIC=0", "manage.py run_huey --no-periodic"),
    ("PERIODIC=1", "manage.py run_huey"),
])
def test_make_worker_starts_a_consumer_with_periodic_tasks_unless_told(periodic, command):
    arguments = ["make", "-n", "-o", ".venv/.installed", "worker", *([periodic] if periodic else [])]
    printed = subprocess.run(arguments, cwd=ROOT, capture_output=True, text=True, check=True).stdout.splitlines()

    assert [line[line.index("manage.py"):].rstrip() for line in printed if "manage.py" in line] == [command]
