"""mvlib stands on floors: one shared core, then the model families, then the public face.

The floors (README, "The library"), bottom up:

1. ``core.validation``, ``core.progress``, ``core.symbolic``, ``core.metrics`` — no mvlib imports
   but these;
2. ``core.tensors``, ``core.whitening``, ``core.moments``, ``core.scale``, ``core.power``,
   ``core.jennrich``, ``core.cubature`` — tensor algebra, moments and data sources;
3. ``core.observable`` — observable operators;
4. ``core.base`` (and ``core/__init__``) — the estimator base;
5. the families ``multiview``, ``topic``, ``lda``, ``gmm``, ``ica``, ``overcomplete``;
6. the families ``hmm`` and ``kernel`` (they reuse the three-view mixture);
7. the family ``tree`` (it reuses the kernels);
8. ``mvlib/__init__.py`` — the public names;
9. ``book`` — the helpers the chapters and their scripts share (nothing in mvlib imports it).

A module imports from its own family or from lower floors; a family never imports a family on
its own floor. Every import counts, at module level or inside a function, and the import graph
has no cycle. No private name crosses a package: a module never imports an underscore name, or
from an underscore module, of another family or of the core (what families share is public core
API).
"""
from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[3] / "mvlib"

FLOORS = {
    "core.validation": 1, "core.progress": 1, "core.symbolic": 1, "core.metrics": 1,
    "core.tensors": 2, "core.whitening": 2, "core.moments": 2, "core.scale": 2, "core.power": 2,
    "core.jennrich": 2, "core.cubature": 2,
    "core.observable": 3,
    "core.base": 4, "core": 4,
    "multiview": 5, "topic": 5, "lda": 5, "gmm": 5, "ica": 5, "overcomplete": 5,
    "hmm": 6, "kernel": 6,
    "tree": 7,
    "": 8,
    "book": 9,
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


@functools.lru_cache(maxsize=None)
def _parse(path: Path) -> ast.Module:
    """The syntax tree of a file, parsed once per session (many checks read every module)."""
    return ast.parse(path.read_text(encoding="utf-8"))


def _family(name: str) -> str:
    """The package a module belongs to: 'core' or a family name ('' for mvlib itself)."""
    return name.split(".")[0]


def _floor(name: str) -> int:
    key = name if name.startswith("core.") or name in ("", "core") else _family(name)
    key = ".".join(key.split(".")[:2])
    if key not in FLOORS:
        raise AssertionError(f"mvlib.{name} stands on no floor: add it to FLOORS and the README")
    return FLOORS[key]


def _import_targets(name: str, path: Path):
    """(target module, imported name) for every mvlib import of ``name``'s file."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(_parse(path)):
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
                yield (sub, None) if sub in MODULES else (target, alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "mvlib" or alias.name.startswith("mvlib."):
                    yield alias.name[len("mvlib"):].lstrip("."), None


def _imports(name: str, path: Path) -> set[str]:
    """The mvlib modules that ``name`` imports (anywhere in the file)."""
    out = {t for t, _ in _import_targets(name, path) if t in MODULES}
    out.discard(name)
    return out


GRAPH = {name: _imports(name, path) for name, path in MODULES.items()}


@pytest.mark.parametrize("name", sorted(MODULES), ids=lambda n: n or "mvlib")
def test_no_upward_import(name):
    upward = sorted(t for t in GRAPH[name] if _floor(t) > _floor(name))
    assert not upward, (
        f"mvlib.{name} (floor {_floor(name)}) imports from higher floors: "
        + ", ".join(f"mvlib.{t} (floor {_floor(t)})" for t in upward)
    )


@pytest.mark.parametrize("name", sorted(n for n in MODULES if _family(n) not in ("", "core")))
def test_no_family_imports_a_family_of_its_floor(name):
    sideways = sorted(t for t in GRAPH[name] if _family(t) != _family(name) and _floor(t) == _floor(name))
    assert not sideways, f"mvlib.{name} imports from a family on its own floor: {sideways}"


def _private_crossings(name: str, path: Path) -> list[str]:
    """Imports of ``name`` that reach an underscore name or module of another package."""
    bad = []
    for target, imported in _import_targets(name, path):
        if _family(target) in ("", _family(name)):
            continue
        parts = target.split(".")[1:] + ([imported] if imported else [])
        if any(p.startswith("_") for p in parts):
            bad.append(f"mvlib.{target}" + (f" import {imported}" if imported else ""))
    return bad


@pytest.mark.parametrize("name", sorted(MODULES), ids=lambda n: n or "mvlib")
def test_no_private_name_crosses_a_package(name):
    bad = _private_crossings(name, MODULES[name])
    assert not bad, f"mvlib.{name} imports private names of another package: {bad}"


def _defined_private_names(package: str) -> set[str]:
    """Underscore functions, methods and class attributes defined in a package's files."""
    names = set()
    for mod, path in MODULES.items():
        if _family(mod) != package:
            continue
        for node in ast.walk(_parse(path)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                names.add(node.attr)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
    return {n for n in names if n.startswith("_") and not n.startswith("__")}


_defined_private_names = functools.lru_cache(maxsize=None)(_defined_private_names)


#: private members of other libraries that mvlib uses on purpose (``sys._getframe``: warn_user
#: points a warning at the user's frame, what ``skip_file_prefixes`` does in Python 3.12)
FOREIGN_PRIVATE = {"_getframe"}


def _private_attribute_uses(name: str, path: Path, own: set[str]) -> list[str]:
    """``obj._attr`` in ``name``'s file where ``_attr`` is not defined in ``name``'s own package
    and ``obj`` is not ``self``/``cls``: a private member of another package's object."""
    bad = []
    for node in ast.walk(_parse(path)):
        if (isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__")
                and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))
                and node.attr not in own and node.attr not in FOREIGN_PRIVATE):
            bad.append(f"line {node.lineno}: .{node.attr}")
    return bad


