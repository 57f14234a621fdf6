"""Work folders: a user's folder is never cleared, one build at a time, no orphans after kill -9, clean Ctrl-C."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

import wikipedia_ipc
from builder.common import UNIX_SOCKET_PATH, OutputError
from builder.config import GOLD
from builder.engines.local import build
from builder.publish.card import SAMPLE_DUMP
from builder.publish.workdir import MARKER, WorkDir, is_work_folder, remove_orphans

REPO = Path(__file__).resolve().parent.parent
HANG_GUARD = 120  # seconds: a bound on waiting for a subprocess, not a speed threshold


def _thesis(folder: Path) -> Path:
    (folder / "references").mkdir(parents=True)
    thesis = folder / "references" / "thesis.bib"
    thesis.write_text("@book{thesis}\n", encoding="utf-8")
    return thesis


def test_a_users_folder_given_as_work_dir_is_refused_and_kept(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """The issue's case: a refused output must not cost the user's references/ in the work folder."""
    project = tmp_path / "proj"
    thesis = _thesis(project)
    some_file = tmp_path / "some-file"
    some_file.write_text("mine\n", encoding="utf-8")
    argv = ["build", "--work-dir", str(project), "--output", str(some_file), "--quiet", "--tagger", "perceptron"]
    assert wikipedia_ipc.main(argv) == 2
    assert thesis.read_text(encoding="utf-8") == "@book{thesis}\n"
    # with a good output the work folder itself is refused, before anything is written into it
    argv[4] = str(tmp_path / "out")
    assert wikipedia_ipc.main(argv) == 2
    assert "not a Wikipedia-IPC work folder" in capsys.readouterr().err
    assert thesis.read_text(encoding="utf-8") == "@book{thesis}\n"
    assert sorted(path.name for path in project.rglob("*")) == ["references", "thesis.bib"]
    assert not (tmp_path / "out").exists()


def test_the_output_is_checked_before_the_work_folder_is_cleared(tmp_path: Path, perceptron_available: None) -> None:
    work = tmp_path / "work"
    build([SAMPLE_DUMP], [GOLD], tmp_path / "out", tagger="perceptron", work_dir=work, show_progress=False)
    shards = sorted((work / "references").glob("*.parquet"))
    assert shards and is_work_folder(work)
    blocked = tmp_path / "a-file"
    blocked.write_text("mine\n", encoding="utf-8")
    with pytest.raises(OutputError, match="not a folder"):
        build([SAMPLE_DUMP], [GOLD], blocked, tagger="perceptron", work_dir=work, show_progress=False)
    assert sorted((work / "references").glob("*.parquet")) == shards  # still there for --resume


def test_resume_needs_a_work_folder_of_an_earlier_build(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(OutputError, match="not the work folder of an earlier build"):
        build([SAMPLE_DUMP], [GOLD], tmp_path / "out", work_dir=tmp_path / "new", resume=True, show_progress=False)
    assert wikipedia_ipc.main(["build", "--resume", "--output", str(tmp_path / "o"), "--quiet"]) == 2
    assert "--resume needs the --work-dir of the interrupted build" in capsys.readouterr().err


def test_two_builds_sharing_a_work_folder(tmp_path: Path) -> None:
    with WorkDir.claim(tmp_path / "work"), pytest.raises(OutputError, match="in use by another build"):
        build([SAMPLE_DUMP], [GOLD], tmp_path / "out", tagger="perceptron", work_dir=tmp_path / "work")
    assert not (tmp_path / "out").exists()


def test_orphaned_temporary_folders_are_removed_and_others_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, perceptron_available: None
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    look_alike = tmp_path / "wikipedia-ipc-notes"
    look_alike.mkdir()
    (look_alike / "notes.txt").write_text("mine\n", encoding="utf-8")
    with WorkDir.temporary() as running:  # another build's folder, locked while it runs
        orphan = tmp_path / "wikipedia-ipc-orphan"  # a killed build's: marked, and no one holds its lock
        (orphan / "references").mkdir(parents=True)
        (orphan / MARKER).write_text(json.dumps({"wikipedia_ipc": "work folder", "format": 1, "pid": 0}) + "\n")
        build([SAMPLE_DUMP], [GOLD], tmp_path / "out", tagger="perceptron", show_progress=False)
        assert running.path.is_dir()
    assert not orphan.exists()
    assert (look_alike / "notes.txt").is_file()
    assert not running.path.exists()
    assert remove_orphans(directory=tmp_path) == []
    assert sorted(path.name for path in tmp_path.iterdir()) == ["out", "wikipedia-ipc-notes"]


def _start_build(tmp_path: Path, *extra: str) -> subprocess.Popen:
    environment = {**os.environ, "TMPDIR": str(tmp_path / "tmp"), "PYTHONPATH": str(REPO)}
    (tmp_path / "tmp").mkdir(exist_ok=True)
    command = [sys.executable, str(REPO / "wikipedia_ipc.py"), "build", "--quiet", "--tagger", "perceptron", *extra]
    return subprocess.Popen(command, env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _wait_for(path: Path, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + HANG_GUARD
    while not path.exists():
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, f"{path} did not appear"
        time.sleep(0.02)


def test_a_folder_left_by_kill_9_is_removed_by_the_next_build(tmp_path: Path, perceptron_available: None) -> None:
    process = _start_build(tmp_path, "--output", str(tmp_path / "out"))
    deadline = time.monotonic() + HANG_GUARD
    while not list((tmp_path / "tmp").glob(f"wikipedia-ipc-*/{MARKER}")):
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.02)
    process.kill()
    process.communicate(timeout=HANG_GUARD)
    left = list((tmp_path / "tmp").glob("wikipedia-ipc-*"))
    assert len(left) == 1  # kill -9 gives the build no chance to clean up
    again = _start_build(tmp_path, "--output", str(tmp_path / "out"))
    _, errors = again.communicate(timeout=HANG_GUARD)
    assert again.returncode == 0, errors
    assert list((tmp_path / "tmp").glob("wikipedia-ipc-*")) == []


def test_ctrl_c_says_in_one_line_what_was_kept(tmp_path: Path, perceptron_available: None) -> None:
    work = tmp_path / "work"
    process = _start_build(tmp_path, "--output", str(tmp_path / "out"), "--work-dir", str(work), "--workers", "1")
    _wait_for(work / "references", process)
    process.send_signal(signal.SIGINT)
    _, errors = process.communicate(timeout=HANG_GUARD)
    assert process.returncode == 130, errors
    lines = [line for line in errors.splitlines() if line.strip()]
    assert lines[-1].startswith("interrupted: nothing was published") and "add --resume" in lines[-1]
    assert "Traceback" not in errors
    assert not (tmp_path / "out" / "README.md").exists()
    assert is_work_folder(work)


def test_zero_workers_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(SystemExit) as exit_:
        wikipedia_ipc.main(["build", "--workers", "0", "--output", str(tmp_path / "out")])
    assert exit_.value.code == 2
    assert "a build needs at least 1 worker" in capsys.readouterr().err
    with pytest.raises(ValueError, match="workers must be 1 or more, not 0"):
        build([SAMPLE_DUMP], [GOLD], tmp_path / "out", workers=0)
    assert not (tmp_path / "out").exists()


def test_a_long_temporary_folder_does_not_stop_the_workers(tmp_path: Path, perceptron_available: None) -> None:
    """The fork server listens on a Unix socket under ``TMPDIR``, whose path Linux bounds (108 bytes): under a
    longer ``TMPDIR`` the tagging workers are spawned instead, and the build ends as any other."""
    deep = tmp_path / ("t" * 40) / ("m" * 40)
    deep.mkdir(parents=True)
    environment = {**os.environ, "TMPDIR": str(deep), "PYTHONPATH": str(REPO)}
    assert len(str(deep)) + len("/pymp-XXXXXXXX/listener-XXXXXXXX") >= UNIX_SOCKET_PATH
    command = [sys.executable, str(REPO / "wikipedia_ipc.py"), "build", "--quiet", "--tagger", "perceptron"]
    command += ["--workers", "2", "--configs", "gold", "--output", str(tmp_path / "out")]
    done = subprocess.run(command, env=environment, capture_output=True, text=True, timeout=HANG_GUARD)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "out" / "README.md").exists()
