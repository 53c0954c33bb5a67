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

Accessibility: axe-core (4.12.1, bundled by the pinned ``axe-playwright-python``; nothing is
downloaded) runs on every page in the light colour mode with its default rules and the
experimental ``label-content-name-mismatch`` switched on, and in the dark mode (which changes
colours, not the page) with the rules that depend on colour, on pages that together hold every
kind of element the theme colours differently; no critical or serious violation may remain.
Each page is loaded once, in light mode; the dark-mode checks switch that load to dark (the
theme's own switch, transitions off), and one page is also loaded in dark mode to show that the
theme follows the reader's preference and that the switch shows the same colours. The render
checks and axe read these loads (so do the
offline search, on ``search.html?q=whitening``, and the check that the contrast sampling still
catches a faint colour, on the smallest chapter after its own axe run). axe
accepts any alt text, a file name included, so a separate check
requires every figure's image to carry alt text that begins with the first sentence of the
figure's caption (``_ext/a11y.py`` gives notebook figures that alt text).
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

ROOT = Path(__file__).resolve().parents[2]
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


def _pages(skip=SKIP_PAGES):
    """The site's pages (paths relative to it), without those named in ``skip``."""
    if not SITE.is_dir():
        return []
    return sorted(p.relative_to(SITE).as_posix() for p in SITE.rglob("*.html")
                  if "_static" not in p.parts and "_sources" not in p.parts and p.name not in skip)


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


def _anchors(html: str) -> set:
    """The values of every ``id`` and ``name`` attribute of a page: the fragments a link may target."""
    return set(re.findall(r'\b(?:id|name)="([^"]*)"', html))


_JS_TEXT_OUTSIDE_CODE = """() => {
  const body = document.body.cloneNode(true);
  body.querySelectorAll('pre, code, script, style, mjx-container, .highlight, .MathJax').forEach(e => e.remove());
  return body.textContent;
}"""

_JS_BROKEN_IMAGES = """() => Array.from(document.images)
  .filter(img => !(img.complete && img.naturalWidth > 0))
  .map(img => img.getAttribute('src').slice(0, 80))"""

_JS_LINKS = """() => Array.from(document.querySelectorAll('a[href]')).map(a => a.href)"""


def _render_problems(page, page_path, server):
    """What is wrong with the loaded page ``page_path`` (MathJax finished typesetting already)."""
    problems = []
    if page.evaluate("() => document.querySelectorAll('.math').length") > 0:
        if page.evaluate("() => document.querySelectorAll('mjx-container').length") == 0:
            problems.append("math on the page was not typeset by MathJax")
        # parse errors become <mjx-merror>; undefined macros (MathJax's noundefined
        # extension) become red <mtext> in the assistive MathML: both are errors
        merrors = page.evaluate(
            "() => Array.from(document.querySelectorAll('mjx-merror, mjx-assistive-mml [mathcolor=\"red\"]'))"
            ".map(e => e.textContent)")
        if merrors:
            problems.append(f"MathJax errors: {merrors[:5]}")

    text = page.evaluate(_JS_TEXT_OUTSIDE_CODE)
    raw = sorted(set(m.group(0) for m in RAW_TEX.finditer(text)))
    if raw:
        problems.append(f"raw TeX left in the text: {raw[:10]}")

    broken = page.evaluate(_JS_BROKEN_IMAGES)
    if broken:
        problems.append(f"images that did not load: {broken}")

    full_text = page.evaluate("() => document.body.innerText")
    problems += [f"{needle!r} appears" for needle in ("Executing notebook failed", "Traceback (most recent call last)")
                 if needle in full_text]
    error_blocks = page.evaluate(
        "() => document.querySelectorAll('.output.traceback, .output.error, div.cell_output .traceback').length")
    if error_blocks:
        problems.append(f"{error_blocks} error output blocks")
    stderr_errors = page.evaluate(
        "() => Array.from(document.querySelectorAll('.output.stderr')).map(e => e.innerText)"
        ".filter(t => /Error|Exception/.test(t))")
    if stderr_errors:
        problems.append(f"error messages in stderr outputs: {stderr_errors[:3]}")

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
        if target not in cache:   # the anchors of each target page, read once
            cache[target] = (_anchors(file.read_text(encoding="utf-8", errors="replace"))
                             if file.is_file() else None)
        anchors = cache[target]
        if anchors is None:
            bad_links.append(href)
        elif fragment and file.suffix == ".html" and urllib.parse.unquote(fragment) not in anchors:
            bad_links.append(href)
    if bad_links:
        problems.append(f"internal links that do not resolve: {bad_links[:10]}")

    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / (page_path.replace("/", "__")[:-5] + ".png")))
    return problems


