"""The AgentSense figures' layout, checked on the drawn matplotlib figure: what a reader would see cut or crossed."""

import pytest

from benchmark.results.agentsense import figures

MODELS = ("openai/gpt-4o-mini-2024-07-18", "together_ai/meta-llama/Llama-3-70b-chat-hf")
JUDGES = ("anthropic/claude-3-5-sonnet-20241022-extended-context", "openai/gpt-4o-2024-08-06",
          "openrouter/mistralai/mixtral-8x22b-instruct-v0.1")
VIEWS = ("self", "other", *(f"judge:{judge}" for judge in JUDGES), "judges_average", "judges_majority")


def cell(mean: float, low: float, high: float) -> dict:
    return {"mean": mean, "ci95": [low, high], "n": 5, "clusters": 3}


@pytest.fixture
def drawn(monkeypatch):
    """The matplotlib figure behind the completion bars of two models under seven perspectives."""
    kept = []

    def keep(figure, name, title, description):
        kept.append(figure)
        return "<svg></svg>"

    monkeypatch.setattr(figures, "to_svg", keep)
    report = {"models": list(MODELS), "completion": {
        view: {model: cell(0.4, 0.0, 1.0) if index % 2 else cell(0.13, 0.0, 0.33) for model in MODELS}
        for index, view in enumerate(VIEWS)
    }}
    figures.completion_bars(report)
    figure = kept[0]
    return figure, figure._get_renderer()


def test_the_legend_of_long_judge_names_fits_the_figure(drawn):
    figure, renderer = drawn
    legend = figure.legends[0].get_window_extent(renderer)
    assert legend.x0 >= 0 and legend.x1 <= figure.bbox.width
    assert len(figure.legends[0].get_texts()) == len(VIEWS)


def test_values_on_bars_do_not_sit_on_their_error_bars(drawn):
    figure, renderer = drawn
    axes = figure.axes[0]
    whiskers = [segment for collection in axes.collections for segment in collection.get_segments()]
    assert whiskers
    labels = [text.get_window_extent(renderer) for text in axes.texts]
    assert len(labels) == len(VIEWS) * len(MODELS)
    for (x0, y0), (x1, y1) in whiskers:
        (px0, py0), (px1, py1) = axes.transData.transform([(x0, y0), (x1, y1)])
        for label in labels:
            crosses = label.x0 <= (px0 + px1) / 2 <= label.x1 and min(py0, py1) < label.y0 < max(py0, py1)
            assert not crosses, f"a value label at {label} sits on a whisker"
