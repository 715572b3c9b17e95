"""Spans on the recording's time, with their seat and channel, and the study's rationale rule.

Through the annotator's own pages: the item page with its player, autosave and submit, an edit
(a new version), and the researcher's export.
"""

from __future__ import annotations

import csv
import html
import io
import json
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotator.models import Annotation, Assignment, Span, Study
from benchmark.episodes.recordings import attach_upload, attach_url
from benchmark.instruments.presets import install_preset
from benchmark.models import Seat, Turn
from tests.annotator.builders import make_study
from tests.builders import make_episode, make_researcher, make_user
from tests.recordings import wav_bytes

pytestmark = pytest.mark.django_db

TURNS = [("speak", "Hi, I am Jibo. How was your day?"), ("speak", "Long. My exam went badly."),
         ("speak", "Great! Let's play a game."), ("speak", "Uh, okay.")]
TIMES = [(0.0, 3.0), (3.5, 6.0), (6.5, 9.0), (9.5, 11.0)]


@pytest.fixture(autouse=True)
def private_media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


@pytest.fixture
def world():
    """A SHREC spans study over one timed episode with a WAV recording; seat 0 the participant, seat 1 the agent."""
    annotator, researcher = make_user(username="ann"), make_researcher(username="rita")
    episode = make_episode(turns=TURNS)
    for index, (start, end) in enumerate(TIMES):
        Turn.objects.filter(episode=episode, index=index).update(start_s=start, end_s=end)
    Seat.objects.filter(episode=episode, position=0).update(player=Seat.Player.HUMAN)
    attach_upload(episode, SimpleUploadedFile("session.wav", wav_bytes(0.5), content_type="audio/wav"))
    study = make_study(team=episode.team, instrument=install_preset("shrec-spans"), items=[episode],
                       annotators=[annotator], created_by=researcher)
    assignment = Assignment.objects.create(item=study.items.get(), annotator=annotator,
                                           claimed_at="2025-01-01T00:00:00Z", lease_expires_at="2999-01-01T00:00:00Z")
    return {"annotator": annotator, "researcher": researcher, "episode": episode, "study": study,
            "assignment": assignment}


def timed_span(**fields: Any) -> dict[str, Any]:
    return {"label": "error", "start_turn": 0, "end_turn": 0, "start_char": None, "end_char": None,
            "start_s": 7.0, "end_s": 10.2, "seat": 1, "channel": "verbal", "attributes": ["emotions"],
            "rationale": "Cheerful reply to bad news.", "correction": "Say sorry about the exam first.", **fields}


def post(client, world, name: str, spans: list[dict[str, Any]], **extra: str):
    url = reverse(f"annotator:{name}", args=[world["assignment"].pk])
    return client.post(url, {"spans-spans": json.dumps(spans), "revision": extra.pop("revision", "0"), **extra})


def test_the_item_page_plays_the_recording_through_the_assignment_beside_timed_turns(client, world):
    client.force_login(world["annotator"])
    page = client.get(reverse("annotator:item", args=[world["assignment"].pk])).text

    src = reverse("annotator:recording", args=[world["assignment"].pk])
    assert f'<audio controls preload="metadata" src="{src}"' in page
    assert f"/benchmark/episodes/{world['episode'].pk}/" not in page  # nothing names the episode
    assert 'data-turn="2" data-start="6.5" data-end="9.0"' in page
    assert 'data-seek="6.5"' in page and "0:06.5" in page
    assert "player.js" in page and "Start here" in page and "End here" in page
    assert '<option value="1" selected data-default>' in page  # the agent's seat to begin with


def test_an_external_recording_is_played_from_its_address_and_said_to_be_external(client, world):
    attach_url(world["episode"], "https://media.example.org/s.mp4", kind="video")
    client.force_login(world["annotator"])
    page = client.get(reverse("annotator:item", args=[world["assignment"].pk])).text
    assert '<video controls preload="metadata" src="https://media.example.org/s.mp4"' in page
    assert "External: your browser loads it from https://media.example.org/s.mp4" in page


def test_an_episode_without_recording_has_no_player(client, world):
    world["episode"].recording.delete()
    client.force_login(world["annotator"])
    page = client.get(reverse("annotator:item", args=[world["assignment"].pk])).text
    assert "data-player" not in page and "Start here" not in page and "player.js" not in page


def test_a_span_marked_by_time_is_submitted_with_the_turns_its_times_cover(client, world):
    client.force_login(world["annotator"])
    response = post(client, world, "submit", [timed_span()])

    assert response.status_code == 302, response.content
    span = Span.objects.get(annotation__assignment=world["assignment"])
    # 7.0–10.2 s overlaps turn 2 (6.5–9.0) and turn 3 (9.5–11.0), whatever start_turn the page sent.
    assert (span.start_turn, span.end_turn, span.start_char, span.end_char) == (2, 3, None, None)
    assert (span.start_s, span.end_s, span.seat_position, span.channel) == (7.0, 10.2, 1, "verbal")


def test_a_span_marked_on_the_text_keeps_its_characters_and_takes_the_agents_seat(client, world):
    client.force_login(world["annotator"])
    text_span = timed_span(start_s=None, end_s=None, start_turn=2, end_turn=2, start_char=0, end_char=6,
                           channel="", seat=None)
    post(client, world, "submit", [text_span])

    span = Span.objects.get(annotation__assignment=world["assignment"])
    assert (span.start_turn, span.end_turn, span.start_char, span.end_char) == (2, 2, 0, 6)
    assert (span.start_s, span.end_s, span.seat_position, span.channel) == (None, None, 1, "")


