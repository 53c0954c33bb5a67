"""mvlib.book figure helpers: ``figure`` lays out and shows one figure, ``label_axes`` labels an Axes."""
from __future__ import annotations

import matplotlib
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from mvlib.book import figure, label_axes  # noqa: E402


def test_figure_yields_the_subplots_and_shows_the_figure(monkeypatch):
    shown = []
    monkeypatch.setattr(plt, "show", lambda: shown.append(True))
    with figure(1, 2, figsize=(6, 2), sharey=True) as (fig, axes):
        assert len(axes) == 2 and fig.get_size_inches().tolist() == [6.0, 2.0]
        axes[0].plot([0, 1], [0, 1])
    assert shown == [True]
    assert axes[1].get_shared_y_axes().joined(axes[0], axes[1])
    plt.close(fig)


def test_figure_shows_nothing_when_the_block_raises(monkeypatch):
    shown = []
    monkeypatch.setattr(plt, "show", lambda: shown.append(True))
    with pytest.raises(RuntimeError, match="boom"):
        with figure() as (fig, ax):
            raise RuntimeError("boom")
    assert shown == []
    plt.close(fig)


def test_label_axes_sets_only_what_is_given():
    fig, ax = plt.subplots()
    ax.plot([0, 1], label="a")
    assert label_axes(ax, "x") is ax
    assert ax.get_xlabel() == "x" and ax.get_ylabel() == "" and ax.get_legend() is None
    label_axes(ax, ylabel="y", title="t", legend={"fontsize": 7, "loc": "lower left"})
    assert ax.get_ylabel() == "y" and ax.get_title() == "t"
    assert ax.get_legend().get_texts()[0].get_fontsize() == 7
    ax2 = label_axes(fig.add_subplot(2, 1, 2), legend=None)
    assert ax2.get_legend() is None
    plt.close(fig)