@pytest.mark.parametrize("page_path", _pages() or ["<no site built>"])
def test_page_renders(page_path, site_reports):
    if page_path == "<no site built>":
        pytest.skip("no built site: run `make book` first")
    report = site_reports.get((page_path, "light"))
    assert report is not None, f"{page_path} was not visited: {site_reports['<failures>']}"
    assert not report["problems"], f"{page_path}:\n" + "\n".join(report["problems"])
    assert not report["outside"], f"{page_path} tried to load from the network: {report['outside'][:5]}"
    assert not report["js_errors"], f"JavaScript errors on {page_path}: {report['js_errors'][:3]}"


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


SEARCH_QUERY = "whitening"


def test_offline_search_finds_whitening(site_reports):
    """The offline search (Sphinx's index, no network) finds the whitening chapter: read from the
    light visit of ``search.html``, which is opened with ``?q=whitening`` and waits for the results."""
    report = site_reports.get(("search.html", "light"))
    assert report is not None, f"search.html was not visited: {site_reports['<failures>']}"
    hits = report["search_hits"]
    assert any("02_whitening_power" in h for h in hits), hits[:10]


# --------------------------------------------------------------------------- accessibility
def _all_pages():
    """Every page a reader can open (the redirecting index.html aside)."""
    return _pages(skip={"index.html"})


AXE_OPTIONS = {"resultTypes": ["violations"], "rules": {"label-content-name-mismatch": {"enabled": True}}}
# Dark mode is checked on pages that together hold every kind of element the theme colours
# differently there (citations inside tinted blocks, an HTML table output, the theorem index,
# the search page and the index); every page is checked in light mode, the default.
DARK_PAGES = ("chapters/intro.html", "chapters/01_multiview_moments.html", "chapters/03_topic_models.html",
              "chapters/bibliography.html", "prf-prf.html", "search.html", "genindex.html")


# The dark theme changes colours only (the same DOM, other CSS variables), so in dark mode axe runs
# the rules that depend on colour; every rule runs on every page in light mode.
COLOUR_RULES = ["color-contrast", "link-in-text-block"]
AXE_DARK_OPTIONS = {"resultTypes": ["violations"], "runOnly": {"type": "rule", "values": COLOUR_RULES}}


# One page is loaded in dark mode (the reader's system preference, emulated): the theme must show
# its dark theme there. The other dark checks run on the light load of their page, switched to dark
# the way the theme's own switch does it (the same DOM; data-theme and the dropdown menus' class),
# with CSS transitions off so that no colour is caught halfway; on DARK_LOAD_PAGE both are done and
# must show the same colours (test_dark_switch_shows_the_colours_of_a_dark_load).
DARK_LOAD_PAGE = "chapters/intro.html"
_NO_TRANSITIONS = "*, *::before, *::after { transition: none !important; animation: none !important; }"
_JS_TO_DARK = """() => {
  const html = document.documentElement;
  html.dataset.mode = 'dark';
  html.dataset.theme = 'dark';
  document.querySelectorAll('.dropdown-menu').forEach(e => e.classList.add('dropdown-menu-dark'));
  return new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
}"""


def _axe_jobs():
    """The (page, colour mode) pairs axe checks: every page in light mode, DARK_PAGES in dark."""
    pages = _all_pages()
    return [(p, "light") for p in pages] + [(p, "dark") for p in DARK_PAGES if p in pages]


def _visit_jobs():
    """The page loads: every page in light mode (dark checks follow on DARK_PAGES), DARK_LOAD_PAGE in dark."""
    pages = _all_pages()
    return [(p, "light") for p in pages] + ([(DARK_LOAD_PAGE, "dark")] if DARK_LOAD_PAGE in pages else [])


