"""Progress in a log: a few whole lines, not thousands of carriage-return redraws."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
from pathlib import Path

from builder.progress import LogLines, progress_bar

REPO = Path(__file__).resolve().parent.parent


def test_a_bar_into_a_file_writes_whole_lines(tmp_path: Path) -> None:
    stream = io.StringIO()
    bar = progress_bar(total=100_000, desc="pages", file=stream, mininterval=3600)
    assert isinstance(bar, LogLines)
    for _ in range(100_000):
        bar.update(1)
    bar.close()
    written = stream.getvalue()
    assert "\r" not in written
    lines = written.splitlines()
    assert len(lines) == 2  # the start and the end, nothing in between within the interval
    assert lines[0].startswith("pages:   0%") and lines[1].startswith("pages: 100%")


def test_a_build_logged_to_a_file_has_no_redraws(tmp_path: Path, perceptron_available: None) -> None:
    """A build with stderr in a pipe, as in a batch job: each bar gives a few lines, none a stream of updates."""
    environment = {**os.environ, "PYTHONPATH": str(REPO)}
    command = [sys.executable, str(REPO / "wikipedia_ipc.py"), "build", "--output", str(tmp_path / "out")]
    result = subprocess.run(command, env=environment, capture_output=True, timeout=600)  # bytes: every \r is kept
    errors = result.stderr.decode("utf-8")
    assert result.returncode == 0, errors
    assert "\r" not in errors
    bars = [line for line in errors.split("\n") if line.startswith(("pages:", "dump ranges:", "tagging:"))]
    assert bars and len(bars) <= 10


def test_the_bar_names_its_unit_by_input_kind(tmp_path: Path, perceptron_available: None) -> None:
    """A crawl's tasks are its files and a caption dataset's its shards (and TSV parts), not "dump ranges"."""
    web, captions = REPO / "tests" / "data" / "web", REPO / "tests" / "data" / "captions"
    builds = {
        "crawl files": [str(web / "transfer_compression_gzip.warc.gz"), str(web / "whirlwind.warc.gz")],
        "dataset shards": [str(captions / "img2dataset" / "files"), "--configs", "captions"],
        "dataset shards and TSV parts": [
            *(str(captions / "img2dataset" / "webdataset"), "--configs", "captions"),
            *("--captions-tsv", str(captions / "captions.tsv")),
        ],
    }
    environment = {**os.environ, "PYTHONPATH": str(REPO)}
    for number, (unit, arguments) in enumerate(builds.items()):
        command = [sys.executable, str(REPO / "wikipedia_ipc.py"), "build", *arguments, "--workers", "2"]
        result = subprocess.run(
            [*command, "--output", str(tmp_path / f"out{number}")], env=environment, capture_output=True, timeout=600
        )
        errors = result.stderr.decode("utf-8")
        assert result.returncode == 0, errors
        bars = {line.split(":")[0] for line in errors.split("\n") if re.match(r"[\w ]+: +\d+%", line)}  # with a total
        assert bars == {unit} and "dump ranges" not in errors, errors
