"""Who may open what: every URL pattern and websocket route, asked by every kind of caller.

The security review's authorization matrix. Two teams each get a whole world (a scenario,
episodes, a simulation run, an annotation study with submitted and claimed work and a report
bundle, a chat study with participants), and every request names the *owning* team's objects by
their real ids, slugs and tokens. ``MATRIX`` says, for each URL pattern name, what each caller gets:

- researcher pages: anonymous visitors and participants (who have no account) → the login page;
  annotators → 403; the other team's researcher → 404 for an object page, and a list that shows
  none of our objects; the owning researcher and superusers → 200, or the redirect after a POST;
- annotator pages: only the annotator whose membership or assignment the URL names; anyone else
  signed in gets 404, as if the id did not exist (a researcher or superuser is not the annotator);
- participant pages: the study link is open to all; a stage page serves only the session's own
  participant and sends anyone else to the study link;
- the admin: one rule for every admin pattern (``admin_case``): superusers get in, everyone else
  is sent to the admin login;
- the chat socket (``SOCKETS``): only the session's own participant connects.

Three checks hold in every cell: no 200 to a caller who holds nothing of the owning team shows its
text (``OWN``); no 200 to anyone but the owning researcher or a superuser shows another
participant's id (``PARTICIPANT_SECRET``); a refused request leaves what the entry's ``state``
reads as it was. A URL without an entry fails ``test_every_url_pattern_has_an_entry``; adding one
is one line in ``MATRIX``.

The page tests share one world per run (``world``: built inside a transaction that every test
rolls back to); the socket tests need committed rows, so each builds its own.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import pytest
from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.contrib import admin
from django.contrib.auth.models import AbstractUser, Permission
from django.contrib.contenttypes.models import ContentType
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import models, transaction
from django.http import HttpResponse
from django.test import Client, RequestFactory, override_settings
from django.urls import URLPattern, URLResolver, get_resolver, resolve, reverse
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode

from annotator.models import Annotation, Assignment, Curation, Invitation, Membership, ReportBundle, Span, Study
from benchmark.episodes.recordings import attach_upload
from benchmark.models import (
    Barrier,
    Episode,
    ImportJob,
    Instrument,
    Job,
    NeutralContext,
    Recording,
    Scenario,
    SimulationRun,
    Team,
    TeamMember,
)
from chat.models import ChatStudy, Participant
from chat.routing import websocket_urlpatterns
from tests.annotator.builders import make_instrument, make_study
from tests.builders import (
    add_to_team,
    make_cast,
    make_episode,
    make_researcher,
    make_scenario,
    make_scores,
    make_team,
    make_user,
)
from tests.chat.agent_tasks import wait_for_agent_turns
from tests.chat.builders import join, make_chat_study, make_participant
from tests.recordings import wav_bytes

# Every name, title, slug and tag of the owning team carries OWN; the other team's carry OTHER.
OWN = "alphaqz"
OTHER = "betaqz"
# In the id of a participant who is not the caller: only the study's researchers may read it.
PARTICIPANT_SECRET = "pidsecret"

ANONYMOUS = "anonymous"
ANNOTATOR = "annotator"  # a member of the owning team's annotation study, holding assignments in it
OUTSIDE_ANNOTATOR = "outside_annotator"  # in the owning team's annotator pool, a member of the other team's study
PARTICIPANT = "participant"  # a browser session that came through the owning team's chat study link
OTHER_PARTICIPANT = "other_participant"  # the same, through the other team's chat study link
RESEARCHER = "researcher"  # a researcher of the owning team; also staff, with every model permission
OTHER_RESEARCHER = "other_researcher"  # a researcher of the other team (by the researchers group)
SUPERUSER = "superuser"
CROWD_WORKER = "crowd_worker"  # signed in through the other team's crowd link (annotator.crowd): no account of theirs
CALLERS = (
    ANONYMOUS, ANNOTATOR, OUTSIDE_ANNOTATOR, PARTICIPANT, OTHER_PARTICIPANT, RESEARCHER, OTHER_RESEARCHER, SUPERUSER,
    CROWD_WORKER,
)
# Callers who hold nothing of the owning team: no 200 they get may show its text.
STRANGERS = frozenset({ANONYMOUS, OUTSIDE_ANNOTATOR, OTHER_PARTICIPANT, OTHER_RESEARCHER, CROWD_WORKER})
ORIGIN = "http://127.0.0.1:8000"  # an Origin the socket's origin check allows (ALLOWED_HOSTS)


# What a caller gets


@dataclass(frozen=True)
class Redirect:
    """A 302 whose Location resolves to the URL named ``to``."""

    to: str

    def __str__(self) -> str:
        return f"302 to {self.to}"


LOGIN = Redirect("login")
ADMIN_LOGIN = Redirect("admin:login")
Expected = int | Redirect


def refuses(expected: Expected) -> bool:
    """Whether the caller is turned away: sent to a login page, or answered with an error."""
    return expected in (LOGIN, ADMIN_LOGIN) or (isinstance(expected, int) and expected >= 400)


def check_answer(response: HttpResponse, expected: Expected, what: str) -> None:
    if isinstance(expected, Redirect):
        assert response.status_code == 302, f"{what}: expected {expected}, got {response.status_code}"
        location = urlsplit(response["Location"]).path
        assert resolve(location).view_name == expected.to, f"{what}: expected {expected}, redirected to {location}"
    else:
        where = f" (to {response['Location']})" if response.status_code in (301, 302) else ""
        assert response.status_code == expected, f"{what}: expected {expected}, got {response.status_code}{where}"


def page_text(response: HttpResponse) -> str:
    content = b"".join(response.streaming_content) if response.streaming else response.content
    return content.decode("utf-8", errors="replace").lower()


# The two teams' worlds


@dataclass
class TeamWorld:
    """One team's research objects and people."""

    team: Team
    researcher: AbstractUser
    annotator: AbstractUser
    scenario: Scenario
    episode: Episode
    barrier: Barrier
    run: SimulationRun
    import_job: ImportJob  # a dry run that passed, waiting for the researcher to import it
    job: Job  # a failed job on the task queue, shown on the jobs page with its Retry button
    instrument: Instrument  # the team's own instrument, in the instrument builder
    study: Study
    submitted: Assignment  # the annotator's submitted item
    claimed: Assignment  # the annotator's current item
    bundle: ReportBundle
    chat: ChatStudy
    finished_participant: Participant  # someone who finished the chat; their id is a secret
    live_participant: Participant  # in the chat stage, in the browser session ``session``
    session: str


