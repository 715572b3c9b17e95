"""The demo has one adjudicated item: a final curation with one picked and one own answer, each with a note."""

import pytest

from annotator.demo_gold import GOLD_DEMO_STUDY, adjudicate_demo_item
from annotator.gold import gold_values
from annotator.models import CuratedDecision, Curation, Study

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("make_demo_world")]


def test_the_demo_socialveil_study_has_one_final_gold_item():
    study = Study.objects.get(slug=GOLD_DEMO_STUDY)
    curation = Curation.objects.get(item__study=study)
    assert curation.status == Curation.Status.FINAL and curation.curator.username == "researcher"
    decisions = list(CuratedDecision.objects.filter(curation=curation))
    picked = [d for d in decisions if d.picked_id is not None and d.note]
    own = [d for d in decisions if d.picked_id is None]
    assert picked and own and all(d.note for d in own)
    assert {key for _, key, _ in gold_values(study)} == {d.question.key for d in decisions}


def test_adjudicating_the_demo_again_changes_nothing():
    study = Study.objects.get(slug=GOLD_DEMO_STUDY)
    assert adjudicate_demo_item(study, Curation.objects.get(item__study=study).curator) is None
    assert Curation.objects.filter(item__study=study).count() == 1
