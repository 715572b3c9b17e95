"""The annotator's pages, for every role: anonymous, annotator A, annotator B, a non-member, a researcher.

Annotator B must never read or write A's work (404, as if the id did not exist), and the item page
must never show what annotators are blind to: the condition, the models, the automated evaluation
and other annotators' answers.
"""

import json
import re
from html import escape

import pytest
from django.urls import reverse

from annotator import drafts
from annotator.answer_forms import parse_form
from annotator.assignment import claim_next
from annotator.models import Annotation, Assignment, Membership, Span, StudyItem
from benchmark.instruments.presets import install_preset
from benchmark.models import ActionType, Barrier, Scenario
from tests.annotator.builders import add_annotators, add_items, make_study
from tests.builders import default_team, make_character, make_episode, make_scenario, make_scores, make_user

pytestmark = pytest.mark.django_db


COMPLETE = {
    "answer-barrier_type": "semantic",
    "answer-unresolved_confusion": "2",
    "answer-mutual_understanding": "4",
}
PLANTED = {
    "model": "planted-model-zeta-9",
    "tag": "planted-experiment-tag",
    "external_id": "planted-external-id",
    "setting": "planted-temperature-setting",
    "evaluation": "Planted judge reasoning about the vagueness.",
    "other_rationale": "Planted rationale written by annotator B.",
    "barrier_key": "planted-condition",
    "barrier_name": "Plantedcondition Barrier",
}


@pytest.fixture
def people():
    return {"a": make_user(username="annotator-a"), "b": make_user(username="annotator-b"),
            "outsider": make_user(username="outsider"), "researcher": make_user(username="researcher", staff=True)}


def scenario():
    return make_scenario(
        context="Two flatmates meet in the kitchen to settle this month's rent.",
        roles=[
            {"goal": "Pay your half a week late without upsetting your flatmate.", "reason": "Payday is late.",
             "character": make_character(first_name="Maya", last_name="Okafor", occupation="nurse",
                                         secret="Planted secret: she lost her job.")},
            {"goal": "Get the whole rent paid by Friday.",
             "character": make_character(first_name="Tomás", last_name="Reyes", occupation="baker")},
        ],
    )


@pytest.fixture
def study(people):
    """A SocialVeil study with two items, A and B in the pool, both through the instructions.

    The first item's episode carries distinctive strings everywhere annotators must not look.
    """
    barrier = Barrier.objects.create(team=default_team(), key=PLANTED["barrier_key"], name=PLANTED["barrier_name"],
                                     definition="A condition that must stay hidden.")
    planted = make_episode(
        scenario=scenario(), barrier=barrier, seat_fields={"model": PLANTED["model"]}, tag=PLANTED["tag"],
        external_id=PLANTED["external_id"], settings={"temperature": PLANTED["setting"]},
        turns=[(ActionType.SPEAK, "So about the thing... you know."), (ActionType.SPEAK, "Which thing? The rent?"),
               (ActionType.NON_VERBAL, "shrugs"), (ActionType.ACTION, "slides an envelope across"),
               (ActionType.SPEAK, "<script>alert('x')</script> & more"), (ActionType.LEAVE, "")],
    )
    make_scores(planted, [("mutual_understanding", None, 2)], evaluator=PLANTED["model"],
                reasoning=PLANTED["evaluation"])
    study = make_study(instrument=install_preset("socialveil"), items=[planted, make_episode()], overlap=2,
                       annotators=[people["a"], people["b"]], instructions="Read closely; rate what you see.")
    Membership.objects.filter(study=study).update(instructions_read_at="2025-01-01T00:00:00Z")
    return study


def assignment_on(study, user, episode=None):
    """``user``'s assignment on the first item (or on ``episode``'s item)."""
    item = study.items.get(episode=episode) if episode else study.items.order_by("position").first()
    return Assignment.objects.create(item=item, annotator=user, claimed_at="2025-01-01T00:00:00Z",
                                     lease_expires_at="2999-01-01T00:00:00Z")


