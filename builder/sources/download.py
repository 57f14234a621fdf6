"""``wikipedia_ipc.py download``: fetch a Wikimedia dump run and verify every file.

A dump run publishes ``<mirror>/<wiki>/<date>/dumpstatus.json``: per job its status and
its files with size, URL and SHA-1. The files of one job are downloaded into a folder
(``NAME.part`` first, in a partial folder the toolkit owns, resumed with HTTP ``Range``
after a broken connection), and a file gets its final name only once its SHA-1 is the one
that ``dumpstatus.json`` states, so a build never reads a truncated or corrupt dump.
``download.json`` in the folder records what was fetched; :func:`expand_dumps` turns such a
folder back into its dump files.

A mirror is not trusted to behave: no more bytes are read than ``dumpstatus.json`` states
(more mean a wrong file, refused at once), an attempt ends when the mirror stalls (no answer
within ``timeout`` seconds, or fewer than ``min_rate`` bytes per second over any ``timeout``
seconds), and the names it lists may not be the toolkit's own files. Of the folder, the
toolkit touches only what it wrote: ``download.json`` (recognised by its content), the
partial folder (recognised by its mark) and the files it verified.

Requests go through :mod:`builder.sources.mirror` (the standard library's ``urllib.request``).
"""

from __future__ import annotations

import dataclasses
import datetime
import hashlib
import http.client
import json
import os
import re
import sys
import threading
import time
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, TextIO

from tqdm import tqdm

from builder.common import LOCK_FILE, FolderLock, OutputError, has_mark, mark, write_atomic
from builder.sources.mirror import (
    CHUNK_SIZE,
    DownloadError,
    Network,
    NotFound,
    OfflineError,
    Transient,
    Watch,
    human_size,
    open_url,
    read_document,
    read_some,
    retrying,
)

__all__ = [
    "DEFAULT_MIRROR",
    "DEFAULT_PARALLEL",
    "DownloadError",
    "MAX_PARALLEL",
    "Network",
    "download",
    "expand_dumps",
    "human_size",
    "newest_download",
    "plan_download",
    "provenance",
]

DEFAULT_MIRROR = "https://dumps.wikimedia.org"
MANIFEST = "download.json"
MANIFEST_FORMAT = 1
WRITER = "wikipedia-ipc download"  # the manifest's mark: a download.json with another is a user's
# Partial files live in a folder of their own that carries the toolkit's mark, so that a user's
# NAME.part beside the dumps is never taken for a partial download, resumed or deleted.
PARTIAL = ".wikipedia_ipc-partial"
PARTIAL_MARKER = ".wikipedia_ipc-partial.json"
PARTIAL_KIND = "partial downloads"  # the kind its mark names
RESERVED = {MANIFEST: "download record", PARTIAL: "partial-download folder", LOCK_FILE: "lock file"}
# Wikimedia's dump servers allow each address only a few connections at a time and throttle or
# refuse more, so more parallel files would not be faster, only less polite.
MAX_PARALLEL = 3
DEFAULT_PARALLEL = 2
PROGRESS_INTERVAL = 10.0  # seconds between progress lines when stderr is not a terminal
JOBS = {
    ("articles", "bz2"): "articlesmultistreamdump",
    ("history", "bz2"): "metahistorybz2dump",
    ("history", "7z"): "metahistory7zdump",
}
_WIKI_NAME = re.compile(r"[a-z][a-z0-9_]*")
_DATE = re.compile(r"\d{8}")
_RUN_LINK = re.compile(r'href="(\d{8})/?"')
_SHA1 = re.compile(r"[0-9a-f]{40}")


class _Stopped(Exception):
    """Another file failed for good, or the user interrupted: the transfer stops, its ``.part`` stays."""


class _TooLong(DownloadError):
    """The mirror sends more bytes than ``dumpstatus.json`` states: a wrong file, not worth a retry."""


@dataclasses.dataclass(frozen=True)
class DumpFile:
    """One file of a dump job as ``dumpstatus.json`` lists it."""

    name: str
    size: int
    sha1: str
    url: str

    @property
    def role(self) -> str:
        """``index`` for a multistream index (read beside its dump, not as one), else ``dump``."""
        return "index" if "multistream-index" in self.name else "dump"


