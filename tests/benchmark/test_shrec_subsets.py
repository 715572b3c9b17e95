"""Subsets of each task's items (spec SH-7): seeded by keys, stratified by source, disjoint when possible."""

import hashlib

import pytest

from benchmark.shrec.builders import ItemRecord
from benchmark.shrec.subsets import assign_subsets


def items(task="error", empathic=10, wellness=10):
    made = []
    for source, count in (("empathic", empathic), ("wellness", wellness)):
        for n in range(count):
            made.append(ItemRecord(task, f"{source}-{n}:1", f"{source}-{n}", None, 0, 0, None, None, "error", "text",
                                   ["Social Error", "No Social Error"], [0], "error", source))
    return made


def test_three_disjoint_stratified_subsets_when_the_pool_allows():
    pool = items()
    report = assign_subsets(pool, subsets=3, size=6, seed=0)
    assert report.sizes == {"error": [6, 6, 6]} and report.overlapping == []
    for draw in range(3):
        drawn = [item for item in pool if draw in item.subsets]
        assert sorted(item.source for item in drawn) == ["empathic"] * 3 + ["wellness"] * 3
    assert all(len(item.subsets) <= 1 for item in pool)


def test_the_first_subset_takes_the_smallest_digests():
    pool = items(wellness=0)
    assign_subsets(pool, subsets=1, size=2, seed=7)
    digests = sorted(pool, key=lambda i: hashlib.sha256(f"7|error|0|{i.item_key}".encode()).hexdigest())
    assert [item.item_key for item in pool if item.subsets == [0]] == sorted(i.item_key for i in digests[:2])


def test_subsets_overlap_when_the_pool_is_too_small_and_say_so():
    pool = items(empathic=4, wellness=4)
    report = assign_subsets(pool, subsets=3, size=6)
    assert report.sizes["error"] == [6, 6, 6]
    assert report.overlapping == ["error"]


def test_a_source_short_of_its_share_gives_what_it_has():
    report = assign_subsets(items(empathic=10, wellness=1), subsets=1, size=6)
    assert report.sizes["error"] == [4]


def test_without_a_size_one_subset_holds_every_item_and_three_split_the_pool():
    pool = items(empathic=8, wellness=2)
    assign_subsets(pool, subsets=1)
    assert all(item.subsets == [0] for item in pool)
    report = assign_subsets(pool, subsets=2)
    assert report.sizes["error"] == [5, 5] and all(len(item.subsets) == 1 for item in pool)


def test_the_draw_depends_on_seed_and_keys_only():
    first, second = items(), list(reversed(items()))
    assign_subsets(first, subsets=3, size=4, seed=1)
    assign_subsets(second, subsets=3, size=4, seed=1)
    assert {i.item_key: i.subsets for i in first} == {i.item_key: i.subsets for i in second}
    assign_subsets(second, subsets=3, size=4, seed=2)
    assert {i.item_key: i.subsets for i in first} != {i.item_key: i.subsets for i in second}


def test_unstratified_draws_ignore_the_source():
    report = assign_subsets(items(empathic=10, wellness=0) + items("pre", 0, 3), subsets=1, size=3, stratify=False)
    assert report.sizes == {"error": [3], "pre": [3]}


def test_a_subset_count_below_one_is_refused():
    with pytest.raises(ValueError, match="--subsets must be at least 1"):
        assign_subsets(items(), subsets=0)


def test_without_a_size_a_stratum_smaller_than_the_subsets_is_shared():
    pool = items(empathic=1, wellness=4)
    report = assign_subsets(pool, subsets=3)
    assert report.sizes["error"] == [2, 2, 2] and report.overlapping == ["error"]
    assert [item.subsets for item in pool if item.source == "empathic"] == [[0, 1, 2]]
