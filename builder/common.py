"""Generic helpers every stage may use, and that use no other module of the toolkit:
an atomic text write, the lock of a folder, the error of a folder that cannot be written, plurals,
where the package's data files are, and a worker process's tie to the process that started it.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import ctypes
import importlib
import json
import multiprocessing
import os
import secrets
import signal
import sys
import threading
import types
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Protocol

__all__ = [
    "DATA",
    "FolderLock",
    "OutputError",
    "PACKAGE",
    "duckdb_connection",
    "exit_with_parent",
    "has_mark",
    "mark",
    "plural",
    "process_memory",
    "read_language_table",
    "smallest_labels",
    "sql_list",
    "sql_text",
    "write_atomic",
]

PACKAGE = Path(__file__).resolve().parent
DATA = PACKAGE / "data"  # the shipped tables and the sample dump
LOCK_FILE = ".wikipedia_ipc.lock"  # where a folder cannot be locked itself (Windows)


class OutputError(Exception):
    """The output folder cannot be written (or pushed) safely; the message names the path and why."""


def lazy_attributes(module: str, lazy: dict[str, str]) -> Callable[[str], object]:
    """A module's ``__getattr__`` that imports each name of ``lazy`` (name → its module) on first use, and keeps it:
    a light module can offer heavy names without loading them when it is imported."""

    def __getattr__(name: str) -> object:
        if name not in lazy:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(lazy[name]), name)
        setattr(sys.modules[module], name, value)
        return value

    return __getattr__


def write_atomic(path: Path, text: str) -> None:
    """Write a small file under a unique temporary name, flush it to disk, and rename it into place."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}-{secrets.token_hex(4)}.tmp")
    try:
        with temporary.open("x", encoding="utf-8") as stream:  # "x": a new file, with the umask's permissions
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def publish_files(moves: Iterable[tuple[Path, Path]], record: Path, text: str) -> None:
    """Finished files renamed into place, then the record that says they are complete, written atomically:
    whoever finds the record finds every file (a task found done is not run again)."""
    for partial, final in moves:
        partial.rename(final)
    write_atomic(record, text)


def read_language_table(path: str | Path, what: str, item: str) -> dict[str, list[object]]:
    """The entries per language of a shipped or user table, ``{"languages": {CODE: [ITEM, …]}}``, as lists;
    ValueError names the file and what is wrong with its shape (the callers check each entry)."""
    path = Path(path)
    try:
        table = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(f"{path}: cannot read the {what} ({error})") from None
    languages = table.get("languages") if isinstance(table, dict) else None
    if not isinstance(languages, dict):
        article = "an" if what[0] in "aeiou" else "a"
        raise ValueError(f'{path}: {article} {what} is {{"languages": {{CODE: [{item}, …]}}}}')
    for code, entries in languages.items():
        if not isinstance(entries, list):
            raise ValueError(f"{path}: languages.{code} must be a list of {item.lower()}s")
    return languages


def has_mark(folder: Path, marker: str, kind: str) -> bool:
    """Whether ``folder`` carries the toolkit's mark of ``kind`` (a JSON file ``marker`` that says so):
    the toolkit clears or deletes only folders it marked, never a user's look-alike."""
    path = folder / marker
    if path.is_symlink() or not path.is_file():
        return False
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return False
    return isinstance(record, dict) and record.get("wikipedia_ipc") == kind


def mark(folder: Path, marker: str, kind: str, **details: object) -> None:
    """Mark ``folder`` as the toolkit's own, of ``kind`` (see :func:`has_mark`)."""
    write_atomic(folder / marker, json.dumps({"wikipedia_ipc": kind, **details}) + "\n")


def process_memory() -> int:
    """Bytes the current process holds in memory (resident set), 0 where the system does not say."""
    try:
        with open("/proc/self/statm", encoding="ascii") as statm:  # Linux: pages, the second field resident
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError, AttributeError):
        pass
    try:
        import psutil  # elsewhere, if installed
    except ImportError:
        return 0
    return int(psutil.Process().memory_info().rss)


PR_SET_PDEATHSIG = 1  # prctl(2): the signal a Linux process gets when the thread that started it ends


