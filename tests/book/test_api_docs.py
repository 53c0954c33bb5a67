"""Every public name is documented, and the API page of the built book lists it."""
import inspect
import re
from pathlib import Path

import pytest

import mvlib

API_PAGE = Path(__file__).resolve().parents[2] / "_build" / "html" / "chapters" / "api.html"


@pytest.mark.parametrize("name", mvlib.__all__)
def test_public_name_has_a_docstring(name):
    obj = getattr(mvlib, name)
    doc = inspect.getdoc(obj) or ""
    assert len(doc) >= 40, f"mvlib.{name} lacks a docstring (got {doc!r})"
    if inspect.isfunction(obj) or inspect.isclass(obj):
        # the docstring says where the equation is derived in the book
        assert ":doc:`/chapters/" in doc, f"mvlib.{name}'s docstring does not link the chapter deriving it"


@pytest.mark.parametrize("name", mvlib.__all__)
def test_api_page_lists_name(name):
    if not API_PAGE.is_file():
        pytest.skip("no built book: run `make book` first")
    html = API_PAGE.read_text(encoding="utf-8")
    assert re.search(rf'id="mvlib\.{re.escape(name)}"', html), f"mvlib.{name} is missing from the API page"
