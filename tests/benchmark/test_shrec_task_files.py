"""Reading a SHREC task file: every line checked, a problem named by file, line and field (spec SH-6)."""

import json

import pytest

from benchmark.shrec.task_files import TaskFileError, read_task_file

HEADER = {"format": "parley-shrec-tasks", "version": 1, "name": "pilot", "seed": 3, "params": {"excerpt": "pair"}}
ITEM = {
    "task": "rationale", "item_key": "video:1", "episode": "video", "first_turn": 1, "last_turn": 2, "start_s": 4.0,
    "end_s": 9.5, "label": "error", "context": "User A: Hi.\nAI Agent: Ha!", "options": ["a", "b", "c", "d", "e"],
    "correct": [2], "gold": 3, "source": "empathic", "provenance": {"spans": [1]}, "subsets": [0],
}


def read(*rows):
    return read_task_file([json.dumps(row) if isinstance(row, dict) else row for row in rows], "tasks.jsonl")


def test_a_good_file_gives_its_header_and_items():
    loaded = read(HEADER, ITEM, "", {**ITEM, "task": "correction"})
    assert (loaded.name, loaded.seed, loaded.params) == ("pilot", 3, {"excerpt": "pair"})
    assert [item.task for item in loaded.items] == ["rationale", "correction"]
    item = loaded.items[0]
    assert (item.episode_key, item.episode_id, item.gold, item.subsets) == ("video", None, 3, [0])


@pytest.mark.parametrize(("change", "message"), [
    ({"task": "summary"}, "field 'task': must be one of detection"),
    ({"options": ["a", ""]}, "field 'options': must be a list of non-empty texts"),
    ({"correct": [-1]}, "field 'correct': must be a list of option positions"),
    ({"gold": 2}, "field 'gold': must be the correct option's number"),
    ({"first_turn": 3}, "field 'last_turn': must be given with first_turn and not before it"),
    ({"end_s": None}, "field 'end_s': must be given with start_s"),
    ({"start_s": "soon"}, "field 'start_s': must be a number"),
    ({"subsets": [0, -2]}, "field 'subsets': must be a list of subset numbers"),
    ({"label": "bad"}, "field 'label': must be error, competency, none or empty"),
    ({"source": "s" * 51}, "field 'source': must be a text of at most 50 characters"),
    ({"first_turn": 2**31, "last_turn": 2**31}, "field 'first_turn': must be a non-negative whole number"),
    ({"task": "detection", "options": ["a", "b", "c"], "correct": [0], "gold": "maybe"},
     "field 'gold': must be one of competency, error, none"),
    ({"task": "attributes", "gold": ["kindness"]}, "field 'gold': must be a list of attribute keys"),
    ({"task": "multiple", "gold": "yes"}, "field 'gold': must be true or false"),
])
def test_a_bad_item_is_named_by_line_and_field(change, message):
    with pytest.raises(TaskFileError, match=f"^tasks.jsonl line 3, {message}"):
        read(HEADER, ITEM, {**ITEM, "item_key": "video:2", **change})


def test_a_missing_field_is_named():
    row = dict(ITEM)
    del row["context"]
    with pytest.raises(TaskFileError, match="line 2, field 'context': missing"):
        read(HEADER, row)


def test_a_key_used_twice_names_both_lines():
    with pytest.raises(TaskFileError, match="line 3, field 'item_key': 'video:1' of task rationale is also on line 2"):
        read(HEADER, ITEM, ITEM)


def test_files_that_are_not_task_files_are_refused():
    with pytest.raises(TaskFileError, match="line 1: not a Parley SHREC task file"):
        read({"format": "other"}, ITEM)
    with pytest.raises(TaskFileError, match="line 2: not JSON"):
        read(HEADER, "{not json")
    with pytest.raises(TaskFileError, match="line 2: expected a JSON object"):
        read(HEADER, "[1, 2]")
    with pytest.raises(TaskFileError, match="tasks.jsonl: empty file"):
        read()
