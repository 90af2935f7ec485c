"""Print the import graph of server/taskmem: its circles, its longest chain, files per folder.

Usage: python tools/import_graph.py [--edges] [--top-level-only]

Every `import` / `from ... import` naming a taskmem module counts as an edge, wherever it
sits: an import inside a function is a call-time lookup, and a circle through one is still a
circle (issue 33). `--top-level-only` counts module-level imports alone. `from pkg import name`
points at pkg.name when that is a module, else at pkg. The implicit import of parent packages
is not drawn: every package's __init__ here is empty or imports nothing of ours.

A circle is a strongly connected component of more than one module (or a module importing
itself); the longest chain is the longest path through the graph with each circle counted
as one step, printed module by module.
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "server"
PACKAGE = "taskmem"
SKIP = ("taskmem.gen",)  # generated stubs: not ours to arrange


def modules(root: Path = ROOT) -> dict[str, Path]:
    """Module name -> file for every .py file under server/taskmem, generated stubs aside."""
    found: dict[str, Path] = {}
    for path in sorted((root / PACKAGE).rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        if not name.startswith(SKIP):
            found[name] = path
    return found


def _imported_names(tree: ast.Module, name: str, is_package: bool, top_level_only: bool) -> Iterator[str]:
    nodes = tree.body if top_level_only else ast.walk(tree)
    for node in nodes:
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".")
                base = base if is_package else base[:-1]
                base = base[: len(base) - (node.level - 1)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            yield source
            yield from (f"{source}.{alias.name}" for alias in node.names)


def graph(top_level_only: bool = False) -> dict[str, set[str]]:
    """Module -> the taskmem modules it imports."""
    known = modules()
    edges: dict[str, set[str]] = {}
    for name, path in known.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        targets = {target for target in _imported_names(tree, name, path.name == "__init__.py", top_level_only) if target in known}
        # `from pkg import module` names both pkg and pkg.module: keep the module alone.
        targets -= {target.rpartition(".")[0] for target in targets}
        targets.discard(name)
        edges[name] = targets
    return edges


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    for start in edges:
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
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
                    components.append(sorted(component))
    return sorted(components, key=len, reverse=True)


def longest_chain(edges: dict[str, set[str]]) -> list[str]:
    """The longest import path, each circle collapsed into one step (named by its first module)."""
    owner = {member: component[0] for component in circles(edges) for member in component}
    collapsed: dict[str, set[str]] = {}
    for node, targets in edges.items():
        source = owner.get(node, node)
        collapsed.setdefault(source, set()).update(owner.get(t, t) for t in targets if owner.get(t, t) != source)
    best: dict[str, list[str]] = {}

    def chain_from(node: str) -> list[str]:
        if node not in best:
            tails = [chain_from(target) for target in sorted(collapsed.get(node, ()))]
            best[node] = [node] + max(tails, key=len, default=[])
        return best[node]

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10 * len(collapsed)))
    return max((chain_from(node) for node in sorted(collapsed)), key=len, default=[])


def files_per_folder() -> Counter[str]:
    """Python files per folder of server/taskmem (generated stubs aside)."""
    return Counter(str(path.parent.relative_to(ROOT)) for path in modules().values())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edges", action="store_true", help="print every module's imports too")
    parser.add_argument("--top-level-only", action="store_true", help="ignore imports inside functions")
    args = parser.parse_args()
    edges = graph(args.top_level_only)
    if args.edges:
        for node in sorted(edges):
            print(f"{node} -> {', '.join(sorted(edges[node])) or '-'}")
    found = circles(edges)
    print(f"modules: {len(edges)}, imports: {sum(map(len, edges.values()))}")
    print(f"circles: {len(found)} ({sum(map(len, found))} modules)")
    for component in found:
        print(f"  {len(component)}: {' '.join(component)}")
    chain = longest_chain(edges)
    print(f"longest chain: {len(chain)} modules")
    print("  " + "\n  -> ".join(chain))
    print("files per folder:")
    for folder, count in sorted(files_per_folder().items()):
        print(f"  {count:3d} {folder}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
