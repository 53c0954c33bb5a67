"""Accessibility fixes applied to every HTML page of the book.

docutils writes the bibliography as ``<div role="list">`` whose entries carry the DPUB-ARIA
role ``doc-biblioentry``; ARIA requires the children of a list to be list items (axe rule
``aria-required-children``, critical), and ``doc-biblioentry`` is deprecated in DPUB-ARIA 1.1.
The entries become ``role="listitem"`` of that list.

myst-nb names the summary of a collapsed code cell "Toggle hidden content" through
``aria-label`` while it shows "Show code cell source" (axe rule
``label-content-name-mismatch``, WCAG 2.5.3): the label goes, and the visible text names it.

A figure's image has no alt text of its own when a notebook cell makes it (myst-nb) and then
shows its file name to a screen reader; every figure's image without a written alt text takes
the first sentence of the figure's caption (math as its TeX source, references as their
numbers). A written alt text is kept.

The pages' other fixes are templates (``_templates/``: the search and colour-mode buttons)
and a style sheet (``_static/a11y.css``: link contrast).
"""
from __future__ import annotations

import re

from docutils import nodes

_ENTRY = re.compile(r'(<div class="citation"[^>]*?) role="doc-biblioentry"')
_SUMMARY = '<summary aria-label="Toggle hidden content">'


def citation_entries_as_list_items(body: str) -> str:
    """Return ``body`` with each bibliography entry's role changed to ``listitem``."""
    return _ENTRY.sub(r'\1 role="listitem"', body)


def summaries_named_by_their_text(body: str) -> str:
    """Return ``body`` without the ``aria-label`` of myst-nb's hidden-cell summaries."""
    return body.replace(_SUMMARY, "<summary>")


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(])")
_FILE_NAME = re.compile(r"\.(png|svg|jpe?g|gif|pdf)$", re.IGNORECASE)


def first_sentence(text: str) -> str:
    """The first sentence of ``text`` (whitespace collapsed): up to a '.', '!' or '?' followed
    by a space and a capital letter or an opening parenthesis, or all of it."""
    text = " ".join(text.split())
    return _SENTENCE_END.split(text, maxsplit=1)[0]


def _alt_from_caption(app, doctree, docname):
    for figure in doctree.findall(nodes.figure):
        captions = [c for c in figure.children if isinstance(c, nodes.caption)]
        if not captions:
            continue
        alt = first_sentence(captions[0].astext())
        for image in figure.findall(nodes.image):
            written = image.get("alt", "")
            if not written or written == image.get("uri") or _FILE_NAME.search(written):
                image["alt"] = alt


def _on_page(app, pagename, templatename, context, doctree):
    if "body" in context:
        context["body"] = summaries_named_by_their_text(citation_entries_as_list_items(context["body"]))


def setup(app):
    app.connect("doctree-resolved", _alt_from_caption)
    app.connect("html-page-context", _on_page)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
