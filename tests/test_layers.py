"""The package's imports point one way: from the command line down to the kernels.

Every module of seqzip belongs to one layer (README, "Architecture"); a module may import its
own layer and the layers below, never one above, and the import graph has no cycle.  The test
reads the source (Python imports, Cython imports and cimports, function-level imports
included), so it holds for code that no other test happens to run.
"""
import ast
import pathlib
import re

import pytest

PACKAGE = pathlib.Path(__file__).resolve().parent.parent / "seqzip"

# highest first; a module may import from its own layer and any layer after it
LAYERS = [
    ("cli", ["seqzip.cli"]),
    ("bench", ["seqzip.bench"]),
    ("research", ["seqzip.research"]),
    ("api", ["seqzip.api", "seqzip.files", "seqzip.incremental", "seqzip.decoder",
             "seqzip.session", "seqzip.pieces", "seqzip.predictor", "seqzip.streaminfo",
             "seqzip.baselines", "seqzip.cluster"]),
    ("coding", ["seqzip.coder", "seqzip.container", "seqzip.header", "seqzip.pieceset",
                "seqzip.textcase"]),
    ("models", ["seqzip.models"]),
    ("kernels", ["seqzip._core", "seqzip._kernels"]),
    ("foundation", ["seqzip.errors", "seqzip.levels", "seqzip.corpora", "seqzip.reference"]),
]
# the NumPy references define the algorithms for tests and docs, and the offline trainers run
# their step rules; nothing on the coding path may depend on them
ONLY_FOR = {"seqzip.reference": ("research",)}
# the command line reaches models only through the public API: it may import the api layer,
# the bench, the research trainers and the plain foundations, never a model, the coder, the
# container or a kernel
CLI_MAY_IMPORT = ("seqzip.cli", "seqzip.api", "seqzip.predictor", "seqzip.streaminfo",
                  "seqzip.cluster",
                  "seqzip.baselines", "seqzip.bench", "seqzip.research", "seqzip.errors",
                  "seqzip.corpora", "seqzip.levels")


def layer_of(module: str) -> int | None:
    for index, (_, prefixes) in enumerate(LAYERS):
        if any(module == p or module.startswith(p + ".") for p in prefixes):
            return index
    return None


def module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def python_imports(path: pathlib.Path, module: str) -> set[str]:
    tree = ast.parse(path.read_text())
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            found.add(target)
            for alias in node.names:  # "from . import api" imports seqzip.api
                found.add(f"{target}.{alias.name}")
    return {name for name in found if name.startswith("seqzip")}


CYTHON_IMPORT = re.compile(r"^\s*(?:from\s+(seqzip[\w.]*)\s+c?import|c?import\s+(seqzip[\w.]*))",
                           re.M)


def cython_imports(path: pathlib.Path) -> set[str]:
    return {a or b for a, b in CYTHON_IMPORT.findall(path.read_text())}


def known(name: str, modules: set[str]) -> str | None:
    """The package module ``name`` refers to (an attribute import names its module)."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def graph() -> dict[str, set[str]]:
    files = [p for p in PACKAGE.rglob("*") if p.suffix in (".py", ".pyx", ".pxd")]
    modules = {module_name(p) for p in files}
    edges: dict[str, set[str]] = {}
    for path in files:
        module = module_name(path)
        raw = python_imports(path, module) if path.suffix == ".py" else cython_imports(path)
        targets = {known(name, modules) for name in raw} - {None, module, "seqzip"}
        edges.setdefault(module, set()).update(targets)
    return edges


EDGES = graph()


def test_every_module_has_a_layer():
    unplaced = sorted(m for m in EDGES if m != "seqzip" and layer_of(m) is None)
    assert not unplaced, f"modules without a layer (add them to LAYERS and the README): {unplaced}"


def violations(edges: dict[str, set[str]]) -> list[str]:
    """Every import that points up a layer, or reaches a module reserved for others."""
    out = []
    for module in sorted(m for m in edges if m != "seqzip"):
        here = layer_of(module)
        for target in sorted(edges[module]):
            there = layer_of(target)
            if there is None or there < here:
                out.append(f"{module} ({LAYERS[here][0]}) imports {target} from a higher layer")
            for prefix, allowed in ONLY_FOR.items():
                if target.startswith(prefix) and not module.startswith(prefix) \
                        and LAYERS[here][0] not in allowed:
                    out.append(f"{module} imports {target}, which is for {allowed} only")
            if LAYERS[here][0] == "cli" and not any(
                    target == p or target.startswith(p + ".") for p in CLI_MAY_IMPORT):
                out.append(f"{module} imports {target}: the command line goes through the api")
    return out


def test_imports_point_down():
    assert violations(EDGES) == []


def test_the_checker_sees_violations():
    """The rules bite: a model importing the API, or a kernel the NumPy reference."""
    assert violations({"seqzip.models.order2": {"seqzip.api"}})
    assert violations({"seqzip._kernels.lstm": {"seqzip.reference.lstm"}})
    assert not violations({"seqzip.research.glnn": {"seqzip.reference.glnn"}})
    for below_the_api in ("seqzip.models", "seqzip.models.cm", "seqzip.coder",
                          "seqzip.container", "seqzip._core", "seqzip._kernels.cm"):
        assert violations({"seqzip.cli.options": {below_the_api}}), below_the_api
    assert not violations({"seqzip.cli.files": {"seqzip.api", "seqzip.streaminfo",
                                                "seqzip.research.dictionary", "seqzip.errors"}})
    assert "seqzip.api" in EDGES["seqzip.cli.options"]  # a function-level import is read
    assert "seqzip._kernels.order2" in EDGES["seqzip.models.order2"]
    assert "seqzip._core" in EDGES["seqzip._kernels.online"]  # cimports are read too


def test_kernels_import_no_seqzip_python():
    for module, targets in EDGES.items():
        if layer_of(module) == [n for n, _ in LAYERS].index("kernels"):
            outside = {t for t in targets if layer_of(t) != layer_of(module)}
            assert not outside, f"{module} imports {outside}"


def test_no_import_cycles():
    state: dict[str, int] = {}

    def visit(node, path):
        state[node] = 1
        for nxt in EDGES.get(node, ()):
            if state.get(nxt) == 1:
                cycle = path[path.index(nxt):] + [nxt]
                raise AssertionError("import cycle: " + " -> ".join(cycle))
            if nxt not in state:
                visit(nxt, path + [nxt])
        state[node] = 2

    for node in sorted(EDGES):
        if node not in state:
            visit(node, [node])