@dataclass
class World:
    own: TeamWorld  # the owning team: every request names its objects
    other: TeamWorld
    superuser: AbstractUser
    sessions: dict[str, str | None]  # caller → session key (None: no cookie)


Arguments = Callable[[World], dict[str, Any]]


def build_team(mark: str) -> TeamWorld:
    """A team and one of everything it owns, each named with ``mark``."""
    team = make_team(name=f"{mark} lab", slug=f"{mark}-lab")
    researcher = make_researcher(team, username=f"{mark}-researcher")
    if mark == OWN:  # staff with every model permission is still only a researcher, kept out of the admin
        researcher.is_staff = True
        researcher.save(update_fields=["is_staff"])
        researcher.user_permissions.set(Permission.objects.all())
    annotator = make_user(username=f"{mark}-annotator")
    scenario = make_scenario(team=team, codename=f"{mark}-scenario")
    barrier = Barrier.objects.create(team=team, key=f"{mark}-barrier", name=f"{mark} barrier", definition="Ours.")
    episodes = [make_episode(scenario=scenario, tag=f"{mark}-tag", turns=2) for _ in range(2)]
    make_scores(episodes[0], [("goal", 0, 5)], evaluator="scripted")
    NeutralContext.objects.create(scenario=scenario, prompt_version="v1", model="scripted", text=f"{mark} neutral")
    make_cast(scenario, label=f"{mark} cast")
    run = SimulationRun.objects.create(
        team=team, tag=f"{mark}-run", created_by=researcher, total=1, finished=1, status=SimulationRun.Status.FINISHED
    )
    import_job = ImportJob.objects.create(
        team=team, created_by=researcher, file_names=[f"{mark}-profiles.jsonl"], status=ImportJob.Status.CHECKED
    )
    job = Job.objects.create(team=team, created_by=researcher, task="benchmark.no_such_task", task_id=f"{mark}-job",
                             label=f"{mark} judge pass", status=Job.Status.FAILED, error="ConnectionError: refused")
    instrument = make_instrument(team=team, name=f"{mark} instrument")
    study = make_study(team=team, title=f"{mark} study", slug=f"{mark}-study", items=episodes, gold=1, overlap=1,
                       annotators=[annotator], created_by=researcher, crowd_link=True)
    submitted, claimed = annotate_one_and_claim_the_next(annotator, study)
    Span.objects.create(annotation=submitted.annotations.get(), question=study.instrument.questions.first(),
                        label=Span.Label.COMPETENCY, start_turn=0, end_turn=0, rationale=f"{mark} rationale")
    # Every item's episode has a recording to hear (the gold item's too: which item is claimed first depends on
    # the rows made before the world).
    for episode in Episode.objects.filter(study_items__study=study).distinct():
        attach_upload(episode, SimpleUploadedFile(f"{mark}.wav", wav_bytes(0.2), content_type="audio/wav"))
    chat = make_chat_study(team=team, created_by=researcher, slug=f"{mark}-chat", title=f"{mark} chat",
                           scenarios=[scenario], conditions=("none",), target=5)
    finished = make_participant(chat, participant_id=f"{mark}-{PARTICIPANT_SECRET}", stage=Participant.Stage.DONE)
    browser = Client()
    live = join(browser, chat, f"{mark}-live", stage=Participant.Stage.CHAT)
    assert live.stage == Participant.Stage.CHAT, live.stage
    return TeamWorld(
        team=team, researcher=researcher, annotator=annotator, scenario=scenario, episode=episodes[0],
        barrier=barrier, run=run, import_job=import_job, job=job, instrument=instrument, study=study,
        submitted=submitted, claimed=claimed,
        bundle=ready_bundle(study),
        chat=chat, finished_participant=finished, live_participant=live,
        session=browser.cookies[settings.SESSION_COOKIE_NAME].value,
    )


def annotate_one_and_claim_the_next(annotator: AbstractUser, study: Study) -> tuple[Assignment, Assignment]:
    """Through the annotator's own pages: read the instructions, submit one item, claim another."""
    browser = Client()
    browser.force_login(annotator)
    browser.post(reverse("annotator:instructions", args=[study.slug]))
    browser.get(reverse("annotator:next", args=[study.slug]))
    first = Assignment.objects.get(item__study=study, annotator=annotator)
    answered = browser.post(reverse("annotator:submit", args=[first.pk]), {"answer-barrier": "none"})
    assert answered.status_code == 302, answered.content
    browser.get(reverse("annotator:next", args=[study.slug]))
    claimed = Assignment.objects.get(item__study=study, annotator=annotator, status=Assignment.Status.CLAIMED)
    return Assignment.objects.get(pk=first.pk, status=Assignment.Status.SUBMITTED), claimed