def save(assignment, data, *, revision=0, complete=False):
    turns = list(assignment.item.episode.turns.order_by("index").values_list("content", flat=True))
    parsed = parse_form(assignment.item.study.instrument, data, seats=[0, 1], turn_lengths=[len(t) for t in turns],
                        complete=complete)
    if complete:
        return drafts.submit(assignment, parsed, revision=revision, seconds=0)
    return drafts.save_draft(assignment, parsed, revision=revision, seconds=0)


def urls(assignment):
    names = ("item", "draft", "submit", "edit", "cancel-edit")
    return {name: reverse(f"annotator:{name}", args=[assignment.pk]) for name in names}


# Anonymous visitors


def test_anonymous_visitors_are_sent_to_log_in_from_every_page(client, study, people):
    assignment = assignment_on(study, people["a"])
    pages = [("get", reverse("annotator:index")), ("get", reverse("annotator:instructions", args=[study.slug])),
             ("post", reverse("annotator:instructions", args=[study.slug])),
             ("get", reverse("annotator:next", args=[study.slug]))]
    pages += [("get", urls(assignment)["item"])]
    pages += [("post", urls(assignment)[name]) for name in ("draft", "submit", "edit")]

    for method, url in pages:
        response = getattr(client, method)(url)
        assert response.status_code == 302, url
        assert response.url.startswith(reverse("login")), url
    assert not Annotation.objects.exists()


# The index


def test_index_says_nothing_is_assigned_to_someone_outside_every_study(client, study, people):
    client.force_login(people["outsider"])

    response = client.get(reverse("annotator:index"))

    assert response.status_code == 200
    assert "Nothing is assigned to you yet" in response.text
    assert study.title not in response.text
    assert "not set up in Parley" not in response.text


def test_index_lists_the_annotators_studies_with_progress(client, study, people):
    Membership.objects.filter(annotator=people["a"]).update(instructions_read_at=None)
    client.force_login(people["a"])

    response = client.get(reverse("annotator:index"))

    assert study.title in response.text
    assert "0 of 2 submitted" in response.text
    assert f'href="{reverse("annotator:instructions", args=[study.slug])}"' in response.text
    assert reverse("annotator:study-list") not in response.text


def test_index_lists_submitted_items_with_a_link_to_each(client, study, people):
    assignment = assignment_on(study, people["a"])
    save(assignment, COMPLETE, complete=True)
    client.force_login(people["a"])

    response = client.get(reverse("annotator:index"))

    assert "1 of 2 submitted" in response.text
    assert "Your submitted items (1)" in response.text
    assert f'href="{urls(assignment)["item"]}"' in response.text
    assert f'href="{reverse("annotator:next", args=[study.slug])}"' in response.text


def test_submitted_items_are_named_by_their_situation_never_by_their_condition(client, study, people):
    assignment = assignment_on(study, people["a"])
    save(assignment, COMPLETE, complete=True)
    episode = assignment.item.episode
    Scenario.objects.filter(pk=episode.scenario_id).update(context="A landlord and a tenant argue about a leak.")
    client.force_login(people["a"])

    page = client.get(reverse("annotator:index")).text

    assert "A landlord and a tenant argue about a leak." in page
    assert episode.barrier.name not in page


def test_index_shows_researchers_the_way_to_the_study_list(client, people):
    client.force_login(people["researcher"])

    response = client.get(reverse("annotator:index"))

    assert f'href="{reverse("annotator:study-list")}"' in response.text


# Instructions and the queue


def test_instructions_show_the_study_text_the_questions_and_the_barrier_reference(client, study, people):
    client.force_login(people["a"])

    response = client.get(reverse("annotator:instructions", args=[study.slug]))

    assert response.status_code == 200
    assert "Read closely; rate what you see." in response.text
    assert "Which communication barrier, if any" in response.text
    assert "a rating from 1 to 5" in response.text
    for barrier in Barrier.objects.filter(key__in=["semantic", "sociocultural", "emotional", "none"]):
        assert escape(barrier.definition) in response.text
    assert PLANTED["barrier_name"] not in response.text


