"""Crowd annotators from a platform's link: made, bound to one browser, checked for comprehension, given codes."""

from functools import partial

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from annotator import crowd
from annotator.exports import records
from annotator.models import Assignment, CrowdWorker, Membership, StudyEvent
from benchmark.models import Instrument
from benchmark.recruiting import ArrivalIds, digest, new_token
from tests.annotator.builders import add_answer, make_annotation, make_question, make_study
from tests.builders import make_researcher
from tests.concurrency import at_once

pytestmark = pytest.mark.django_db

PID = "5f1e2d3c4b5a69788796a5b4"


def crowd_study(**fields):
    fields.setdefault("items", 2)
    fields.setdefault("crowd_link", True)
    fields.setdefault("completion_code", "C0MPL3TE")
    fields.setdefault("screen_out_code", "SCR33N")
    return make_study(overlap=1, **fields)


def comprehension_instrument():
    instrument = Instrument.objects.create(name="Do you understand the task?")
    make_question(
        instrument=instrument, key="task", position=0, kind="multiple_choice", prompt="What do you rate?",
        options={"choices": [{"value": "spelling", "label": "Their spelling"},
                             {"value": "barrier", "label": "Which barrier the agent spoke under"}],
                 "correct": "barrier"},
    )
    make_question(instrument=instrument, key="unclear", position=1, kind="text", prompt="Anything unclear?",
                  required=False, options={"max_length": 200})
    return instrument


def link(study, pid=PID, **extra):
    query = {"PROLIFIC_PID": pid, "STUDY_ID": "st1", "SESSION_ID": "se1", **extra}
    return reverse("annotator:crowd-link", args=[study.invite_token]) + "?" + "&".join(
        f"{name}={value}" for name, value in query.items()
    )


def arrive(client, study, pid=PID):
    """Open the link and read the instructions: the worker is then at their first item (or the check)."""
    response = client.get(link(study, pid))
    assert response.status_code == 302, response.content.decode()
    client.post(reverse("annotator:instructions", args=[study.slug]))
    return CrowdWorker.objects.get(study=study, participant_id=pid)


# The link


def test_the_link_makes_an_account_signs_it_in_and_binds_the_browser():
    study = crowd_study()
    client = Client()
    response = client.get(link(study))
    assert response.status_code == 302 and response.url == reverse("annotator:next", args=[study.slug])
    worker = CrowdWorker.objects.get(study=study)
    assert (worker.participant_id, worker.platform_study_id, worker.platform_session_id) == (PID, "st1", "se1")
    assert worker.user.is_active and not worker.user.has_usable_password()
    token = response.cookies[crowd.COOKIE_NAME]
    assert token["httponly"] and worker.browser_token == digest(token.value) != token.value
    assert Membership.objects.filter(study=study, annotator=worker.user).exists()
    assert int(client.session["_auth_user_id"]) == worker.user_id
    assert client.get(response.url).url == reverse("annotator:instructions", args=[study.slug])
    assert StudyEvent.objects.filter(study=study, action="crowd-joined", annotator=worker.user).exists()


def test_the_same_browser_coming_back_resumes_even_after_logging_out():
    study = crowd_study()
    client = Client()
    worker = arrive(client, study)
    item = client.get(reverse("annotator:next", args=[study.slug]))
    client.post(reverse("logout"))  # the site's log-out ends the session; the browser keeps its cookie
    assert "_auth_user_id" not in client.session
    again = client.get(link(study))
    assert again.status_code == 302
    assert CrowdWorker.objects.filter(study=study).count() == 1
    assert int(client.session["_auth_user_id"]) == worker.user_id
    assert client.get(reverse("annotator:next", args=[study.slug])).url == item.url  # the same claim


def test_the_same_id_from_another_browser_is_refused_politely():
    study = crowd_study()
    arrive(Client(), study)
    other = Client()
    response = other.get(link(study))
    assert response.status_code == 409
    assert "already annotating for this study in another browser" in response.content.decode()
    assert "_auth_user_id" not in other.session
    assert CrowdWorker.objects.count() == 1


