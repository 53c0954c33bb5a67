"""The claims checker: numbers typed into a chapter's prose that no cell computed.

A chapter states computed figures (errors, times, ratios, counts of successes, slopes,
percentages) only through glue (``{glue:text}`name` ``), from the cell or the bench JSON
that computed them. This module finds every number token in the prose of a chapter —
markdown cells of a notebook, or a whole ``.md`` page — outside math, code, roles,
directive options and link targets, and reports those that are neither a reference
("Lemma 3.2", "§4.1", "Appendix B.4", a year, a software version) nor named by the
chapter's entries in the allowlist (``tests/book/claims_allowlist.yml``, by chapter stem: ``text`` — a substring
of the cell that contains the token — and ``source``, where the number comes from).

Flagged tokens: decimals (``0.5``, ``1e-10``, ``10⁴``), percentages, ``N×`` / ``Nx``,
``N of M``, integers followed by a unit of measurement (``3 s``, ``15.8 GiB``,
``300 sweeps``), and inline math that is nothing but such a number (``$0.006$``).
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
ALLOWLIST = Path(__file__).resolve().parent / "claims_allowlist.yml"

# Chapters whose prose has not yet been brought under the discipline. A new chapter never
# joins this list; each chapter leaves it when its numbers are glued.
PENDING: set[str] = set()   # every chapter is now under the discipline

_SUP = "⁰¹²³⁴⁵⁶⁷⁸⁹"
_UNITS = (
    r"(?:ms|µs|us|ns|s|sec|secs|seconds?|min|mins|minutes?|h|hrs?|hours?|days?"
    r"|GiB|MiB|KiB|GB|MB|kB|KB|TB|bytes?"
    r"|nats?|bits?|dB|times|sweeps?|iterations?|epochs?|restarts?)"
)
_NUMBER = rf"(?:\d[\d,]*(?:\.\d+)?(?:[eE][-+]?\d+)?|\.\d+|10[⁻{_SUP}]+)"
TOKEN = re.compile(
    "|".join(
        [
            rf"(?P<pct>{_NUMBER}\s?%)",
            rf"(?P<times>{_NUMBER}\s?(?:×|x\b)(?!\s?[\d(]))",
            rf"(?P<of>\b\d+\s+(?:of|out of)\s+\d+\b)",
            rf"(?P<unit>\b{_NUMBER}\s?{_UNITS}\b)",
            rf"(?P<sci>\b\d+(?:\.\d+)?[eE][-+]?\d+\b|\b10[⁻{_SUP}]+)",
            r"(?P<dec>(?<![\w.])\d*\.\d+\b)",
        ]
    )
)

# A reference to a numbered thing, a year or a version: exempt.
_REF_WORDS = (
    r"(?:Lemmas?|Theorems?|Thm\.?|Propositions?|Prop\.?|Corollary|Corollaries|Definitions?"
    r"|Conditions?|Assumptions?|Algorithms?|Alg\.?|Procedures?|Remarks?|Examples?|Sections?"
    r"|Sec\.?|§|Appendix|Appendices|App\.?|Figures?|Fig\.?|Tables?|Chapters?|Ch\.?|Steps?"
    r"|[Ee]qs?\.?|Equations?|Exercises?|Parts?|Claims?|Facts?|Properties|Property|Items?"
    r"|Problems?|Cells?|page|pp\.?|vol\.?|Python|NumPy|numpy|SciPy|scipy|scikit-learn|sklearn"
    r"|Sphinx|jupyter-book|Jupyter Book|TensorLy|tensorly|sympy|SymPy|hmmlearn|lda|nbval"
    r"|myst-nb|matplotlib|version|v)"
)
REFERENCE = re.compile(
    rf"(?<!\w){_REF_WORDS}\s*(?:≥|>=|<=|<|==|~=)?\s*\(?[A-Z]?\.?\d+(?:\.\d+)*[a-z]?\)?"
    rf"(?:\s*(?:[-–,]|and|to)\s*[A-Z]?\.?\d+(?:\.\d+)*)*"
)

_FENCE = re.compile(r"^(?P<indent>\s*)(?P<fence>`{3,}|~{3,}|:{3,})(?P<info>.*)$")
_PROSE_DIRECTIVES = re.compile(
    r"^\{(prf:\w+|note|tip|important|warning|caution|attention|hint|seealso|admonition"
    r"|dropdown|margin|epigraph|topic|sidebar|exercise|solution|figure|glossary)\}"
)


@dataclass(frozen=True)
class Finding:
    chapter: str
    cell: int
    token: str
    context: str

    def __str__(self) -> str:
        return f"{self.chapter} cell {self.cell}: {self.token!r} in …{self.context}…"


def _blank(text: str) -> str:
    """Spaces in place of ``text`` (newlines kept), so offsets into the source stay valid."""
    return re.sub(r"[^\n]", " ", text)


def _strip_blocks(text: str) -> str:
    """Blank code fences and math blocks; keep the body of prose directives (prf, admonitions)."""
    out: list[str] = []
    stack: list[tuple[str, bool]] = []  # (fence, is_prose)
    for line in text.splitlines():
        m = _FENCE.match(line)
        if m and stack and m.group("fence")[0] == stack[-1][0][0] and len(m.group("fence")) >= len(
            stack[-1][0]
        ) and not m.group("info").strip():
            stack.pop()
            out.append(_blank(line))
            continue
        if m and m.group("info").strip() and (not stack or stack[-1][1]):
            info = m.group("info").strip()
            prose = bool(_PROSE_DIRECTIVES.match(info))
            stack.append((m.group("fence"), prose))
            # the title of a prose directive is prose; the argument of a figure is a path
            keep = prose and not info.startswith("{figure}")
            head = re.compile(r"^\s*(`{3,}|~{3,}|:{3,})\s*\{[^}]*\}")
            out.append(head.sub(lambda h: _blank(h.group(0)), line, count=1) if keep else _blank(line))
            continue
        if m and not m.group("info").strip() and (not stack or stack[-1][1]):
            # an unlabelled fence opens a code block
            stack.append((m.group("fence"), False))
            out.append(_blank(line))
            continue
        if stack and not stack[-1][1]:
            out.append(_blank(line))
            continue
        if stack and re.match(r"^\s*:[\w-]+:", line):  # directive options (:label:, :width:)
            out.append(_blank(line))
            continue
        out.append(line)
    return "\n".join(out)


_INLINE = [
    re.compile(r"<!--.*?-->", re.S),
    re.compile(r"\$\$.*?\$\$", re.S),
    re.compile(r"\\begin\{(\w+\*?)\}.*?\\end\{\1\}", re.S),
    re.compile(r"(?<!\\)\$(?:\\\$|[^$])+?\$", re.S),
    re.compile(r"\{[\w:.-]+\}`[^`]*`"),  # roles: {glue:text}`x`, {cite}`k`, {eq}`l`, {math}`..`
    re.compile(r"``.+?``|`[^`]*`", re.S),  # inline code
    re.compile(r"\]\([^)]*\)"),  # link targets
    re.compile(r"^\s*\([\w:-]+\)=\s*$", re.M),  # labels (name)=
    re.compile(r"<[^>]+>"),  # html tags
]


def prose_of(text: str) -> str:
    """The prose of a markdown source: what remains once math, code and roles are removed."""
    text = _strip_blocks(text)
    for pattern in _INLINE:
        text = pattern.sub(lambda m: _blank(m.group(0)), text)
    return text


# Inline math that is nothing but a number ("$0.006$", "$\\approx 2.6\\times$") is a typed
# number dressed as math: flagged like prose.
_INLINE_MATH = re.compile(r"(?<![\\$])\$(?!\$)([^$\n]+?)\$")
_BARE_NUMBER = re.compile(
    r"^\s*(?:\\approx|\\sim|<|>|\\le|\\ge|=)?\s*[-+−]?\s*\d*\.?\d+(?:\s*\\(?:%|times))?\s*$"
)


def number_tokens(text: str) -> list[tuple[str, int]]:
    """Flagged number tokens of a markdown source, with their offsets in it."""
    prose = prose_of(text)
    exempt = [m.span() for m in REFERENCE.finditer(prose)]
    found = [
        (m.group(0), m.start())
        for m in _INLINE_MATH.finditer(_strip_blocks(text))
        if _BARE_NUMBER.match(m.group(1)) and re.search(r"\.\d|%|times", m.group(1))
    ]
    for m in TOKEN.finditer(prose):
        a, b = m.span()
        if any(x <= a and b <= y for x, y in exempt):
            continue
        found.append((m.group(0), a))
    return sorted(found, key=lambda t: t[1])


def markdown_cells(path: Path) -> list[str]:
    """The markdown sources of a chapter: a notebook's markdown cells, or a page's text."""
    if path.suffix == ".ipynb":
        nb = json.loads(path.read_text(encoding="utf-8"))
        return [
            "".join(c["source"]) if c["cell_type"] == "markdown" else ""
            for c in nb["cells"]
        ]
    return [path.read_text(encoding="utf-8")]


def load_allowlists(path: Path = ALLOWLIST) -> dict[str, list[dict]]:
    """The whole allowlist: chapter stem -> entries, each with a non-empty text and source."""
    data = (yaml.safe_load(path.read_text(encoding="utf-8")) or {}) if path.exists() else {}
    if not isinstance(data, dict):
        raise ValueError(f"{path.name} must map chapter stems to lists of entries")
    for stem, entries in data.items():
        for entry in entries or []:
            if not isinstance(entry, dict) or not str(entry.get("text", "")).strip():
                raise ValueError(f"{path.name} [{stem}]: every entry needs a non-empty 'text': {entry!r}")
            if not str(entry.get("source", "")).strip():
                raise ValueError(f"{path.name} [{stem}]: entry {entry['text']!r} names no 'source'")
    return {stem: list(entries or []) for stem, entries in data.items()}


def load_allowlist(stem: str) -> list[dict]:
    """The allowlist entries of one chapter (empty when it has none)."""
    return load_allowlists().get(stem, [])


def check_chapter(path: Path, allowlist: list[dict] | None = None):
    """(findings, unused allowlist entries) for one chapter file."""
    stem = path.stem
    allowlist = load_allowlist(stem) if allowlist is None else allowlist
    used = [False] * len(allowlist)
    findings: list[Finding] = []
    for i, source in enumerate(markdown_cells(path)):
        if not source:
            continue
        prose = prose_of(source)  # same offsets as source, with math, code and roles blanked
        covered = []
        for j, entry in enumerate(allowlist):
            start = 0
            while (pos := source.find(entry["text"], start)) >= 0:
                covered.append((pos, pos + len(entry["text"])))
                used[j] = True
                start = pos + 1
        for token, pos in number_tokens(source):
            end = pos + len(token)
            if any(a <= pos and end <= b for a, b in covered):
                continue
            context = source[max(0, pos - 40): end + 20].replace("\n", " ")
            findings.append(Finding(stem, i, token, context))
    unused = [e for e, u in zip(allowlist, used) if not u]
    return findings, unused