def ready_bundle(study: Study) -> ReportBundle:
    """A report bundle as the background build leaves it: a row marked ready and its ZIP on disk."""
    empty_zip = b"PK\x05\x06" + bytes(18)
    bundle = ReportBundle.objects.create(study=study, status=ReportBundle.Status.READY,
                                         file_name=f"{study.slug}-report.zip", size=len(empty_zip))
    directory = settings.VAR_DIR / "reports"
    directory.mkdir(parents=True, exist_ok=True)
    (directory / bundle.file_name).write_bytes(empty_zip)
    return bundle


def login_records() -> None:
    """What login throttling (django-axes) records: a lockout, a failed login and a login, for its admin pages."""
    from axes.models import AccessAttempt, AccessFailureLog, AccessLog

    seen = {"user_agent": "test", "ip_address": "203.0.113.9", "username": "guesser", "http_accept": "*/*",
            "path_info": "/accounts/login/"}
    AccessAttempt.objects.create(**seen, get_data="", post_data="", failures_since_start=5)
    AccessFailureLog.objects.create(**seen, locked_out=True)
    AccessLog.objects.create(**seen)


def build_world() -> World:
    own, other = build_team(OWN), build_team(OTHER)
    add_to_team(other.annotator, own.team, role=TeamMember.Role.ANNOTATOR)  # in our pool, not in our study
    superuser = make_user(superuser=True, username="root")
    login_records()
    sessions: dict[str, str | None] = {ANONYMOUS: None, PARTICIPANT: own.session, OTHER_PARTICIPANT: other.session}
    signed_in = {ANNOTATOR: own.annotator, OUTSIDE_ANNOTATOR: other.annotator, RESEARCHER: own.researcher,
                 OTHER_RESEARCHER: other.researcher, SUPERUSER: superuser}
    for caller, user in signed_in.items():
        browser = Client()
        browser.force_login(user)
        sessions[caller] = browser.session.session_key
    crowd = Client()  # through the other team's crowd link, as a worker arrives from the platform
    arrived = crowd.get(reverse("annotator:crowd-link", args=[other.study.invite_token]) + "?PROLIFIC_PID=crowd1")
    assert arrived.status_code == 302, arrived.content
    sessions[CROWD_WORKER] = crowd.session.session_key
    return World(own=own, other=other, superuser=superuser, sessions=sessions)


def client_for(world: World, caller: str) -> Client:
    """A fresh browser holding the caller's session cookie (none for anonymous)."""
    client = Client()
    if world.sessions[caller]:
        client.cookies[settings.SESSION_COOKIE_NAME] = world.sessions[caller]
    return client


# One entry per URL pattern


@dataclass(frozen=True)
class Access:
    """How one URL pattern answers each caller, and how to ask it.

    ``args`` builds the URL's arguments from the world (the owning team's objects); ``state``
    reads what a refused request must leave as it was; ``link`` marks a secret link (an invite, a
    study link) whose holder may read what it names, so the strangers' text check is skipped;
    ``shows`` is text the owning researcher finds on a list, which proves the list would show it
    to the other team's researcher too if it were not scoped; ``get`` is what a GET gets from
    everyone when ``method`` is POST (405, the default, for a POST-only view; None: not asked).
    """

    expect: Mapping[str, Expected]
    args: Arguments = lambda world: {}
    method: str = "GET"
    data: Mapping[str, str] = field(default_factory=dict)
    state: Callable[[World], Any] | None = None
    link: bool = False
    shows: Callable[[World], str] | None = None
    get: Expected | None = None


def _entry(base: dict[str, Expected], args: Arguments | None, options: dict[str, Any]) -> Access:
    """An Access from an audience's defaults, with per-caller overrides given by caller name."""
    expect = {**base, **{caller: options.pop(caller) for caller in CALLERS if caller in options}}
    if options.get("method") == "POST":
        options.setdefault("get", 405)
    return Access(expect=expect, args=args or (lambda world: {}), **options)


def public(args: Arguments | None = None, status: Expected = 200, **options: Any) -> Access:
    """Open to everyone alike."""
    return _entry(dict.fromkeys(CALLERS, status), args, options)


RESEARCHERS_ONLY = {
    ANONYMOUS: LOGIN, PARTICIPANT: LOGIN, OTHER_PARTICIPANT: LOGIN, ANNOTATOR: 403, OUTSIDE_ANNOTATOR: 403,
    CROWD_WORKER: 403,
}


def researcher_list(args: Arguments | None = None, ok: Expected = 200, **options: Any) -> Access:
    """A researcher page over the asker's own teams: every researcher gets ``ok``, each their own rows."""
    return _entry({**RESEARCHERS_ONLY, RESEARCHER: ok, OTHER_RESEARCHER: ok, SUPERUSER: ok}, args, options)


def researcher_object(args: Arguments, ok: Expected = 200, **options: Any) -> Access:
    """A researcher page about one of the owning team's objects: 404 for the other team's researcher."""
    return _entry({**RESEARCHERS_ONLY, RESEARCHER: ok, OTHER_RESEARCHER: 404, SUPERUSER: ok}, args, options)


def annotator_page(args: Arguments, ok: Expected = 200, **options: Any) -> Access:
    """An annotator's page: only the annotator whose membership or assignment it names; 404 for anyone else."""
    base: dict[str, Expected] = dict.fromkeys(CALLERS, 404)
    base.update({ANONYMOUS: LOGIN, PARTICIPANT: LOGIN, OTHER_PARTICIPANT: LOGIN, ANNOTATOR: ok})
    return _entry(base, args, options)


def participant_stage(here: Expected = Redirect("chat:chat"), **options: Any) -> Access:
    """A stage page of the owning team's chat study: only the session's participant, who is at the
    chat stage (``here`` is what they get); anyone else is sent to the study link."""
    base: dict[str, Expected] = dict.fromkeys(CALLERS, Redirect("chat:entry"))
    base[PARTICIPANT] = here
    return _entry(base, own_chat, options)


# What the URLs name: the owning team's objects