@dataclasses.dataclass(frozen=True)
class Plan:
    """What one download fetches: a job of one dump run, and from where."""

    wiki: str
    date: str
    kind: str
    compression: str
    job: str
    mirror: str
    updated: str
    files: tuple[DumpFile, ...]

    @property
    def size(self) -> int:
        return sum(file.size for file in self.files)


def natural_key(name: str) -> list[Any]:
    """Sort ``…multistream2.xml-p…`` before ``…multistream10.xml-p…``: numbers by value, the rest as text."""
    return [int(piece) if piece.isdigit() else piece for piece in re.split(r"(\d+)", name)]


def check_wiki(wiki: str) -> str:
    """A wiki's database name (``enwiki``), refused if it could reach outside ``<mirror>/<wiki>/``."""
    if not _WIKI_NAME.fullmatch(wiki):
        raise DownloadError(f"{wiki!r} is not a wiki's database name such as enwiki or dewiki")
    return wiki


def check_date(date: str) -> str:
    """``YYYYMMDD`` or ``latest``."""
    if date != "latest" and not _DATE.fullmatch(date):
        raise DownloadError(f"--date {date!r}: expected YYYYMMDD (e.g. 20240101) or latest")
    return date


def _read_status(mirror: str, wiki: str, date: str, network: Network) -> dict[str, Any]:
    """A run's ``dumpstatus.json``, checked to be a JSON object with ``jobs``."""
    url = f"{mirror}/{wiki}/{date}/dumpstatus.json"
    try:
        status = json.loads(read_document(url, network))
    except NotFound:
        raise DownloadError(
            f"{url}: not found: the mirror has no run {date} of {wiki}; --date latest picks one"
        ) from None
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise DownloadError(f"{url}: not a JSON document ({error})") from None
    if not isinstance(status, dict) or not isinstance(status.get("jobs"), dict):
        raise DownloadError(f"{url}: no 'jobs' object; is this a dump run's dumpstatus.json?")
    return status


def _job_status(status: dict[str, Any], job: str) -> str:
    entry = status["jobs"].get(job)
    if entry is None:
        return "missing"
    if not isinstance(entry, dict):
        return f"not an object but {json.dumps(entry)}"
    return str(entry.get("status", "without status"))


def latest_run(mirror: str, wiki: str, job: str, network: Network) -> tuple[str, dict[str, Any]]:
    """The newest run of ``wiki`` whose ``job`` is done, and its ``dumpstatus.json``.

    The wiki's folder is an HTML index with a link per run (``20240101/``); runs are tried
    newest first, and one still running, failed or without a status file is passed over.
    """
    listing = f"{mirror}/{wiki}/"
    dates = sorted(set(_RUN_LINK.findall(read_document(listing, network).decode("utf-8", "replace"))), reverse=True)
    if not dates:
        raise DownloadError(f"{listing}: lists no dump run (no link such as 20240101/)")
    passed = []
    for date in dates:
        try:
            status = _read_status(mirror, wiki, date, network)
        except OfflineError:
            raise
        except DownloadError:
            passed.append(f"{date} (no readable dumpstatus.json)")
            continue
        state = _job_status(status, job)
        if state == "done":
            return date, status
        passed.append(f"{date} ({state})")
    raise DownloadError(f"{listing}: no run has {job} done: {', '.join(passed)}")