def test_a_forged_cookie_does_not_take_over_an_id():
    study = crowd_study()
    arrive(Client(), study)
    other = Client()
    other.cookies[crowd.COOKIE_NAME] = "x" * 32
    assert other.get(link(study)).status_code == 409


@pytest.mark.parametrize(("query", "says"), [
    ("", "This link has no participant id"),
    ("?PROLIFIC_PID=%20%20", "This link has no participant id"),
    ("?PROLIFIC_PID=" + "a" * 101, "Use up to 100 letters"),
    ("?PROLIFIC_PID=%3Cscript%3E", "cannot be used"),
])
def test_a_missing_blank_or_bad_id_is_refused_with_a_clear_page(client, query, says):
    study = crowd_study()
    response = client.get(reverse("annotator:crowd-link", args=[study.invite_token]) + query)
    assert response.status_code == 400
    assert says in response.content.decode()
    assert "<script>" not in response.content.decode()
    assert not CrowdWorker.objects.exists()


def test_a_study_without_a_crowd_link_refuses_it(client):
    study = crowd_study(crowd_link=False)
    response = client.get(link(study))
    assert response.status_code == 404
    assert "does not take annotators from a crowd platform" in response.content.decode()


def test_a_closed_study_takes_no_new_worker_but_lets_one_back():
    study = crowd_study()
    client = Client()
    arrive(client, study)
    study.is_open = False
    study.save()
    assert Client().get(link(study, "newcomer")).status_code == 410
    assert client.get(link(study)).status_code == 302


def test_a_full_pool_takes_no_new_worker():
    study = crowd_study(max_annotators=1)
    arrive(Client(), study)
    response = Client().get(link(study, "second"))
    assert response.status_code == 410
    assert "all the annotators it needs" in response.content.decode()
    assert get_user_model().objects.filter(username__startswith="crowd-").count() == 1


def test_someone_signed_in_with_their_own_account_is_not_turned_into_a_worker(client):
    study = crowd_study()
    researcher = make_researcher()
    client.force_login(researcher)
    response = client.get(link(study))
    assert response.status_code == 409
    assert int(client.session["_auth_user_id"]) == researcher.pk
    assert not CrowdWorker.objects.exists()


def test_new_workers_from_one_address_are_throttled(client, settings):
    settings.PARLEY_SIGNUP_RATE = "1/hour"
    study = crowd_study()
    assert Client().get(link(study, "one")).status_code == 302
    response = Client().get(link(study, "two"))
    assert response.status_code == 429 and response["Retry-After"]


# The comprehension check


def check(client, study, answer):
    return client.post(reverse("annotator:comprehension", args=[study.slug]), {"task": answer, "unclear": ""})


def test_the_check_comes_before_the_first_item_and_passing_it_opens_the_queue():
    study = crowd_study(comprehension_instrument=comprehension_instrument())
    client = Client()
    worker = arrive(client, study)
    response = client.get(reverse("annotator:next", args=[study.slug]))
    assert response.url == reverse("annotator:comprehension", args=[study.slug])
    page = client.get(response.url).content.decode()
    assert "What do you rate?" in page and "correct" not in page.lower().replace("correctly", "")
    assert check(client, study, "barrier").url == reverse("annotator:next", args=[study.slug])
    membership = Membership.objects.get(study=study, annotator=worker.user)
    assert membership.comprehension_passed_at is not None and membership.comprehension_failures == 0
    assert client.get(reverse("annotator:next", args=[study.slug])).url.startswith("/annotate/a/")


