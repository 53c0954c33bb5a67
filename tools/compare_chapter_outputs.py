"""List the differences between the chapters' text outputs at a git commit and now.

Usage (from the repository root; any Python 3, no third-party package needed)::

    python tools/compare_chapter_outputs.py                 # chapters/ at 855a17c vs working tree
    python tools/compare_chapter_outputs.py --rev HEAD~3    # another commit
    python tools/compare_chapter_outputs.py --executed      # vs the last build's _build/jupyter_execute
    python tools/compare_chapter_outputs.py --strict        # exit 1 if any chapter differs

For each chapter notebook, every text output (stream text, text/plain, text/latex and
text/markdown of results and displays) is concatenated in order, regardless of cell
boundaries, split into lines, and memory addresses (0x7f...) are masked; glued values
(myst-nb ``glue``, including those the build moves to ``X.glue.json``) follow as one sorted
"glue <key> <mime>: <value>" line each. Outputs of cells marked ``# NBVAL_IGNORE_OUTPUT`` (timings)
are left out. The two sides are then compared line by line with difflib, and every
differing hunk is listed under its chapter. The exit code is 0 unless --strict is given.
"""
from __future__ import annotations

import argparse
import difflib
import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TEXT_MIMES = ("text/plain", "text/latex", "text/markdown")
ADDRESS = re.compile(r"\b0x[0-9a-fA-F]+")


def _text(value) -> str:
    return "".join(value) if isinstance(value, list) else str(value)


def output_lines(notebook: dict, glue_file: dict | None = None) -> list[str]:
    """The normalised text lines of a notebook's outputs, then its glued values."""
    lines, glue, ignored = [], {}, set()
    for cell in notebook.get("cells", []):
        if cell.get("cell_type") != "code":
            continue
        ignore = "# NBVAL_IGNORE_OUTPUT" in _text(cell.get("source", ""))
        for output in cell.get("outputs", []):
            scrapbook = output.get("metadata", {}).get("scrapbook")
            data = output.get("data", {})
            if scrapbook:  # a glued value, shown in place only if glued with display=True
                prefix = scrapbook.get("mime_prefix", "")
                if ignore:
                    ignored.add(scrapbook["name"])
                else:
                    glue[scrapbook["name"]] = {k[len(prefix):]: v for k, v in data.items()}
                if prefix:
                    continue
            if ignore:
                continue
            if output.get("output_type") == "stream":
                lines += _text(output.get("text", "")).splitlines()
            for mime in TEXT_MIMES:
                lines += _text(data[mime]).splitlines() if mime in data else []
    for key, value in (glue_file or {}).items():
        if key not in ignored:
            glue[key] = value.get("data", {})
    lines += [f"glue {key} {mime}: {_text(data[mime])}" for key, data in sorted(glue.items())
              for mime in TEXT_MIMES if mime in data]
    return [ADDRESS.sub("0xADDRESS", line).rstrip() for line in lines]


def at_revision(rev: str) -> dict[str, list[str]]:
    names = subprocess.run(["git", "ls-tree", "--name-only", rev, "chapters/"], cwd=ROOT,
                           check=True, capture_output=True, text=True).stdout.split()
    return {Path(n).name: output_lines(json.loads(subprocess.run(
        ["git", "show", f"{rev}:{n}"], cwd=ROOT, check=True, capture_output=True, text=True).stdout))
        for n in names if n.endswith(".ipynb")}


def in_folder(folder: Path) -> dict[str, list[str]]:
    found = {}
    for path in sorted(folder.glob("*.ipynb")):
        glue = path.with_suffix(".glue.json")
        found[path.name] = output_lines(json.loads(path.read_text(encoding="utf-8")),
                                        json.loads(glue.read_text(encoding="utf-8")) if glue.exists() else None)
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rev", default="855a17c", help="git commit to compare with (default 855a17c)")
    parser.add_argument("--executed", action="store_true",
                        help="compare _build/jupyter_execute/chapters (the last book build) instead of chapters/")
    parser.add_argument("--strict", action="store_true", help="exit 1 if any chapter differs")
    args = parser.parse_args()

    old = at_revision(args.rev)
    folder = ROOT / "_build" / "jupyter_execute" / "chapters" if args.executed else ROOT / "chapters"
    new = in_folder(folder)
    label = folder.relative_to(ROOT).as_posix()
    differing = 0
    for name in sorted(set(old) | set(new)):
        if name not in old or name not in new:
            print(f"== {name}: only in {label if name in new else args.rev}")
            differing += 1
            continue
        diff = list(difflib.unified_diff(old[name], new[name], f"{args.rev}:{name}", f"{label}/{name}",
                                         n=0, lineterm=""))
        if diff:
            differing += 1
            print(f"== {name}: {sum(l[:1] in '+-' for l in diff[2:])} differing lines")
            print("\n".join("   " + line for line in diff[2:]))
    print(f"{differing} of {len(set(old) | set(new))} chapters differ ({args.rev} vs {label})")
    return 1 if args.strict and differing else 0


if __name__ == "__main__":
    sys.exit(main())
