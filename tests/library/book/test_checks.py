"""Tests of mvlib.book.raised: the message of the error a call must raise."""
from __future__ import annotations

import pytest

from mvlib.book import raised


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