def _job_files(status: dict[str, Any], job: str, where: str) -> tuple[tuple[DumpFile, ...], str]:
    """The files of a finished job, each with a size, a SHA-1 and a URL path; and when the job finished."""
    entry = status["jobs"].get(job)
    if entry is not None and not isinstance(entry, dict):
        raise DownloadError(
            f"{where}: jobs.{job} is {json.dumps(entry)}, not an object with a status and files; "
            "is this a dump run's dumpstatus.json?"
        )
    state = _job_status(status, job)
    if state != "done":
        jobs = ", ".join(sorted(status["jobs"]))
        detail = f"; the run has {jobs}" if state == "missing" else ""
        raise DownloadError(f"{where}: job {job} is {state}, not done{detail}; try another --date, or latest")
    files = entry.get("files")
    if not isinstance(files, dict) or not files:
        raise DownloadError(f"{where}: job {job} is done but lists no files")
    listed = []
    for name, details in files.items():
        _check_name(name, f"{where}: job {job}")
        if not isinstance(details, dict):
            raise DownloadError(f"{where}: {name} is {json.dumps(details)}, not an object with size, url and sha1")
        size, sha1, url = details.get("size"), details.get("sha1"), details.get("url")
        if not isinstance(size, int) or isinstance(size, bool) or size < 0:
            raise DownloadError(f"{where}: {name} has the size {json.dumps(size)}, not a number of bytes")
        if not isinstance(url, str) or not url.startswith("/"):
            raise DownloadError(f"{where}: {name} has the url {json.dumps(url)}, not a path on the mirror")
        if not isinstance(sha1, str) or not _SHA1.fullmatch(sha1):
            raise DownloadError(f"{where}: {name} has no SHA-1, so it could not be verified")
        listed.append(DumpFile(name, size, sha1, url))
    return tuple(sorted(listed, key=lambda file: natural_key(file.name))), str(entry.get("updated", ""))


def _check_name(name: Any, where: str) -> None:
    """A listed file name must be a plain name of this folder that is not one of the toolkit's own files."""
    if (
        not isinstance(name, str)
        or name in ("", ".", "..")
        or "/" in name
        or "\\" in name
        or any(ord(character) < 32 or ord(character) == 127 for character in name)
    ):
        raise DownloadError(f"{where} lists a file name that is not a plain name: {name!r}")
    if name in RESERVED or name.endswith(".part"):
        own = RESERVED.get(name, "partial downloads (NAME.part)")
        raise DownloadError(
            f"{where} lists a file named {name!r}, the name of the toolkit's own {own}; "
            "a dump run has no such file, so this one is refused"
        )


def plan_download(
    wiki: str,
    date: str = "latest",
    kind: str = "articles",
    compression: str = "bz2",
    mirror: str = DEFAULT_MIRROR,
    network: Network | None = None,
) -> Plan:
    """Read the run's ``dumpstatus.json`` (for ``latest``: of the newest run whose job is done) into a plan."""
    network = network or Network()
    check_wiki(wiki)
    check_date(date)
    job = JOBS.get((kind, compression))
    if job is None:
        raise DownloadError(f"--kind {kind} --format {compression}: not published; 7z is only for --kind history")
    if not mirror.startswith(("http://", "https://")):
        raise DownloadError(f"--mirror {mirror!r}: expected an http:// or https:// URL, e.g. {DEFAULT_MIRROR}")
    mirror = mirror.rstrip("/")
    if date == "latest":
        date, status = latest_run(mirror, wiki, job, network)
    else:
        status = _read_status(mirror, wiki, date, network)
    where = f"{mirror}/{wiki}/{date}/dumpstatus.json"
    files, updated = _job_files(status, job, where)
    return Plan(wiki, date, kind, compression, job, mirror, updated, files)


class _Progress:
    """Bytes in place over all files: a tqdm bar on a terminal, else a plain line every ``interval`` seconds."""

    def __init__(self, total: int, show: bool, stream: TextIO, interval: float = PROGRESS_INTERVAL) -> None:
        self.total = total
        self.done = 0
        self.show = show
        self.stream = stream
        self.interval = interval
        self._lock = threading.Lock()
        self._last = time.monotonic()
        terminal = show and stream.isatty()
        self._bar = tqdm(total=total, unit="B", unit_scale=True, desc="download", file=stream) if terminal else None

    def add(self, count: int) -> None:
        with self._lock:
            self.done += count
            if self._bar is not None:
                self._bar.update(count)
            elif self.show and time.monotonic() - self._last >= self.interval:
                self._last = time.monotonic()
                share = 100 * self.done / self.total if self.total else 100.0
                print(
                    f"downloaded {human_size(self.done)} of {human_size(self.total)} ({share:.0f}%)", file=self.stream
                )

    def note(self, text: str) -> None:
        """A message that does not tear the bar."""
        with self._lock:
            if self._bar is not None:
                self._bar.write(text, file=self.stream)
            else:
                print(text, file=self.stream)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()