def test_instructions_of_a_span_study_define_the_social_attributes(client, people):
    study = make_study(instrument=install_preset("shrec-spans"), items=1, annotators=[people["a"]])
    client.force_login(people["a"])

    response = client.get(reverse("annotator:instructions", args=[study.slug]))

    assert "Conversational mechanics" in response.text
    assert "Handling the flow of talk" in response.text


def test_starting_records_that_the_instructions_were_read_and_opens_the_queue(client, study, people):
    Membership.objects.filter(annotator=people["a"]).update(instructions_read_at=None)
    client.force_login(people["a"])

    response = client.post(reverse("annotator:instructions", args=[study.slug]))

    assert response.status_code == 302
    assert response.url == reverse("annotator:next", args=[study.slug])
    assert Membership.objects.get(annotator=people["a"], study=study).instructions_read_at is not None


@pytest.mark.parametrize("who", ["outsider", "researcher"])
def test_instructions_and_queue_are_404_outside_the_pool(client, study, people, who):
    client.force_login(people[who])

    assert client.get(reverse("annotator:instructions", args=[study.slug])).status_code == 404
    assert client.post(reverse("annotator:instructions", args=[study.slug])).status_code == 404
    assert client.get(reverse("annotator:next", args=[study.slug])).status_code == 404
    assert not Assignment.objects.exists()


def test_the_queue_sends_a_newcomer_to_the_instructions_first(client, study, people):
    Membership.objects.filter(annotator=people["a"]).update(instructions_read_at=None)
    client.force_login(people["a"])

    response = client.get(reverse("annotator:next", args=[study.slug]))

    assert response.url == reverse("annotator:instructions", args=[study.slug])
    assert not Assignment.objects.exists()


def test_the_queue_claims_an_item_and_resumes_it(client, study, people):
    client.force_login(people["a"])

    first = client.get(reverse("annotator:next", args=[study.slug]))
    again = client.get(reverse("annotator:next", args=[study.slug]))

    assignment = Assignment.objects.get(annotator=people["a"])
    assert first.url == again.url == urls(assignment)["item"]


def test_the_queue_thanks_the_annotator_when_nothing_is_left(client, study, people):
    for item in study.items.all():
        save(Assignment.objects.create(item=item, annotator=people["a"], claimed_at="2025-01-01T00:00:00Z",
                                       lease_expires_at="2999-01-01T00:00:00Z"), COMPLETE, complete=True)
    client.force_login(people["a"])

    response = client.get(reverse("annotator:next", args=[study.slug]))

    assert response.status_code == 200
    assert "Nothing is left for you in this study" in response.text
    assert "You submitted 2 items" in response.text


# The item page


def test_the_item_page_shows_the_situation_both_characters_and_the_numbered_transcript(client, study, people):
    client.force_login(people["a"])

    response = client.get(urls(assignment_on(study, people["a"]))["item"])

    assert response.status_code == 200
    page = response.text
    assert "Two flatmates meet in the kitchen" in page
    assert "Maya Okafor" in page and "Tomás Reyes" in page
    # SocialVeil's questions rate no goal, so no goal is shown (tests/annotator/test_blinding.py)
    assert "Pay your half a week late without upsetting your flatmate." not in page
    assert "Get the whole rent paid by Friday." not in page
    assert 'data-turn="1"' in page and '<span class="visually-hidden">Turn </span>2</span>' in page
    assert "left the conversation" in page
    assert "0 of 2 submitted" in page
    assert 'hx-post="' + urls(assignment_on_item(study, people["a"]))["draft"] + '"' in page


def assignment_on_item(study, user):
    return Assignment.objects.get(item__study=study, annotator=user)


def test_the_item_page_hides_the_condition_the_models_the_evaluation_and_others_answers(client, study, people):
    mine, theirs = assignment_on(study, people["a"]), assignment_on(study, people["b"])
    save(theirs, {**COMPLETE, "rationale-barrier_type": PLANTED["other_rationale"]}, complete=True)
    client.force_login(people["a"])

    page = client.get(urls(mine)["item"]).text

    for name, planted in PLANTED.items():
        assert planted not in page, name
    assert "turn--barrier" not in page
    assert "barrier seat" not in page.lower()
    assert "Planted secret" not in page  # no question asks about secrets here
    # The reference panel describes every condition alike.
    assert "Semantic vagueness" in page and "Emotional interference" in page


