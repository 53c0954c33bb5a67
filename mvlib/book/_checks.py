"""Checks the chapters state in one line: that a call fails, and with which message; which
warnings a call emits."""
from __future__ import annotations

import warnings

__all__ = ["raised", "warning_messages"]


def raised(exc_type, fn, *args, **kwargs) -> str:
    """The message of the ``exc_type`` that ``fn(*args, **kwargs)`` raises.

    For a chapter cell that shows a call refusing its input: the failure is checked (an
    :class:`AssertionError` if the call returns, or raises an exception of another type, which
    propagates) and its message is returned for printing.

    Parameters
    ----------
    exc_type : type or tuple of types
        The exception the call must raise.
    fn : callable
        The call, with its positional and keyword arguments ``args`` and ``kwargs``.

    Returns
    -------
    str
        ``str`` of the exception raised.

    Examples
    --------
    >>> import math
    >>> from mvlib.book import raised
    >>> raised(ValueError, math.sqrt, -1.0)
    'math domain error'
    >>> raised(ValueError, math.sqrt, 4.0)
    Traceback (most recent call last):
        ...
    AssertionError: sqrt returned 2.0 instead of raising ValueError
    """
    try:
        value = fn(*args, **kwargs)
    except exc_type as err:
        return str(err)
    names = exc_type.__name__ if isinstance(exc_type, type) else " or ".join(t.__name__ for t in exc_type)
    raise AssertionError(f"{getattr(fn, '__name__', fn)} returned {value!r} instead of raising {names}")


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