def _sha1_of(path: Path) -> Any:
    """The SHA-1 object of the file's bytes, to be fed further or read."""
    digest = hashlib.sha1()
    with path.open("rb") as stream:
        while block := stream.read(CHUNK_SIZE):
            digest.update(block)
    return digest


def _transfer(
    file: DumpFile, url: str, part: Path, network: Network, progress: _Progress, stop: threading.Event
) -> str:
    """Bring ``part`` to the length of the file, resuming what it holds; the SHA-1 of what it then holds.

    Never more than the stated size is read: a body announced or found longer is a wrong
    file, refused at once (:class:`_TooLong`), so that no mirror can fill the disk.
    """
    digest = _sha1_of(part) if part.exists() else hashlib.sha1()
    have = part.stat().st_size if part.exists() else 0
    progress.add(have)
    too_long = (
        f"{file.name}: {url} sends more than the {file.size:,} bytes dumpstatus.json states: a wrong file, "
        "refused and not kept"
    )

    def fetch() -> None:
        nonlocal digest, have
        if have >= file.size:  # complete, or longer than it should be (verification will say)
            return
        with Watch(network) as watch, open_url(url, network, watch, start=have) as response:
            if have and response.status != 206:  # the server ignored Range: the body is the whole file
                progress.add(-have)
                have, digest = 0, hashlib.sha1()
            if response.length is not None and response.length > file.size - have:
                raise _TooLong(too_long)
            with part.open("ab" if have else "wb") as stream:
                while have < file.size and (chunk := read_some(response, watch, min(CHUNK_SIZE, file.size - have))):
                    if stop.is_set():
                        raise _Stopped
                    stream.write(chunk)
                    digest.update(chunk)
                    have += len(chunk)
                    progress.add(len(chunk))
            if response.length:  # http.client ends a body cut short without an error; what is left says so
                raise Transient(f"the connection closed {response.length:,} bytes before the end")
            if have < file.size:  # no Content-Length, and the body ended early: resume from here
                raise Transient(f"the body ended {file.size - have:,} bytes before the stated size")
            if response.length is None and _more_follows(response, watch):
                raise _TooLong(too_long)

    retrying(f"{file.name} from {url}", network, fetch, progress.note)
    return digest.hexdigest()


def _more_follows(response: http.client.HTTPResponse, watch: Watch) -> bool:
    """Whether a body of unknown length goes on past the stated size (one byte is enough to know).

    A mirror that neither ends the body nor sends more is ended by the watch; the bytes
    already in are then judged by their SHA-1.
    """
    try:
        return bool(read_some(response, watch, 1))
    except Transient:
        return False


@dataclasses.dataclass(frozen=True)
class Fetched:
    """A file in place under its final name, with the SHA-1 it was verified against."""

    file: DumpFile
    verified: str  # when (UTC, ISO 8601)


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def fetch_file(
    file: DumpFile,
    mirror: str,
    folder: Path,
    network: Network,
    progress: _Progress,
    stop: threading.Event,
    partials: Path | None = None,
) -> Fetched:
    """Download one file to ``folder`` and verify it; a mismatch is fetched once more from scratch, then refused.

    The bytes go to ``NAME.part`` in ``partials`` (the toolkit's partial folder); only a
    file whose size and SHA-1 are those of ``dumpstatus.json`` is renamed to ``NAME``, so a
    refused file never has the final name.
    """
    partials = partials or _partial_folder(folder)
    try:
        return _fetch_and_verify(file, mirror + file.url, folder / file.name, partials, network, progress, stop)
    except OSError as error:  # network errors are DownloadError by now: this is the disk
        raise DownloadError(f"{folder}: cannot write {file.name} ({error.strerror or error})") from None


