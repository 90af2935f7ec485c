"""Every taskmem module imports on its own, and no module imports one that imports it back (issue 33)."""

from __future__ import annotations

import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

import import_graph  # noqa: E402

# Each child imports its modules one after another, each in a state as fresh as its predecessor's
# import left it, so every module is also tried first: the child forgets every taskmem module between
# two imports. Modules that import third-party packages stay loaded, which keeps a child fast.
_IMPORT_EACH_FRESH = """
import importlib, sys
failed = []
for name in sys.argv[1:]:
    for loaded in [m for m in sys.modules if m == "taskmem" or m.startswith("taskmem.")]:
        del sys.modules[loaded]
    try:
        importlib.import_module(name)
    except Exception as error:
        failed.append(f"{name}: {type(error).__name__}: {error}")
print("\\n".join(failed))
sys.exit(1 if failed else 0)
"""


def _import_each(names: list[str]) -> str:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "server"), str(ROOT / "clients/python/src"),
                                                       os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", _IMPORT_EACH_FRESH, *names], capture_output=True, text=True,
                          env=env, timeout=120)
    return done.stdout + (done.stderr if done.returncode and not done.stdout else "")


def test_every_module_imports_alone_in_a_fresh_interpreter() -> None:
    # taskmem.__main__ is `python -m taskmem`: importing it runs the command.
    names = sorted(name for name in import_graph.modules() if name != "taskmem.__main__")
    batches = [names[i::4] for i in range(4)]
    with ThreadPoolExecutor(len(batches)) as pool:
        failures = "".join(pool.map(_import_each, batches))
    assert failures.strip() == ""


def test_no_module_imports_one_that_imports_it_back() -> None:
    assert import_graph.circles(import_graph.graph()) == []


def test_the_storage_port_imports_no_engine() -> None:
    edges = import_graph.graph()
    port = [name for name in edges if name.startswith("taskmem.store.") and name.count(".") == 2]
    reached = {target for name in port for target in edges[name]}
    engines = {name for name in reached if name.startswith(("taskmem.store.sqlite", "taskmem.store.postgres"))}
    assert engines <= {"taskmem.store.sqlite.connection", "taskmem.store.sqlite.storage",
                       "taskmem.store.postgres.connection", "taskmem.store.postgres.storage"}
    assert all(name == "taskmem.store.engines" for name in port if edges[name] & engines)