def binding(participant: Participant) -> tuple[str, str]:
    """Which browser holds the participant, and their resume code: what a release changes."""
    return Participant.objects.filter(pk=participant.pk).values_list("browser_token", "resume_code").get()


def own_chat(world: World) -> dict[str, Any]:
    return {"slug": world.own.chat.slug}


def own_study(world: World) -> dict[str, Any]:
    return {"slug": world.own.study.slug}


def own_instrument(world: World) -> dict[str, Any]:
    return {"pk": world.own.instrument.pk}


def own_question(world: World) -> dict[str, Any]:
    return {"pk": world.own.instrument.pk, "question_pk": world.own.instrument.questions.get().pk}


def instruments_state(world: World) -> list:
    return list(Instrument.objects.filter(team=world.own.team).order_by("pk").values_list(
        "pk", "questions__key", "questions__position"))


def own_run(world: World) -> dict[str, Any]:
    return {"pk": world.own.run.pk}


def claimed(world: World) -> dict[str, Any]:
    return {"assignment_id": world.own.claimed.pk}


def submitted(world: World) -> dict[str, Any]:
    return {"assignment_id": world.own.submitted.pk}


def rated_item(world: World) -> dict[str, Any]:
    return {"slug": world.own.study.slug, "item_id": world.own.submitted.item_id}


def forged_login_link(world: World) -> dict[str, Any]:
    return {"uidb64": urlsafe_base64_encode(force_bytes(world.own.researcher.pk)), "token": "forged-token"}


# What refused requests must leave alone


def own_import(world: World) -> dict[str, Any]:
    return {"pk": world.own.import_job.pk}


def import_state(world: World) -> str:
    return ImportJob.objects.get(pk=world.own.import_job.pk).status


def jobs_state(world: World) -> list:
    return list(Job.objects.filter(team=world.own.team).values_list("pk", "status"))


def run_state(world: World) -> tuple:
    return SimulationRun.objects.filter(pk=world.own.run.pk).values_list("status", "cancel_requested").get()


def annotations(assignment: str) -> Callable[[World], list]:
    """The versions and answers of the owning annotator's ``assignment`` ("claimed" or "submitted")."""

    def state(world: World) -> list:
        rows = Annotation.objects.filter(assignment=getattr(world.own, assignment))
        rows = rows.order_by("version", "response__answers")
        return list(rows.values_list("version", "status", "revision", "response__answers__value"))

    return state


def curations(world: World) -> list:
    return list(Curation.objects.filter(item__study=world.own.study).values_list("pk", "status", "note"))


def study_phase(world: World) -> tuple:
    return Study.objects.filter(pk=world.own.study.pk).values_list("is_open", "closed_at").get()


def standing(team: TeamWorld) -> tuple:
    """The annotator's membership and their assignments: what removing them changes."""
    membership = Membership.objects.filter(study=team.study, annotator=team.annotator).values_list("removed_at").get()
    return membership, sorted(Assignment.objects.filter(item__study=team.study).values_list("pk", "status"))


def invitations(world: World) -> list:
    return list(Invitation.objects.filter(study=world.own.study).values_list("pk", "email", "accepted_at"))


def invitation(world: World) -> dict[str, Any]:
    """An invitation to the owning annotator (already in the pool, so accepting it only marks it)."""
    made, _ = Invitation.objects.get_or_create(study=world.own.study, user=world.own.annotator)
    return {"invitation_id": made.pk}


def recordings(world: World) -> list:
    return list(Recording.objects.filter(episode__team=world.own.team).order_by("pk").values_list("pk", "url", "file"))


def bundles(world: World) -> int:
    return ReportBundle.objects.filter(study=world.own.study).count()


ANSWER = {"answer-barrier": "semantic"}