def _fetch_and_verify(
    file: DumpFile,
    url: str,
    final: Path,
    partials: Path,
    network: Network,
    progress: _Progress,
    stop: threading.Event,
) -> Fetched:
    if final.is_symlink() or final.exists():
        if final.is_symlink() or not final.is_file():
            raise DownloadError(f"{final}: already there and not a file; it is left as it is: move it away")
        size = final.stat().st_size
        sha1 = _sha1_of(final).hexdigest() if size == file.size else "(not computed)"
        if size == file.size and sha1 == file.sha1:
            progress.add(size)
            progress.note(f"{file.name}: already complete (SHA-1 matches), skipped")
            return Fetched(file, _now())
        raise DownloadError(
            f"{final}: already there with {size:,} bytes and SHA-1 {sha1}, but dumpstatus.json says {file.size:,} "
            f"bytes and SHA-1 {file.sha1}; it is left as it is: move it away and run again"
        )
    part = partials / (final.name + ".part")
    for attempt in (1, 2):
        try:
            sha1 = _transfer(file, url, part, network, progress, stop)
        except _TooLong:
            if part.exists():
                progress.add(-part.stat().st_size)
                part.unlink()
            raise
        size = part.stat().st_size
        if size == file.size and sha1 == file.sha1:
            os.replace(part, final)
            return Fetched(file, _now())
        progress.add(-size)
        part.unlink()
        found = f"SHA-1 {sha1}" + (f" ({size:,} bytes, not {file.size:,})" if size != file.size else "")
        if attempt == 1:
            progress.note(f"{file.name}: {found}, not {file.sha1}; downloading it again from scratch")
    raise DownloadError(
        f"{file.name}: downloaded twice from {url}, and twice it did not verify: {found}, but dumpstatus.json "
        f"says SHA-1 {file.sha1}; the file is refused and nothing of it is kept"
    )


def _is_partial_folder(path: Path) -> bool:
    return not path.is_symlink() and path.is_dir() and has_mark(path, PARTIAL_MARKER, PARTIAL_KIND)


def _partial_folder(folder: Path) -> Path:
    """The folder of partial downloads: created with the toolkit's mark, or refused if it lacks the mark."""
    path = folder / PARTIAL
    if path.is_symlink() or path.exists():
        if not _is_partial_folder(path):
            raise DownloadError(
                f"{path}: not a folder of partial downloads this toolkit wrote (no {PARTIAL_MARKER} in it); "
                "it is left as it is: move it away, or download into another --output"
            )
        return path
    path.mkdir()
    mark(path, PARTIAL_MARKER, PARTIAL_KIND, format=MANIFEST_FORMAT, written_by=WRITER)
    return path


def _remove_partial_folder(path: Path) -> None:
    """Remove the partial folder once it holds nothing but its mark (a user's file in it keeps it)."""
    if not _is_partial_folder(path) or any(entry.name != PARTIAL_MARKER for entry in path.iterdir()):
        return
    (path / PARTIAL_MARKER).unlink()
    path.rmdir()


def _is_own_manifest(record: Any) -> bool:
    """A download.json this toolkit wrote: marked (or, before the mark, of the manifest's exact shape)."""
    if not isinstance(record, dict) or record.get("format") != MANIFEST_FORMAT:
        return False
    if record.get("written_by") == WRITER:
        return True
    shape = {"format", "wiki", "date", "kind", "compression", "job", "job_updated", "mirror", "files"}
    return set(record) == shape and isinstance(record["files"], list)


def check_folder(plan: Plan, folder: Path) -> None:
    """Refuse, before any transfer, a folder whose ``download.json`` is a user's or another run's."""
    path = folder / MANIFEST
    if not (path.is_symlink() or path.exists()):
        return
    try:
        record = json.loads(path.read_text(encoding="utf-8")) if path.is_file() and not path.is_symlink() else None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        record = None
    if not _is_own_manifest(record):
        raise DownloadError(
            f"{path}: not a download record this toolkit wrote; it is left as it is: move it away, "
            "or download into another --output"
        )
    ours = (plan.wiki, plan.date, plan.job)
    theirs = (record.get("wiki"), record.get("date"), record.get("job"))
    if theirs != ours:
        raise DownloadError(
            f"{path}: records the download of {' '.join(map(str, theirs))}, not {' '.join(ours)}; "
            "download into another --output"
        )


