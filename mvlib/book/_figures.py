"""Figure helpers for the chapters: one figure per cell, its axes labelled in one call."""
from __future__ import annotations

from contextlib import contextmanager

__all__ = ["figure", "label_axes"]


@contextmanager
def figure(nrows: int = 1, ncols: int = 1, **subplots_kw):
    """A new figure for one chapter cell: yields ``(fig, axes)``; on leaving the block the layout
    is tightened and the figure shown (``plt.show()``).

    ``nrows``, ``ncols`` and ``subplots_kw`` (``figsize``, ``sharey``, ...) go to
    ``matplotlib.pyplot.subplots``, so ``axes`` is one Axes or an array of them as there. Nothing
    is shown if the block raises.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from mvlib.book import figure, label_axes
    >>> with figure(figsize=(4, 3)) as (fig, ax):
    ...     _ = ax.plot([1, 2, 3], [1, 4, 9], label="squares")
    ...     _ = label_axes(ax, "x", "$x^2$", legend=True)
    >>> fig.get_size_inches().tolist()
    [4.0, 3.0]
    """
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(nrows, ncols, **subplots_kw)
    yield fig, axes
    fig.tight_layout()
    plt.show()


def label_axes(ax, xlabel: str | None = None, ylabel: str | None = None, *, title: str | None = None,
               legend=None):
    """Set the x and y labels and the title of ``ax`` (those given), and draw its legend.

    ``legend`` is ``None`` (no legend), ``True`` (the default legend) or a dict of keyword
    arguments for ``ax.legend`` (e.g. ``{"fontsize": 8, "ncol": 2}``). Returns ``ax``.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> from mvlib.book import label_axes
    >>> fig, ax = plt.subplots()
    >>> _ = ax.plot([0, 1], label="line")
    >>> _ = label_axes(ax, "n", "error", title="A", legend={"fontsize": 8})
    >>> ax.get_xlabel(), ax.get_ylabel(), ax.get_title(), ax.get_legend() is not None
    ('n', 'error', 'A', True)
    >>> plt.close(fig)
    """
    if xlabel is not None:
        ax.set_xlabel(xlabel)
    if ylabel is not None:
        ax.set_ylabel(ylabel)
    if title is not None:
        ax.set_title(title)
    if legend is True:
        ax.legend()
    elif legend:
        ax.legend(**legend)
    return ax
