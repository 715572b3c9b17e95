"""Every file researchers brought in ../shared/data imports, with the counts it must give.

Each file is imported into an empty team after the files it needs (``NEEDS``: the profiles a log
or a casting names, the episodes a scores file scores); the counts are those of the file itself.
A file added to the folder without a line here fails ``test_every_file_is_listed``.
"""

from pathlib import Path

import pytest

from tests.benchmark.import_checks import import_file, row_counts
from tests.builders import default_team

pytestmark = pytest.mark.django_db

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"

PROFILES = ("sotopia/serialized_agent_profiles.jsonl", "sotopia/serialized_environment_profiles.jsonl")
HUMAN_EVAL = (
    "sotopia/human_eval_01H7VM65KGGY7842XGE5A7PEK1.json",
    "sotopia/sotopia_humaneval_context2_variant_01H87HF7X0SZS9Y5PJ2QER6H55.json",
)

# file -> (files imported before it, what importing it must create, add to and leave unchanged)
EXPECTED: dict[str, tuple[tuple[str, ...], dict[str, dict[str, int]]]] = {
    # the topics and a barrier prompt per conflict mode; config is kept in the scenario's settings
    "promediate/francis.json": ((), {"created": {"character": 6, "scenario": 1, "topic": 4, "barrier prompt": 6}}),
    "promediate/hmo.json": ((), {"created": {"character": 4, "scenario": 1, "topic": 5, "barrier prompt": 6}}),
    "socialveil/episode_hard.jsonl": ((), {
        "created": {"character": 27, "scenario": 28},
        "ignored": {"environment_id": 28, "agent1_profile": 28, "agent2_profile": 28},
    }),
    # the trait note on agent 1's one-sentence profile is kept (with the barrier prompt), agent 2's sentence is not
    "socialveil/episodes_all_semantic.json": ((), {
        "created": {"character": 38, "scenario": 180, "barrier prompt": 180},
        "ignored": {"environment_id": 180, "agent2_profile": 180},
    }),
    "sotopia/agent_profiles.json": ((), {"created": {"character": 40}}),
    "sotopia/environment_profiles.json": ((), {
        "created": {"scenario": 20}, "ignored": {"age_constraint": 20, "occupation_constraint": 4},
    }),
    "sotopia/episodelog_native_01J0GZWDV6HMKQK4B3PTEZW5V8.json": ((), {
        "created": {"character": 2, "scenario": 1, "episode": 1, "turn": 12, "answer": 14},
        "ignored": {"rewards_prompt": 1},
    }),
    "sotopia/human_eval_01H7VM65KGGY7842XGE5A7PEK1.json": ((), {
        "created": {"character": 2, "scenario": 1, "episode": 1, "turn": 8},
    }),
    "sotopia/human_eval_01HMN74FB8HVPT727QCV3SB27E.json": ((), {
        "created": {"character": 2, "scenario": 1, "episode": 1, "turn": 17},
    }),
    "sotopia/relationship_profiles.json": ((), {"created": {}, "checked": {"relationship": 20}}),
    "sotopia/serialized_agent_profiles.jsonl": ((), {"created": {"character": 40}}),
    "sotopia/serialized_environment_profiles.jsonl": ((), {
        "created": {"scenario": 90}, "ignored": {"age_constraint": 90, "occupation_constraint": 1},
    }),
    "sotopia/serialized_relationship_profiles.jsonl": ((), {"created": {}, "checked": {"relationship": 120}}),
    "sotopia/sotopia_env_agent_combos_450.jsonl": (PROFILES, {
        "created": {"cast": 450}, "unchanged": {"character": 40, "scenario": 90},
    }),
    "sotopia/sotopia_episodes_v1_first5.jsonl": (PROFILES, {
        "created": {"episode": 5, "turn": 56, "answer": 70},
        "unchanged": {"character": 8, "scenario": 5},
        "ignored": {"raw_rewards_prompt": 5},
    }),
    "sotopia/sotopia_humaneval_agents_variant_01H7ZEPYE09RAC869ZJX93BA2Z.json": ((), {
        "created": {"character": 2, "scenario": 1, "episode": 1, "turn": 10},
    }),
    "sotopia/sotopia_humaneval_context2_variant_01H87HF7X0SZS9Y5PJ2QER6H55.json": ((), {
        "created": {"character": 2, "scenario": 1, "episode": 1, "turn": 4}, "ignored": {"context2": 1},
    }),
    # turn 5 is "[non-verbal communication] " with nothing after it: a silent gesture, still a turn
    "sotopia/sotopia_humaneval_empty_nonverbal_01HP5MDHPWQJX965B3VT5A6934.json": ((), {
        "created": {"character": 2, "scenario": 1, "episode": 1, "turn": 15},
    }),
    # 2 of the 140 scored episodes are in the folder: 2 seats x 7 dimensions each; the rest are listed
    "sotopia/sotopia_humaneval_gpt4_scores_140.json": (HUMAN_EVAL, {
        "created": {"answer": 28}, "changed": {"episode": 2},
    }),
    # the prompt holds 14 "Turn #" lines; 7 are a transcript a model replayed inside its utterance
    "sotopia/sotopia_humaneval_turn_header_inside_utterance_01HNBCQQRFA7332019G6ABD7Y6.json": ((), {
        "created": {"character": 2, "scenario": 1, "episode": 1, "turn": 7},
    }),
    # 30 environments, 27 people by name; 2 seats x 7 dimensions of scores per episode
    "sotopia/sotopia_v1_transcript_only_30.jsonl": ((), {
        "created": {"character": 27, "scenario": 30, "episode": 30, "turn": 282, "answer": 420},
    }),
}


def test_every_file_is_listed():
    present = sorted(
        str(path.relative_to(DATA)) for path in DATA.rglob("*") if path.is_file() and path.name != "README.md"
    )
    assert present == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_the_file_imports_with_its_counts(name):
    needs, expected = EXPECTED[name]
    team = default_team()
    for needed in needs:
        import_file(DATA / needed, team=team)

    result = import_file(DATA / name, team=team)

    got = {kind: dict(+getattr(result, kind)) for kind in expected}
    assert got == expected, result.summary()
    if name.endswith("gpt4_scores_140.json"):
        assert any("138" in note for note in result.notes), result.notes
    before = row_counts()
    again = import_file(DATA / name, team=team)
    assert row_counts() == before, "importing the file a second time wrote rows"
    assert not again.created and not again.changed, again.summary()