def manifest_record(plan: Plan, fetched: Sequence[Fetched]) -> dict[str, Any]:
    """``download.json``: the run, the job, the mirror, and every file with its size and verified SHA-1."""
    return {
        "format": MANIFEST_FORMAT,
        "written_by": WRITER,
        "wiki": plan.wiki,
        "date": plan.date,
        "kind": plan.kind,
        "compression": plan.compression,
        "job": plan.job,
        "job_updated": plan.updated,
        "mirror": plan.mirror,
        "files": [
            {
                "name": item.file.name,
                "role": item.file.role,
                "size": item.file.size,
                "sha1": item.file.sha1,
                "verified": item.verified,
            }
            for item in fetched
        ],
    }


def download(
    plan: Plan,
    folder: str | os.PathLike[str],
    parallel: int = DEFAULT_PARALLEL,
    network: Network | None = None,
    show_progress: bool = True,
    stream: TextIO | None = None,
) -> dict[str, Any]:
    """Fetch and verify every file of the plan into ``folder``, then write ``download.json`` there.

    At most ``parallel`` files are fetched at a time. Files that do not verify are
    reported together at the end (:class:`DownloadError`) and no manifest is written;
    the others keep their final names, so a second run fetches only what is missing.
    """
    if not 1 <= parallel <= MAX_PARALLEL:
        raise DownloadError(
            f"--parallel {parallel}: 1 to {MAX_PARALLEL} files at a time; Wikimedia's dump servers allow each "
            "address only a few connections"
        )
    network = network or Network()
    stream = stream or sys.stderr
    folder = Path(folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise DownloadError(f"{folder}: cannot create the folder ({error.strerror})") from None
    lock = FolderLock(folder)
    try:
        lock.acquire()
    except OutputError:
        raise DownloadError(f"{folder}: another download is writing into this folder; wait for it to finish") from None
    try:
        check_folder(plan, folder)
        partials = _partial_folder(folder)
        try:
            return _download_locked(plan, folder, partials, parallel, network, show_progress, stream)
        finally:
            _remove_partial_folder(partials)  # only when no partial download is left in it
    except OSError as error:
        raise DownloadError(f"{folder}: cannot write ({error.strerror or error})") from None
    finally:
        lock.release()


def _download_locked(
    plan: Plan, folder: Path, partials: Path, parallel: int, network: Network, show_progress: bool, stream: TextIO
) -> dict[str, Any]:
    progress = _Progress(plan.size, show_progress, stream)
    stop = threading.Event()
    failures: list[str] = []
    fetched: dict[str, Fetched] = {}
    try:
        with ThreadPoolExecutor(max_workers=parallel, thread_name_prefix="download") as pool:
            futures: list[Future[Fetched]] = [
                pool.submit(fetch_file, file, plan.mirror, folder, network, progress, stop, partials)
                for file in plan.files
            ]
            try:
                for future in futures:
                    try:
                        item = future.result()
                    except DownloadError as error:
                        if isinstance(error, OfflineError):
                            raise
                        failures.append(str(error))
                    else:
                        fetched[item.file.name] = item
            except BaseException:  # offline, or interrupted: the other transfers stop soon, keeping their .part
                stop.set()
                for waiting in futures:
                    waiting.cancel()
                raise
    finally:
        progress.close()
    if failures:
        raise DownloadError("\n".join(failures))
    record = manifest_record(plan, [fetched[file.name] for file in plan.files])
    try:
        write_atomic(folder / MANIFEST, json.dumps(record, indent=2, ensure_ascii=False) + "\n")
    except OSError as error:
        raise DownloadError(f"{folder / MANIFEST}: cannot write ({error.strerror or error})") from None
    return record


def read_manifest(folder: str | os.PathLike[str]) -> dict[str, Any]:
    """The ``download.json`` of a download folder, checked to list files with names and sizes."""
    path = Path(folder) / MANIFEST
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DownloadError(f"{path}: not found; {folder} is not a folder written by download") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise DownloadError(f"{path}: cannot be read ({error})") from None
    files = record.get("files") if isinstance(record, dict) else None
    if not isinstance(files, list) or not all(
        isinstance(entry, dict)
        and isinstance(entry.get("name"), str)
        and Path(entry["name"]).name == entry["name"]
        and isinstance(entry.get("size"), int)
        for entry in files
    ):
        raise DownloadError(f"{path}: not a download manifest (no list of files with name and size)")
    return record


def manifest_dumps(folder: str | os.PathLike[str]) -> tuple[list[Path], dict[str, Any]]:
    """The dump files of a download folder, in order, and its manifest.

    Every listed file (index files too, which the build reads beside their dumps) must be
    there with its recorded size; the SHA-1 was checked when it was downloaded.
    """
    folder = Path(folder)
    record = read_manifest(folder)
    dumps = []
    for entry in record["files"]:
        path = folder / entry["name"]
        if not path.is_file():
            raise DownloadError(f"{path}: listed in {folder / MANIFEST} but missing; run download again")
        if path.stat().st_size != entry["size"]:
            raise DownloadError(
                f"{path}: {path.stat().st_size:,} bytes, but {folder / MANIFEST} says {entry['size']:,}; "
                "run download again"
            )
        if entry.get("role", "dump") == "dump":
            dumps.append(path)
    if not dumps:
        raise DownloadError(f"{folder / MANIFEST}: lists no dump file")
    return dumps, record


def provenance(dump: str | os.PathLike[str]) -> dict[str, Any] | None:
    """Where a dump of a download folder came from, for the dataset card: the wiki, the run, the mirror
    and the SHA-1 verified when it was downloaded. None for a file no download manifest vouches for
    (none beside it, or one that lists it with another size)."""
    path = Path(dump)
    if not (path.parent / MANIFEST).is_file():
        return None
    try:
        record = read_manifest(path.parent)
    except DownloadError:
        return None
    for entry in record["files"]:
        if entry["name"] == path.name and entry["size"] == path.stat().st_size:
            return {
                "wiki": record.get("wiki"),
                "run": record.get("date"),
                "mirror": record.get("mirror"),
                "sha1": entry.get("sha1"),
                "verified": entry.get("verified"),
            }
    return None


def newest_download(wiki: str, folder: str | os.PathLike[str] = "dumps") -> Path:
    """The newest run of ``wiki`` that ``download`` finished in ``folder`` (``dumps/WIKI-DATE/``, with its
    ``download.json``), for a script that builds what was downloaded last: finding none is a ValueError that names
    the folder and what to run, where ``max()`` over an empty glob said only "empty sequence"."""
    check_wiki(wiki)
    folder = Path(folder)
    runs = sorted(path for path in folder.glob(f"{wiki}-*") if _DATE.fullmatch(path.name[len(wiki) + 1 :]))
    finished = [run for run in runs if (run / MANIFEST).is_file()]
    if finished:
        return finished[-1]
    stopped = f" ({runs[-1].name} has no {MANIFEST}: its download stopped before the end)" if runs else ""
    raise ValueError(
        f"no finished download of {wiki} in {folder.resolve()}{stopped}: `python wikipedia_ipc.py download {wiki}` "
        "downloads one (or resumes it) into dumps/ of the folder it runs in; or give build() the paths of dumps "
        "(wikipedia_ipc.SAMPLE_DUMP is the sample that ships)"
    )


def expand_dumps(paths: Sequence[str | os.PathLike[str]]) -> list[str]:
    """The dump arguments of a build, with each download folder (one holding ``download.json``) expanded."""
    expanded = []
    for path in paths:
        if Path(path).is_dir() and (Path(path) / MANIFEST).exists():
            expanded.extend(str(dump) for dump in manifest_dumps(path)[0])
        else:
            expanded.append(str(path))
    return expanded
