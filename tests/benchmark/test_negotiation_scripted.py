"""The scripted negotiators on plain values: concession schedules by conflict mode, and when the scripted
mediators step in."""

from benchmark.agents.negotiation import scripted
from benchmark.agents.negotiation.context import NegotiationContext, PartyView, TopicView, Utterance
from benchmark.agents.negotiation.tracker import pair_agreement, stated_option, track

TERM = TopicView("Contract Term", options=(("a", "one year"), ("b", "two years"), ("c", "three years")))
PRICE = TopicView("Discount Pricing", options=(("a", "5%"), ("b", "10%"), ("c", "15%")))


def party(name: str, position: int, mode: str = "competing", term: str = "abc", price: str = "abc") -> PartyView:
    return PartyView(name, position, mode=mode, rankings={TERM.title: tuple(term), PRICE.title: tuple(price)})


def table(*said: tuple[str, str], parties=None) -> NegotiationContext:
    parties = parties or (party("Alex", 0, term="abc"), party("Jamie", 1, term="abc"), party("Lee", 2, term="cba"))
    transcript = [Utterance(0, "Mediator", "Welcome.", True)]
    transcript += [Utterance(n, speaker, text) for n, (speaker, text) in enumerate(said, start=1)]
    return NegotiationContext("", (TERM, PRICE), parties, tuple(transcript), mediator_name="Mediator")


def test_a_stance_is_the_letter_after_the_topic_title_in_the_same_sentence():
    assert stated_option("On Contract Term, I want option (b). Price (c) later.", TERM) == "b"
    assert stated_option("I want (b). Contract Term is open.", TERM) is None


def test_pair_agreement_follows_the_scripted_judge():
    assert pair_agreement("a", "a", "ab", "ab") == 1.0
    assert pair_agreement("a", "c", "ac", "cb") == 0.5  # B's stance (c) is A's second choice
    assert pair_agreement("a", "b", "a", "b") == 0.5  # adjacent letters
    assert pair_agreement("a", "c", "a", "c") == 0.0


def test_competing_concedes_after_three_own_turns_accommodating_after_one():
    hard, soft = party("Alex", 0, "competing"), party("Alex", 0, "accommodating")
    said = [("Alex", "On Contract Term, (a).")]
    assert scripted.offered_option(table(*said), soft, TERM) == "b"
    assert scripted.offered_option(table(*said * 2), hard, TERM) == "a"
    assert scripted.offered_option(table(*said * 3), hard, TERM) == "b"


def test_an_avoiding_party_never_raises_the_most_contested_topic():
    avoider = party("Lee", 2, "avoiding", term="cba", price="abc")
    context = table(parties=(party("Alex", 0), party("Jamie", 1), avoider))
    assert [t.title for t in scripted.topics_to_raise(context, avoider)] == [PRICE.title]
    assert all(PRICE.title in thought for thought in scripted.thoughts(context, avoider, 2))


def test_the_social_mediator_steps_in_when_agreement_falls_and_two_parties_spoke():
    # everyone starts on (a): full agreement on the term; Alex's move to (c) leaves one agreeing pair of three
    same = (party("Alex", 0), party("Jamie", 1), party("Lee", 2))
    assert track(table(parties=same)).topics[TERM.title] == 1.0
    fallen = table(("Jamie", "On Discount Pricing, (a)."), ("Alex", "On Contract Term, (c)."), parties=same)
    assert track(fallen).topics[TERM.title] == 1 / 3
    engage, rating, reason = scripted.social_when(fallen)
    assert engage and rating > 3.5 and "Contract Term" in reason
    alone = table(("Alex", "On Contract Term, (c)."), parties=same)
    assert not scripted.social_when(alone)[0]  # only one party has spoken since the mediator
    steady = table(("Jamie", "On Discount Pricing, (a)."), ("Alex", "On Contract Term, (a)."), parties=same)
    assert not scripted.social_when(steady)[0]


def test_the_generic_mediator_speaks_every_eight_party_turns():
    assert not scripted.generic_when(table(*[("Alex", "Hm."), ("Lee", "Ok.")] * 3 + [("Alex", "Hm.")]))[0]
    assert scripted.generic_when(table(*[("Alex", "Hm."), ("Lee", "Ok.")] * 4))[0]
