"""SocialVeil's Table 2 (GPT-4o-mini rows) from the paper's own public run, through the documented commands.

The run is ../shared/realdata/socialveil/runs/exp_gpt4o-mini_episode_all_neutralized (180 scenarios
under four conditions, the judge's scores beside each log); the scenarios come from the four files the
run read. The figures are Table 2 of the paper (../shared/seeds/000_*.txt): BEL, REL, KNO, GOAL, Conf,
Mutu for the base, semantic, sociocultural and emotional conditions, Sotopia-All then Sotopia-Hard.

The paper prints two decimals, mostly cut rather than rounded (1.9167 is printed 1.91, 2.5357 is
2.53). Seven of the 48 figures are the rounded mean instead (8.7778 is printed 8.78), and no single
rule of printing gives all 48 from this run's means: base Hard REL 71/28 = 2.5357 is printed 2.53
(cut), semantic Hard REL 45/28 = 1.6071 is printed 1.61 (rounded), and no integer sum over 28 scores
gives a mean that both rules print the same. So the test asserts the 41 cut figures exactly, and
for the seven others that the paper's figure is the mean rounded, naming them.

The import runs once for the module, inside a transaction rolled back at the end; the report runs with
--bootstrap 0, as the means do not depend on the resamples (about 25 s of CPU in all).
"""

import io
import json
import math
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.core.management import call_command
from django.db import transaction

from benchmark.models import Episode, Scenario

SHARED = Path(__file__).resolve().parents[2].parent / "shared"
SOCIALVEIL = SHARED / "realdata" / "socialveil"
FILES = [
    SOCIALVEIL / "episode_all_neutralized.jsonl",  # the baseline's file
    SHARED / "data" / "socialveil" / "episodes_all_semantic.json",
    SOCIALVEIL / "episodes_all_cultural.json",
    SOCIALVEIL / "episodes_all_emotional.json",
    SOCIALVEIL / "runs" / "exp_gpt4o-mini_episode_all_neutralized",
]
pytestmark = pytest.mark.django_db

MODEL = "gpt-4o-mini"
DIMENSIONS = ["believability", "relationship", "knowledge", "goal", "unresolved_confusion", "mutual_understanding"]
CONDITIONS = ["none", "semantic", "sociocultural", "emotional"]
# Table 2, GPT-4o-m rows: Sotopia-All BEL REL KNO GOAL Conf Mutu, then Sotopia-Hard the same.
TABLE_2 = {
    "none": "8.78 3.41 3.94 7.60 4.08 4.56 8.82 2.53 2.78 6.75 3.75 4.46",
    "semantic": "7.58 1.91 2.89 5.61 1.48 1.76 7.32 1.61 2.71 5.46 1.57 1.78",
    "sociocultural": "7.70 1.95 2.92 5.35 1.78 2.41 7.61 1.64 2.96 5.32 1.75 2.28",
    "emotional": "7.76 1.61 2.97 5.25 1.51 2.03 7.42 1.03 2.93 4.96 1.46 1.89",
}
# The seven figures the paper rounds instead of cutting: (split, condition, dimension) -> this run's mean.
ROUNDED = {
    ("all", "none", "believability"): 1580 / 180,
    ("all", "semantic", "knowledge"): 520 / 180,
    ("hard", "semantic", "relationship"): 45 / 28,
    ("all", "sociocultural", "mutual_understanding"): 433 / 180,
    ("hard", "sociocultural", "believability"): 213 / 28,
    ("all", "emotional", "relationship"): 289 / 180,
    ("hard", "emotional", "knowledge"): 82 / 28,
}
CELLS = [
    (split, condition, dimension, float(TABLE_2[condition].split()[6 * column + index]))
    for column, split in enumerate(("all", "hard"))
    for condition in CONDITIONS
    for index, dimension in enumerate(DIMENSIONS)
]


def cut(value: float) -> float:
    """Two decimals, cut as the paper prints (a hair of tolerance for binary fractions such as 7.6)."""
    return math.floor(value * 100 + 1e-9) / 100


