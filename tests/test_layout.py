"""The house: builder/ by stage, imports flowing one way with no cycle, no module too long to read."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The stages in the order imports may flow: a module imports from its own package or from one before it.
LAYERS = (
    "builder.common",
    "builder.storage",
    "builder.progress",
    "builder.config",
    "builder.lang",
    "builder.sources",
    "builder.extract",
    "builder.filters",
    "builder.publish",
    "builder.engines",
    "builder.cli",
    "builder.dataset_builder",  # the datasets builder class: a way in beside the command line, above the engines
)
MAX_LINES = 900


def modules() -> dict[str, Path]:
    found = {"wikipedia_ipc": ROOT / "wikipedia_ipc.py"}
    for package in ("builder", "metrics"):
        for path in (ROOT / package).rglob("*.py"):
            name = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
            found[name] = path
    return found


def imports(path: Path, known: dict[str, Path]) -> set[str]:
    """Every module of the project that ``path`` imports, inside functions too; ``TYPE_CHECKING`` blocks aside."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    typing_only = {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
        for inner in ast.walk(node)
    }
    found = set()
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                found.add(full if full in known else node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {name for name in found if name in known}


def layer(module: str) -> int | None:
    return next(
        (index for index, prefix in enumerate(LAYERS) if module == prefix or module.startswith(prefix + ".")), None
    )


def test_builder_is_grouped_by_stage() -> None:
    packages = {path.name for path in (ROOT / "builder").iterdir() if (path / "__init__.py").is_file()}
    assert packages >= {"sources", "extract", "lang", "filters", "engines", "publish"}
    engines = {path.stem for path in (ROOT / "builder" / "engines").glob("*.py")}
    assert engines == {"__init__", "core", "local"}, f"one core, two drivers (Spark a package): {sorted(engines)}"
    assert (ROOT / "builder" / "engines" / "spark" / "__init__.py").is_file()
    layers = {"__init__", "common", "config", "progress", "storage", "dataset_builder"}
    loose = {path.stem for path in (ROOT / "builder").glob("*.py")} - layers
    assert not loose, f"modules outside the stage packages: {sorted(loose)}"


def test_no_import_cycle() -> None:
    known = modules()
    graph = {name: imports(path, known) for name, path in known.items()}
    state: dict[str, int] = {}
    cycles = []

    def visit(name: str, path: list[str]) -> None:
        state[name] = 1
        for target in sorted(graph[name]):
            if state.get(target) == 1:
                cycles.append(path[path.index(target) :] + [target] if target in path else [name, target])
            elif target not in state:
                visit(target, [*path, target])
        state[name] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])
    assert not cycles, "import cycles: " + "; ".join(" → ".join(cycle) for cycle in cycles)


def test_imports_flow_down_the_stages() -> None:
    known = modules()
    upward = []
    for name, path in known.items():
        own = layer(name)
        if own is None:
            continue
        for target in imports(path, known):
            other = layer(target)
            if other is not None and other > own:
                upward.append(f"{name} imports {target}")
    assert not upward, "imports against the stage order: " + "; ".join(sorted(upward))


def test_no_module_over_900_lines() -> None:
    long = {
        name: count
        for name, path in modules().items()
        if (count := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert not long, f"modules over {MAX_LINES} lines: {long}"


def test_the_toolkit_imports_where_fcntl_does_not_exist(tmp_path: Path) -> None:
    """As on Windows: importing works, and the folder lock says why it cannot lock rather than failing at import."""
    code = (
        "import sys; sys.modules['fcntl'] = None; sys.modules['msvcrt'] = None\n"
        "import wikipedia_ipc\n"
        "from builder.common import FolderLock, OutputError\n"
        f"try:\n    FolderLock(__import__('pathlib').Path({str(tmp_path)!r})).acquire()\n"
        "except OutputError as error:\n    print(error)\n"
    )
    finished = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert finished.returncode == 0, finished.stderr[-2000:]
    assert "neither fcntl nor msvcrt" in finished.stdout
