"""Helpers for the chapters' checks of failures: the message of an error a call raises, the
warnings it emits."""
from __future__ import annotations

import warnings

__all__ = ["error_message", "warning_messages"]


def error_message(fn, *args, error=ValueError, **kwargs):
    """The message of the ``error`` (an exception class) that ``fn(*args, **kwargs)`` raises.

    Returns ``None`` if the call returns; any other exception propagates. A chapter asserts on
    the message (``assert msg is not None and "Condition 3.1" in msg``) and prints it.

    Parameters
    ----------
    fn : callable
    *args, **kwargs : passed to ``fn``
    error : exception class or tuple of them, default ``ValueError``

    Returns
    -------
    str or None

    Examples
    --------
    >>> from mvlib.book import error_message
    >>> error_message(int, "x")
    "invalid literal for int() with base 10: 'x'"
    >>> error_message(int, "7") is None
    True
    """
    try:
        fn(*args, **kwargs)
    except error as err:
        return str(err)
    return None


def warning_messages(fn, *args, category=Warning, **kwargs) -> list:
    """The messages of the warnings of ``category`` that ``fn(*args, **kwargs)`` emits, in order.

    Every warning is recorded (filter ``"always"``, so one already shown is caught again); those
    of other categories are dropped. The result of ``fn`` is discarded.

    Parameters
    ----------
    fn : callable
    *args, **kwargs : passed to ``fn``
    category : warning class, default ``Warning`` (all)

    Returns
    -------
    list of str

    Examples
    --------
    >>> import warnings
    >>> from mvlib.book import warning_messages
    >>> def noisy():
    ...     warnings.warn("first", RuntimeWarning)
    ...     warnings.warn("second", UserWarning)
    >>> warning_messages(noisy, category=RuntimeWarning)
    ['first']
    >>> warning_messages(noisy)
    ['first', 'second']
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn(*args, **kwargs)
    return [str(w.message) for w in caught if issubclass(w.category, category)]