# axe's color-contrast rule costs most of axe's time (about 16 of 23 s on a chapter: thousands of
# code tokens and words, each laid out and compared with what lies behind it). Its verdict on an
# element depends only on the text's colour, size, weight, shadow and stroke, on whether it is shown,
# and on the backgrounds, opacities, filters, blend modes and clips of the element and its ancestors
# up to the first opaque background. The rule is given one element of each such combination on the
# page (marked ``data-contrast-sample``; about 100 to 200 of some 12,000 text elements), so a colour
# that fails anywhere on the page fails here too (test_contrast_sampling_still_finds_a_faint_colour).
_JS_MARK_CONTRAST_SAMPLES = """() => {
  const hasText = el => [...el.childNodes].some(n => n.nodeType === 3 && n.textContent.trim());
  const behind = el => {
    const layers = [];
    for (let a = el; a && a.nodeType === 1; a = a.parentElement) {
      const s = getComputedStyle(a);
      layers.push([s.backgroundColor, s.backgroundImage, s.opacity, s.filter, s.mixBlendMode, s.clip,
                   s.clipPath, s.position === 'static' ? '' : s.position, s.overflow]);
      if (/^rgb\\(/.test(s.backgroundColor) && s.backgroundImage === 'none' && s.opacity === '1') break;
    }
    return layers;
  };
  const seen = new Set();
  for (const el of document.body.querySelectorAll('*')) {
    if (!hasText(el)) continue;
    const s = getComputedStyle(el);
    const key = JSON.stringify([el.getClientRects().length > 0,
      el.checkVisibility({opacityProperty: true, visibilityProperty: true}),
      s.color, s.fontSize, s.fontWeight, s.textShadow, s.webkitTextStrokeColor, s.webkitTextStrokeWidth,
      behind(el)]);
    if (!seen.has(key)) { seen.add(key); el.setAttribute('data-contrast-sample', ''); }
  }
  return [...seen];
}"""


def _mark_contrast_samples(page):
    """Mark one text element per contrast-relevant combination (earlier marks removed); returns the
    combinations (JSON texts: the colours, sizes and backgrounds that decide contrast)."""
    page.evaluate("() => document.querySelectorAll('[data-contrast-sample]')"
                  ".forEach(e => e.removeAttribute('data-contrast-sample'))")
    return page.evaluate(_JS_MARK_CONTRAST_SAMPLES)


def _run_axe(page, options):
    """axe-core on the whole page (its color-contrast rule on the marked samples); the violations."""
    from axe_playwright_python.sync_playwright import Axe

    page.evaluate(Axe().axe_script)
    page.evaluate("() => axe.configure({rules: [{id: 'color-contrast', selector: '[data-contrast-sample]'}]})")
    return page.evaluate("options => axe.run(document, options).then(r => r.violations)", options)


def _visit(browser_, server, page_path, scheme):
    """Load one page once in ``scheme``, wait for MathJax, and collect what the tests assert on:
    the render problems (light mode, pages of ``_pages()``), requests that tried to leave the
    machine, JavaScript errors, the theme shown, and axe's violations."""
    page = browser_.new_page(viewport={"width": 1280, "height": 900}, color_scheme=scheme)
    outside, js_errors = [], []

    def route(r):
        if urllib.parse.urlsplit(r.request.url).hostname in ("127.0.0.1", "localhost", None) \
                or r.request.url.startswith("data:"):
            r.continue_()
        else:  # the network is "unavailable": record and refuse
            outside.append(r.request.url)
            r.abort()

    page.route("**/*", route)
    page.on("pageerror", lambda exc: str(exc) in KNOWN_JS_ERRORS or js_errors.append(str(exc)))
    search = page_path == "search.html" and scheme == "light"
    url = server + page_path + (f"?q={SEARCH_QUERY}" if search else "")
    page.goto(url, wait_until="load", timeout=120_000)   # a loaded 2-core machine is slow
    hits = None
    if search:   # the results are part of the page axe checks
        try:
            page.wait_for_function("() => document.querySelectorAll('#search-results li').length > 0", timeout=30000)
        except Exception:   # noqa: BLE001 - reported by test_offline_search_finds_whitening
            pass
        hits = page.evaluate("() => Array.from(document.querySelectorAll('#search-results li a')).map(a => a.href)")
    if page.evaluate("() => document.querySelectorAll('.math').length") > 0:
        page.wait_for_function("() => window.MathJax && MathJax.startup && MathJax.startup.promise", timeout=30000)
        page.evaluate("() => MathJax.startup.promise")
    problems = (_render_problems(page, page_path, server)
                if scheme == "light" and page_path in RENDER_PAGES else [])
    theme = page.evaluate("() => document.documentElement.dataset.theme")
    options = AXE_OPTIONS if scheme == "light" else AXE_DARK_OPTIONS
    keys = _mark_contrast_samples(page)
    violations = _run_axe(page, options)
    faint = _faint_colour_check(page) if scheme == "light" and page_path == _faint_page() else None
    reports = {(page_path, scheme): {
        "problems": problems, "outside": outside, "js_errors": js_errors, "theme": theme, "violations": violations,
        "contrast_samples": len(keys), "sample_keys": keys, "search_hits": hits, "faint_check": faint}}
    if scheme == "light" and page_path in DARK_PAGES:   # the dark checks on this load, switched to dark
        page.add_style_tag(content=_NO_TRANSITIONS)
        page.evaluate(_JS_TO_DARK)
        keys = _mark_contrast_samples(page)
        dark = {"problems": [], "outside": outside, "js_errors": js_errors, "search_hits": hits, "faint_check": None,
                "theme": page.evaluate("() => document.documentElement.dataset.theme"),
                "contrast_samples": len(keys), "sample_keys": keys}
        if page_path == DARK_LOAD_PAGE:   # its axe verdict comes from the dark load; the colours are compared
            reports[page_path, "dark-switched"] = dark
        else:
            reports[page_path, "dark"] = {**dark, "violations": _run_axe(page, AXE_DARK_OPTIONS)}
    page.close()
    return reports