def test_the_item_page_escapes_what_people_and_models_wrote(client, study, people):
    client.force_login(people["a"])

    page = client.get(urls(assignment_on(study, people["a"]))["item"]).text

    assert "<script>alert" not in page
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt; &amp; more" in page


def test_the_item_page_of_another_annotator_is_404_for_b_and_for_researchers(client, study, people):
    assignment = assignment_on(study, people["a"])
    for who in ("b", "outsider", "researcher"):
        client.force_login(people[who])
        assert client.get(urls(assignment)["item"]).status_code == 404, who
    assert client.get(reverse("annotator:item", args=[999999])).status_code == 404


def test_a_reload_shows_the_saved_draft(client, study, people):
    assignment = assignment_on(study, people["a"])
    save(assignment, {"answer-barrier_type": "emotional", "answer-mutual_understanding": "4",
                      "rationale-barrier_type": "She keeps apologising."})
    client.force_login(people["a"])

    page = client.get(urls(assignment)["item"]).text

    assert re.search(r'name="answer-barrier_type" value="emotional" checked', page)
    assert re.search(r'name="answer-mutual_understanding" value="4" checked', page)
    assert not re.search(r'name="answer-unresolved_confusion" value="\d" checked', page)
    assert ">She keeps apologising.</textarea>" in page
    assert 'name="revision" id="revision" value="1"' in page
    assert "Saved</strong> at" in page


def test_a_submitted_item_shows_its_answers_read_only_with_an_edit_button(client, study, people):
    assignment = assignment_on(study, people["a"])
    save(assignment, COMPLETE, complete=True)
    client.force_login(people["a"])

    page = client.get(urls(assignment)["item"]).text

    assert "You submitted this item" in page
    assert "<fieldset disabled" in page
    assert f'action="{urls(assignment)["edit"]}"' in page
    assert 'name="version" value="1"' in page
    assert "hx-post" not in page


def test_the_item_page_shows_the_instruction_of_an_attention_check(client, people):
    study = make_study(instrument=install_preset("socialveil"), items=0, attention=1, annotators=[people["a"]])
    assignment = assignment_on(study, people["a"])
    client.force_login(people["a"])

    page = client.get(urls(assignment)["item"]).text

    assert "Instruction for this item" in page
    assert "To show you are reading, answer" in page


def test_a_pairwise_item_shows_both_conversations(client, people):
    study = make_study(instrument=install_preset("promediate"), items=0, annotators=[people["a"]])
    shared = make_scenario()
    item = StudyItem.objects.create(
        study=study, position=0,
        episode=make_episode(scenario=shared, turns=[(ActionType.SPEAK, "First excerpt line.")]),
        compared_episode=make_episode(scenario=shared, turns=[(ActionType.SPEAK, "Second excerpt line.")]),
    )
    assignment = Assignment.objects.create(item=item, annotator=people["a"], claimed_at="2025-01-01T00:00:00Z",
                                           lease_expires_at="2999-01-01T00:00:00Z")
    client.force_login(people["a"])

    page = client.get(urls(assignment)["item"]).text

    assert "Conversation A" in page and "Conversation B" in page
    assert "First excerpt line." in page and "Second excerpt line." in page
    assert 'name="answer-closer_to_agreement"' in page


def test_a_pairwise_question_is_left_out_of_a_single_conversation(client, people):
    study = make_study(instrument=install_preset("promediate"), items=1, annotators=[people["a"]])
    client.force_login(people["a"])

    page = client.get(urls(assignment_on(study, people["a"]))["item"]).text

    assert 'name="answer-closer_to_agreement"' not in page
    assert 'name="answer-perception_alignment"' in page


