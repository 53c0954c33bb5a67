"""What a reader sees: every page of the built site opened in headless Chromium.

The site (``_build/html``, built by ``make book`` before the tests run) is served
on 127.0.0.1 and every page is loaded with all non-local requests blocked, as on
a machine without network. For each page we assert that

* MathJax (served from the site itself) finished typesetting, produced no
  error nodes, and no raw TeX (``$$``, ``\\(``, ``\\begin{``, ``\\macro{``) remains
  in the page text outside code blocks;
* every ``<img>`` loaded (``naturalWidth > 0``);
* there is no execution failure, traceback or error output block;
* every internal link resolves (the target page exists and so does its anchor);
* no request tried to leave the machine.

A screenshot of each page's first screen is saved under ``_build/screenshots/``.
Chromium is Debian's (``/usr/bin/chromium``; ``make test`` installs it), driven
by Playwright for Python without any browser download. When Chromium or
Playwright cannot be had, the tests are reported as skipped with the reason.
"""
from __future__ import annotations

import functools
import http.server
import os
import re
import shutil
import threading
import urllib.parse
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SITE = Path(os.environ.get("MVLIB_SITE", ROOT / "_build" / "html"))
SHOTS = SITE.parent / "screenshots"
SKIP_PAGES = {"genindex.html", "search.html", "index.html"}  # index.html is a redirect
CHROMIUM_FLAGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]
# sphinx-thebe (pulled in by jupyter-book 1.x) declares this constant in two
# scripts on every page; it is harmless (thebe is off) and not ours to fix.
KNOWN_JS_ERRORS = ("Identifier 'THEBE_JS_URL' has already been declared",)
RAW_TEX = re.compile(r"\$\$|\\\(|\\\)|\\\[|\\\]|\\begin\{|\\[A-Za-z]+\{")


def _pages():
    if not SITE.is_dir():
        return []
    return sorted(p.relative_to(SITE).as_posix() for p in SITE.rglob("*.html")
                  if "_static" not in p.parts and "_sources" not in p.parts and p.name not in SKIP_PAGES)


def _chromium():
    path = os.environ.get("MVLIB_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    return path


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def server():
    if not SITE.is_dir():
        pytest.skip(f"no built site at {SITE.name}: run `make book` first")
    handler = functools.partial(_Quiet, directory=str(SITE))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    httpd.shutdown()


@pytest.fixture(scope="module")
def browser():
    exe = _chromium()
    if exe is None:
        pytest.skip("Chromium is not installed (Debian package `chromium`; `make test` installs it as root)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as exc:  # pragma: no cover - pinned in requirements.lock
        pytest.skip(f"playwright for Python is not importable: {exc}")
    with sync_playwright() as pw:
        try:
            b = pw.chromium.launch(executable_path=exe, headless=True, args=CHROMIUM_FLAGS)
        except Exception as exc:
            pytest.skip(f"Chromium at {exe} could not be started: {str(exc).splitlines()[0]}")
        yield b
        b.close()


def _anchor_exists(html: str, fragment: str) -> bool:
    frag = re.escape(urllib.parse.unquote(fragment))
    return re.search(rf'\b(id|name)="{frag}"', html) is not None


_JS_TEXT_OUTSIDE_CODE = """() => {
  const body = document.body.cloneNode(true);
  body.querySelectorAll('pre, code, script, style, mjx-container, .highlight, .MathJax').forEach(e => e.remove());
  return body.textContent;
}"""

_JS_BROKEN_IMAGES = """() => Array.from(document.images)
  .filter(img => !(img.complete && img.naturalWidth > 0))
  .map(img => img.getAttribute('src').slice(0, 80))"""

_JS_LINKS = """() => Array.from(document.querySelectorAll('a[href]')).map(a => a.href)"""


@pytest.mark.parametrize("page_path", _pages() or ["<no site built>"])
def test_page_renders(page_path, server, browser):
    if page_path == "<no site built>":
        pytest.skip("no built site: run `make book` first")
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    outside = []

    def route(r):
        if urllib.parse.urlsplit(r.request.url).hostname in ("127.0.0.1", "localhost", None) \
                or r.request.url.startswith("data:"):
            r.continue_()
        else:  # the network is "unavailable": record and refuse
            outside.append(r.request.url)
            r.abort()

    page.route("**/*", route)
    errors = []
    page.on("pageerror", lambda exc: str(exc) in KNOWN_JS_ERRORS or errors.append(str(exc)))
    url = server + page_path
    page.goto(url, wait_until="load")

    has_math = page.evaluate("() => document.querySelectorAll('.math').length") > 0
    if has_math:
        page.wait_for_function("() => window.MathJax && MathJax.startup && MathJax.startup.promise", timeout=30000)
        page.evaluate("() => MathJax.startup.promise")
        assert page.evaluate("() => document.querySelectorAll('mjx-container').length") > 0, \
            "math on the page was not typeset by MathJax"
        # parse errors become <mjx-merror>; undefined macros (MathJax's noundefined
        # extension) become red <mtext> in the assistive MathML: both are errors
        merrors = page.evaluate(
            "() => Array.from(document.querySelectorAll('mjx-merror, mjx-assistive-mml [mathcolor=\"red\"]'))"
            ".map(e => e.textContent)")
        assert not merrors, f"MathJax errors on {page_path}: {merrors[:5]}"

    text = page.evaluate(_JS_TEXT_OUTSIDE_CODE)
    raw = sorted(set(m.group(0) for m in RAW_TEX.finditer(text)))
    assert not raw, f"raw TeX left in the text of {page_path}: {raw[:10]}"

    broken = page.evaluate(_JS_BROKEN_IMAGES)
    assert not broken, f"images that did not load on {page_path}: {broken}"

    full_text = page.evaluate("() => document.body.innerText")
    for needle in ("Executing notebook failed", "Traceback (most recent call last)"):
        assert needle not in full_text, f"{needle!r} appears on {page_path}"
    error_blocks = page.evaluate(
        "() => document.querySelectorAll('.output.traceback, .output.error, div.cell_output .traceback').length")
    assert error_blocks == 0, f"{error_blocks} error output blocks on {page_path}"
    stderr_errors = page.evaluate(
        "() => Array.from(document.querySelectorAll('.output.stderr')).map(e => e.innerText)"
        ".filter(t => /Error|Exception/.test(t))")
    assert not stderr_errors, f"error messages in stderr outputs of {page_path}: {stderr_errors[:3]}"

    # internal links: the page exists and so does the anchor
    bad_links = []
    cache = {}
    for href in page.evaluate(_JS_LINKS):
        if not href.startswith(server):
            continue
        target, _, fragment = href[len(server):].partition("#")
        target = urllib.parse.unquote(target) or "index.html"
        if target.endswith("/"):
            target += "index.html"
        file = SITE / target
        if target not in cache:
            cache[target] = file.read_text(encoding="utf-8", errors="replace") if file.is_file() else None
        html = cache[target]
        if html is None:
            bad_links.append(href)
        elif fragment and file.suffix == ".html" and not _anchor_exists(html, fragment):
            bad_links.append(href)
    assert not bad_links, f"internal links that do not resolve on {page_path}: {bad_links[:10]}"

    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / (page_path.replace("/", "__")[:-5] + ".png")))
    assert not outside, f"{page_path} tried to load from the network: {outside[:5]}"
    assert not errors, f"JavaScript errors on {page_path}: {errors[:3]}"
    page.close()


