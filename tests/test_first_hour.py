"""A newcomer's first hour: the command answers --help at once under its own name, the sample builds every
config, a build's outputs are ignored by git, a fallback is said once, and the README says what to run."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
HEAVY = ("torch", "datasets", "duckdb", "pyspark", "pyarrow", "pandas", "transformers")


def run_python(code: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "PYTHONPATH": str(ROOT), **env}
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=cwd, env=environment, timeout=600
    )


@pytest.mark.parametrize("arguments", [["--help"], ["build", "--help"], ["download", "--help"]])
def test_help_loads_no_heavy_library(arguments: list[str], tmp_path: Path) -> None:
    """--help is read before the model stack, DuckDB or Spark are imported (they took seconds to load)."""
    code = (
        "import sys\n"
        f"sys.argv = ['/somewhere/bin/wikipedia-ipc', *{arguments!r}]\n"
        "import wikipedia_ipc\n"
        "try:\n    wikipedia_ipc.main()\nexcept SystemExit as done:\n    assert done.code == 0, done.code\n"
        f"print('loaded:', sorted(name for name in {HEAVY!r} if name in sys.modules))\n"
    )
    finished = run_python(code, tmp_path)
    assert finished.returncode == 0, finished.stderr[-2000:]
    assert finished.stdout.startswith("usage: wikipedia-ipc ")
    assert finished.stdout.rstrip().endswith("loaded: []")


def test_usage_names_the_command_as_it_was_run(tmp_path: Path) -> None:
    """The console script says ``wikipedia-ipc``; the file run by Python says how it was run."""
    script = run_python(
        "import sys; sys.argv = ['wikipedia_ipc.py', 'nonsense']\nimport runpy\n"
        f"runpy.run_path({str(ROOT / 'wikipedia_ipc.py')!r}, run_name='__main__')",
        tmp_path,
    )
    assert script.returncode == 2 and script.stderr.startswith("usage: python wikipedia_ipc.py "), script.stderr
    module = run_python(
        "import sys; sys.argv = ['wikipedia_ipc.py', 'nonsense']\nimport runpy\n"
        "runpy.run_module('wikipedia_ipc', run_name='__main__', alter_sys=True)",
        tmp_path,
    )
    assert module.returncode == 2 and module.stderr.startswith("usage: python -m wikipedia_ipc "), module.stderr


def test_the_lazy_api_names_resolve() -> None:
    """``from wikipedia_ipc import build, WikipediaIPC`` still works: the names load their modules on first use."""
    import wikipedia_ipc
    from builder.engines.local import build

    assert wikipedia_ipc.build is build
    assert wikipedia_ipc.WikipediaIPC.__name__ == "WikipediaIPC"
    assert wikipedia_ipc.SAMPLE_DUMP.is_file()
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        wikipedia_ipc.nothing  # noqa: B018


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_what_the_quick_start_writes_is_ignored_by_git(tmp_path: Path) -> None:
    """The build's folder and the scored copy of it (``python -m metrics score wikipedia_ipc/``) are not the project's."""
    repository = tmp_path / "clone"
    repository.mkdir()
    shutil.copy(ROOT / ".gitignore", repository / ".gitignore")
    subprocess.run(["git", "init", "-q", str(repository)], check=True)
    paths = ["wikipedia_ipc/README.md", "wikipedia_ipc-scored/README.md", "wikipedia_ipc-scored/gold/funnel.json"]
    checked = subprocess.run(
        ["git", "check-ignore", "--no-index", *paths], cwd=repository, capture_output=True, text=True
    )
    assert checked.stdout.split() == paths


def test_the_tagger_fallback_is_said_once(tmp_path: Path) -> None:
    """Offline without NLTK's model: the build's process warns; its tagging workers, which fall back too, do not."""
    empty = tmp_path / "no_nltk_data"
    empty.mkdir()
    code = (
        "import sys, wikipedia_ipc\n"
        f"sys.exit(wikipedia_ipc.main(['build', '--configs', 'gold', 'silver', '--output', {str(tmp_path / 'out')!r},"
        " '--workers', '2', '--tagger', 'perceptron']))"
    )
    # a proxy on the discard port: the probe for NLTK's index is refused at once, as on a machine without network
    finished = run_python(
        code, tmp_path, NLTK_DATA=str(empty), https_proxy="http://127.0.0.1:9", HTTPS_PROXY="http://127.0.0.1:9"
    )
    assert finished.returncode == 0, finished.stderr[-3000:]
    assert len(re.findall(r"TaggerWarning: NLTK's \S+ model is not installed", finished.stderr)) == 1, finished.stderr
