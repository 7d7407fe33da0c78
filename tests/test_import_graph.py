"""The package's import graph, read from the source (``ast``, every import: at the top, inside functions, and
``TYPE_CHECKING`` ones): no module imports itself back through others, and no layer imports a layer above it.

Layers, bottom first (a module may import its own layer and those below):

    core, cli_options, llm   the engine and the family contract (core/family.py); shared CLI helpers; the one
                             OpenAI-compatible chat client (llm/client.py) the policy, the desk and adapters use,
                             and the tool prompt (llm/tool_prompt.py) the adapters and the SFT export write
    salesgym                 the registry (``salesgym/__init__.py``): ids and their families' specs
    envs                     the families
    webapps                  the web apps: they render the workflows family's app state (envs/workflows)
    envs.workflows_ui        the computer-use family: it drives the web apps, so it sits above them
    agents                   policies, and the sweeps that replay a family's (agents/workflows_ui/sweep.py: the
                             UI reference through the browser on every template)
    testing, adapters, bench, the conformance kit, trainer and harness adapters (BrowserGym's tasks: their
    service_api              ``cheat`` replays the UI reference), the benchmark; and the service's API (its wire
                             models and HTTP client: what the service answers with and any caller uses, the
                             benchmark's --from-service too)
    serve                    the service (it uses the benchmark's splits; the benchmark never imports it)
    cli, cli_templates, demo the command line

A package is a top-level one (``salesgym.<name>``) or a layer's own name inside one (``salesgym.envs.workflows_ui``
is its own package, above ``salesgym.webapps``; ``salesgym.envs`` is the rest of the families).
``from pkg import sub`` counts as an import of ``pkg.sub`` only (running ``pkg/__init__.py`` first is Python's
business, not a dependency on what that file holds).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
LAYERS = (
    ("salesgym.core", "salesgym.cli_options", "salesgym.llm"),
    ("salesgym",),
    ("salesgym.envs",),
    ("salesgym.webapps",),
    ("salesgym.envs.workflows_ui",),
    ("salesgym.agents",),
    ("salesgym.testing", "salesgym.adapters", "salesgym.bench", "salesgym.service_api"),
    ("salesgym.serve",),
    ("salesgym.cli", "salesgym.cli_templates", "salesgym.demo"),
)


def modules() -> dict[str, Path]:
    out = {}
    for path in (SRC / "salesgym").rglob("*.py"):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _imported(node: ast.AST, module: str, is_package: bool) -> Iterator[str]:
    if isinstance(node, ast.Import):
        yield from (a.name for a in node.names)
    elif isinstance(node, ast.ImportFrom):
        if node.level:
            base = module.split(".") if is_package else module.split(".")[:-1]
            base = base[: len(base) - node.level + 1]
            source = ".".join([*base, *([node.module] if node.module else [])])
        else:
            source = node.module or ""
        yield from (f"{source}.{a.name}" for a in node.names)


def graph() -> dict[str, set[str]]:
    """module -> the package modules it imports (a name resolved to the longest module it names)."""
    mods = modules()
    edges: dict[str, set[str]] = {m: set() for m in mods}
    for module, path in mods.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            for name in _imported(node, module, path.name == "__init__.py"):
                while name and name not in mods:
                    name = name.rpartition(".")[0]
                if name and name != module:
                    edges[module].add(name)
    return edges


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def mutual_packages(edges: dict[str, set[str]]) -> set[tuple[str, str]]:
    """Pairs of packages (``_package``) each of which imports a module of the other."""
    top: dict[str, set[str]] = {}
    for module, targets in edges.items():
        top.setdefault(_package(module), set()).update(_package(t) for t in targets)
    return {(a, b) for a, imported in top.items() for b in imported if a < b and a in top.get(b, set())}


def _package(module: str) -> str:
    """The longest layer name the module is or is inside, else its top-level package (``salesgym.<name>``)."""
    named = [n for names in LAYERS for n in names if n.count(".") and (module == n or module.startswith(n + "."))]
    return max(named, key=len) if named else ".".join(module.split(".")[:2])


def layer(module: str) -> int:
    """The layer of a module: that of the longest layer name it is, or is inside."""
    best, depth = -1, -1
    for i, names in enumerate(LAYERS):
        for name in names:
            if (module == name or module.startswith(name + ".")) and name.count(".") > depth:
                best, depth = i, name.count(".")
    assert best >= 0, f"{module} belongs to no layer: add it to LAYERS"
    return best


@pytest.fixture(scope="module")
def edges() -> dict[str, set[str]]:
    return graph()


def test_the_graph_is_read_whole(edges: dict[str, set[str]]) -> None:
    assert len(edges) > 200 and "salesgym.core.family" in edges
    assert "salesgym.core.env" in edges["salesgym.envs.territory.env"]
    assert "salesgym.bench.splits" in edges["salesgym.bench.runner"]  # function-level imports count too


def test_no_module_imports_itself_back(edges: dict[str, set[str]]) -> None:
    assert cycles(edges) == []


def upward(edges: dict[str, set[str]]) -> set[tuple[str, str]]:
    """(importer, imported) pairs where the imported module sits in a higher layer."""
    return {(a, b) for a, targets in edges.items() for b in targets if layer(b) > layer(a)}


def test_no_layer_imports_one_above_it(edges: dict[str, set[str]]) -> None:
    assert upward(edges) == set(), "an upward import (move the shared code down a layer)"


def test_no_two_packages_import_each_other(edges: dict[str, set[str]]) -> None:
    assert mutual_packages(edges) == set(), "two packages import each other (move what both need into a layer below)"


def test_core_imports_no_family_and_families_no_benchmark_or_service(edges: dict[str, set[str]]) -> None:
    for module, targets in edges.items():
        if module.startswith("salesgym.core"):
            assert all(t.startswith("salesgym.core") for t in targets), (module, targets)
        if module.startswith("salesgym.envs"):
            bad = {t for t in targets if t.split(".")[1:2] in (["bench"], ["serve"], ["adapters"], ["cli"])}
            assert not bad, (module, bad)


def test_the_checks_can_fail() -> None:
    looped = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(looped) == [["a", "b", "c"]]
    two_ways = {"salesgym.bench.remote": {"salesgym.serve.client"}, "salesgym.serve.tasks": {"salesgym.bench.splits"},
                "salesgym.serve.client": set(), "salesgym.bench.splits": set()}  # fmt: skip
    assert mutual_packages(two_ways) == {("salesgym.bench", "salesgym.serve")}
    assert mutual_packages({**two_ways, "salesgym.bench.remote": set()}) == set()
    assert layer("salesgym.core.family") < layer("salesgym.envs.desk.family") < layer("salesgym.bench.runner")
    ui = layer("salesgym.envs.workflows_ui.env")
    assert layer("salesgym.envs.workflows.tools") < layer("salesgym.webapps.run") < ui < layer("salesgym.agents.base")
    assert _package("salesgym.envs.workflows_ui.env") == "salesgym.envs.workflows_ui"
    assert _package("salesgym.envs.desk.env") == "salesgym.envs" and _package("salesgym") == "salesgym"
    # a family module that imports a policy again, and the web apps importing the family that drives them
    back = {"salesgym.envs.workflows_ui.sweep": {"salesgym.agents.workflows_ui.reference"},
            "salesgym.agents.workflows_ui.reference": set(),
            "salesgym.webapps.control": {"salesgym.envs.workflows_ui.env"},
            "salesgym.envs.workflows_ui.env": {"salesgym.webapps.run"}, "salesgym.webapps.run": set()}  # fmt: skip
    assert upward(back) == {("salesgym.envs.workflows_ui.sweep", "salesgym.agents.workflows_ui.reference"),
                            ("salesgym.webapps.control", "salesgym.envs.workflows_ui.env")}  # fmt: skip
    assert mutual_packages(back) == {("salesgym.envs.workflows_ui", "salesgym.webapps")}
