"""Per-item review and adjudication into gold: who may open the pages, what they show, how gold is saved."""

from functools import partial

import pytest
from django.urls import reverse

from annotator.adjudication import read_decisions, save_curation
from annotator.gold import gold_answers, gold_respondent, gold_values
from annotator.item_review import review
from annotator.models import Annotation, CuratedDecision, Curation, Membership, StudyEvent, StudyItem
from benchmark.instruments.respondents import judge_respondent
from benchmark.instruments.targets import Target
from benchmark.models import Answer, Respondent, Response
from tests.annotator.adjudication_world import CONDITION, build_world
from tests.annotator.builders import add_items, make_study
from tests.builders import make_researcher, make_team, make_user
from tests.concurrency import at_once

pytestmark = pytest.mark.django_db

@pytest.fixture
def world():
    return build_world()


def review_url(w, item="first"):
    return reverse("annotator:item-review", args=[w["study"].slug, w[item].pk])


def adjudicate_url(w, item="first"):
    return reverse("annotator:adjudicate", args=[w["study"].slug, w[item].pk])


def test_review_shows_every_annotators_answers_and_the_disagreement(client, world):
    client.force_login(world["researcher"])
    page = client.get(review_url(world))
    assert page.status_code == 200
    text = page.content.decode()
    assert f"a{world['ann'].pk}" in text and f"a{world['bob'].pk}" in text
    assert "semantic" in text and "disagree" in text
    assert page.context["review"].disagreements == 2
    warmth = next(cell for cell in page.context["review"].cells if cell.question.key == "warmth")
    assert warmth.agreement.spread == 2 and warmth.agreement.share_agreeing == 0.5


def test_blinded_review_hides_the_condition_and_models_from_researchers_too(client, world):
    world["first"].episode.seats.update(model="planted-seat-model")
    client.force_login(world["researcher"])
    blinded = client.get(review_url(world)).content.decode()
    assert CONDITION not in blinded and "planted-seat-model" not in blinded
    world["study"].curators_blinded = False
    world["study"].save()
    shown = client.get(review_url(world)).content.decode()
    assert CONDITION in shown and "planted-seat-model" in shown


def test_a_curator_annotator_is_always_blinded(client, world):
    world["study"].curators_blinded = False
    world["study"].save()
    curator = make_user()
    Membership.objects.create(study=world["study"], annotator=curator, is_curator=True)
    client.force_login(curator)
    page = client.get(review_url(world))
    assert page.status_code == 200
    assert CONDITION not in page.content.decode()


def test_an_annotator_who_is_no_curator_is_refused(client, world):
    client.force_login(world["ann"])
    assert client.get(review_url(world)).status_code == 403
    assert client.post(adjudicate_url(world), {"action": "draft"}).status_code == 403


def test_another_teams_researcher_gets_404(client, world):
    client.force_login(make_researcher(make_team(name="Other", slug="other")))
    assert client.get(review_url(world)).status_code == 404
    assert client.get(reverse("annotator:adjudication-queue", args=[world["study"].slug])).status_code == 404


def test_a_curator_cannot_decide_an_item_they_rated(client, world):
    Membership.objects.filter(study=world["study"], annotator=world["ann"]).update(is_curator=True)
    client.force_login(world["ann"])
    page = client.get(review_url(world))
    assert page.status_code == 200 and page.context["own_rating"] and not page.context["forms"]
    refused = client.post(adjudicate_url(world), {"action": "final", "pick-barrier": "own", "own-barrier": "none"})
    assert refused.status_code == 403
    assert not Curation.objects.exists()


