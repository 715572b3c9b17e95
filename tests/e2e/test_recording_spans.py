"""An annotator marks spans on a playing recording in a real browser (issue 25, SHREC).

The episode has timed turns and a generated WAV (a few seconds of tone, made with ``wave``) as its
recording. The annotator opens the item, plays the recording (the spoken turn is highlighted, a
turn's time seeks), marks a first span by time with "Start here" / "End here" (the inputs take the
player's time), marks a second by selecting text from the middle of one word to the middle of
another (the selection snaps to whole words), picks each span's seat and channel, and submits. The
stored spans have the times, turns, seat and channel. Screenshots go to var/screenshots/recording/.
"""

from __future__ import annotations

import re
import urllib.request

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from playwright.sync_api import expect

from annotator.models import Annotation, Span
from benchmark.episodes.recordings import attach_upload
from benchmark.instruments.presets import install_preset
from benchmark.models import ActionType, Seat, Turn
from tests.annotator.builders import make_study
from tests.builders import PASSWORD, make_character, make_episode, make_scenario, make_user
from tests.e2e.conftest import SCREENSHOTS
from tests.recordings import wav_bytes

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)

TURNS = [
    (ActionType.SPEAK, "Hi, I'm Jibo. How was your day?"),
    (ActionType.SPEAK, "Pretty rough, my exam went badly."),
    (ActionType.SPEAK, "Great, let's play a game now!"),
    (ActionType.SPEAK, "Uh, okay. I guess."),
]
TIMES = [(0.0, 1.5), (1.5, 3.0), (3.0, 4.5), (4.5, 6.0)]
SELECTED = "Great, let's"  # what a selection from inside "Great" to inside "let's" snaps to