def test_one_wrong_answer_gives_a_second_attempt_and_a_second_screens_out():
    study = crowd_study(comprehension_instrument=comprehension_instrument())
    client = Client()
    worker = arrive(client, study)
    first = check(client, study, "spelling")
    assert first.status_code == 200 and "This is your last attempt" in first.content.decode()
    assert Membership.objects.get(annotator=worker.user).comprehension_failures == 1
    second = check(client, study, "spelling")
    assert second.url == reverse("annotator:end", args=[study.slug])
    membership = Membership.objects.get(annotator=worker.user)
    assert membership.comprehension_failures == 2 and membership.disqualified_at is not None
    end = client.get(second.url).content.decode()
    assert "SCR33N" in end and "C0MPL3TE" not in end
    worker.refresh_from_db()
    assert worker.screened_out_at is not None and worker.finished_at is None
    # No item afterwards, and no third attempt.
    assert "SCR33N" in client.get(reverse("annotator:next", args=[study.slug])).content.decode()
    assert check(client, study, "barrier").url == reverse("annotator:next", args=[study.slug])
    assert Membership.objects.get(annotator=worker.user).comprehension_passed_at is None
    assert not Assignment.objects.filter(annotator=worker.user).exists()


def test_a_second_try_that_is_right_passes():
    study = crowd_study(comprehension_instrument=comprehension_instrument())
    client = Client()
    worker = arrive(client, study)
    check(client, study, "spelling")
    assert check(client, study, "barrier").url == reverse("annotator:next", args=[study.slug])
    assert Membership.objects.get(annotator=worker.user).disqualified_at is None


def test_a_missing_answer_is_named_and_counts_no_failure():
    study = crowd_study(comprehension_instrument=comprehension_instrument())
    client = Client()
    worker = arrive(client, study)
    response = check(client, study, "")
    assert response.status_code == 400 and "Please answer question 1" in response.content.decode()
    assert Membership.objects.get(annotator=worker.user).comprehension_failures == 0


def test_an_annotator_with_an_account_takes_the_check_too_and_gets_no_code(client):
    study = crowd_study(comprehension_instrument=comprehension_instrument(), annotators=1)
    annotator = study.annotators.get()
    Membership.objects.filter(annotator=annotator).update(instructions_read_at="2026-01-01T00:00Z")
    client.force_login(annotator)
    check(client, study, "spelling")
    page = client.get(check(client, study, "spelling").url).content.decode()
    assert "Thank you for your time" in page and "SCR33N" not in page


# The end


def test_a_worker_with_nothing_left_gets_the_completion_code_once():
    study = crowd_study()
    client = Client()
    worker = arrive(client, study)
    for _ in range(2):
        assignment = Assignment.objects.get(pk=int(client.get(reverse("annotator:next", args=[study.slug]))
                                                   .url.rstrip("/").rsplit("/", 1)[1]))
        make_annotation(assignment, submitted_at=timezone.now())
        Assignment.objects.filter(pk=assignment.pk).update(status="submitted", submitted_at=timezone.now())
    page = client.get(reverse("annotator:next", args=[study.slug])).content.decode()
    assert "Your completion code is" in page and "C0MPL3TE" in page
    worker.refresh_from_db()
    first = worker.finished_at
    assert first is not None
    client.get(reverse("annotator:next", args=[study.slug]))
    worker.refresh_from_db()
    assert worker.finished_at == first


def test_a_paused_study_gives_no_code_yet():
    study = crowd_study()
    client = Client()
    worker = arrive(client, study)
    study.is_open = False
    study.save()
    page = client.get(reverse("annotator:next", args=[study.slug])).content.decode()
    assert "C0MPL3TE" not in page
    worker.refresh_from_db()
    assert worker.finished_at is None


def test_an_annotator_with_an_account_sees_no_code(client):
    study = crowd_study(annotators=1)
    annotator = study.annotators.get()
    Membership.objects.filter(annotator=annotator).update(instructions_read_at="2026-01-01T00:00Z")
    study.is_open = False
    study.closed_at = "2026-01-01T00:00Z"
    study.save()
    client.force_login(annotator)
    page = client.get(reverse("annotator:next", args=[study.slug])).content.decode()
    assert "Nothing is left for you" in page and "C0MPL3TE" not in page