SCRIPT_GUARD = (
    "a worker process of this build is importing the script that started it, and the script starts a build again: "
    'put the build under `if __name__ == "__main__":` (this platform starts workers by importing the script)'
)


def available_cores() -> int:
    """The cores this process may run on (its CPU affinity where the system says it, else the machine's), at least 1:
    a container or ``taskset`` may give a process fewer cores than ``os.cpu_count()`` counts."""
    if hasattr(os, "process_cpu_count"):  # Python 3.13
        cores = os.process_cpu_count()
    elif hasattr(os, "sched_getaffinity"):
        cores = len(os.sched_getaffinity(0))
    else:
        cores = os.cpu_count()
    return max(1, cores or 1)


def pool_size(workers: int, tasks: int | None = None) -> int:
    """How many processes (or threads) ``workers`` asks for are worth starting: no more than the tasks to run and
    the cores to run them on, at least 1. Only how many run at once changes, never what they compute."""
    size = min(workers, available_cores())
    if tasks is not None:
        size = min(size, tasks)
    return max(1, size)


def worker_pool(
    workers: int, fork_safe: bool, initializer: Callable[..., object] | None = None, initargs: tuple = ()
) -> concurrent.futures.ProcessPoolExecutor:
    """A pool of a build's worker processes that does not run the caller's script again in each worker, so that a
    build started from a script without ``if __name__ == "__main__":`` works as docs/building.md shows it.

    ``fork_safe``: the caller holds no threads (no DuckDB connection), so a fork is a copy of a quiet process: fork
    where the platform forks safely (not macOS). Otherwise a fork server (a fresh interpreter that imports the
    toolkit and forks the workers) or spawn, whose workers would import the caller's script to rebuild its
    ``__main__``: they are started at once, while ``__main__`` is a stand-in that names no script (a worker needs
    none: it runs the toolkit's functions only). An executor, not a ``Pool``: a worker that dies ends the build.
    No more processes than the cores (:func:`pool_size`): the caller bounds ``workers`` by its tasks.
    """
    workers = pool_size(workers)
    methods = multiprocessing.get_all_start_methods()
    if fork_safe and "fork" in methods and sys.platform != "darwin":
        context = multiprocessing.get_context("fork")
    elif "forkserver" in methods and _forkserver_fits():
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(["builder.engines.local"])  # the toolkit, not the default "__main__"
    else:
        context = multiprocessing.get_context("spawn")
    executor = concurrent.futures.ProcessPoolExecutor(
        workers, mp_context=context, initializer=initializer, initargs=initargs
    )
    if context.get_start_method() != "fork":
        main = sys.modules.get("__main__")
        sys.modules["__main__"] = types.ModuleType("__main__")  # no __file__, no __spec__: nothing to import
        try:
            started = [executor.submit(os.getpid) for _ in range(workers)]  # each submit starts a worker
        finally:
            if main is not None:
                sys.modules["__main__"] = main
        concurrent.futures.wait(started)
    return executor


# the longest path of a Unix socket (sun_path, with its NUL) on Linux; the fork server listens on one, made in
# multiprocessing's own temporary folder under TMPDIR
UNIX_SOCKET_PATH = 108


def _forkserver_fits() -> bool:
    """Whether the fork server's socket (``<TMPDIR>/pymp-XXXXXXXX/listener-XXXXXXXX``) has a path the system takes:
    under a long ``TMPDIR`` it has not, and the pool would fail to start; spawn needs no socket."""
    from multiprocessing import util

    return len(os.fsencode(util.get_temp_dir())) + len("/listener-XXXXXXXX") < UNIX_SOCKET_PATH


def refuse_in_bootstrap() -> None:
    """Stop a build at once where a spawned worker runs it while importing the caller's script (the worker is still
    bootstrapping, its ``__main__`` is ``__mp_main__``): it would lock the folder the build writes into, die, and be
    started again for ever."""
    bootstrapping = getattr(multiprocessing.current_process(), "_inheriting", False)  # as multiprocessing tells it
    if bootstrapping or getattr(sys.modules.get("__main__"), "__name__", "") == "__mp_main__":
        raise RuntimeError(SCRIPT_GUARD)


