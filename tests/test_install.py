"""The core install mines without the model stack: no PyTorch, no stanza, no sentence-transformers."""

from __future__ import annotations

import importlib.metadata
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

ROOT = Path(__file__).resolve().parents[1]
MODEL_STACK = ("torch", "stanza", "sentence_transformers", "transformers", "bert_score", "ot", "evaluate")

# Run the command line as a user would, then report which parts of the model stack it imported.
_RUN_AND_REPORT = """
import json, runpy, sys
sys.argv = ["wikipedia_ipc.py", *{argv!r}]
try:
    runpy.run_path({script!r}, run_name="__main__")
except SystemExit as stop:
    code = stop.code
else:
    code = 0
print(json.dumps({{"code": code, "imported": sorted(set(sys.modules) & set({stack!r}))}}))
"""


def test_core_dependencies_leave_out_the_model_stack() -> None:
    core = [
        requirement
        for requirement in importlib.metadata.requires("wikipedia-ipc") or []
        if "extra ==" not in requirement
    ]
    names = {requirement.split(";")[0].split(">")[0].split("=")[0].split("[")[0].strip() for requirement in core}
    assert names, "no core dependencies found"
    assert not names & {"torch", "stanza", "sentence-transformers", "transformers", "bert-score", "pot"}


def test_sample_builds_without_importing_the_model_stack(tmp_path: Path, perceptron_available: None) -> None:
    output = tmp_path / "out"
    argv = ["build", "--output", str(output), "--tagger", "perceptron", "--configs", "gold", "silver"]
    code = _RUN_AND_REPORT.format(argv=argv, script=str(ROOT / "wikipedia_ipc.py"), stack=MODEL_STACK)
    finished = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    report = json.loads(finished.stdout.strip().splitlines()[-1])
    assert report["code"] in (0, None), finished.stderr[-2000:]
    assert report["imported"] == []
    for config in ("gold", "silver"):
        rows = sum(pq.read_metadata(path).num_rows for path in (output / config).glob("*.parquet"))
        assert rows > 0, f"{config}: no pairs"


def test_auto_tagger_without_stanza_is_the_perceptron(monkeypatch: pytest.MonkeyPatch) -> None:
    """The core install has no stanza: ``auto`` (the quick start's tagger) must not need it."""
    import importlib.util

    from builder.filters import tagging

    real = importlib.util.find_spec
    monkeypatch.delenv("CORENLP_HOME", raising=False)
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "stanza" else real(name, *a))
    assert tagging.corenlp_home() is None
    assert tagging.auto_backend() == "perceptron"
    with pytest.raises(tagging.TaggerUnavailable, match=r"pip install -e \"\.\[stanza\]\""):
        tagging.get_tagger("corenlp")


def test_the_console_script_runs_from_a_folder_with_a_build_output(tmp_path: Path) -> None:
    """docs/getting-started.md's advice where a ``wikipedia_ipc/`` output folder shadows the module: the installed
    command works."""
    command = shutil.which("wikipedia-ipc")
    if command is None:
        pytest.fail("the wikipedia-ipc console script is not installed: pip install -e . installs it")
    (tmp_path / "wikipedia_ipc").mkdir()
    finished = subprocess.run([command, "--help"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert finished.returncode == 0, finished.stderr
    assert "{download,build,push}" in finished.stdout