def test_finalising_writes_gold_answers_of_the_gold_respondent(client, world):
    client.force_login(world["researcher"])
    response = client.post(adjudicate_url(world), {
        "action": "final", "pick-barrier": str(world["b1"].pk), "note-barrier": "Bob read the hedges right.",
        "pick-warmth": "own", "own-warmth": "3", "note-warmth": "Between the two.", "note": "Hard one.",
    })
    assert response.status_code == 302
    curation = Curation.objects.get(item=world["first"])
    assert curation.status == Curation.Status.FINAL and curation.curator == world["researcher"]
    assert curation.response.respondent == gold_respondent(world["study"])
    assert curation.response.respondent.kind == Respondent.Kind.GOLD
    assert curation.response.status == Response.Status.SUBMITTED
    decisions = {d.question.key: d for d in CuratedDecision.objects.filter(curation=curation)}
    assert decisions["barrier"].picked_id == world["b1"].pk and decisions["warmth"].picked is None
    assert decisions["warmth"].note == "Between the two."
    assert gold_values(world["study"]) == {
        (world["first"].pk, "barrier", Target.episode()): ["semantic"],
        (world["first"].pk, "warmth", Target.episode()): ["3"],
    }
    assert [a.number for a in gold_answers(world["study"]) if a.question_key == "warmth"] == [3.0]
    assert StudyEvent.objects.filter(study=world["study"], action="curation.final", actor=world["researcher"]).exists()


def test_an_own_answer_outside_the_scale_is_refused_and_nothing_is_saved(client, world):
    client.force_login(world["researcher"])
    response = client.post(adjudicate_url(world), {
        "action": "final", "pick-barrier": str(world["a1"].pk), "pick-warmth": "own", "own-warmth": "9",
    })
    assert response.status_code == 400
    assert "Nothing was saved" in response.content.decode()
    assert "warmth" in response.context["errors"]["own-warmth"].lower()
    assert not Curation.objects.exists() and not StudyEvent.objects.filter(action__startswith="curation").exists()


def test_finalising_needs_every_question_decided_but_a_draft_does_not(client, world):
    client.force_login(world["researcher"])
    refused = client.post(adjudicate_url(world), {"action": "final", "pick-barrier": str(world["a1"].pk)})
    assert refused.status_code == 400 and "pick-warmth" in refused.context["errors"]
    draft = client.post(adjudicate_url(world), {"action": "draft", "pick-barrier": str(world["a1"].pk)})
    assert draft.status_code == 302
    curation = Curation.objects.get()
    assert curation.status == Curation.Status.DRAFT and curation.response.status == Response.Status.DRAFT
    assert gold_answers(world["study"]) == []  # a draft is not gold yet
    assert len(gold_answers(world["study"], final_only=False)) == 1


def test_a_picked_answer_from_another_item_is_refused(client, world):
    client.force_login(world["researcher"])
    other = Annotation.objects.exclude(assignment__item=world["first"]).first()
    response = client.post(adjudicate_url(world), {"action": "draft", "pick-barrier": str(other.pk)})
    assert response.status_code == 400 and "pick-barrier" in response.context["errors"]


def test_saving_again_replaces_the_gold_and_reopening_takes_it_out(client, world):
    client.force_login(world["researcher"])
    data = {"pick-barrier": str(world["a1"].pk), "pick-warmth": str(world["b1"].pk)}
    client.post(adjudicate_url(world), {"action": "final", **data})
    client.post(adjudicate_url(world), {"action": "final", **data, "pick-barrier": str(world["b1"].pk)})
    assert gold_values(world["study"])[(world["first"].pk, "barrier", Target.episode())] == ["semantic"]
    assert Response.objects.filter(respondent__kind="gold").count() == 1
    client.post(adjudicate_url(world), {"action": "draft", **data})
    assert gold_values(world["study"]) == {}
    assert StudyEvent.objects.filter(action="curation.reopened").count() == 1


def test_the_queue_lists_items_in_disagreement_with_progress(client, world):
    client.force_login(world["researcher"])
    page = client.get(reverse("annotator:adjudication-queue", args=[world["study"].slug]))
    assert page.status_code == 200
    assert [row.item for row in page.context["rows"]] == [world["first"]]
    assert page.context["needing"] == 1 and page.context["final"] == 0


