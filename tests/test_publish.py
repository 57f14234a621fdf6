"""``wikipedia_ipc.py push``: only a complete build is uploaded, exactly its files; offline it fails clearly."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import wikipedia_ipc
from builder.config import GOLD, SILVER
from builder.local import build
from builder.output import Publisher

ROOT = Path(wikipedia_ipc.__file__).resolve().parent


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, perceptron_available: None) -> Path:
    out = tmp_path_factory.mktemp("push") / "wikipedia_ipc"
    build([wikipedia_ipc.SAMPLE_DUMP], [GOLD, SILVER], out, tagger="perceptron", show_progress=False)
    (out / "notes.txt").write_text("not part of the dataset\n")
    return out


def listed(printed: str) -> dict[str, int]:
    """Path → size from the dry run's lines ``     1,234  gold/funnel.json``."""
    rows = [line.split() for line in printed.splitlines()[1:] if line.strip()]
    return {path: int(size.replace(",", "")) for size, path in rows}


def test_dry_run_lists_exactly_the_built_files(built: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert wikipedia_ipc.main(["push", str(built), "someone/wikipedia-ipc", "--dry-run"]) == 0
    printed = capsys.readouterr().out
    expected = {
        path.relative_to(built).as_posix(): path.stat().st_size
        for path in [built / "README.md", *built.glob("*/funnel.json"), *built.glob("*/*.parquet")]
    }
    assert listed(printed) == expected
    assert any(name.startswith("silver/validation-") for name in expected)  # every split's files are listed
    assert printed.startswith(
        f"Would upload {len(expected)} files ({sum(expected.values()):,} bytes) to someone/wikipedia-ipc:"
    )
    assert "notes.txt" not in printed


def test_an_incomplete_build_is_not_pushed(built: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    broken = tmp_path / "broken"
    broken.mkdir()
    for path in built.rglob("*"):
        if path.is_file():
            (broken / path.relative_to(built)).parent.mkdir(parents=True, exist_ok=True)
            (broken / path.relative_to(built)).write_bytes(path.read_bytes())
    shard = next((broken / "silver").glob("*.parquet"))
    shard.unlink()
    assert wikipedia_ipc.main(["push", str(broken), "someone/wikipedia-ipc", "--dry-run"]) == 2
    assert f"{shard}: listed in the card but missing" in capsys.readouterr().err
    (broken / "gold" / "funnel.json").unlink()
    assert wikipedia_ipc.main(["push", str(broken), "someone/wikipedia-ipc", "--dry-run"]) == 2
    assert "gold/funnel.json: missing or not written by the toolkit" in capsys.readouterr().err


def test_a_folder_the_toolkit_did_not_build_is_not_pushed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "README.md").write_text("# my dataset\n")
    assert wikipedia_ipc.main(["push", str(tmp_path), "someone/wikipedia-ipc"]) == 2
    assert "not a Wikipedia-IPC build" in capsys.readouterr().err
    assert wikipedia_ipc.main(["push", str(tmp_path / "missing"), "someone/wikipedia-ipc"]) == 2
    assert "missing: cannot open the folder to lock it (No such file or directory)" in capsys.readouterr().err


def test_a_folder_being_built_is_not_pushed(built: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with Publisher(built, ["gold"]):
        assert wikipedia_ipc.main(["push", str(built), "someone/wikipedia-ipc", "--dry-run"]) == 2
    assert f"{built}: another build is writing into this folder" in capsys.readouterr().err


def test_offline_push_fails_with_a_clear_message(built: Path) -> None:
    environment = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    process = subprocess.run(
        [sys.executable, str(ROOT / "wikipedia_ipc.py"), "push", str(built), "someone/wikipedia-ipc"],
        capture_output=True,
        text=True,
        env=environment,
        timeout=120,
    )
    assert process.returncode == 2
    assert process.stderr.strip() == (
        "error: someone/wikipedia-ipc: the Hub is not reachable in offline mode (HF_HUB_OFFLINE is set)"
    )
