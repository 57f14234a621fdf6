"""Work folders: intermediate files in a folder the toolkit owns, never in a user's.

A build keeps its reference shards, candidates, tags and DuckDB's spill files in a
work folder: ``--work-dir DIR`` (kept, so that ``--resume`` can reuse the finished
dump parts) or a temporary folder (removed at the end). Either way the folder gets
the same rules as the output folder:

* **Ownership.** The toolkit marks a work folder it creates with ``MARKER`` and
  clears or deletes only folders that carry it. A non-empty folder without the mark
  is refused before anything is written into it: it may hold a user's files.
* **One build at a time.** A build holds an ``flock`` on its work folder while it
  runs; a second build given the same folder gets a clear "in use" error.
* **No orphans.** A build killed with ``kill -9`` cannot remove its temporary
  folder. The lock dies with the process, so the next build finds marked temporary
  folders that no one holds and removes them; unmarked look-alikes are left alone.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

from builder.common import FolderLock, OutputError, has_mark, mark

__all__ = ["WorkDir", "temporary_work_folder"]

MARKER = ".wikipedia_ipc-work.json"
TEMPORARY_PREFIX = "wikipedia-ipc-"
FORMAT = 1
WORK_FOLDER = "work folder"  # the kind its mark names


def is_work_folder(folder: Path) -> bool:
    """Whether the folder carries the toolkit's work-folder mark."""
    return has_mark(folder, MARKER, WORK_FOLDER)


def _mark(folder: Path) -> None:
    mark(folder, MARKER, WORK_FOLDER, format=FORMAT, pid=os.getpid())


def _lock(folder: Path) -> FolderLock:
    lock = FolderLock(folder)
    try:
        lock.acquire()
    except OutputError:
        raise OutputError(
            f"{folder}: the work folder is in use by another build (it holds the folder's lock); "
            "wait for it to finish or give another --work-dir"
        ) from None
    return lock


class WorkDir:
    """A locked work folder for one build; :meth:`close` releases it, and removes it when it was temporary."""

    def __init__(self, path: Path, lock: FolderLock, temporary: bool) -> None:
        self.path = path
        self.temporary = temporary
        self._lock = lock

    @classmethod
    def claim(cls, path: str | Path, resume: bool = False) -> WorkDir:
        """The user's ``--work-dir``: created and marked when new or empty, reused when marked, else refused."""
        folder = Path(path)
        if folder.exists() and not folder.is_dir():
            raise OutputError(f"{folder}: the work folder exists and is not a folder")
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise OutputError(f"{folder}: cannot create the work folder ({error.strerror})") from None
        lock = _lock(folder)
        try:
            if not is_work_folder(folder):
                if resume:
                    raise OutputError(
                        f"{folder}: not the work folder of an earlier build (no {MARKER}); --resume has nothing to "
                        "reuse there"
                    )
                entries = sorted(entry.name for entry in folder.iterdir())
                if entries:
                    shown = ", ".join(entries[:5]) + (", …" if len(entries) > 5 else "")
                    raise OutputError(
                        f"{folder}: not empty ({shown}) and not a Wikipedia-IPC work folder; refusing to write or "
                        "delete anything there. Give a new or empty folder as --work-dir"
                    )
                _mark(folder)
        except BaseException:
            lock.release()
            raise
        return cls(folder, lock, temporary=False)

    @classmethod
    def temporary(cls, prefix: str = TEMPORARY_PREFIX) -> WorkDir:
        """A new temporary work folder; orphans that killed builds left in the temporary directory go first."""
        remove_orphans()
        folder = Path(tempfile.mkdtemp(prefix=prefix))
        lock = _lock(folder)  # locked before it is marked: a marked folder without a lock is an orphan
        _mark(folder)
        return cls(folder, lock, temporary=True)

    def clear(self, *names: str) -> None:
        """Remove the named entries of an earlier build (the folder is the toolkit's: it carries the mark)."""
        for name in names:
            path = self.path / name
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink(missing_ok=True)

    def close(self) -> None:
        self._lock.release()
        if self.temporary:
            shutil.rmtree(self.path, ignore_errors=True)

    def __enter__(self) -> WorkDir:
        return self

    def __exit__(self, *exception: object) -> None:
        self.close()


def remove_orphans(prefix: str = TEMPORARY_PREFIX, directory: str | Path | None = None) -> list[Path]:
    """Remove marked temporary work folders whose build is gone (no process holds their lock); the ones removed."""
    removed = []
    for folder in sorted(Path(directory or tempfile.gettempdir()).glob(prefix + "*")):
        if folder.is_symlink() or not folder.is_dir() or not is_work_folder(folder):
            continue
        lock = FolderLock(folder)
        try:
            lock.acquire()
        except OutputError:
            continue  # a running build holds it
        try:
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
        finally:
            lock.release()
    return removed


@contextlib.contextmanager
def temporary_work_folder(prefix: str = TEMPORARY_PREFIX) -> Iterator[Path]:
    """A temporary work folder for a ``with`` block, cleaned up by the next build if this one is killed."""
    work = WorkDir.temporary(prefix)
    try:
        yield work.path
    finally:
        work.close()
