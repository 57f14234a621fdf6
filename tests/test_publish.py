"""``wikipedia_ipc.py push``: only a complete build is uploaded, exactly its files; offline it fails clearly."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import builder.publish.publisher
import wikipedia_ipc
from builder.config import GOLD, SILVER
from builder.data.make_sample import dump_xml, page_xml
from builder.engines.local import build
from builder.publish.publisher import Publisher, published_files

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


def test_push_finishes_a_build_interrupted_while_its_files_moved_in(
    built: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "wikipedia_ipc"
    shutil.copytree(built, out)
    dump = tmp_path / "enwiki-20240201-pages-articles.xml"
    captions = ["The 1907 postcard shows the Easter Bunny with a basket.", "A rabbit is shown on a postcard from 1907."]
    pages = [page_xml(f"Page {n}", f"[[File:Postcard.jpg|thumb|{text}]]", n + 1) for n, text in enumerate(captions)]
    dump.write_text(dump_xml(pages))
    real_replace = os.replace

    def no_space_for_the_card(source: Path, target: Path) -> None:
        if Path(target).name == "README.md":
            raise OSError(28, "No space left on device")
        real_replace(source, target)

    monkeypatch.setattr(builder.publish.publisher.os, "replace", no_space_for_the_card)
    with pytest.raises(OSError, match="No space left"):
        build([dump], [GOLD], out, tagger="perceptron", show_progress=False)
    monkeypatch.undo()
    assert wikipedia_ipc.main(["push", str(out), "someone/wikipedia-ipc", "--dry-run"]) == 0
    printed = capsys.readouterr()
    assert "finished publishing a build that was interrupted" in printed.err
    gold = json.loads((out / "gold" / "funnel.json").read_text())
    assert gold["dumps"][0]["name"] == dump.name  # the new gold, and the silver kept from before
    assert set(listed(printed.out)) == {path.as_posix() for path in published_files(out)}
    assert {f"gold/{name}" for name in gold["wikipedia_ipc"]["files"]} <= set(listed(printed.out))