def test_autosave_keeps_the_times_seat_and_channel_and_the_page_shows_them_again(client, world):
    client.force_login(world["annotator"])
    post(client, world, "draft", [timed_span(seat=0, channel="non-verbal", rationale="", correction="")])

    page = client.get(reverse("annotator:item", args=[world["assignment"].pk])).text
    stored = json.loads(html.unescape(page.split('name="spans-spans" value="')[1].split('"')[0]))
    assert stored[0] | {"attributes": None} == {
        "label": "error", "start_turn": 2, "end_turn": 3, "start_char": None, "end_char": None, "start_s": 7.0,
        "end_s": 10.2, "seat": 0, "channel": "non-verbal", "attributes": None, "rationale": "", "correction": "",
    }


def test_an_edit_keeps_the_times_seat_and_channel_of_the_submitted_version(client, world):
    client.force_login(world["annotator"])
    post(client, world, "submit", [timed_span(seat=0, channel="both")])
    client.post(reverse("annotator:edit", args=[world["assignment"].pk]), {"version": "1"})

    draft = Annotation.objects.get(assignment=world["assignment"], version=2)
    assert list(draft.spans.values_list("start_s", "end_s", "seat_position", "channel")) == [(7.0, 10.2, 0, "both")]


@pytest.mark.parametrize(("span", "problem"), [
    (timed_span(start_s=5.0, end_s=None), "give both the start and the end time, or neither"),
    (timed_span(start_s=8.0, end_s=7.0), "it ends (7 s) before it starts (8 s)"),
    (timed_span(start_s=-1.0), "the start time must be 0 s or later"),
    (timed_span(start_s="soon"), "the start and end times must be numbers of seconds"),
    (timed_span(seat=5), "seat 5 is not a seat of this conversation"),
    (timed_span(channel="telepathic"), "the channel is one of verbal, non-verbal, both"),
])
def test_a_span_with_unsound_times_seat_or_channel_is_refused_and_named(client, world, span, problem):
    client.force_login(world["annotator"])
    post(client, world, "submit", [span])
    page = client.get(reverse("annotator:item", args=[world["assignment"].pk])).text
    assert problem in html.unescape(page)
    assert not Span.objects.filter(annotation__assignment__annotator=world["annotator"],
                                   annotation__status="submitted").exists()


def test_a_study_that_needs_rationales_refuses_a_span_without_them(client, world):
    client.force_login(world["annotator"])
    post(client, world, "submit", [timed_span(rationale=" ", correction="")])

    page = html.unescape(client.get(reverse("annotator:item", args=[world["assignment"].pk])).text)
    assert "say why you marked it (rationale)" in page
    assert "write what the agent should have done instead (correction)" in page
    assert not Annotation.objects.filter(assignment=world["assignment"], status="submitted").exists()


def test_a_study_that_does_not_need_rationales_takes_a_span_without_them(client, world):
    Study.objects.filter(pk=world["study"].pk).update(spans_need_rationale=False)
    client.force_login(world["annotator"])
    page = client.get(reverse("annotator:item", args=[world["assignment"].pk])).text
    assert "data-need-rationale" not in page and "(required for an error)" not in page

    response = post(client, world, "submit", [timed_span(rationale="", correction="")])

    assert response.status_code == 302
    span = Span.objects.get(annotation__assignment=world["assignment"], annotation__status="submitted")
    assert (span.rationale, span.correction) == ("", "")


def test_the_export_writes_the_times_seat_and_channel(client, world):
    client.force_login(world["annotator"])
    post(client, world, "submit", [timed_span()])
    client.force_login(world["researcher"])

    response = client.get(reverse("annotator:export", args=[world["study"].slug, "csv"]))
    rows = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))

    (span,) = [row for row in rows if row["row_type"] == "span"]
    assert {key: span[key] for key in ("start_turn", "end_turn", "start_s", "end_s", "seat", "channel")} == {
        "start_turn": "2", "end_turn": "3", "start_s": "7.0", "end_s": "10.2", "seat": "1", "channel": "verbal",
    }
    assert span["text"] == "Great! Let's play a game.\nUh, okay."


def test_the_study_form_sets_whether_spans_need_a_rationale(client, world):
    client.force_login(world["researcher"])
    form = client.get(reverse("annotator:study-create")).text
    assert 'name="spans_need_rationale"' in form
    data = {"title": "Spans", "preset": "shrec-spans", "instrument": "", "source": "", "scenario": "", "barrier": "",
            "status": "finished", "tag": "", "limit": "", "seed": "7", "overlap": "1", "lease_minutes": "60",
            "min_seconds_per_item": "30", "gold_items": "0", "attention_items": "0", "instructions": ""}

    client.post(reverse("annotator:study-create"), {**data, "slug": "with-reasons", "spans_need_rationale": "on"})
    client.post(reverse("annotator:study-create"), {**data, "slug": "without-reasons"})

    assert Study.objects.get(slug="with-reasons").spans_need_rationale is True
    assert Study.objects.get(slug="without-reasons").spans_need_rationale is False
