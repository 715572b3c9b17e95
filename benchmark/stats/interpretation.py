"""Verbal labels for agreement coefficients, as papers report them next to the numbers.

Kappa and alpha follow Landis & Koch (1977), "The measurement of observer agreement for
categorical data", Biometrics 33(1):159-174. ICCs follow Cicchetti (1994), "Guidelines,
criteria, and rules of thumb for evaluating normed and standardized assessment instruments in
psychology", Psychological Assessment 6(4):284-290.
"""

LANDIS_KOCH = "Landis & Koch (1977)"
CICCHETTI = "Cicchetti (1994)"

# Upper bounds (inclusive) and labels, lowest first.
_LANDIS_KOCH_BANDS = (
    (0.20, "slight"),
    (0.40, "fair"),
    (0.60, "moderate"),
    (0.80, "substantial"),
    (1.00, "almost perfect"),
)
# Lower bounds (inclusive) and labels, highest first.
_CICCHETTI_BANDS = (
    (0.75, "excellent"),
    (0.60, "good"),
    (0.40, "fair"),
)


def landis_koch(value: float | None) -> str | None:
    """Label a kappa or alpha: below 0 poor, up to .20 slight, .40 fair, .60 moderate,
    .80 substantial, above that almost perfect (Landis & Koch 1977, p. 165)."""
    if value is None:
        return None
    if value < 0:
        return "poor"
    for upper, label in _LANDIS_KOCH_BANDS:
        if value <= upper:
            return label
    return "almost perfect"


def cicchetti(value: float | None) -> str | None:
    """Label an ICC: below .40 poor, .40-.59 fair, .60-.74 good, .75 and above excellent
    (Cicchetti 1994, p. 286)."""
    if value is None:
        return None
    for lower, label in _CICCHETTI_BANDS:
        if value >= lower:
            return label
    return "poor"