def test_the_end_page_sends_a_member_still_at_work_to_their_next_item():
    study = crowd_study()
    client = Client()
    arrive(client, study)
    assert client.get(reverse("annotator:end", args=[study.slug])).url == reverse("annotator:next",
                                                                                   args=[study.slug])


# The export


def test_the_export_names_each_workers_platform_id_and_outcome():
    study = crowd_study(annotators=1)
    worker = crowd.arrive(study, ArrivalIds(participant_id=PID), new_token())
    member = study.annotators.exclude(pk=worker.user_id).get()
    for annotator in (worker.user, member):
        item = study.items.exclude(assignments__isnull=False).first()
        assignment = Assignment.objects.create(item=item, annotator=annotator, status="submitted",
                                               claimed_at="2026-01-01T00:00Z", lease_expires_at="2026-01-01T01:00Z",
                                               submitted_at="2026-01-01T00:30Z")
        add_answer(make_annotation(assignment, submitted_at=timezone.now()), study.instrument.questions.get(), "none")
    crowd.finish(worker)
    rows = {row["annotator"]: row for row in records(study)}
    assert rows[f"a{worker.user_id}"]["participant_id"] == PID
    assert rows[f"a{worker.user_id}"]["crowd_outcome"] == "finished"
    assert rows[f"a{member.pk}"]["participant_id"] is None and rows[f"a{member.pk}"]["crowd_outcome"] is None


def test_an_id_is_bound_per_study():
    first, second = crowd_study(), crowd_study()
    client = Client()
    one = arrive(client, first)
    two = arrive(client, second)
    assert one.user_id != two.user_id
    assert one.participant_id == two.participant_id


# Races


@pytest.mark.concurrency
@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_the_same_id_opened_twice_at_once_makes_one_worker():
    study = crowd_study()
    ids = ArrivalIds(participant_id=PID)
    browser = new_token()
    # The same browser twice (two tabs): both are let in, as the one worker.
    same = at_once(*(partial(crowd.arrive, study, ids, browser) for _ in range(2)))
    assert all(isinstance(outcome, CrowdWorker) for outcome in same), same
    assert {worker.pk for worker in same} == set(CrowdWorker.objects.filter(study=study).values_list("pk", flat=True))
    # Two browsers racing with a new id: one becomes the worker, the other is refused.
    other_ids = ArrivalIds(participant_id="raced")
    raced = at_once(*(partial(crowd.arrive, study, other_ids, new_token()) for _ in range(2)))
    assert sorted(type(outcome).__name__ for outcome in raced) == ["CrowdWorker", "TakenElsewhere"], raced
    assert CrowdWorker.objects.filter(study=study).count() == 2
    assert Membership.objects.filter(study=study).count() == 2
    made = get_user_model().objects.filter(username__startswith="crowd-")
    assert made.count() == 2  # the loser's account went with its rolled-back transaction


@pytest.mark.concurrency
@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_two_ids_racing_for_the_last_place_let_one_in():
    study = crowd_study(max_annotators=1)
    raced = at_once(*(partial(crowd.arrive, study, ArrivalIds(participant_id=f"p{n}"), new_token()) for n in range(2)))
    assert sorted(type(outcome).__name__ for outcome in raced) == ["CrowdWorker", "LinkClosed"], raced
    assert Membership.objects.filter(study=study).count() == 1


def test_the_dashboard_gives_the_platform_link_only_for_a_crowd_study(client):
    study = crowd_study()
    researcher = make_researcher()
    client.force_login(researcher)
    page = client.get(reverse("annotator:dashboard", args=[study.slug])).content.decode()
    assert (f"/annotate/crowd/{study.invite_token}/?PROLIFIC_PID={{{{%PROLIFIC_PID%}}}}&amp;STUDY_ID={{{{%STUDY_ID%}}}}"
            "&amp;SESSION_ID={{%SESSION_ID%}}") in page
    plain = make_study(team=study.team)
    assert "Crowd platform link" not in client.get(reverse("annotator:dashboard", args=[plain.slug])).content.decode()