def test_the_gold_respondent_is_one_per_study(world):
    other = make_study(items=1)
    assert gold_respondent(world["study"]) == gold_respondent(world["study"])
    assert gold_respondent(world["study"]) != gold_respondent(other)
    assert gold_respondent(world["study"]).name == "gold"


def judge_says(world, score):
    response = Response.objects.create(instrument=world["study"].instrument, episode_id=world["first"].episode_id,
                                       respondent=judge_respondent("planted-model-x", "v1"))
    Answer.objects.create(response=response, question=world["likert"], value=str(score), number=score)


def test_the_judges_answer_is_shown_without_its_model_when_blinded(client, world):
    judge_says(world, 5)
    client.force_login(world["researcher"])
    page = client.get(review_url(world))
    warmth = next(cell for cell in page.context["review"].cells if cell.question.key == "warmth")
    assert warmth.others == [("automated judge 1", "5")]
    assert "planted-model-x" not in page.content.decode()
    world["study"].curators_blinded = False
    world["study"].save()
    assert "planted-model-x" in client.get(review_url(world)).content.decode()


def test_gold_is_never_shown_as_another_respondent(client, world):
    client.force_login(world["researcher"])
    client.post(adjudicate_url(world), {"action": "final", "pick-barrier": str(world["a1"].pk),
                                        "pick-warmth": "own", "own-warmth": "5"})
    page = client.get(review_url(world))
    assert all(not cell.others for cell in page.context["review"].cells)
    assert len(page.context["review"].raters) == 2


@pytest.mark.concurrency
@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_curators_saving_the_same_item_at_once_are_taken_one_after_the_other():
    """Four saves of item 1's gold at the same moment: one curation, one gold response, and its answers are
    those of one save whole, never a mix."""
    world = build_world()
    cells = review(world["first"], blinded=True).cells
    picks = [(world["a1"], world["b1"]), (world["b1"], world["a1"])] * 2

    def save(barrier_from, warmth_from):
        data = {"pick-barrier": str(barrier_from.pk), "pick-warmth": str(warmth_from.pk)}
        item = StudyItem.objects.select_related("study__instrument").get(pk=world["first"].pk)
        save_curation(item, world["researcher"], read_decisions(cells, data, final=True), final=True, cells=2)
        return "saved"

    outcomes = at_once(*(partial(save, *pair) for pair in picks))

    assert outcomes == ["saved"] * 4
    assert Curation.objects.count() == 1 and Response.objects.filter(respondent__kind="gold").count() == 1
    values = gold_values(world["study"])
    pair = (values[(world["first"].pk, "barrier", Target.episode())], values[(world["first"].pk, "warmth",
                                                                                Target.episode())])
    assert pair in ((["none"], ["4"]), (["semantic"], ["2"]))
    assert StudyEvent.objects.filter(action="curation.final").count() == 4


def test_only_regular_items_are_adjudicated(client, world):
    gold_item = add_items(world["study"], 1, kind=StudyItem.Kind.GOLD)[0]
    client.force_login(world["researcher"])
    page = client.get(reverse("annotator:item-review", args=[world["study"].slug, gold_item.pk]))
    assert page.status_code == 200 and not page.context["forms"]
    posted = client.post(reverse("annotator:adjudicate", args=[world["study"].slug, gold_item.pk]),
                         {"action": "draft"})
    assert posted.status_code == 302 and not Curation.objects.exists()


def test_a_curator_finds_the_queue_from_their_annotate_page(client, world):
    curator = make_user()
    Membership.objects.create(study=world["study"], annotator=curator, is_curator=True)
    client.force_login(curator)
    queue = reverse("annotator:adjudication-queue", args=[world["study"].slug])
    assert queue in client.get(reverse("annotator:index")).content.decode()
    assert client.get(queue).status_code == 200
    client.force_login(world["ann"])  # a member who is not a curator gets no link
    assert queue not in client.get(reverse("annotator:index")).content.decode()
