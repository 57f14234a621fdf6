"""A build killed outright (kill -9) leaves no worker process behind: they end with it, whatever they are doing."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from builder.data.make_sample import PAGES, dump_xml, page_xml

ROOT = Path(__file__).resolve().parent.parent
COPIES = 500  # of the sample's 47 pages per dump: about 15 s of extraction per dump on one core


def big_dump(path: Path, first_id: int) -> Path:
    """The sample's pages many times over (each copy under its own titles), as one plain XML dump."""
    pages = [
        page_xml(f"{title} {copy}", text, first_id + copy * 100 + number, namespace, redirect)
        for copy in range(COPIES)
        for number, (title, namespace, redirect, text) in enumerate(PAGES)
    ]
    path.write_text(dump_xml(pages), encoding="utf-8")
    return path


def gone(process: psutil.Process) -> bool:
    """Ended: no such process any more, or a zombie that only waits to be reaped by whoever adopted it."""
    try:
        return process.status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


@pytest.mark.skipif(sys.platform == "win32", reason="kill -9 of a process tree as on POSIX")
def test_workers_end_within_seconds_of_a_killed_build(tmp_path: Path, perceptron_available: None) -> None:
    dumps = [big_dump(tmp_path / f"enwiki-20240101-pages-articles{n}.xml", 10_000_000 * n) for n in (1, 2)]
    code = (
        "import sys, wikipedia_ipc\n"
        "sys.exit(wikipedia_ipc.main(['build', *sys.argv[1:], '--configs', 'gold', '--workers', '2', '--quiet',"
        " '--tagger', 'perceptron']))"
    )
    command = [sys.executable, "-c", code, *map(str, dumps), "--output", str(tmp_path / "out")]
    environment = {**os.environ, "PYTHONPATH": str(ROOT)}
    build = subprocess.Popen(command, env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    parent = psutil.Process(build.pid)
    workers: list[psutil.Process] = []
    try:
        deadline = time.monotonic() + 120
        while len(workers) < 2:  # both workers are reading a dump (each dump is one task)
            assert build.poll() is None, build.stderr.read().decode() if build.stderr else ""
            assert time.monotonic() < deadline, "the build started no workers"
            workers = [child for child in parent.children(recursive=True) if not gone(child)]
            time.sleep(0.1)
        time.sleep(1.0)  # well into their dump ranges
        descendants = [child for child in parent.children(recursive=True) if not gone(child)]
        assert len(descendants) >= 2
        build.send_signal(signal.SIGKILL)
        build.wait(timeout=30)
        killed = time.monotonic()
        while not all(gone(child) for child in descendants) and time.monotonic() - killed < 5:
            time.sleep(0.05)
        left = [child.pid for child in descendants if not gone(child)]
        assert not left, f"worker processes {left} outlived the killed build by 5 s"
        assert time.monotonic() - killed < 2  # in practice within a few milliseconds
    finally:
        for child in workers + descendants if "descendants" in locals() else workers:
            if not gone(child):
                child.kill()
        if build.poll() is None:
            build.kill()
            build.wait()
        if build.stderr:
            build.stderr.close()