MATRIX: dict[str, Access] = {
    # Public
    "home": public(),
    "login": public(),
    "logout": public(method="POST"),
    "login-link": public(forged_login_link, LOGIN),
    "password_reset": public(),
    "password_reset_done": public(),
    "password_reset_confirm": public(forged_login_link),  # a forged token: "this link is used, expired or wrong"
    "password_reset_complete": public(),
    # The research core
    "benchmark:index": researcher_list(shows=lambda w: w.own.scenario.codename),
    "benchmark:episode": researcher_object(lambda w: {"pk": w.own.episode.pk}),
    "benchmark:scenarios": researcher_list(shows=lambda w: w.own.scenario.codename),
    "benchmark:scenario-new": researcher_list(),
    "benchmark:scenario-edit": researcher_object(lambda w: {"pk": w.own.scenario.pk}),
    "benchmark:scenario-picker": researcher_list(data={"scope": "cast", "field": "scenarios"},
                                                 shows=lambda w: w.own.scenario.codename),
    "benchmark:characters": researcher_list(),
    "benchmark:character-new": researcher_list(),
    "benchmark:character-edit": researcher_object(lambda w: {"pk": w.own.scenario.roles.first().character_id}),
    "benchmark:episode-recording": researcher_object(lambda w: {"pk": w.own.episode.pk}),
    # On the episode of the annotator's submitted item: the claimed one's upload must stay for annotator:recording.
    "benchmark:episode-recording-attach": researcher_object(
        lambda w: {"pk": w.own.submitted.item.episode_id}, Redirect("benchmark:episode"), method="POST",
        data={"url": "https://media.example.org/talk.mp4", "kind": "video"}, state=recordings,
    ),
    "benchmark:episode-recording-remove": researcher_object(
        lambda w: {"pk": w.own.submitted.item.episode_id}, Redirect("benchmark:episode"), method="POST",
        state=recordings,
    ),
    "benchmark:results": researcher_list(shows=lambda w: w.own.episode.tag),
    "benchmark:results-json": researcher_list(),
    "benchmark:results-csv": researcher_list(lambda w: {"table": "means"}),
    "benchmark:results-figure": researcher_list(lambda w: {"name": "means"}),
    "benchmark:results-agentsense": researcher_list(shows=lambda w: w.own.episode.tag),
    "benchmark:results-agentsense-json": researcher_list(),
    "benchmark:results-agentsense-csv": researcher_list(lambda w: {"table": "completion"}),
    "benchmark:results-promediate": researcher_list(shows=lambda w: w.own.episode.tag),
    "benchmark:results-promediate-json": researcher_list(),
    "benchmark:results-promediate-csv": researcher_list(lambda w: {"table": "table1"}),
    "benchmark:results-promediate-zip": researcher_list(),
    "benchmark:results-shrec": researcher_list(),
    # the world builds no SHREC task set: the downloads say so (400); tests/benchmark/test_shrec_results_views.py
    # checks them with one, and another team's task set answered 404
    "benchmark:results-shrec-json": researcher_list(ok=400),
    "benchmark:results-shrec-csv": researcher_list(lambda w: {"table": "table1"}, ok=400),
    "benchmark:results-shrec-zip": researcher_list(ok=400),
    "benchmark:instruments": researcher_list(shows=lambda w: w.own.instrument.name),
    "benchmark:instrument-new": researcher_list(),
    "benchmark:instrument-import": researcher_list(),
    "benchmark:instrument": researcher_object(own_instrument),
    "benchmark:instrument-preview": researcher_object(own_instrument),
    "benchmark:instrument-question-new": researcher_object(own_instrument, data={"kind": "likert"}),
    "benchmark:instrument-question": researcher_object(own_question),
    "benchmark:instrument-question-move": researcher_object(
        own_question, Redirect("benchmark:instrument"), method="POST", data={"direction": "down"},
        state=instruments_state,
    ),
    "benchmark:instrument-question-delete": researcher_object(
        own_question, Redirect("benchmark:instrument"), method="POST", state=instruments_state,
    ),
    "benchmark:instrument-version": researcher_object(
        own_instrument, Redirect("benchmark:instrument"), method="POST", state=instruments_state,
    ),
    "benchmark:instrument-copy": researcher_object(own_instrument),
    "benchmark:instrument-export": researcher_object(own_instrument),
    "benchmark:runs": researcher_list(shows=lambda w: w.own.run.tag),
    "benchmark:run-new": researcher_list(),
    "benchmark:run": researcher_object(own_run),
    "benchmark:run-progress": researcher_object(own_run),
    "benchmark:run-cancel": researcher_object(own_run, Redirect("benchmark:run"), method="POST", state=run_state),
    "benchmark:run-resume": researcher_object(own_run, Redirect("benchmark:run"), method="POST", state=run_state),
    "benchmark:import": researcher_list(shows=lambda w: w.own.import_job.file_names[0]),
    "benchmark:import-job": researcher_object(own_import),
    "benchmark:import-job-progress": researcher_object(own_import),
    "benchmark:import-job-start": researcher_object(own_import, Redirect("benchmark:import-job"), method="POST",
                                                    state=import_state),
    "benchmark:jobs": researcher_list(shows=lambda w: w.own.job.label),
    "benchmark:job-retry": researcher_object(lambda w: {"pk": w.own.job.pk}, Redirect("benchmark:jobs"), method="POST",
                                             state=jobs_state),
    # Annotators (the invite link is a secret: whoever holds it may join)
    "annotator:index": public(anonymous=LOGIN, participant=LOGIN, other_participant=LOGIN),
    # Joining is a POST (a GET shows the study and a confirm button); callers without an account get
    # the sign-up form back.
    "annotator:join": public(lambda w: {"token": w.own.study.invite_token}, Redirect("annotator:instructions"),
                             method="POST", get=200, anonymous=200, participant=200, other_participant=200,
                             link=True),
    "annotator:instructions": annotator_page(own_study),
    "annotator:next": annotator_page(own_study, Redirect("annotator:item")),
    # the study asks no comprehension questions and the annotator is not disqualified: on to their item
    "annotator:comprehension": annotator_page(own_study, Redirect("annotator:next")),
    "annotator:end": annotator_page(own_study, Redirect("annotator:next")),
    # A crowd platform's link names the worker in its query; without one, a page says so to everyone.
    "annotator:crowd-link": public(lambda w: {"token": w.own.study.invite_token}, 400, link=True),
    "annotator:item": annotator_page(claimed),
    "annotator:recording": annotator_page(claimed),
    "annotator:draft": annotator_page(claimed, method="POST", data=ANSWER, state=annotations("claimed")),
    "annotator:submit": annotator_page(claimed, Redirect("annotator:next"), method="POST", data=ANSWER,
                                       state=annotations("claimed"), get=Redirect("annotator:item")),
    "annotator:edit": annotator_page(submitted, Redirect("annotator:item"), method="POST", data={"version": "1"},
                                     state=annotations("submitted")),
    "annotator:training-retry": annotator_page(own_study, Redirect("annotator:next"), method="POST"),
    "annotator:cancel-edit": annotator_page(submitted, Redirect("annotator:item"), method="POST",
                                            data={"version": "2"}, state=annotations("submitted")),
    # Researchers of annotation studies
    "annotator:study-list": researcher_list(shows=lambda w: w.own.study.title),
    "annotator:study-create": researcher_list(),
    "annotator:human-baseline-create": researcher_list(),
    "annotator:dashboard": researcher_object(own_study),
    "annotator:annotator-agreement": researcher_object(own_study),
    "annotator:export": researcher_object(lambda w: {"slug": w.own.study.slug, "fmt": "csv"}),
    "annotator:ratings-import": researcher_object(own_study),
    "annotator:item-setup": researcher_object(
        lambda w: {"slug": w.own.study.slug, "item_id": w.own.study.items.order_by("position").first().pk}
    ),
    "annotator:restore-annotator": researcher_object(
        lambda w: {"slug": w.own.study.slug, "user_id": w.own.annotator.pk}, Redirect("annotator:dashboard"),
        method="POST",
    ),
    "annotator:report": researcher_object(own_study),
    "annotator:report-download": researcher_object(lambda w: {"slug": w.own.study.slug, "fmt": "json"}),
    "annotator:report-tables": researcher_object(own_study),
    "annotator:report-table": researcher_object(lambda w: {"slug": w.own.study.slug, "name": "statistics.csv"}),
    "annotator:report-bundle": researcher_object(own_study, Redirect("annotator:report"), method="POST",
                                                 state=bundles, get=None),  # its GET is the panel htmx polls
    "annotator:report-bundle-file": researcher_object(
        lambda w: {"slug": w.own.study.slug, "bundle_id": w.own.bundle.pk}
    ),
    # Researchers and the study's curators (none in this world): per-item review and adjudication
    "annotator:adjudication-queue": researcher_object(own_study),
    "annotator:item-review": researcher_object(rated_item),
    "annotator:adjudicate": researcher_object(rated_item, Redirect("annotator:item-review"), method="POST",
                                              data={"action": "draft", "note": "matrix"}, state=curations),
    # A study's life (annotator.lifecycle, annotator.pool)
    "annotator:study-settings": researcher_object(own_study),
    "annotator:study-phase": researcher_object(own_study, Redirect("annotator:dashboard"), method="POST",
                                               data={"action": "close"}, state=study_phase),
    "annotator:study-items": researcher_object(own_study),
    "annotator:study-log": researcher_object(own_study),
    "annotator:pool": researcher_object(own_study),
    "annotator:pool-action": researcher_object(
        lambda w: {"slug": w.own.study.slug, "user_id": w.own.annotator.pk}, Redirect("annotator:pool"),
        method="POST", data={"action": "remove"}, state=lambda w: standing(w.own),
    ),
    "annotator:invite": researcher_object(own_study, Redirect("annotator:pool"), method="POST",
                                          data={"email": f"{OWN}@example.org"}, state=invitations),
    "annotator:accept-invitation": annotator_page(
        invitation, Redirect("annotator:instructions"), method="POST", state=invitations,
    ),
    # Researchers of chat studies
    "chat:index": researcher_list(shows=lambda w: w.own.chat.title),
    "chat:study-create": researcher_list(),
    "chat:monitor": researcher_object(own_chat),
    "chat:monitor-live": researcher_object(own_chat),
    "chat:study-edit": researcher_object(own_chat),
    "chat:export": researcher_object(own_chat),
    "chat:transcript": researcher_object(lambda w: {"slug": w.own.chat.slug, "pk": w.own.finished_participant.pk}),
    "chat:release": researcher_object(
        lambda w: {"slug": w.own.chat.slug, "pk": w.own.finished_participant.pk}, Redirect("chat:transcript"),
        method="POST", state=lambda w: binding(w.own.finished_participant),
    ),
    # Participants (the study link is public; the stages belong to the session's participant)
    "chat:entry": public(own_chat, participant=Redirect("chat:chat"), link=True),
    "chat:consent": participant_stage(),
    "chat:declined": participant_stage(),
    "chat:briefing": participant_stage(),
    "chat:chat": participant_stage(here=200),
    "chat:questionnaire": participant_stage(),
    "chat:done": participant_stage(),
    "chat:screened-out": participant_stage(),
    "chat:technical-problem": participant_stage(),
    # The resume form (its GET only fills in the fields; a POST with the right code moves a participant)
    "chat:resume": public(own_chat, link=True),
}