# optional libraries that ``import nltk`` loads when they are installed (nltk.metrics: SciPy; nltk.classify:
# scikit-learn, and with it pandas): about 250 MB that the toolkit's use of NLTK (tokenizers, the perceptron) never
# touches, in every process of a build that counts words or tags
NLTK_EXTRAS = ("scipy", "sklearn", "pandas")


@contextlib.contextmanager
def importing_nltk() -> Iterator[None]:
    """Import NLTK (the first time) with :data:`NLTK_EXTRAS` made unimportable, as where they are not installed;
    they stay importable for anything else afterwards. A process that loaded NLTK or them before is left alone."""
    if "nltk" in sys.modules:
        yield
        return
    blocked = [name for name in NLTK_EXTRAS if name not in sys.modules]
    for name in blocked:
        sys.modules[name] = None  # type: ignore[assignment]  # import raises ImportError, as if not installed
    try:
        yield
    finally:
        for name in blocked:
            if name in sys.modules and sys.modules[name] is None:
                del sys.modules[name]


def exit_with_parent() -> None:
    """In a worker process of :mod:`multiprocessing`: end at once when the process that started it dies.

    A build killed with ``kill -9`` cannot stop its workers, and a worker in the middle of a dump range
    would read on for minutes. On Linux the kernel kills the worker when its parent ends
    (``PR_SET_PDEATHSIG``, effective even while the worker runs C code); everywhere, a daemon thread waits
    on the pipe that ties the worker to its parent and ends the worker when the pipe closes.
    """
    parent = multiprocessing.parent_process()
    if parent is None:  # not started by multiprocessing: nothing to tie to
        return
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):  # no libc with prctl: the thread below remains
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if not parent.is_alive():  # it died before the tie was made
        os._exit(1)
    threading.Thread(target=_exit_when_gone, args=(parent,), name="exit-with-parent", daemon=True).start()


def _exit_when_gone(parent: multiprocessing.process.BaseProcess) -> None:
    parent.join()  # returns when the parent's end of the pipe closes: the parent is gone
    os._exit(1)


def plural(number: int, word: str) -> str:
    """``1 pair``, ``2 pairs``: a count with its noun, for the card and the build's summary."""
    return f"{number:,} {word if number == 1 else word + 's'}"


_HELD_LOCKS: set[int] = set()


def _close_locks_in_child() -> None:
    """Forked workers drop their copy of the lock: orphans of a killed build must not keep the folder locked."""
    for descriptor in _HELD_LOCKS:
        os.close(descriptor)
    _HELD_LOCKS.clear()


if hasattr(os, "register_at_fork"):  # POSIX; Windows starts workers fresh, with no copy of the lock
    os.register_at_fork(after_in_child=_close_locks_in_child)


class FolderLock:
    """An exclusive, non-blocking ``flock`` on the output folder itself: no lock file to leave behind.

    Where ``fcntl`` does not exist (Windows), the lock is ``msvcrt``'s on a file
    :data:`LOCK_FILE` inside the folder, which the operating system releases when the process ends.
    """

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._descriptor: int | None = None

    def __enter__(self) -> FolderLock:
        self.acquire()
        return self

    def __exit__(self, *exception: object) -> None:
        self.release()

    def acquire(self) -> None:
        try:
            import fcntl  # POSIX only: imported here so that the toolkit imports on every platform
        except ImportError:
            self._acquire_with_a_file()
            return
        try:
            descriptor = os.open(self.folder, os.O_RDONLY)
        except OSError as error:
            raise OutputError(f"{self.folder}: cannot open the folder to lock it ({error.strerror})") from None
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(descriptor)
            raise self._busy() from None
        self._descriptor = descriptor
        _HELD_LOCKS.add(descriptor)

    def _acquire_with_a_file(self) -> None:
        try:
            import msvcrt
        except ImportError:
            raise OutputError(
                f"{self.folder}: this platform has neither fcntl nor msvcrt, so the folder cannot be locked"
            ) from None
        try:
            descriptor = os.open(self.folder / LOCK_FILE, os.O_RDWR | os.O_CREAT)
        except OSError as error:
            raise OutputError(f"{self.folder}: cannot create its lock file ({error.strerror})") from None
        try:
            msvcrt.locking(descriptor, msvcrt.LK_NBLCK, 1)
        except OSError:
            os.close(descriptor)
            raise self._busy() from None
        self._descriptor = descriptor

    def _busy(self) -> OutputError:
        return OutputError(
            f"{self.folder}: another build is writing into this folder (it holds the folder's lock); "
            "wait for it to finish or choose another output folder"
        )

    def release(self) -> None:
        if self._descriptor is not None:
            _HELD_LOCKS.discard(self._descriptor)
            os.close(self._descriptor)  # closing the last descriptor of the lock releases it
            self._descriptor = None