def report(*options: str) -> dict:
    out = io.StringIO()
    call_command("benchmark_report", "--source", "imported", "--format", "json", "--bootstrap", "0", *options,
                 stdout=out, stderr=io.StringIO())
    return json.loads(out.getvalue())


@pytest.fixture(scope="module")
def imported(django_db_setup, django_db_blocker) -> Iterator[dict]:
    """The documented commands, once: the four scenario files and the run, then the report."""
    with django_db_blocker.unblock(), transaction.atomic():
        call_command("import_episodes", *map(str, FILES), stdout=io.StringIO())
        yield report()
        transaction.set_rollback(True)


@pytest.fixture
def db_access(imported, django_db_blocker) -> Iterator[None]:
    with django_db_blocker.unblock():
        yield


def mean(found: dict, split: str, condition: str, dimension: str) -> float:
    table = found["means"] if split == "all" else found["means_by_difficulty"][split]
    return table[MODEL][condition][dimension]["mean"]


@pytest.mark.parametrize(("split", "condition", "dimension", "published"), CELLS,
                         ids=[f"{s}-{c}-{d}" for s, c, d, _ in CELLS])
def test_every_gpt_4o_mini_mean_of_table_2(imported, split, condition, dimension, published):
    value = mean(imported, split, condition, dimension)
    if (split, condition, dimension) in ROUNDED:
        assert value == pytest.approx(ROUNDED[(split, condition, dimension)])
        assert round(value, 2) == published and cut(value) == pytest.approx(published - 0.01)
    else:
        assert cut(value) == published


def test_each_cell_counts_the_partner_of_all_180_scenarios_and_the_28_hard_ones(imported):
    assert imported["models"] == [MODEL]
    for condition in CONDITIONS:
        assert imported["means"][MODEL][condition]["goal"]["n"] == 180
        assert imported["means_by_difficulty"]["hard"][MODEL][condition]["goal"]["n"] == 28
    assert imported["counts"]["episodes"] == 720
    assert imported["counts"]["scenarios"] == 180  # the two identical scenarios each keep their episodes


def test_the_difficulty_filter_gives_the_hard_column(imported, db_access):
    hard = report("--difficulty", "hard")

    assert hard["means"] == imported["means_by_difficulty"]["hard"]
    assert hard["counts"]["scenarios"] == 28


def test_the_scenarios_filter_reports_the_scenarios_named(imported, db_access):
    found = report("--scenarios", "01H9KCPR1R7AK1CD4N7A0MPNYY,01H9HH1S3BQMETK25N54X8X275")

    assert found["counts"]["scenarios"] == 2 and found["counts"]["episodes"] == 8


def test_identical_scenarios_get_the_logs_of_their_run_folders_in_order(imported, db_access):
    folders = {
        external_id: sorted(Episode.objects.filter(scenario__external_id=external_id).values_list(
            "settings__socialveil__run_folder", flat=True))
        for external_id in ("01H9F2KC013F5MWANBXH5W0AB9", "01H88DXBK9EVSMG21SA8WFFRVZ")
    }

    assert folders == {
        "01H9F2KC013F5MWANBXH5W0AB9": [f"mode_{mode}/scenario_19" for mode in
                                       ("baseline", "cultural", "emotional", "semantic")],
        "01H88DXBK9EVSMG21SA8WFFRVZ": [f"mode_{mode}/scenario_20" for mode in
                                       ("baseline", "cultural", "emotional", "semantic")],
    }


def test_the_hard_scenarios_are_sotopias_hard_environments(imported, db_access):
    hard_environments = set(json.loads((SOCIALVEIL / "sotopia_hard_envs.json").read_text()))
    records = [json.loads(line) for line in (SOCIALVEIL / "episode_all_neutralized.jsonl").read_text().splitlines()]
    expected = {record["episode_id"] for record in records if record["environment_id"] in hard_environments}

    assert set(Scenario.objects.filter(difficulty="hard").values_list("external_id", flat=True)) == expected
    assert len(expected) == 28