RENDER_PAGES = set(_pages())


@pytest.fixture(scope="module")
def site_reports(server):
    """Every (page, colour mode) job visited once, by two Chromium processes side by side (axe
    takes seconds on a page of many formulas; the machine has two cores). Longest jobs first."""
    from playwright.sync_api import sync_playwright

    exe = _chromium()
    if exe is None:
        pytest.skip("Chromium is not installed (Debian package `chromium`; `make test` installs it as root)")
    jobs = sorted(_visit_jobs(), key=lambda job: -(SITE / job[0]).stat().st_size)
    reports, failures, lock = {}, [], threading.Lock()

    def work():
        try:
            with sync_playwright() as pw:  # one Playwright per thread: its API is not thread-safe
                b = pw.chromium.launch(executable_path=exe, headless=True, args=CHROMIUM_FLAGS)
                while True:
                    with lock:
                        if not jobs:
                            break
                        page_path, scheme = jobs.pop(0)
                    reports.update(_visit(b, server, page_path, scheme))
                b.close()
        except Exception as exc:  # reported by the tests that miss their report
            failures.append(repr(exc))

    threads = [threading.Thread(target=work) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    reports["<failures>"] = failures
    return reports


@pytest.mark.parametrize("page_path,scheme", _axe_jobs() or [("<no site built>", "light")])
def test_axe_finds_no_critical_or_serious_violation(page_path, scheme, site_reports):
    if page_path == "<no site built>":
        pytest.skip("no built site: run `make book` first")
    assert (page_path, scheme) in site_reports, f"axe did not run on {page_path}: {site_reports['<failures>']}"
    report = site_reports[page_path, scheme]
    theme, violations = report["theme"], report["violations"]
    assert theme == scheme, f"{page_path} showed the {theme} theme, not {scheme}"
    bad = [f"{v['id']} ({v['impact']}, {len(v['nodes'])}×): {v['nodes'][0]['target']} "
           f"{v['nodes'][0]['failureSummary'][:200]!r}"
           for v in violations if v["impact"] in ("critical", "serious")]
    assert not bad, f"axe on {page_path} ({scheme}):\n" + "\n".join(bad)


def _faint_page():
    """The smallest chapter numbered 1x: where the contrast sampling is checked against a faint colour."""
    return min((p for p in _pages() if p.startswith("chapters/1")), key=lambda p: (SITE / p).stat().st_size,
               default=None)


FAINT_CSS = ".highlight .kn { color: #c8c8c8 !important; }"


def _faint_colour_check(page):
    """After the page's own checks: Python's import keywords made faint, the samples marked again
    (the previous marks removed, as on a fresh load), and axe's color-contrast rule run on them."""
    page.add_style_tag(content=FAINT_CSS)
    faint = page.evaluate("() => document.querySelectorAll('.highlight .kn').length")
    samples = len(_mark_contrast_samples(page))
    violations = page.evaluate("options => axe.run(document, options).then(r => r.violations)",
                               {"resultTypes": ["violations"], "runOnly": {"type": "rule", "values": ["color-contrast"]}})
    targets = [node["target"] for v in violations if v["id"] == "color-contrast" for node in v["nodes"]]
    return {"faint": faint, "samples": samples, "targets": targets}


def test_dark_switch_shows_the_colours_of_a_dark_load(site_reports):
    """The dark checks of DARK_PAGES run on their light load switched to dark: on DARK_LOAD_PAGE, the
    switched page and the page loaded in dark mode show the same contrast combinations (every text
    colour, size and background behind it), so the switch shows what a reader in dark mode sees."""
    real, switched = site_reports.get((DARK_LOAD_PAGE, "dark")), site_reports.get((DARK_LOAD_PAGE, "dark-switched"))
    assert real is not None and switched is not None, f"{DARK_LOAD_PAGE} was not visited: {site_reports['<failures>']}"
    assert real["theme"] == switched["theme"] == "dark"
    only_real = sorted(set(real["sample_keys"]) - set(switched["sample_keys"]))
    only_switched = sorted(set(switched["sample_keys"]) - set(real["sample_keys"]))
    assert not only_real and not only_switched, (only_real[:3], only_switched[:3])


def test_contrast_sampling_still_finds_a_faint_colour(site_reports):
    """The sampling above loses no failing colour: Python's import keywords made faint on the smallest
    chapter (a few of its thousands of text elements) fail axe's color-contrast rule (checked on that
    page's light visit, after its own axe run)."""
    report = site_reports.get((_faint_page(), "light"))
    assert report is not None, f"{_faint_page()} was not visited: {site_reports['<failures>']}"
    check = report["faint_check"]
    assert check["faint"] > 0 and check["samples"] > 0, check
    assert check["targets"] and all(".kn" in str(t) for t in check["targets"]), check["targets"]


class _FigureParser(__import__("html.parser").parser.HTMLParser):
    """Collects, for each <figure>, the alt texts of its images and the text of its caption."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.figures, self._depth, self._in_caption = [], 0, 0

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "figure":
            self._depth += 1
            self.figures.append({"id": attrs.get("id", "?"), "alts": [], "caption": ""})
        elif self._depth and tag == "img":
            self.figures[-1]["alts"].append(attrs.get("alt"))
        elif self._depth and tag == "span" and "caption-text" in (attrs.get("class") or ""):
            self._in_caption = 1
        elif self._in_caption and tag == "span":
            self._in_caption += 1

    def handle_endtag(self, tag):
        if tag == "figure" and self._depth:
            self._depth -= 1
        elif tag == "span" and self._in_caption:
            self._in_caption -= 1

    def handle_data(self, data):
        if self._in_caption:
            self.figures[-1]["caption"] += data


def _plain(text: str) -> str:
    """Caption or alt text as words: math delimiters and backslashes out, whitespace collapsed."""
    text = re.sub(r"\\[()\[\]]", "", text)
    return " ".join(text.split())


def test_every_figure_has_alt_text_from_its_caption():
    pages = _all_pages()
    if not pages:
        pytest.skip("no built site: run `make book` first")
    checked, bad = 0, []
    for page_path in pages:
        parser = _FigureParser()
        parser.feed((SITE / page_path).read_text(encoding="utf-8"))
        for fig in parser.figures:
            caption = _plain(fig["caption"])
            # the caption's first sentence, cut here by a rule of this test's own
            first = re.match(r"(.+?[.!?])(?:\s+[A-Z(]|$)", caption)
            first = first.group(1) if first else caption
            for alt in fig["alts"]:
                checked += 1
                alt = _plain(alt or "")
                if not caption or re.search(r"\.(png|svg|jpe?g|gif)$", alt) or not alt.startswith(first):
                    at = next((i for i, (a, b) in enumerate(zip(alt, first)) if a != b), min(len(alt), len(first)))
                    bad.append(f"{page_path}#{fig['id']}: alt …{alt[max(0, at - 30):at + 50]!r} "
                               f"vs caption …{first[max(0, at - 30):at + 50]!r}")
    assert checked >= 40, f"only {checked} figure images found"
    assert not bad, "figures whose alt text is not their caption's:\n" + "\n".join(bad[:10])
