"""Progress bars for long experiment loops, silent where output is evidence.

``progress(iterable)`` wraps :class:`tqdm.tqdm`. Bars are shown only where a person
watches a terminal: with ``MVLIB_PROGRESS=1`` always, with ``MVLIB_PROGRESS=0``
never, and otherwise when standard error is a terminal and ``CI`` is not set. A
notebook kernel's standard error is not a terminal, so notebooks executed by the
book build or by nbval record no bar and their outputs stay comparable.
"""
from __future__ import annotations

import os
import sys

from tqdm import tqdm  # text bars on stderr: no widget library needed in Jupyter

__all__ = ["progress", "progress_enabled"]


def progress_enabled() -> bool:
    """Whether :func:`progress` shows a bar in the current process."""
    flag = os.environ.get("MVLIB_PROGRESS")
    if flag is not None:
        return flag == "1"
    if os.environ.get("CI"):
        return False
    return bool(getattr(sys.stderr, "isatty", lambda: False)())


def progress(iterable, *, desc: str | None = None, total: int | None = None, **kwargs):
    """``tqdm(iterable)`` when :func:`progress_enabled`, else the iterable unchanged.

    Wraps the experiment loops of the chapters, e.g. the noise grid of
    :doc:`/chapters/02_whitening_power`; set ``MVLIB_PROGRESS=1`` to see the bars
    when running a notebook yourself.
    """
    if not progress_enabled():
        return iterable
    return tqdm(iterable, desc=desc, total=total, leave=False, **kwargs)