def test_sotopia_questions_are_grouped_per_character_with_sliders_and_the_secret_shown(client, people):
    study = make_study(instrument=install_preset("sotopia-eval"), items=[make_episode(scenario=scenario())],
                       annotators=[people["a"]])
    client.force_login(people["a"])

    page = client.get(urls(assignment_on(study, people["a"]))["item"]).text

    assert "About Maya Okafor" in page and "About Tomás Reyes" in page
    assert page.count('type="range"') == 14
    assert 'name="answer-goal-0"' in page and 'name="rationale-financial-1"' in page
    assert "Planted secret: she lost her job." in page  # the secret dimension needs it


def test_a_span_study_renders_turn_anchors_and_the_stored_spans(client, people):
    episode = make_episode(turns=[(ActionType.SPEAK, "Hello there."), (ActionType.SPEAK, "Keep it down.")])
    study = make_study(instrument=install_preset("shrec-spans"), items=[episode], annotators=[people["a"]])
    assignment = assignment_on(study, people["a"])
    span = {"label": "error", "start_turn": 1, "end_turn": 1, "start_char": 0, "end_char": 4,
            "attributes": ["emotions", "intention"], "rationale": "Curt <b>", "correction": "Be kind."}
    save(assignment, {"spans-spans": json.dumps([span])})
    client.force_login(people["a"])

    page = client.get(urls(assignment)["item"]).text

    assert 'data-span-source' in page
    assert '<p class="turn__content" data-turn-content>Keep it down.</p>' in page
    stored = re.search(r'name="spans-spans" value="([^"]*)"', page).group(1)
    assert "Curt &lt;b&gt;" in stored and "&quot;intention&quot;" in stored
    assert 'title="Noticing and reading feelings' in page  # attribute definitions on hover
    assert "spans.js" in page


@pytest.mark.parametrize("preset, items", [("socialveil", 1), ("sotopia-eval", 1), ("shrec-spans", 1)])
def test_the_item_page_takes_a_fixed_number_of_queries(client, people, django_assert_max_num_queries, preset, items):
    short = make_episode(turns=2)
    long = make_episode(turns=40)
    study = make_study(instrument=install_preset(preset), items=[short, long], annotators=[people["a"]])
    client.force_login(people["a"])
    for episode in (short, long):
        assignment = assignment_on(study, people["a"], episode=episode)
        save(assignment, {})
        with django_assert_max_num_queries(17):  # one of them: the annotator's stage (annotator.training)
            assert client.get(urls(assignment)["item"]).status_code == 200


# Autosave


def test_autosave_stores_the_draft_and_returns_the_status_with_the_next_revision(client, study, people):
    assignment = assignment_on(study, people["a"])
    client.force_login(people["a"])

    response = client.post(urls(assignment)["draft"], {"answer-barrier_type": "none", "revision": "0", "seconds": "7"},
                           headers={"HX-Request": "true"})

    assert response.status_code == 200
    assert "Saved</strong> at" in response.text
    assert 'name="revision" id="revision" value="1" hx-swap-oob="true"' in response.text
    annotation = Annotation.objects.get(assignment=assignment)
    assert annotation.response.answers.get().value == "none"
    assert annotation.seconds_spent == 7


def test_autosave_with_a_stale_revision_is_a_conflict_that_overwrites_nothing(client, study, people):
    assignment = assignment_on(study, people["a"])
    client.force_login(people["a"])
    client.post(urls(assignment)["draft"], {"answer-barrier_type": "none", "revision": "0"})
    client.post(urls(assignment)["draft"], {"answer-barrier_type": "semantic", "revision": "1"})

    response = client.post(urls(assignment)["draft"], {"answer-barrier_type": "emotional", "revision": "1"})

    assert response.status_code == 409
    assert "Not saved" in response.text and "another tab" in response.text
    assert f'href="{urls(assignment)["item"]}"' in response.text
    assert "hx-swap-oob" not in response.text
    assert Annotation.objects.get(assignment=assignment).response.answers.get().value == "semantic"


TAB = "0123456789abcdef" * 2


def from_tab(barrier, *, revision, tab=TAB, number):
    """An autosave's post: one answer, the revision the page shows, its tab and that tab's number for the save."""
    return {"answer-barrier_type": barrier, "revision": str(revision), "tab": tab, "tab_save": str(number)}