# Websocket routes, keyed by route

CONNECTS = "connects"
REFUSED = "refused"


@dataclass(frozen=True)
class SocketAccess:
    args: Arguments
    expect: Mapping[str, str]


SOCKETS: dict[str, SocketAccess] = {
    # The session names the participant, nothing in the URL does: only their own browser connects.
    "ws/chat/<slug:slug>/": SocketAccess(own_chat, {c: CONNECTS if c == PARTICIPANT else REFUSED for c in CALLERS}),
}


# The URL conf, walked


@dataclass(frozen=True)
class Route:
    name: str | None  # namespace:name, or None for an unnamed pattern
    route: str  # the whole route as written, e.g. "admin/benchmark/episode/<path:object_id>/"
    pattern: URLPattern

    @property
    def key(self) -> str:
        return self.name or f"<{self.route}>"


def walk(patterns: list, prefix: str = "", namespace: str = "") -> Iterator[Route]:
    """Every pattern of ``patterns``, included ones (with their namespaces) and nested socket routers too."""
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            inner = pattern.namespace
            nested = f"{namespace}:{inner}" if namespace and inner else (inner or namespace)
            yield from walk(pattern.url_patterns, prefix + str(pattern.pattern), nested)
        elif isinstance(pattern.callback, URLRouter):
            yield from walk(pattern.callback.routes, prefix + str(pattern.pattern), namespace)
        else:
            name = pattern.name and (f"{namespace}:{pattern.name}" if namespace else pattern.name)
            yield Route(name=name, route=prefix + str(pattern.pattern), pattern=pattern)


ROUTES = list(walk(get_resolver().url_patterns))
ADMIN_ROUTES = [route for route in ROUTES if route.route.startswith("admin/")]
SITE_ROUTES = [route for route in ROUTES if route not in ADMIN_ROUTES]


# The admin: one rule for every pattern

MODEL_ADMINS = {(model._meta.app_label, model._meta.model_name): model_admin
                for model, model_admin in admin.site._registry.items()}


