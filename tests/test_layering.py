"""mvlib's modules stand on floors; a module imports only from its own floor or lower ones.

The floors (README, "The library"), bottom up:

1. ``_validation``, ``_progress``, ``symbolic``, ``metrics`` — no mvlib imports but these;
2. ``tensors``, ``whitening``, ``moments``, ``scale``, ``power``, ``jennrich`` — tensor algebra and moments;
3. ``observable``, ``covariances``, ``hmm``, ``kernels``, ``overcomplete``, ``ica``, ``tree``, ``latent_tree``,
   ``models``, ``oo_hmm`` — the algorithms of each model family;
4. ``estimators`` (its ``_base`` included) and ``baselines`` — the estimator classes;
5. ``mvlib/__init__.py`` — the public names.

Every import counts, at module level or inside a function, and the import graph has no cycle.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "mvlib"

FLOORS = {
    "_validation": 1, "_progress": 1, "symbolic": 1, "metrics": 1,
    "tensors": 2, "whitening": 2, "moments": 2, "power": 2, "jennrich": 2, "scale": 2,
    "observable": 3, "covariances": 3, "hmm": 3, "kernels": 3, "overcomplete": 3, "ica": 3, "tree": 3,
    "latent_tree": 3,
    "models": 3, "lda_moments": 3,
    "oo_hmm": 3,
    "estimators": 4, "baselines": 4,
}


def _modules() -> dict[str, Path]:
    """Dotted name (without the leading 'mvlib.') -> file, for every module of the package."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def _floor(name: str) -> int:
    if name == "":
        return 5
    top = name.split(".")[0]
    if top not in FLOORS:
        raise AssertionError(f"mvlib.{name} stands on no floor: add it to FLOORS and the README")
    return FLOORS[top]


def _imports(name: str, path: Path) -> set[str]:
    """The mvlib modules that ``name`` imports (anywhere in the file)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".") if package else []
                base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
                target = ".".join(base + ([node.module] if node.module else []))
            elif node.module and (node.module == "mvlib" or node.module.startswith("mvlib.")):
                target = node.module[len("mvlib"):].lstrip(".")
            else:
                continue
            for alias in node.names:
                sub = f"{target}.{alias.name}".lstrip(".")
                out.add(sub if sub in MODULES else target)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "mvlib" or alias.name.startswith("mvlib."):
                    out.add(alias.name[len("mvlib"):].lstrip("."))
    out.discard(name)
    return {t for t in out if t in MODULES}


GRAPH = {name: _imports(name, path) for name, path in MODULES.items()}


@pytest.mark.parametrize("name", sorted(MODULES), ids=lambda n: n or "mvlib")
def test_no_upward_import(name):
    upward = sorted(t for t in GRAPH[name] if _floor(t) > _floor(name))
    assert not upward, (
        f"mvlib.{name} (floor {_floor(name)}) imports from higher floors: "
        + ", ".join(f"mvlib.{t} (floor {_floor(t)})" for t in upward)
    )


def _without_package_faces(graph):
    """Edges through a package's __init__ stand for its submodules; drop the face itself,
    except as the importer of its own submodules (which is not a cycle)."""
    return {
        n: {t for t in ts if not (MODULES[t].name == "__init__.py" and n.startswith(t + "."))}
        for n, ts in graph.items()
    }


def test_no_import_cycle():
    graph = _without_package_faces(GRAPH)
    state, stack, cycles = {}, [], []

    def visit(node):
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycles.append(stack[stack.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)
    assert not cycles, "import cycles: " + "; ".join(" -> ".join(f"mvlib.{m}" for m in c) for c in cycles)


def test_the_checker_sees_function_level_imports():
    # kernels imports power inside a function: the checker must see it
    assert "power" in GRAPH["kernels"]


def test_an_upward_import_would_be_caught(tmp_path):
    fake = tmp_path / "power.py"
    fake.write_text("def f():\n    from .estimators.multiview import MultiViewMixture\n")
    found = _imports("power", fake)
    assert "estimators.multiview" in found and _floor("estimators.multiview") > _floor("power")