def test_a_late_autosave_from_the_tabs_previous_page_is_answered_as_saved_and_changes_nothing(client, study, people):
    assignment = assignment_on(study, people["a"])
    client.force_login(people["a"])
    client.post(urls(assignment)["draft"], from_tab("none", revision=0, number=1))
    client.post(urls(assignment)["draft"], from_tab("semantic", revision=0, number=3))

    late = client.post(urls(assignment)["draft"], from_tab("emotional", revision=1, number=2))

    assert late.status_code == 200
    assert "Saved</strong> at" in late.text and 'id="revision" value="2"' in late.text
    annotation = Annotation.objects.get(assignment=assignment)
    assert (annotation.revision, annotation.response.answers.get().value) == (2, "semantic")


def test_the_item_page_says_which_tab_saved_last_for_the_page_to_compare(client, study, people):
    assignment = assignment_on(study, people["a"])
    client.force_login(people["a"])
    client.post(urls(assignment)["draft"], from_tab("none", revision=0, number=7))

    page = client.get(urls(assignment)["item"]).text

    assert f'data-saved-by-tab="{TAB}" data-tab-save="7"' in page
    assert f'data-draft-key="{assignment.pk}-1"' in page


@pytest.mark.parametrize("tab, number", [("not-a-tab-id", "1"), (TAB, "0"), (TAB, str(2**31)), (TAB, "x")])
def test_a_tab_id_or_number_out_of_shape_counts_as_no_tab(client, study, people, tab, number):
    assignment = assignment_on(study, people["a"])
    client.force_login(people["a"])
    client.post(urls(assignment)["draft"], {"answer-barrier_type": "none", "revision": "0", "tab": tab,
                                            "tab_save": number})

    again = client.post(urls(assignment)["draft"], {"answer-barrier_type": "semantic", "revision": "0", "tab": tab,
                                                    "tab_save": "5"})

    assert again.status_code == 409
    annotation = Annotation.objects.get(assignment=assignment)
    assert (annotation.saved_by_tab, annotation.tab_save) == ("", 0)


def test_a_submit_after_the_tabs_own_late_save_goes_through(client, study, people):
    assignment = assignment_on(study, people["a"])
    client.force_login(people["a"])
    client.post(urls(assignment)["draft"], from_tab("none", revision=0, number=1))
    # The page was reloaded at revision 1; the previous page's beacon then made revision 2.
    client.post(urls(assignment)["draft"], from_tab("none", revision=1, number=2))

    response = client.post(urls(assignment)["submit"], {**COMPLETE, "revision": "1", "tab": TAB, "tab_save": "3"})

    assert response.status_code == 302
    assert Annotation.objects.get(assignment=assignment).status == "submitted"


def test_a_submit_from_another_tab_is_still_a_conflict(client, study, people):
    assignment = assignment_on(study, people["a"])
    client.force_login(people["a"])
    client.post(urls(assignment)["draft"], from_tab("none", revision=0, number=1))
    client.post(urls(assignment)["draft"], from_tab("semantic", revision=1, tab="f" * 32, number=2))

    response = client.post(urls(assignment)["submit"], {**COMPLETE, "revision": "1", "tab": TAB, "tab_save": "3"})

    assert response.status_code == 409
    assert Annotation.objects.get(assignment=assignment).status == "draft"


def test_autosave_after_submitting_in_another_tab_is_a_conflict(client, study, people):
    assignment = assignment_on(study, people["a"])
    save(assignment, COMPLETE, complete=True)
    client.force_login(people["a"])

    response = client.post(urls(assignment)["draft"], {"answer-barrier_type": "none", "revision": "0"})

    assert response.status_code == 409
    assert "submitted in another tab" in response.text


def test_autosave_keeps_a_half_written_span(client, people):
    study = make_study(instrument=install_preset("shrec-spans"), items=1, annotators=[people["a"]])
    assignment = assignment_on(study, people["a"])
    client.force_login(people["a"])
    half_written = {"label": "error", "start_turn": 0, "end_turn": 0, "attributes": [], "rationale": "",
                    "correction": ""}

    response = client.post(urls(assignment)["draft"], {"spans-spans": json.dumps([half_written]), "revision": "0"})

    assert response.status_code == 200
    assert Span.objects.filter(annotation__assignment=assignment, rationale="", correction="").count() == 1


