import pytest

from benchmark.stats.interpretation import cicchetti, landis_koch


@pytest.mark.parametrize(
    ("value", "label"),
    [
        (-0.1, "poor"),
        (0.0, "slight"),
        (0.20, "slight"),
        (0.21, "fair"),
        (0.38, "fair"),  # SocialVeil's Fleiss kappa, "fair"
        (0.41, "moderate"),
        (0.61, "substantial"),
        (0.81, "almost perfect"),
        (1.0, "almost perfect"),
        (None, None),
    ],
)
def test_landis_koch(value, label):
    assert landis_koch(value) == label


@pytest.mark.parametrize(
    ("value", "label"),
    [(0.39, "poor"), (0.40, "fair"), (0.59, "fair"), (0.60, "good"), (0.74, "good"), (0.75, "excellent"), (None, None)],
)
def test_cicchetti(value, label):
    assert cicchetti(value) == label