@dataclass
class AdminCase:
    urls: list[str]
    superuser: Expected
    others: Expected = ADMIN_LOGIN
    method: str = "GET"


def admin_case(route: Route, world: World) -> AdminCase:
    """The requests that exercise one admin pattern, and what superusers and everyone else get.

    Superusers get 200 where the ModelAdmin allows the action (an object page opens read-only
    when only viewing is allowed) and 403 where it refuses it; everyone else is sent to the admin
    login. The admin login page itself is open to all; logging out sends a non-superuser to the index.
    """
    if route.name in HUEY_DASHBOARD:  # Huey's dashboard: its model has no table, so no row to ask about
        return HUEY_DASHBOARD[route.name](route)
    model_admin = MODEL_ADMINS.get(tuple(route.route.split("/")[1:3]))
    if model_admin is not None:  # admin/<app_label>/<model_name>/...: one model's pages
        return model_page(route, model_admin, world)
    site_pages = ("admin:index", "admin:password_change", "admin:password_change_done", "admin:jsi18n")
    if route.name in site_pages:
        return AdminCase([reverse(route.name)], 200)
    if route.name == "admin:login":
        return AdminCase([reverse(route.name)], Redirect("admin:index"), others=200)
    if route.name == "admin:logout":
        return AdminCase([reverse(route.name)], 200, others=Redirect("admin:index"), method="POST")
    if route.name == "admin:app_list":
        labels = sorted({app_label for app_label, _ in MODEL_ADMINS})
        return AdminCase([reverse(route.name, kwargs={"app_label": label}) for label in labels], 200)
    if route.name == "admin:autocomplete":
        return AdminCase([autocomplete_url()], 200)
    if route.name == "admin:view_on_site":
        episode = world.own.episode
        kwargs = {"content_type_id": ContentType.objects.get_for_model(Episode).pk, "object_id": episode.pk}
        return AdminCase([reverse(route.name, kwargs=kwargs)], 302 if hasattr(episode, "get_absolute_url") else 404)
    if route.name is None and route.pattern.callback.__name__ == "catch_all_view":
        return AdminCase([reverse("admin:index") + "no-such-page/"], 404)
    raise AssertionError(
        f"admin pattern {route.key} has no rule: teach admin_case to ask it (every admin pattern is asked)"
    )


HUEY_DASHBOARD: dict[str, Callable[[Route], AdminCase]] = {
    "admin:hueystats_hueydashboard_changelist": lambda route: AdminCase([reverse(route.name)], 200),
    "admin:hueystats_dashboard_fragment": lambda route: AdminCase([reverse(route.name)], 200),
    "admin:hueystats_dashboard_events": lambda route: AdminCase([reverse(route.name)], 200),
    # No operation named: nothing is flushed or revoked, and the superuser is sent back to the dashboard.
    "admin:hueystats_dashboard_action": lambda route: AdminCase(
        [reverse(route.name)], Redirect("admin:hueystats_hueydashboard_changelist"), method="POST"
    ),
}


def model_page(route: Route, model_admin: admin.ModelAdmin, world: World) -> AdminCase:
    """One of a registered model's admin pages, asked about a real row of that model."""
    model = model_admin.model
    info = f"{model._meta.app_label}_{model._meta.model_name}"
    obj = representative(model, world)
    parameters = set(route.pattern.pattern.converters)
    assert parameters <= {"object_id", "id"}, f"admin pattern {route.key}: no representative value for {parameters}"
    if route.name is None:  # <object_id>/ alone: the old address of the change page, redirected to it
        return AdminCase(["/" + re.sub(r"<[^>]+>", str(obj.pk), route.route)], Redirect(f"admin:{info}_change"))
    request = RequestFactory().get("/")
    request.user = world.superuser
    allowed = {
        "changelist": lambda: model_admin.has_view_or_change_permission(request),
        "add": lambda: model_admin.has_add_permission(request),
        "change": lambda: model_admin.has_view_or_change_permission(request, obj),
        "history": lambda: model_admin.has_view_or_change_permission(request, obj),
        "delete": lambda: model_admin.has_delete_permission(request, obj),
        "password_change": lambda: model_admin.has_change_permission(request, obj),  # the user admin's own page
    }
    action = route.name.removeprefix(f"admin:{info}_")
    assert action in allowed, f"admin pattern {route.key}: no rule for the model page {action!r}"
    url = reverse(route.name, kwargs=dict.fromkeys(parameters, obj.pk))
    return AdminCase([url], 200 if allowed[action]() else 403)


def representative(model: type[models.Model], world: World) -> models.Model:
    """A real row of ``model``: the owning team's where the world names one, else the first there is."""
    named = {
        Team: world.own.team, Barrier: world.own.barrier, SimulationRun: world.own.run, Study: world.own.study,
        Episode: world.own.episode, Scenario: world.own.scenario, ChatStudy: world.own.chat,
        Participant: world.own.finished_participant, ReportBundle: world.own.bundle, Job: world.own.job,
        type(world.own.researcher): world.own.researcher,
    }
    obj = named.get(model) or model._default_manager.order_by("pk").first()
    assert obj is not None, f"the world has no {model.__name__}: build one in build_team so its admin pages are asked"
    return obj


def autocomplete_url() -> str:
    """The autocomplete view for the first admin field that uses it (it answers 200 only for a real field)."""
    for (app_label, model_name), model_admin in MODEL_ADMINS.items():
        for field_name in model_admin.autocomplete_fields:
            query = f"app_label={app_label}&model_name={model_name}&field_name={field_name}"
            return f"{reverse('admin:autocomplete')}?{query}"
    raise AssertionError("no admin field uses autocomplete: give admin:autocomplete another representative request")


# The tests