def test_b_cannot_write_a_draft_submit_or_edit_as_a(client, study, people):
    assignment = assignment_on(study, people["a"])
    save(assignment, COMPLETE, complete=True)
    client.force_login(people["b"])

    for name in ("draft", "submit", "edit"):
        response = client.post(urls(assignment)[name], {**COMPLETE, "revision": "1", "version": "1"})
        assert response.status_code == 404, name
    assert Annotation.objects.get(assignment=assignment).version == 1


def test_draft_submit_and_edit_only_take_posts(client, study, people):
    assignment = assignment_on(study, people["a"])
    client.force_login(people["a"])

    for name in ("draft", "edit"):
        assert client.get(urls(assignment)[name]).status_code == 405


def test_opening_the_submit_address_from_history_goes_back_to_the_item(client, study, people):
    assignment = assignment_on(study, people["a"])
    client.force_login(people["a"])

    response = client.get(urls(assignment)["submit"])

    assert response.status_code == 302 and response.url == urls(assignment)["item"]


# Submitting and editing


def test_submit_with_missing_answers_shows_each_message_by_its_field_and_keeps_the_draft(client, study, people):
    assignment = assignment_on(study, people["a"])
    client.force_login(people["a"])

    response = client.post(urls(assignment)["submit"], {"answer-barrier_type": "sociocultural",
                                                         "rationale-barrier_type": "Polite refusals.",
                                                         "revision": "0", "seconds": "12"}, follow=True)

    assert response.redirect_chain == [(urls(assignment)["item"], 302)]
    page = response.text
    assert "Not submitted" in page
    assert "2 answers need attention" in page
    assert 'id="answer-unresolved_confusion-error"' in page and 'id="answer-mutual_understanding-error"' in page
    assert 'href="#q-answer-unresolved_confusion"' in page
    assert re.search(r'name="answer-barrier_type" value="sociocultural" checked', page)
    assert ">Polite refusals.</textarea>" in page
    assert 'name="revision" id="revision" value="1"' in page
    draft = Annotation.objects.get(assignment=assignment)
    assert draft.status == "draft" and draft.seconds_spent == 12
    assert draft.response.answers.get().value == "sociocultural"


def test_a_reload_after_a_failed_submit_shows_the_draft_and_no_conflict(client, study, people):
    assignment = assignment_on(study, people["a"])
    client.force_login(people["a"])
    failed = client.post(urls(assignment)["submit"], {"answer-barrier_type": "sociocultural", "revision": "0"},
                         follow=True)

    # A reload asks again for the address the browser shows: a GET, never the submit's POST again.
    reload = client.get(failed.request["PATH_INFO"])

    assert reload.status_code == 200
    page = reload.text
    assert "another tab" not in page and "need attention" not in page
    assert re.search(r'name="answer-barrier_type" value="sociocultural" checked', page)
    assert 'name="revision" id="revision" value="1"' in page


def test_submit_stores_the_answers_and_goes_to_the_next_item(client, study, people):
    assignment = assignment_on(study, people["a"])
    client.force_login(people["a"])

    response = client.post(urls(assignment)["submit"], {**COMPLETE, "revision": "0"})

    assert response.status_code == 302
    assert response.url == reverse("annotator:next", args=[study.slug])
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.SUBMITTED
    assert Annotation.objects.get(assignment=assignment).status == "submitted"


def test_submit_from_a_stale_tab_is_a_conflict(client, study, people):
    assignment = assignment_on(study, people["a"])
    save(assignment, {"answer-barrier_type": "none"})
    client.force_login(people["a"])

    response = client.post(urls(assignment)["submit"], {**COMPLETE, "revision": "0"})

    assert response.status_code == 409
    assert "Reload this item" in response.text
    assert Annotation.objects.get(assignment=assignment).status == "draft"


