"""mvlib.book helpers for the chapters' checks of failures: error_message, warning_messages."""
from __future__ import annotations

import warnings

import pytest

from mvlib.book import error_message, warning_messages


def fails(x, scale=1.0):
    if x < 0:
        raise ValueError(f"x = {x * scale} is negative")
    if x == 0:
        raise KeyError("zero")
    return x


def test_error_message_returns_the_message_or_none():
    assert error_message(fails, -2, scale=3.0) == "x = -6.0 is negative"
    assert error_message(fails, 1) is None
    with pytest.raises(KeyError):                    # another exception is not swallowed
        error_message(fails, 0)
    assert error_message(fails, 0, error=KeyError) == "'zero'"
    assert error_message(fails, 0, error=(ValueError, KeyError)) == "'zero'"


class Special(UserWarning):
    pass


def emits(n, tag=""):
    for i in range(n):
        warnings.warn(f"special {i}{tag}", Special)
        warnings.warn("plain", RuntimeWarning)
    return n


def test_warning_messages_filters_by_category_and_catches_repeats():
    assert warning_messages(emits, 2, tag="!", category=Special) == ["special 0!", "special 1!"]
    assert warning_messages(emits, 1) == ["special 0", "plain"]
    assert warning_messages(emits, 1) == ["special 0", "plain"]    # shown before, caught again
    assert warning_messages(emits, 0) == []
    with warnings.catch_warnings():
        warnings.simplefilter("error")                # the outer filters are restored afterwards
        assert warning_messages(emits, 1, category=RuntimeWarning) == ["plain"]
        with pytest.raises(Special):
            emits(1)
