"""Draw the map of the book (which chapter needs which) for the introduction.

The edges are read from the "Reading path" of chapters/intro.md, the one place that states
them: a chapter's "Needs chapter(s) ..." clause gives solid arrows, numbers after a ";" in the
same item (e.g. "chapter 3 helps") dashed ones. The chapter titles come from the first heading
of each notebook and the parts from _toc.yml. Writes chapters/figures/book_map.svg; run

    .venv/bin/python chapters/figures/book_map.py

after changing the reading path (tests/test_book_map.py checks the figure is up to date).
"""
from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUT = Path(__file__).with_name("book_map.svg")


def reading_path(text: str | None = None) -> dict[int, dict]:
    """{chapter: {"needs": [...], "helps": [...]}} from the reading path of chapters/intro.md."""
    text = text if text is not None else (ROOT / "chapters" / "intro.md").read_text(encoding="utf-8")
    section = text.split("## Reading path", 1)[1].split("\n## ", 1)[0]
    items = re.split(r"\n(?=\d+\. )", "\n" + section.strip())
    out = {}
    for item in items:
        m = re.match(r"\s*(\d+)\. ", item)
        if not m:
            continue
        number, body = int(m.group(1)), " ".join(item.split())
        needs, helps = [], []
        clause = re.search(r"Needs (chapters? [^.;]*)([;.])(.*)", body)
        if clause:
            needs = [int(x) for x in re.findall(r"\d+", clause.group(1))]
            if clause.group(2) == ";":
                rest = clause.group(3).split(".")[0]
                helps = [int(x) for x in re.findall(r"\d+", rest)]
        out[number] = {"needs": needs, "helps": helps}
    return out


def titles() -> dict[int, str]:
    out = {}
    for path in sorted((ROOT / "chapters").glob("[01][0-9]_*.ipynb")):
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        first = "".join(next(c for c in cells if c["cell_type"] == "markdown")["source"])
        out[int(path.name[:2])] = re.search(r"^# (.+)$", first, flags=re.M).group(1).strip()
    return out


def parts() -> list[tuple[str, list[int]]]:
    import yaml

    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    out = []
    for part in toc["parts"]:
        nums = [int(Path(c["file"]).name[:2]) for c in part["chapters"] if Path(c["file"]).name[:2].isdigit()]
        if nums:
            out.append((part["caption"], nums))
    return out


def direct_edges(deps: dict[int, dict]) -> list[tuple[int, int, str]]:
    """(from, to, kind) with implied prerequisites left out: m -> n is dropped when n also needs
    a chapter that (directly or not) needs m, e.g. 1 -> 3 because 3 needs 2 and 2 needs 1."""
    def ancestors(n, seen=None):
        seen = set() if seen is None else seen
        for m in deps.get(n, {}).get("needs", []):
            if m not in seen:
                seen.add(m)
                ancestors(m, seen)
        return seen

    edges = []
    for n, info in sorted(deps.items()):
        via = set().union(*[ancestors(m) for m in info["needs"]]) if info["needs"] else set()
        edges += [(m, n, "needs") for m in info["needs"] if m not in via]
        edges += [(m, n, "helps") for m in info["helps"] if m not in via and m not in info["needs"]]
    return edges


#: left-to-right order of the chapters of a part in the figure (fewer crossings than file order)
ORDER = {"Discrete latent variables": [5, 3, 4, 6]}


def draw(path: Path = OUT) -> None:
    import textwrap

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    deps, names, rows = reading_path(), titles(), parts()
    pos = {}
    for r, (caption, nums) in enumerate(rows):
        nums = [n for n in ORDER.get(caption, []) if n in nums] + [n for n in nums if n not in ORDER.get(caption, [])]
        for i, n in enumerate(nums):
            pos[n] = (1.35 * (i - (len(nums) - 1) / 2), -r)
    fig, ax = plt.subplots(figsize=(9.5, 1.25 * len(rows) + 0.4))
    for r, (caption, _) in enumerate(rows):
        ax.text(-3.6, -r, caption, ha="left", va="center", fontsize=8.5, style="italic", color="0.25")
    boxes = {}
    for n, (x, y) in pos.items():
        label = f"{n}. " + "\n".join(textwrap.wrap(names[n], 22))
        boxes[n] = ax.text(x, y, label, ha="center", va="center", fontsize=8, gid=f"chapter-{n}", zorder=3,
                           bbox=dict(boxstyle="round,pad=0.4", facecolor="#eef3fb", edgecolor="#3b6db3", lw=1.0))
    fig.canvas.draw()          # lay the boxes out, so the arrows can end at their borders
    for m, n, kind in direct_edges(deps):
        same_row = pos[m][1] == pos[n][1]
        arrow = ax.annotate("", xy=pos[n], xytext=pos[m], zorder=2,
                    arrowprops=dict(arrowstyle="-|>", linestyle="-" if kind == "needs" else "--", color="0.3",
                                    lw=1.0, patchA=boxes[m].get_bbox_patch(), patchB=boxes[n].get_bbox_patch(),
                                    shrinkA=1, shrinkB=1,
                                    connectionstyle="arc3,rad=0.0" if same_row else "arc3,rad=0.06"))
        arrow.arrow_patch.set_gid(f"edge-{m}-{n}-{kind}")      # named in the SVG (tests/test_book_map.py)
    ax.set_xlim(-3.7, 2.6)
    ax.set_ylim(-len(rows) + 0.5, 0.5)
    ax.axis("off")
    fig.tight_layout()
    fig.savefig(path, format=path.suffix[1:], metadata={"Date": None} if path.suffix == ".svg" else None)
    plt.close(fig)


if __name__ == "__main__":
    draw()
    print(f"wrote {OUT}")