def test_every_url_pattern_has_an_entry():
    unnamed = [route.route for route in SITE_ROUTES if route.name is None]
    assert not unnamed, f"URL patterns without a name cannot be in the matrix: {unnamed}"
    names = {route.name for route in SITE_ROUTES}
    missing, stale = sorted(names - set(MATRIX)), sorted(set(MATRIX) - names)
    assert not missing, f"URL patterns with no entry in MATRIX (say what every caller gets): {missing}"
    assert not stale, f"MATRIX entries for URL patterns that no longer exist: {stale}"
    assert all(set(access.expect) == set(CALLERS) for access in MATRIX.values())


def test_every_websocket_route_has_an_entry():
    routes = {route.route for route in walk(websocket_urlpatterns)}
    missing, stale = sorted(routes - set(SOCKETS)), sorted(set(SOCKETS) - routes)
    assert not missing, f"websocket routes with no entry in SOCKETS: {missing}"
    assert not stale, f"SOCKETS entries for routes that no longer exist: {stale}"


@pytest.fixture(scope="class")
def world(django_db_setup, django_db_blocker, tmp_path_factory) -> Iterator[World]:
    """Both teams' worlds, built once in a transaction that every test rolls back to; rolled back at the end."""
    with override_settings(VAR_DIR=tmp_path_factory.mktemp("var")), django_db_blocker.unblock():
        with transaction.atomic():
            yield build_world()
            transaction.set_rollback(True)


@pytest.mark.django_db
class TestPages:
    @pytest.mark.parametrize("name", list(MATRIX))
    @pytest.mark.parametrize("caller", CALLERS)
    def test_each_caller_gets_what_the_matrix_says(self, world, name, caller):
        access = MATRIX[name]
        url = reverse(name, kwargs=access.args(world))
        before = access.state(world) if access.state else None
        response = getattr(client_for(world, caller), access.method.lower())(url, access.data)

        expected = access.expect[caller]
        check_answer(response, expected, f"{access.method} {url} as {caller}")
        if refuses(expected) and access.state:
            assert access.state(world) == before, f"{access.method} {url} as {caller} was refused but changed data"
        if response.status_code == 200:
            body = page_text(response)
            if caller in (RESEARCHER, SUPERUSER) and access.shows:
                assert access.shows(world) in body, f"{url} does not show {caller} the owning team's objects"
            if caller in STRANGERS and not access.link:
                assert OWN not in body, f"{url} shows the owning team's data to {caller}"
            if caller not in (RESEARCHER, SUPERUSER):
                assert PARTICIPANT_SECRET not in body, f"{url} shows another participant's id to {caller}"

    @pytest.mark.parametrize("name", [name for name, access in MATRIX.items() if access.get is not None])
    @pytest.mark.parametrize("caller", CALLERS)
    def test_get_on_a_post_url_answers_as_the_matrix_says(self, world, name, caller):
        access = MATRIX[name]
        url = reverse(name, kwargs=access.args(world))
        before = access.state(world) if access.state else None
        check_answer(client_for(world, caller).get(url), access.get, f"GET {url} as {caller}")
        assert not access.state or access.state(world) == before

    @pytest.mark.parametrize("route", ADMIN_ROUTES, ids=lambda route: route.key)
    @pytest.mark.parametrize("caller", CALLERS)
    def test_admin_lets_in_superusers_only(self, world, route, caller):
        case = admin_case(route, world)
        for url in case.urls:
            response = getattr(client_for(world, caller), case.method.lower())(url)
            check_answer(response, case.superuser if caller == SUPERUSER else case.others, f"{url} as {caller}")
            assert caller == SUPERUSER or route.name == "admin:login" or response.status_code != 200


@pytest.fixture
def fast_offline_agent(settings):
    """The offline model without typing delay, so the socket that connects finishes its agent turn at once."""
    settings.PARLEY_CHAT_SCRIPTED_DELAY = 0
    settings.PARLEY_MODELS = {"agent": "", "partner": "", "judge": "", "neutralizer": ""}
    return settings


@pytest.mark.django_db(transaction=True, serialized_rollback=True)  # the socket reads from other threads
@pytest.mark.parametrize("route", list(SOCKETS))
@pytest.mark.parametrize("caller", CALLERS)
async def test_each_caller_gets_what_the_socket_matrix_says(fast_offline_agent, tmp_path, route, caller):
    from config.asgi import application

    with override_settings(VAR_DIR=tmp_path):
        world = await database_sync_to_async(build_world)()
    access = SOCKETS[route]
    path = "/" + re.sub(r"<(?:\w+:)?(\w+)>", lambda match: str(access.args(world)[match.group(1)]), route)
    headers = [(b"host", b"127.0.0.1:8000"), (b"origin", ORIGIN.encode())]
    if world.sessions[caller]:
        headers.append((b"cookie", f"{settings.SESSION_COOKIE_NAME}={world.sessions[caller]}".encode()))
    communicator = WebsocketCommunicator(application, path, headers=headers)
    try:
        connected, _ = await communicator.connect(timeout=10)
        assert connected  # the consumer accepts, then closes with a code that says why
        first = await communicator.receive_output(timeout=10)
        if access.expect[caller] == CONNECTS:
            assert first["type"] == "websocket.send", f"{path} as {caller}: closed with {first.get('code')}"
            assert json.loads(first["text"])["type"] == "history"
        else:
            assert first["type"] == "websocket.close", f"{path} as {caller}: not refused, got {first}"
            assert first.get("code", 1000) >= 4000, f"{path} as {caller}: closed without a refusal code"
    finally:
        await communicator.disconnect(timeout=10)
        await wait_for_agent_turns(timeout=10)
        layer = get_channel_layer()
        await layer.flush()
        if hasattr(layer, "close_pools"):  # Redis: close this test's connections before its event loop ends
            await layer.close_pools()
