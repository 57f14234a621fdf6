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


WEB = ROOT / "tests" / "data" / "web"
CAPTIONS = ROOT / "tests" / "data" / "captions"


def _every_descendant_ends_with(build: subprocess.Popen, after: float) -> None:
    """Kill the build ``after`` seconds into its run, and check that every process it started (workers, the tagger
    check, a fork server) ends within seconds of it."""
    parent = psutil.Process(build.pid)
    time.sleep(after)
    descendants = [child for child in parent.children(recursive=True) if not gone(child)]
    build.send_signal(signal.SIGKILL)
    build.wait(timeout=30)
    killed = time.monotonic()
    try:
        while not all(gone(child) for child in descendants) and time.monotonic() - killed < 10:
            time.sleep(0.05)
        left = [(child.pid, " ".join(child.cmdline()[:4])) for child in descendants if not gone(child)]
        assert not left, f"{after} s into the build, processes outlived it by 10 s: {left}"
    finally:
        for child in descendants:
            if not gone(child):
                child.kill()


@pytest.mark.skipif(sys.platform == "win32", reason="kill -9 of a process tree as on POSIX")
@pytest.mark.parametrize(
    "inputs",
    [
        pytest.param([str(WEB), "--configs", "web", "references"], id="web"),
        pytest.param([str(CAPTIONS / "img2dataset" / "files"), "--configs", "captions"], id="dataset"),
        pytest.param([], id="wikipedia"),
    ],
)
def test_no_process_outlives_a_build_killed_at_any_instant(
    tmp_path: Path, inputs: list[str], perceptron_available: None
) -> None:
    """Killed while it checks its tagger, reads, groups or tags, a build of every kind leaves no process behind."""
    code = "import sys, wikipedia_ipc\nsys.exit(wikipedia_ipc.main(['build', *sys.argv[1:]]))"
    environment = {**os.environ, "PYTHONPATH": str(ROOT)}
    for number, after in enumerate((0.5, 1.5, 3.0)):
        options = ["--workers", "2", "--quiet", "--tagger", "perceptron", "--output", str(tmp_path / f"out{number}")]
        build = subprocess.Popen(
            [sys.executable, "-c", code, *inputs, *options],
            env=environment,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            cwd=tmp_path,
        )
        try:
            _every_descendant_ends_with(build, after)
        finally:
            if build.poll() is None:
                build.kill()
                build.wait()


def run_script(folder: Path, source: str) -> subprocess.CompletedProcess[str]:
    """A script as a user saves and runs it, from ``folder``, with the toolkit importable."""
    script = folder / "script.py"
    script.write_text(source, encoding="utf-8")
    environment = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, str(script)], cwd=folder, env=environment, capture_output=True, text=True, timeout=300
    )


def test_a_script_without_a_main_guard_builds_with_workers(tmp_path: Path, perceptron_available: None) -> None:
    """docs/building.md's Python example saved as a script, with no `if __name__ == "__main__":`: its workers do not run
    the script again (which locked the folder and restarted workers for ever), and the build ends with its pairs."""
    done = run_script(
        tmp_path,
        "from wikipedia_ipc import GOLD, SILVER, SAMPLE_DUMP, BuildOptions, build\n"
        "report = build([SAMPLE_DUMP], [GOLD, SILVER], 'api-ipc', BuildOptions(workers=2, tagger='perceptron',"
        " show_progress=False))\n"
        "print(report.rows)\n",
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "{'gold': 10, 'silver': 20}"
    assert "another build is writing" not in done.stderr
    assert not list((tmp_path / "api-ipc").glob(".wikipedia_ipc-staging-*"))


def test_a_spawned_worker_importing_a_build_script_is_stopped_at_once(tmp_path: Path) -> None:
    """Where a platform's workers import the caller's script (spawn), a build started by that import stops at once
    with a line saying what to do, instead of locking the folder and dying for ever."""
    done = run_script(
        tmp_path,
        "import multiprocessing, sys\n"
        "from builder.common import refuse_in_bootstrap\n"
        "try:\n"
        "    refuse_in_bootstrap()\n"
        "except RuntimeError as error:\n"
        "    print('refused:', error, flush=True)\n"
        "    sys.exit(0)\n"
        "if __name__ == '__main__':\n"
        "    child = multiprocessing.get_context('spawn').Process(target=print, args=('child ran',))\n"
        "    child.start()\n"
        "    child.join()\n",
    )
    assert done.returncode == 0
    assert done.stdout.count("refused:") == 1 and 'if __name__ == "__main__":' in done.stdout
