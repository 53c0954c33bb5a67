"""Tests of mvlib.book's checks: raised (the message of the error a call must raise) and
warning_messages (the warnings a call emits)."""
from __future__ import annotations

import warnings

import pytest

from mvlib.book import raised, warning_messages


def _fail(x, *, kind=ValueError):
    raise kind(f"bad {x}")


def test_returns_the_message_and_passes_the_arguments():
    assert raised(ValueError, _fail, 3) == "bad 3"
    assert raised((KeyError, ValueError), _fail, "y") == "bad y"


def test_a_call_that_returns_is_an_assertion_error():
    with pytest.raises(AssertionError, match="abs returned 2 instead of raising ValueError"):
        raised(ValueError, abs, -2)
    with pytest.raises(AssertionError, match="instead of raising KeyError or TypeError"):
        raised((KeyError, TypeError), abs, -2)


def test_an_error_of_another_type_propagates():
    with pytest.raises(TypeError, match="bad 1"):
        raised(ValueError, _fail, 1, kind=TypeError)


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
