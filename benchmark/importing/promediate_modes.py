"""ProMediate's conflict modes as Parley conditions: one built-in barrier per mode.

ProMediate sets the difficulty of a negotiation by the conflict style every party plays (Thomas-Kilmann's
modes): Accommodating and Avoiding are the easy setting, no style ("General") the medium one, Competing the hard
one; the public code also knows Compromising and Collaborating. Upstream appends one persona paragraph to every
participant's memory; in Parley the mode is a built-in barrier whose style directive is that paragraph (worded
for Parley, faithful to the paper's meaning), carried by the party seats, not the mediator's (each imported
case names its party roles in a ``ScenarioBarrier`` per mode). Migration ``0030`` seeds the barriers from a
copy of :data:`BARRIERS` frozen in the migration: a change made here reaches databases only through a new
data migration.
"""

from __future__ import annotations

# Mode as upstream's ``--mode`` names it -> the barrier key (``none`` is the paper's "General").
MODES = {
    "none": "promediate-general",
    "general": "promediate-general",
    "competing": "promediate-competing",
    "avoiding": "promediate-avoiding",
    "accommodating": "promediate-accommodating",
    "compromising": "promediate-compromising",
    "collaborating": "promediate-collaborating",
}
DIFFICULTY = {"accommodating": "easy", "avoiding": "easy", "general": "medium", "competing": "hard"}

BARRIERS = [
    {
        "key": "promediate-general",
        "name": "ProMediate: general (no conflict style)",
        "position": 20,
        "definition": "ProMediate's medium setting: the parties get no conflict style and negotiate as their "
        "briefs alone suggest.",
        "style_directive": "No particular conflict style is asked of you: negotiate as the person in your brief "
        "would, guided only by your own preferences and strategy.",
        "example": "I can live with the two-year term if we settle the discount first.",
        "exemplar_templates": "Where do we stand on {topic}?\nI would like us to settle {topic} in a way I can accept.",
    },
    {
        "key": "promediate-competing",
        "name": "ProMediate: competing",
        "position": 21,
        "definition": "ProMediate's hard setting: every party holds its positions firmly and argues for them "
        "assertively, yielding only when offered its second choice.",
        "style_directive": "Hold your positions firmly and argue for them with conviction. Press for your first "
        "choice on every topic, push back on proposals that cost you, and do not give ground only to keep the "
        "peace. When someone offers you your second choice on a topic, you are willing to soften and settle "
        "there.",
        "example": "That rebate schedule does not work for us. We need the exclusive status or there is no deal.",
        "exemplar_templates": "On {topic} my position has not changed, {partner}.\n"
        "I will not accept anything less on {topic}.",
    },
    {
        "key": "promediate-avoiding",
        "name": "ProMediate: avoiding",
        "position": 22,
        "definition": "ProMediate's easy setting (one of two): every party steers away from contentious topics, "
        "puts them off, and re-engages only when a proposal would hurt it.",
        "style_directive": "Steer away from confrontation. When a topic becomes contentious, sidestep it, turn to "
        "something else or suggest coming back to it later, and rarely state your demands outright. As soon "
        "as a proposal on the table would clearly hurt your interests, though, step back in and say so.",
        "example": "Maybe we can leave the contract term for later and look at marketing first?",
        "exemplar_templates": "Could we come back to {topic} later?\nI would rather not get stuck on {topic} now.",
    },
    {
        "key": "promediate-accommodating",
        "name": "ProMediate: accommodating",
        "position": 23,
        "definition": "ProMediate's easy setting (one of two): every party is open to the others' reasonable "
        "proposals while still defending its own interests.",
        "style_directive": "Be cooperative and easy to work with: listen to the others' proposals, accept those "
        "that seem reasonable, and look for ways to meet their concerns. Still stand up for the interests in "
        "your brief, and do not give away what matters most to you.",
        "example": "That sounds fair to me, as long as the grace period stays in.",
        "exemplar_templates": "That seems reasonable on {topic}, {partner}.\nI can go along with that on {topic} "
        "if my main concern is met.",
    },
    {
        "key": "promediate-compromising",
        "name": "ProMediate: compromising",
        "position": 24,
        "definition": "Every party looks for middle ground, expecting each side to give up part of what it wants.",
        "style_directive": "Look for middle ground: expect everyone, yourself included, to give something up, "
        "and propose and accept trade-offs that split the difference between positions so the group reaches a "
        "deal.",
        "example": "What if we meet halfway: a three-year term and the standard support package?",
        "exemplar_templates": "Let's meet halfway on {topic}.\nI give a little on {topic} if you give a little too.",
    },
    {
        "key": "promediate-collaborating",
        "name": "ProMediate: collaborating",
        "position": 25,
        "definition": "Every party treats the negotiation as a shared problem and looks for options that meet "
        "everyone's key concerns.",
        "style_directive": "Treat the negotiation as a problem you solve together: ask about the others' "
        "underlying interests, share your own, and work towards options that satisfy everyone's key concerns "
        "instead of settling for a split.",
        "example": "What is it about the five-year term that worries you? Maybe we can address that directly.",
        "exemplar_templates": "What matters most to you on {topic}, {partner}?\nIs there an option on {topic} "
        "that works for all of us?",
    },
]
PERSONAS = {barrier["key"]: barrier["style_directive"] for barrier in BARRIERS}
