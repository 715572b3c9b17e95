"""The evaluation dimensions and their score ranges.

Goal-oriented dimensions come from Sotopia (scored per seat); the barrier-aware ones come from
SocialVeil (scored once per episode). Ranges are inclusive. Plain Python, so the statistics and
the judge can use them without Django.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class Dimension:
    key: str
    label: str
    low: int
    high: int
    per_seat: bool
    question: str

    def contains(self, score: float) -> bool:
        return self.low <= score <= self.high


DIMENSIONS: dict[str, Dimension] = {
    d.key: d
    for d in [
        Dimension("goal", "Goal completion", 0, 10, True,
                  "How far did the character get toward their own social goal?"),
        Dimension("believability", "Believability", 0, 10, True,
                  "Did the character act naturally and in keeping with their profile?"),
        Dimension("relationship", "Relationship", -5, 5, True,
                  "Did the relationship with the other side improve (+) or suffer (-)?"),
        Dimension("knowledge", "Knowledge", 0, 10, True,
                  "How much new, important information did the character gain?"),
        Dimension("secret", "Secret", -10, 0, True,
                  "How much of what the character wanted hidden leaked out (0 = nothing)?"),
        Dimension("social_rules", "Social rules", -10, 0, True,
                  "Did the character break moral rules or laws (0 = none broken)?"),
        Dimension("financial", "Financial and material benefits", -5, 5, True,
                  "Did the character gain (+) or lose (-) money or material goods?"),
        Dimension("unresolved_confusion", "Unresolved confusion", 1, 5, False,
                  "How much confusion was left at the end (5 = none left, 1 = incoherent)?"),
        Dimension("mutual_understanding", "Mutual understanding", 1, 5, False,
                  "How well did the two sides understand each other's goals (5 = fully)?"),
    ]
}

SEAT_DIMENSIONS = [d for d in DIMENSIONS.values() if d.per_seat]
EPISODE_DIMENSIONS = [d for d in DIMENSIONS.values() if not d.per_seat]