# --------------------------------------------------------------------------- reading elsewhere
def _chapter_pages():
    return sorted(p.name for p in (SITE / "chapters").glob("[01][0-9]_*.html")) if SITE.is_dir() else []


@pytest.mark.parametrize("name", _chapter_pages() or ["<no site built>"])
def test_download_and_launch_buttons_point_at_the_pages_own_notebook(name):
    """The download button yields the page's notebook, valid; Binder and Colab open that notebook."""
    if name == "<no site built>":
        pytest.skip("no built site: run `make book` first")
    import nbformat
    import yaml

    stem = name[:-5]
    html = (SITE / "chapters" / name).read_text(encoding="utf-8")
    ipynb_links = set(re.findall(r'href="([^"]+\.ipynb)"', html))
    downloads = {h for h in ipynb_links if not h.startswith("http")}
    assert downloads == {f"../_sources/chapters/{stem}.ipynb"}, downloads
    nb = nbformat.read(SITE / "_sources" / "chapters" / f"{stem}.ipynb", as_version=4)
    nbformat.validate(nb)
    source = nbformat.read(SITE.parent.parent / "chapters" / f"{stem}.ipynb", as_version=4)
    assert [c.source for c in nb.cells] == [c.source for c in source.cells], "the download is not the chapter"
    repo = yaml.safe_load((SITE.parent.parent / "_config.yml").read_text(encoding="utf-8"))["repository"]
    slug, branch = repo["url"].removeprefix("https://github.com/"), repo.get("branch", "main")
    launch = {h for h in ipynb_links if h.startswith("http")}
    assert launch == {f"https://mybinder.org/v2/gh/{slug}/{branch}?urlpath=tree/chapters/{stem}.ipynb",
                      f"https://colab.research.google.com/github/{slug}/blob/{branch}/chapters/{stem}.ipynb"}, launch


def test_offline_search_finds_whitening(server, browser):
    page = browser.new_page()
    page.route("**/*", lambda r: r.continue_() if urllib.parse.urlsplit(r.request.url).hostname
               in ("127.0.0.1", "localhost", None) else r.abort())
    page.goto(server + "search.html?q=whitening", wait_until="load")
    page.wait_for_function("() => document.querySelectorAll('#search-results li').length > 0", timeout=30000)
    hits = page.evaluate("() => Array.from(document.querySelectorAll('#search-results li a')).map(a => a.href)")
    page.close()
    assert any("02_whitening_power" in h for h in hits), hits[:10]