def sql_text(value: str | os.PathLike) -> str:
    """A SQL string literal (a path, a name) for DuckDB: in quotes, its quotes doubled."""
    return "'" + str(value).replace("'", "''") + "'"


def sql_list(values: Iterable[str | os.PathLike]) -> str:
    """A SQL list of string literals (the files of a ``read_parquet``)."""
    return "[" + ", ".join(sql_text(value) for value in values) + "]"


class SqlTables(Protocol):
    """Tables of an engine that one SQL text makes on DuckDB and on Spark (the subset both dialects read)."""

    def table(self, name: str, query: str) -> None:
        """Make table ``name`` from ``query``."""

    def rows(self, query: str) -> list[tuple]:
        """A small result (counts), brought to Python."""


def smallest_labels(tables: SqlTables, links: str, name: str) -> str:
    """The components of the graph whose edges are the rows ``(a, b)`` of table ``links``, in the engine: every
    node is given its own label, then each round gives a node the smallest label of itself and its neighbours
    until no label changes. Returns the last round's table, ``(node, label, own)``: each linked node with the
    smallest node of its component. One table per round; the rounds grow with the longest path from a component's
    smallest node, not with the number of nodes, and only a count per round leaves the engine. Each round's table
    keeps a node's label of the round before (``own``), so that the count of changed labels reads that table alone
    (a join of two rounds was a shuffle, and on Spark several jobs, per round). (A shortcut through a label's own
    label would take fewer rounds, but a table joined with itself squares Spark's size estimate every round.)"""
    tables.table(
        f"{name}_0",
        f"SELECT DISTINCT node, node AS label, node AS own FROM (SELECT a AS node FROM {links} UNION ALL "
        f"SELECT b AS node FROM {links}) linked",
    )
    rounds = 0
    while True:
        last, rounds = f"{name}_{rounds}", rounds + 1
        tables.table(
            f"{name}_{rounds}",
            "SELECT node, min(label) AS label, min(own) AS own FROM ("
            f"SELECT node, label, label AS own FROM {last} UNION ALL "
            f"SELECT k.a AS node, l.label, NULL AS own FROM {links} k JOIN {last} l ON k.b = l.node UNION ALL "
            f"SELECT k.b AS node, l.label, NULL AS own FROM {links} k JOIN {last} l ON k.a = l.node) passed "
            "GROUP BY node",
        )
        ((changed,),) = tables.rows(f"SELECT count(*) FROM {name}_{rounds} WHERE label <> own")
        if not changed:
            return f"{name}_{rounds}"


def duckdb_connection(spill: Path, memory_limit: str, threads: int | None = None):  # noqa: ANN201
    """A DuckDB connection held to ``memory_limit`` that spills to ``spill`` (and uses ``threads`` threads): every
    table of a build that grows with its input lives in one such connection."""
    import duckdb

    connection = duckdb.connect()
    connection.execute(f"SET temp_directory = {sql_text(spill)}")
    if threads is not None:  # DuckDB refuses more threads than it can count; more than the cores only contend
        connection.execute(f"SET threads = {pool_size(threads)}")
    connection.execute(f"SET memory_limit = {sql_text(memory_limit)}")
    # DuckDB draws its own bar on standard output for a query of over two seconds, into whatever reads that output
    # (a pipe, a log, a benchmark's child reporting JSON); a build reports its progress itself, on standard error
    connection.execute("SET enable_progress_bar = false")
    return connection