def test_edit_opens_version_two_and_the_item_page_says_so(client, study, people):
    assignment = assignment_on(study, people["a"])
    save(assignment, COMPLETE, complete=True)
    client.force_login(people["a"])

    response = client.post(urls(assignment)["edit"], {"version": "1"})
    page = client.get(urls(assignment)["item"]).text

    assert response.url == urls(assignment)["item"]
    assert list(Annotation.objects.filter(assignment=assignment).values_list("version", "status")) == [
        (1, "submitted"), (2, "draft")
    ]
    assert "You are editing <strong>version 2</strong>" in page
    assert re.search(r'name="answer-barrier_type" value="semantic" checked', page)
    assert 'name="revision" id="revision" value="0"' in page


def test_a_second_edit_click_opens_no_third_version(client, study, people):
    assignment = assignment_on(study, people["a"])
    save(assignment, COMPLETE, complete=True)
    client.force_login(people["a"])
    client.post(urls(assignment)["edit"], {"version": "1"})

    response = client.post(urls(assignment)["edit"], {"version": "1"}, follow=True)

    assert Annotation.objects.filter(assignment=assignment).count() == 2
    assert "already has a newer version" in response.text


def test_researchers_can_annotate_in_a_study_they_joined(client, study, people):
    add_annotators(study, [people["researcher"]])
    Membership.objects.filter(annotator=people["researcher"]).update(instructions_read_at="2025-01-01T00:00:00Z")
    client.force_login(people["researcher"])

    response = client.get(reverse("annotator:next", args=[study.slug]))

    assert response.status_code == 302
    assert client.get(response.url).status_code == 200


def test_the_item_page_counts_gold_items_in_the_annotators_progress(client, people):
    study = make_study(instrument=install_preset("socialveil"), items=1, annotators=[people["a"]])
    add_items(study, 1, kind=StudyItem.Kind.GOLD)
    assignment = claim_next(study, people["a"])
    client.force_login(people["a"])

    page = client.get(urls(assignment)["item"]).text

    assert "0 of 2 submitted" in page
    assert "gold" not in page.lower()


def test_a_submitted_item_reopened_while_another_is_claimed_counts_the_claim_in_the_total(client, study, people):
    first = claim_next(study, people["a"])
    client.force_login(people["a"])
    client.post(urls(first)["submit"], {**COMPLETE, "revision": "0"})
    claim_next(study, people["a"])  # the next item, claimed as the submit's redirect does

    page = client.get(urls(first)["item"]).text

    assert "1 of 2 submitted" in page


def test_an_edit_can_be_cancelled_from_the_item_page_which_shows_the_submitted_version_again(client, study, people):
    assignment = assignment_on(study, people["a"])
    save(assignment, COMPLETE, complete=True)
    client.force_login(people["a"])
    client.post(urls(assignment)["edit"], {"version": "1"})
    editing = client.get(urls(assignment)["item"]).text
    assert f'action="{urls(assignment)["cancel-edit"]}"' in editing
    assert 'name="version" value="2"' in editing

    response = client.post(urls(assignment)["cancel-edit"], {"version": "2"}, follow=True)

    assert response.redirect_chain == [(urls(assignment)["item"], 302)]
    assert "You submitted this item" in response.text and "<fieldset disabled" in response.text
    assert "Edit cancelled" in response.text
    assert list(Annotation.objects.filter(assignment=assignment).values_list("version", "status")) == [
        (1, "submitted")]
    assert Assignment.objects.get(pk=assignment.pk).status == Assignment.Status.SUBMITTED


def test_cancelling_an_edit_twice_or_from_an_old_page_says_so_and_changes_nothing(client, study, people):
    assignment = assignment_on(study, people["a"])
    save(assignment, COMPLETE, complete=True)
    client.force_login(people["a"])

    response = client.post(urls(assignment)["cancel-edit"], {"version": "2"}, follow=True)

    assert response.status_code == 200
    assert "no edit to cancel" in response.text
    assert Annotation.objects.filter(assignment=assignment).count() == 1
    assert client.get(urls(assignment)["cancel-edit"]).status_code == 405