@pytest.fixture
def item(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    annotator = make_user(username="ana")
    scenario = make_scenario(
        context="A social robot checks in with a student in the evening.",
        roles=[{"goal": "Support the student.", "character": make_character(first_name="Jibo", last_name="Robot")},
               {"goal": "Talk about the day.", "character": make_character(first_name="Sam", last_name="Lee")}],
    )
    episode = make_episode(scenario=scenario, turns=TURNS)
    Seat.objects.filter(episode=episode, position=1).update(player=Seat.Player.HUMAN)
    for index, (start, end) in enumerate(TIMES):
        Turn.objects.filter(episode=episode, index=index).update(start_s=start, end_s=end)
    attach_upload(episode, SimpleUploadedFile("evening.wav", wav_bytes(6.5), content_type="audio/wav"),
                  duration_s=6.5)
    study = make_study(instrument=install_preset("shrec-spans"), title="Evening check-ins", slug="evening",
                       items=[episode], overlap=1, annotators=[annotator],
                       instructions="Mark the robot's social slips and skills.")
    return {"annotator": annotator, "study": study, "episode": episode}


def shot(page, name, *, at=None):
    (SCREENSHOTS / "recording").mkdir(parents=True, exist_ok=True)
    if at is not None:
        at.scroll_into_view_if_needed()
    page.screenshot(path=str(SCREENSHOTS / "recording" / f"{name}.png"))


def player_time(page) -> float:
    return page.evaluate("document.querySelector('[data-player-media]').currentTime")


def play_until(page, seconds: float) -> float:
    """Play (muted, so the browser needs no gesture) until the player passes ``seconds``, pause, and return the time."""
    page.evaluate("async () => { const m = document.querySelector('[data-player-media]'); m.muted = true; "
                  "await m.play(); }")
    page.wait_for_function("(s) => document.querySelector('[data-player-media]').currentTime > s", arg=seconds)
    page.evaluate("document.querySelector('[data-player-media]').pause()")
    return player_time(page)


def select_text(page, turn, start_offset, end_offset):
    page.evaluate(
        """([turn, start, end]) => {
            const text = document.querySelector(`[data-turn="${turn}"] [data-turn-content]`).firstChild;
            window.getSelection().setBaseAndExtent(text, start, text, end);
        }""",
        [turn, start_offset, end_offset],
    )


def test_an_annotator_marks_a_span_on_the_playing_recording_and_one_on_the_text(browser_page, item):
    page = browser_page
    page.goto("/accounts/login/")
    page.get_by_label("Username").fill("ana")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.goto("/annotate/")
    page.get_by_role("link", name="Read the instructions and start").click()
    page.get_by_role("button", name=re.compile("start")).click()
    expect(page.locator("[data-span-source] .turn")).to_have_count(4)
    page.wait_for_load_state()
    media = page.locator("[data-player-media]")
    expect(media).to_have_attribute("src", re.compile(r"^/annotate/a/\d+/recording/$"))
    page.wait_for_function("() => document.querySelector('[data-player-media]').readyState >= 1")
    assert page.evaluate("document.querySelector('[data-player-media]').duration") == pytest.approx(6.5, abs=0.05)

    # A turn's time seeks there, and the turn spoken then is highlighted.
    page.locator("[data-turn='1'] [data-seek]").click()
    expect(page.locator("[data-turn='1']")).to_have_class(re.compile(r"\bturn--speaking\b"))
    assert player_time(page) == pytest.approx(1.5, abs=0.01)

    # Play on into turn 2's time, and take the start from the player.
    start = play_until(page, 2.0)
    editor = page.locator("[data-span-editor]")
    editor.get_by_role("button", name="Start here").click()
    expect(editor.get_by_label("Start (seconds)")).to_have_value(f"{round(start, 1):.1f}")

    # Jump to the last turn, play a little, and take the end from the player.
    page.locator("[data-turn='3'] [data-seek]").click()
    end = play_until(page, 4.8)
    expect(page.locator("[data-turn='3']")).to_have_class(re.compile(r"\bturn--speaking\b"))
    expect(page.locator("[data-turn='1']")).not_to_have_class(re.compile(r"\bturn--speaking\b"))
    editor.get_by_role("button", name="End here").click()
    expect(editor.get_by_label("End (seconds)")).to_have_value(f"{round(end, 1):.1f}")
    expect(editor.locator("[data-span-selection]")).to_contain_text("(turns 2–4)")
    # Adjust the end by a tenth of a second, as a hand on the number input would.
    editor.get_by_label("End (seconds)").fill(f"{round(end, 1) + 0.1:.1f}")
    end_s = round(round(end, 1) + 0.1, 1)
    expect(editor.locator("[data-span-selection]")).to_contain_text(f"0:0{end_s:.1f}")

    expect(editor.get_by_label("Whose behaviour is it?")).to_have_value("0")  # the agent's seat to begin with
    editor.get_by_label("social error").check()
    editor.get_by_label("verbal and non-verbal").check()
    editor.get_by_label("Emotions").check()
    editor.get_by_label("Why did you mark it?").fill("Jibo cheers at bad news.")
    editor.get_by_label("What should the agent have done instead?").fill("Say sorry about the exam first.")
    shot(page, "01-span-by-time", at=editor)
    editor.get_by_role("button", name="Add span").click()
    spans = page.locator("[data-span-list] .span-item")
    expect(spans).to_have_count(1)
    expect(spans.first).to_contain_text("(turns 2–4)")
    expect(spans.first).to_contain_text("verbal and non-verbal")

    # A second span by selecting text from inside "Great" to inside "let's": it snaps to whole words.
    text = TURNS[2][1]
    select_text(page, 2, text.index("eat"), text.index("let's") + 2)
    expect(editor.locator("[data-span-selection]")).to_contain_text(f"Marking turn 3: “{SELECTED}”")
    expect(editor.get_by_label("Start (seconds)")).to_have_value("")
    editor.get_by_label("Whose behaviour is it?").select_option(label="Sam Lee")
    editor.get_by_label("social competency").check()
    editor.get_by_label("verbal", exact=True).check()
    editor.get_by_label("Intention").check()
    editor.get_by_label("Why did you mark it?").fill("Sam goes along politely.")
    editor.get_by_role("button", name="Add span").click()
    expect(spans).to_have_count(2)
    expect(spans.nth(1)).to_contain_text(SELECTED)
    expect(spans.nth(1)).to_contain_text("Sam Lee")
    shot(page, "02-two-spans", at=spans.nth(1))

    page.get_by_role("button", name="Submit and go to the next item").click()
    expect(page.get_by_text("Nothing is left for you in this study")).to_be_visible()

    annotation = Annotation.objects.get(assignment__item__study=item["study"])
    assert annotation.status == "submitted"
    by_time, by_text = Span.objects.filter(annotation=annotation).order_by("pk")
    assert (by_time.label, by_time.start_s, by_time.end_s) == ("error", round(start, 1), end_s)
    assert (by_time.start_turn, by_time.end_turn, by_time.start_char, by_time.end_char) == (1, 3, None, None)
    assert (by_time.seat_position, by_time.channel) == (0, "both")
    assert list(by_time.attributes.values_list("key", flat=True)) == ["emotions"]
    assert (by_text.label, by_text.start_s, by_text.end_s) == ("competency", None, None)
    assert (by_text.start_turn, by_text.end_turn, by_text.start_char, by_text.end_char) == (2, 2, 0, len(SELECTED))
    assert (by_text.seat_position, by_text.channel) == (1, "verbal")


@pytest.fixture
def media_env(settings, tmp_path, monkeypatch):
    """One private media root for the test and for the daphne subprocess (which reads the environment)."""
    root = tmp_path / "daphne-media"
    monkeypatch.setenv("PARLEY_MEDIA_ROOT", str(root))
    settings.MEDIA_ROOT = root
    return root


def test_daphne_sends_a_recording_in_ranges_read_on_a_thread(media_env, asgi_server):
    """Under ASGI the file is sent block by block (``FileSliceResponse.__aiter__``), whole or by range."""
    from django.conf import settings
    from django.test import Client

    from tests.builders import make_researcher

    episode = make_episode(turns=2)
    sound = wav_bytes(1.0)
    attach_upload(episode, SimpleUploadedFile("one.wav", sound, content_type="audio/wav"))
    browser = Client()
    browser.force_login(make_researcher(episode.team, username="rhea"))
    cookie = f"{settings.SESSION_COOKIE_NAME}={browser.cookies[settings.SESSION_COOKIE_NAME].value}"
    url = f"{asgi_server}/benchmark/episodes/{episode.pk}/recording/"

    def fetch(headers):
        request = urllib.request.Request(url, headers={"Cookie": cookie, **headers})
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, dict(response.headers), response.read()

    status, headers, body = fetch({})
    assert (status, headers["Content-Type"], body) == (200, "audio/wav", sound)
    status, headers, body = fetch({"Range": "bytes=100-199"})
    assert (status, headers["Content-Range"], body) == (206, f"bytes 100-199/{len(sound)}", sound[100:200])
