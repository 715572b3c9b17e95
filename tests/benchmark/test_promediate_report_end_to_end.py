"""PM-A12's report part: simulate offline, evaluate with the scripted judges, then ``benchmark_report --analysis
promediate`` shows Table 1 with (competing, Social) filled, n = 2, and NoAgent and Generic marked missing."""

import io
import json

import pytest
from django.core.management import call_command

from tests.benchmark.negotiation_data import competing, make_negotiation
from tests.builders import default_team

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)


@pytest.fixture(autouse=True)
def no_configured_models(settings):
    settings.PARLEY_MODELS = {"agent": "", "partner": "", "judge": "", "neutralizer": ""}


def command(name: str, *args: str) -> str:
    out = io.StringIO()
    call_command(name, *args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


def test_simulated_and_scripted_negotiations_fill_the_social_column_only():
    competing()
    make_negotiation("promediate-case", turn_cap=24)
    command(
        "simulate",
        "--preset",
        "promediate",
        "--scenarios",
        "promediate-case",
        "--conditions",
        "promediate-competing",
        "--mediator",
        "social",
        "--runs",
        "2",
        "--seed",
        "7",
        "--model",
        "scripted",
        "--run-name",
        "pm-a12",
    )
    command("evaluate", "--promediate", "--tag", "pm-a12")

    text = command(
        "benchmark_report",
        "--analysis",
        "promediate",
        "--team",
        default_team().slug,
        "--tag",
        "pm-a12",
        "--bootstrap",
        "50",
    )
    report = json.loads(
        command(
            "benchmark_report",
            "--analysis",
            "promediate",
            "--team",
            default_team().slug,
            "--tag",
            "pm-a12",
            "--format",
            "json",
            "--bootstrap",
            "0",
        )
    )

    cells = report["table1"]["cells"]
    assert report["table1"]["modes"] == ["competing"]
    assert report["counts"]["episodes"] == 2
    assert cells["consensus_change"]["competing"]["social"]["n"] == 2
    assert cells["intervention_frequency"]["competing"]["social"]["n"] == 2
    for condition in ("none", "generic"):
        assert cells["consensus_change"]["competing"][condition]["missing"] is True
    cc = next(line for line in text.splitlines() if line.startswith("CC (%)"))
    assert cc.count("missing") == 2 and "n=2" in cc
    assert report["counts"]["judges"][0].startswith("scripted")
