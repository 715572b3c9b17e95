"""The committed SHREC fixture (tests/fixtures/shrec/two_videos.csv), imported, builds every one of the eight tasks:
the fixture is what the offline end-to-end check (SH-A12) and the builders' tests stand on."""

from pathlib import Path

import pytest

from annotator.external_spans import shrec_study
from annotator.shrec_records import study_episode_records
from benchmark.shrec.builders import TASKS, BuildOptions, build_tasks
from tests.benchmark.import_checks import import_file
from tests.builders import default_team

pytestmark = pytest.mark.django_db

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "shrec" / "two_videos.csv"


@pytest.mark.parametrize(("distractors", "min_eligible", "mcq_from"), [
    ("disjoint", 4, "groups"), ("disjoint", 5, "groups"), ("not_identical", 4, "groups"), ("disjoint", 4, "agreed"),
])
def test_every_task_builds_items_from_the_imported_fixture(distractors, min_eligible, mcq_from):
    import_file(FIXTURE)
    episodes = study_episode_records(shrec_study(default_team(), "shrec-two-videos"))

    built = build_tasks(episodes, options=BuildOptions(seed=0, distractors=distractors, min_eligible=min_eligible,
                                                       mcq_from=mcq_from))

    assert [task for task in TASKS if not built.counts[task]] == [], built.skipped
    assert {item.source for item in built.items} == {"empathic", "wellness-dorm"}


def test_the_builders_read_the_first_two_annotators_and_their_spans_in_column_order():
    import_file(FIXTURE)
    episodes = study_episode_records(shrec_study(default_team(), "shrec-two-videos"))

    assert [episode.key for episode in episodes] == ["P01_s001", "P02_s003"]
    assert [len(annotator.spans) for annotator in episodes[0].annotators] == [6, 6, 3]
    assert [len(annotator.spans) for annotator in episodes[1].annotators] == [6, 6]
    assert episodes[0].agent_seat == 0


def test_the_fixture_pairs_as_its_notes_say():
    from benchmark.stats.spans import pair_spans

    import_file(FIXTURE)
    episodes = study_episode_records(shrec_study(default_team(), "shrec-two-videos"))

    shapes = []
    for episode in episodes:
        first, second = ([(span.start_s, span.end_s, span.label) for span in annotator.spans]
                         for annotator in episode.annotators[:2])
        groups = pair_spans(first, second, method="shrec")
        pairs = [(a, b) for a, b in groups if a is not None and b is not None]
        agreed = sum(first[a][2] == second[b][2] for a, b in pairs)
        shapes.append((len(pairs), agreed, len(groups) - len(pairs)))
    assert shapes == [(5, 5, 2), (6, 5, 0)]  # (pairs, agreed pairs, singletons) per video