@pytest.mark.parametrize("name", sorted(n for n in MODULES if _family(n) not in ("", "book")))
def test_no_private_member_of_another_package_is_used(name):
    own = _defined_private_names(_family(name))
    bad = _private_attribute_uses(name, MODULES[name], own)
    assert not bad, f"mvlib.{name} reaches private members of another package's objects: {bad}"


def test_a_private_member_use_would_be_caught(tmp_path):
    fake = tmp_path / "_estimator.py"
    fake.write_text("def f(acc, op):\n    acc._require()\n    op._own()\n    return self._x\n")
    assert _private_attribute_uses("lda._estimator", fake, {"_own"}) == ["line 2: ._require"]


def test_no_two_public_modules_share_a_name():
    public = [n for n in MODULES if n and not any(p.startswith("_") for p in n.split("."))]
    leaves = {}
    for n in public:
        leaves.setdefault(n.split(".")[-1], []).append(n)
    clashes = {leaf: ns for leaf, ns in leaves.items() if len(ns) > 1}
    assert not clashes, f"public modules sharing a name: {clashes}"


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
    # the kernel algorithm imports the power method inside a function: the checker must see it
    assert "core.power" in GRAPH["kernel._algorithm"]


def test_an_upward_import_would_be_caught(tmp_path):
    fake = tmp_path / "power.py"
    fake.write_text("def f():\n    from ..gmm._estimator import SpectralGMM\n")
    found = _imports("core.power", fake)
    assert "gmm._estimator" in found and _floor("gmm._estimator") > _floor("core.power")


def test_a_private_crossing_would_be_caught(tmp_path):
    fake = tmp_path / "_estimator.py"
    fake.write_text("from ..core.base import _helper\nfrom ..multiview._model import thing\n"
                    "from ..core.moments import pairs\nfrom ._algorithm import _own\n")
    assert _private_crossings("hmm._estimator", fake) == [
        "mvlib.core.base import _helper", "mvlib.multiview._model import thing"]


# the data-source layer (mvlib.core.scale): what tells memory, Dask and streams apart
SOURCE_KIND_NAMES = {"source_kind", "is_dask_array", "is_stream", "source_rows", "require_two_passes",
                     "n_features_of"}


def _source_kind_uses(tree) -> list[str]:
    """Names and attributes of ``tree`` that test where data are (``DataSource.kind`` included)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in SOURCE_KIND_NAMES:
            found.append(f"line {node.lineno}: {node.id}")
        elif isinstance(node, ast.Attribute) and (node.attr in SOURCE_KIND_NAMES or node.attr == "kind"
                                                  and isinstance(node.value, ast.Name) and node.value.id == "src"):
            found.append(f"line {node.lineno}: .{node.attr}")
        elif isinstance(node, ast.ImportFrom):
            found += [f"line {node.lineno}: imports {a.name}" for a in node.names if a.name in SOURCE_KIND_NAMES]
    return found


@pytest.mark.parametrize("name", sorted(n for n in MODULES if _family(n) not in ("", "core", "book")))
def test_no_estimator_branches_on_the_source_kind(name):
    """Families read their data through ``open_source``/``DataSource`` (one reduction, and
    ``DataSource.passes`` to pick in-memory or chunked moment passes); none tests the kind itself."""
    uses = _source_kind_uses(_parse(MODULES[name]))
    assert not uses, f"mvlib.{name} tests where its data are (use mvlib.core.scale.open_source): {uses}"


def test_a_source_kind_test_would_be_caught():
    code = ("from ..core.scale import source_kind\n"
            "def fit(X, src):\n    if src.kind == 'memory': pass\n    return source_kind(X)\n")
    assert len(_source_kind_uses(ast.parse(code))) == 3
