"""The comparison of downloads (``downloads.py``) fails on what a researcher would notice, and only on that."""

from __future__ import annotations

import json

import pytest

from . import downloads
from .downloads import assert_downloads_unchanged

RESULTS = "GET /benchmark/results/results.json"
PARTICIPANTS = "GET /chat/demo-chat/participants.csv"


@pytest.fixture(autouse=True)
def no_declarations(monkeypatch):
    """These tests compare made-up downloads, so the changes declared for the real ones do not apply."""
    for name in ("RENAMED", "ADDED", "DROPPED"):
        monkeypatch.setattr(downloads, name, {})


def _json(body: object) -> dict:
    return {"status": 200, "content_type": "application/json", "json": body}


def _csv(*rows: list[str]) -> dict:
    return {"status": 200, "content_type": "text/csv; charset=utf-8", "csv": [list(row) for row in rows]}


def _differences(before: dict, now: dict, request: str = RESULTS) -> str:
    with pytest.raises(AssertionError) as failure:
        assert_downloads_unchanged({request: before}, {request: now})
    return str(failure.value)


def test_numbers_equal_to_rounding_pass():
    before = _json({"means": {"goal": 0.1 + 0.2, "n": 4, "r": 0.0}})
    now = _json({"means": {"n": 4.0, "goal": 0.3, "r": 1e-17}})
    assert_downloads_unchanged({RESULTS: before}, {RESULTS: now})


def test_a_changed_number_names_its_place():
    message = _differences(_json({"means": [{"goal": 7.0}]}), _json({"means": [{"goal": 7.000001}]}))
    assert "means.0.goal: was 7.0, now 7.000001" in message


def test_null_and_empty_text_are_not_the_same():
    assert "was null, now \"\"" in _differences(_json({"judge": None}), _json({"judge": ""}))


def test_a_new_key_fails_unless_declared_added(monkeypatch):
    before = _json({"evaluator": {"name": "scripted"}})
    now = _json({"evaluator": {"name": "scripted", "kind": "judge"}})
    assert 'evaluator.kind: new, "judge"' in _differences(before, now)
    monkeypatch.setattr(downloads, "ADDED", {("GET /benchmark/*", "evaluator.kind"): "respondents have kinds"})
    assert_downloads_unchanged({RESULTS: before}, {RESULTS: now})


def test_a_new_zip_member_fails_unless_declared_added(monkeypatch):
    tables = "GET /annotate/studies/s/report/tables.zip"
    notes = _csv(["question", "note"])
    before = {"status": 200, "content_type": "application/zip", "zip": {"notes.csv": notes}}
    now = {**before, "zip": {"notes.csv": notes, "annotators.csv": _csv(["question", "annotator"])}}
    assert "member annotators.csv is new" in _differences(before, now, tables)
    monkeypatch.setattr(downloads, "ADDED", {("GET /annotate/*/tables.zip", "annotators.csv"): "a new table"})
    assert_downloads_unchanged({tables: before}, {tables: now})


def test_a_renamed_column_fails_unless_declared(monkeypatch):
    before = _csv(["participant_id", "stage"], ["p1", "done"])
    now = _csv(["participant_id", "step"], ["p1", "done"])
    assert "columns: missing ['stage'], unexpected ['step']" in _differences(before, now, PARTICIPANTS)
    monkeypatch.setattr(downloads, "RENAMED", {("GET /chat/*", "stage"): ("step", "a clearer name")})
    assert_downloads_unchanged({PARTICIPANTS: before}, {PARTICIPANTS: now})
    changed = _csv(["participant_id", "step"], ["p1", "chat"])
    assert "line 2: step: was 'done', now 'chat'" in _differences(before, changed, PARTICIPANTS)


def test_a_declaration_no_download_needs_fails(monkeypatch):
    monkeypatch.setattr(downloads, "DROPPED", {("GET /chat/*", "stage"): "no longer shown"})
    same = _json({"means": {}})
    message = _differences(same, same)
    assert "dropped ('GET /chat/*', 'stage') is declared but no download has it" in message


def test_rows_in_another_order_are_told_apart_from_changed_rows():
    before = _csv(["item", "value"], ["1", "0.5"], ["2", "3"])
    assert "the same 2 rows in another order" in _differences(
        before, _csv(["item", "value"], ["2", "3.0"], ["1", "0.5"]), PARTICIPANTS
    )
    assert "2 rows before, 1 now" in _differences(before, _csv(["item", "value"], ["1", "0.5"]), PARTICIPANTS)


def test_a_failed_request_says_what_came_back():
    now = {"status": 404, "content_type": "text/html", "text": "Not Found"}
    assert "status: was 200, now 404: 'Not Found'" in _differences(_json({}), now)


def test_zip_members_are_compared_one_by_one():
    request = "GET /annotate/studies/demo/report/tables.zip"
    before = {"status": 200, "content_type": "application/zip",
              "zip": {"notes.csv": {"csv": [["question", "note"]]}, "spans.csv": {"csv": [["question"]]}}}
    now = {"status": 200, "content_type": "application/zip",
           "zip": {"notes.csv": {"csv": [["question", "note"], ["", "new note"]]}}}
    message = _differences(before, now, request)
    assert "member spans.csv is gone" in message
    assert "notes.csv: 0 rows before, 1 now" in message


def test_only_the_time_of_the_request_is_normalised():
    body = json.dumps({"generated_at": "2026-01-01T00:00:00Z", "study": {"generated_at": "kept"}}).encode()
    parsed = downloads._parsed("report.json", body)["json"]
    assert parsed == {"generated_at": downloads.NORMALISED["generated_at"], "study": {"generated_at": "kept"}}


def test_the_stored_downloads_cover_every_kind_of_download():
    requests = downloads.stored_downloads()
    assert all(download["status"] in (0, 200) for download in requests.values())
    for expected in ("/report.json", "/report/tables.zip", "/export.csv", "/export.csv?all_versions=1",
                     "/benchmark/results/results.json", "/benchmark/results/episodes.csv", "/participants.csv",
                     "export_episodes --format parley"):
        assert any(expected in request for request in requests), expected
