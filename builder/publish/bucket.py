"""A dataset folder on an object store (``s3://bucket/prefix``, any URL fsspec writes), published with the
local folder's promise and without a rename: a reader sees the old build or the new one, never a mix.

An object store has no rename and no folder lock, but every object appears whole when its upload ends, and
the card is the manifest every reader follows (``datasets`` loads the files its ``configs:`` name). So:

* **One build at a time.** A lock object (``.wikipedia_ipc-lock.json``) is created only if absent (S3's
  conditional ``If-None-Match`` write), and removed at the end. One left by a build killed on this host is
  taken over; another host's is refused, naming the object to delete if no build runs.
* **Staged beside the build.** The configs' parquet files (written by the executors themselves on a
  cluster), each ``funnel.json`` and the card go under a staging prefix with the toolkit's marker; the commit
  record comes last. The checks are the local folder's (:class:`builder.publish.publisher.Publisher` runs on a
  local mirror of the folder's card and records).
* **Switched by the card.** The parquet files are copied to their final names (new names: content hashes,
  unseen by the old card); then the old card is deleted, the funnels copied, and the new card copied last: its
  upload is the moment readers switch. A reader that starts from the card so finds the old build (its card, its
  funnels), no card (a build is being switched: said so, with the build that finishes it), or the new build;
  never a card beside the funnels of another build. The old build's files are deleted after it, then the staging
  prefix, its commit record and marker last.
* **Finished after a kill.** A staging prefix with a commit record is applied again by the next build (every
  step can be repeated); one without is removed.
* **Keys as written.** An output URL with an empty key part (``s3://b//x``, ``s3:///x``) is refused before the
  work: fsspec lists such keys under other names, and a card would name files left in the staging prefix. Before
  the commit, every file the card names must be listed in the staging prefix or kept in the folder.
* **No local leftovers.** The local mirror is a marked, locked temporary work folder (``wikipedia-ipc-bucket-…``):
  one left by a killed build is removed by the next build that starts, as work folders are.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import socket
import time
from pathlib import Path

from huggingface_hub.repocard import metadata_load

from builder.common import OutputError
from builder.publish.layout import (
    CARD,
    FORMAT,
    FUNNEL,
    MARKER,
    card_configs,
    card_manifest,
    funnel_manifest,
    is_output_file,
    is_plain_name,
)
from builder.publish.publisher import COMMIT_KEYS, COMMIT_RECORD, STAGING_PREFIX, STAGING_RECORD, Publisher
from builder.publish.workdir import TEMPORARY_PREFIX, WorkDir, temporary_work_folder
from builder.storage import StorageError, absent, filesystem, store_errors

__all__ = ["BucketFolder", "BucketLock", "BucketPublisher", "apply_bucket", "recover_bucket"]

LOCK_OBJECT = ".wikipedia_ipc-lock.json"
SCRATCH_PREFIX = TEMPORARY_PREFIX + "bucket-"  # local mirrors and copies of a bucket's records, swept as work folders


class BucketFolder:
    """A folder on an object store: names relative to its URL, and the few operations publishing needs."""

    def __init__(self, url: str) -> None:
        self.url = url.rstrip("/")
        scheme, _, inside = self.url.partition("://")
        if "//" in inside or inside.startswith("/") or not inside:
            plain = f"{scheme}://{'/'.join(part for part in inside.split('/') if part)}"
            raise OutputError(
                f"{url}: the folder's key has an empty part (a leading or doubled /): a store keeps such keys apart "
                f"from {plain}, and fsspec does not name them the same way when it lists them; give {plain}"
            )
        try:
            self.fs, root = filesystem(self.url)
        except StorageError as error:
            raise OutputError(str(error)) from None
        self.root = root.rstrip("/")

    def path(self, name: str = "") -> str:
        return f"{self.root}/{name}" if name else self.root

    def where(self, name: str = "") -> str:
        """A name as the user sees it: the folder's URL and the name."""
        return f"{self.url}/{name}" if name else self.url

    def entries(self, name: str = "") -> list[tuple[str, bool]]:
        """The folder's (or a sub-folder's) entries as ``(name, is a folder)``, freshly listed."""
        self.fs.invalidate_cache()
        try:
            listed = self.fs.ls(self.path(name), detail=True)
        except FileNotFoundError:
            return []
        prefix = self.path(name).rstrip("/") + "/"
        found = []
        for entry in listed:
            full = entry["name"].rstrip("/")
            if full.startswith(prefix):
                found.append((full[len(prefix) :], entry["type"] == "directory"))
        return sorted(found)

    def files_under(self, name: str) -> list[str]:
        """Every object under a sub-folder, as names relative to the folder."""
        self.fs.invalidate_cache()
        try:
            found = self.fs.find(self.path(name))
        except FileNotFoundError:
            return []
        return sorted(path[len(self.root) + 1 :] for path in found)

    def read(self, name: str) -> bytes | None:
        try:
            return self.fs.cat_file(self.path(name))
        except FileNotFoundError:
            return None

    def exists(self, name: str) -> bool:
        self.fs.invalidate_cache()
        return self.fs.exists(self.path(name))

    def put(self, name: str, data: bytes, only_if_absent: bool = False) -> None:
        """One upload: the object appears whole. ``only_if_absent``: refused (FileExistsError) if it exists."""
        if not only_if_absent:
            self.fs.pipe_file(self.path(name), data)
        elif "s3" in _protocols(self.fs):  # S3's conditional write: one of two racing writers wins
            self.fs.pipe_file(self.path(name), data, IfNoneMatch="*")
        elif self.exists(name):
            raise FileExistsError(self.where(name))
        else:
            self.fs.pipe_file(self.path(name), data)

    def upload(self, local: Path, name: str) -> None:
        self.fs.put_file(str(local), self.path(name))

    def copy(self, source: str, target: str) -> None:
        self.fs.copy(self.path(source), self.path(target))

    def move(self, source: str, target: str) -> None:
        """Copy, then remove the source: repeated after a kill, it finds the source gone and the target there."""
        if self.exists(source):
            self.copy(source, target)
            self.remove(source)

    def remove(self, name: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.fs.rm_file(self.path(name))


def _protocols(fs: object) -> tuple[str, ...]:
    protocol = getattr(fs, "protocol", ())
    return (protocol,) if isinstance(protocol, str) else tuple(protocol)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class BucketLock:
    """The folder's lock object: created only where none is, removed by its holder."""

    def __init__(self, folder: BucketFolder) -> None:
        self.folder = folder
        self.token = secrets.token_hex(8)
        self.held = False
        self.note: str | None = None

    def acquire(self) -> None:
        record = {MARKER: {"host": socket.gethostname(), "pid": os.getpid(), "since": time.time(), "id": self.token}}
        data = (json.dumps(record) + "\n").encode()
        for _ in range(2):
            try:
                self.folder.put(LOCK_OBJECT, data, only_if_absent=True)
            except FileExistsError:
                if not self._stale():
                    raise self._busy() from None
                self.folder.remove(LOCK_OBJECT)
                self.note = f"{self.folder.url}: took over the lock of a build that was killed on this host"
                continue
            except OSError as error:
                where = self.folder.where(LOCK_OBJECT)
                raise OutputError(f"{where}: cannot create the lock object ({error})") from None
            self.held = True
            return
        raise self._busy()

    def _holder(self) -> dict:
        try:
            holder = json.loads(self.folder.read(LOCK_OBJECT) or b"{}")[MARKER]
        except (json.JSONDecodeError, KeyError, TypeError, UnicodeDecodeError):
            return {}
        return holder if isinstance(holder, dict) else {}

    def _stale(self) -> bool:
        """A lock of this host whose process is gone: a killed build's."""
        holder = self._holder()
        pid = holder.get("pid")
        return holder.get("host") == socket.gethostname() and isinstance(pid, int) and not _alive(pid)

    def _busy(self) -> OutputError:
        holder = self._holder()
        since = holder.get("since")
        when = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(since)) if isinstance(since, (int, float)) else "?"
        return OutputError(
            f"{self.folder.url}: another build is writing into this folder (the lock object {LOCK_OBJECT} names "
            f"process {holder.get('pid', '?')} on {holder.get('host', '?')}, since {when}); wait for it to finish, "
            f"or, if no build runs, delete {self.folder.where(LOCK_OBJECT)}"
        )

    def release(self) -> None:
        if self.held and self._holder().get("id") == self.token:
            self.folder.remove(LOCK_OBJECT)
        self.held = False


def _is_ours(folder: BucketFolder, name: str) -> bool:
    """Whether the card or a funnel.json in the bucket is the toolkit's (read as a reader reads it)."""
    data = folder.read(name)
    if data is None:
        return False
    with temporary_work_folder(SCRATCH_PREFIX) as scratch:
        local = Path(scratch) / Path(name).name
        local.write_bytes(data)
        return (card_manifest(local) if local.name == CARD else funnel_manifest(local)) is not None


def _checked(commit: object, record: str) -> tuple[list[str], list[str], list[str]]:
    """A commit record's configs, set-aside and obsolete names, each a name the toolkit could have written."""
    if not isinstance(commit, dict) or not all(isinstance(commit.get(key), list) for key in COMMIT_KEYS):
        raise OutputError(f"{record}: not a commit record of the toolkit (lists {', '.join(COMMIT_KEYS)} expected)")
    configs = commit["configs"]
    for name in configs:
        if not is_plain_name(name):
            raise OutputError(f"{record}: the config {name!r} is not a plain name; refusing to publish by it")
    for kind in ("aside", "obsolete"):
        for entry in commit[kind]:
            parts = entry.split("/") if isinstance(entry, str) else []
            plain = len(parts) == 2 and is_plain_name(parts[0])
            fine = (
                entry == CARD
                if kind == "aside" and len(parts) == 1
                else plain and (parts[1] == FUNNEL or (kind == "obsolete" and is_output_file(parts[1])))
            )
            if not fine:
                raise OutputError(f"{record}: the {kind} path {entry!r} is not one the toolkit writes; refusing it")
    return configs, commit["aside"], commit["obsolete"]


def apply_bucket(folder: BucketFolder, staging: str) -> None:
    """Copy a committed staging prefix in, in the order that keeps every reader on one build; safe to repeat."""
    record = f"{staging}/{COMMIT_RECORD}"
    try:
        commit = json.loads(folder.read(record) or b"")
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise OutputError(f"{folder.where(record)}: not a readable commit record ({error})") from None
    configs, aside, obsolete = _checked(commit, folder.where(record))
    for name in aside:
        if folder.exists(name) and not _is_ours(folder, name):
            data = folder.read(name)
            target, number = f"{name}.orig", 1
            while folder.exists(target) and folder.read(target) != data:
                target, number = f"{name}.orig{number}", number + 1
            folder.put(target, data or b"")
    staged = folder.files_under(staging)
    for name in configs:
        for path in staged:
            parts = path.split("/")
            if len(parts) == 3 and parts[1] == name and is_output_file(parts[2]):
                folder.move(path, f"{name}/{parts[2]}")
    if folder.exists(f"{staging}/{CARD}"):  # the switch has not passed the card yet (a rerun after a kill may)
        folder.remove(CARD)  # no card names a funnel.json while the funnels change: old build, none, or new
    for name in configs:
        folder.move(f"{staging}/{name}/{FUNNEL}", f"{name}/{FUNNEL}")
    folder.move(f"{staging}/{CARD}", CARD)  # the moment readers switch to the new build
    for path in obsolete:
        if Path(path).name != FUNNEL or _is_ours(folder, path):
            folder.remove(path)
    remove_staging(folder, staging)


def remove_staging(folder: BucketFolder, staging: str) -> None:
    """Remove a staging prefix so that a kill leaves one still recognised: its files, the commit record, the
    marker last."""
    last = (f"{staging}/{COMMIT_RECORD}", f"{staging}/{STAGING_RECORD}")
    for path in folder.files_under(staging):
        if path not in last:
            folder.remove(path)
    for path in last:
        folder.remove(path)


def recover_bucket(folder: BucketFolder) -> list[str]:
    """Finish or discard what killed builds left in the bucket folder (under its lock); say what was done."""
    notes = []
    for name, is_folder in folder.entries():
        if not (is_folder and name.startswith(STAGING_PREFIX)):
            continue
        objects = folder.files_under(name)
        if f"{name}/{COMMIT_RECORD}" in objects:
            apply_bucket(folder, name)
            notes.append(f"{folder.url}: finished publishing a build interrupted while its files were copied in")
        elif f"{name}/{STAGING_RECORD}" in objects:
            remove_staging(folder, name)
            what = "the empty staging prefix" if objects == [f"{name}/{STAGING_RECORD}"] else "the unfinished files"
            notes.append(f"{folder.url}: removed {what} of an interrupted build ({name})")
    return notes


class BucketPublisher(Publisher):
    """:class:`Publisher` for a folder on an object store: the same checks, run on a local mirror of the folder's
    card and records (its parquet files as empty stand-ins), and the switch done by :func:`apply_bucket`."""

    def __init__(
        self, output: str, configs: list[str] | tuple[str, ...], overwrite: bool = False, keep_earlier: bool = True
    ) -> None:
        self.bucket = BucketFolder(output)
        self._work = WorkDir.temporary(SCRATCH_PREFIX)  # marked and locked: a killed build's is swept by the next
        self._scratch = self._work.path
        super().__init__(self._scratch / "mirror", configs, overwrite, keep_earlier)
        self.url = self.bucket.url
        self._bucket_lock = BucketLock(self.bucket)
        self.remote_staging: str | None = None
        self._remote_parts: set[str] = set()  # "config/file": written into the staging prefix by executors

    def open(self) -> BucketPublisher:
        refused: OutputError | None = None
        try:
            with store_errors(self.url):
                try:
                    return self._open()
                except OutputError as error:  # the toolkit's own refusal, said as it is
                    refused = error
        except StorageError as error:
            raise OutputError(str(error)) from None
        raise refused

    def _open(self) -> BucketPublisher:
        try:
            missing = absent(self.url + "/")
            if missing.startswith("the bucket"):  # a folder is made by its first object; a bucket is not
                raise OutputError(f"{self.url}: cannot publish there: {missing}")
            self._bucket_lock.acquire()
            self.notes += [self._bucket_lock.note] if self._bucket_lock.note else []
            self.notes += recover_bucket(self.bucket)
            self._mirror()
            try:
                super().open()
            except OutputError as error:  # the mirror's checks, said of the bucket folder
                raise OutputError(str(error).replace(str(self.output), self.url)) from None
            self.remote_staging = STAGING_PREFIX + secrets.token_hex(6)
            marker = {MARKER: {"format": FORMAT, "pid": os.getpid(), "host": socket.gethostname()}}
            self.bucket.put(f"{self.remote_staging}/{STAGING_RECORD}", (json.dumps(marker) + "\n").encode())
        except BaseException:
            self.close()
            raise
        return self

    def _mirror(self) -> None:
        """The bucket folder as the local checks see it: the card and funnels as they are, every other file empty."""
        mirror = self.output
        mirror.mkdir()
        card = self.bucket.read(CARD)
        for name, is_folder in self.bucket.entries():
            if name == LOCK_OBJECT or name.startswith(STAGING_PREFIX):
                continue
            if is_folder:
                (mirror / name).mkdir()
            else:
                (mirror / name).write_bytes(card if name == CARD and card is not None else b"")
        named = set(card_configs(mirror) or {}) if card is not None else set()
        for name in sorted((named | set(self.configs)) & {path.name for path in mirror.iterdir() if path.is_dir()}):
            for entry, is_folder in self.bucket.entries(name):
                local = mirror / name / entry
                if is_folder:
                    local.mkdir()
                elif entry == FUNNEL:
                    local.write_bytes(self.bucket.read(f"{name}/{entry}") or b"")
                else:
                    local.touch()

    def shard_folder(self, name: str) -> str:
        """The config's folder under the bucket's staging prefix: the executors upload their parts there."""
        assert self.remote_staging is not None
        return self.bucket.where(f"{self.remote_staging}/{name}")

    def add_config(self, name: str, record: dict[str, object], files: list | None = None) -> None:
        for file in files or []:
            if isinstance(file, str) and "://" in file:  # staged in the bucket: an empty stand-in for the checks
                stand_in = self.config_folder(name) / Path(file).name
                stand_in.touch()
                self._remote_parts.add(f"{name}/{stand_in.name}")
        super().add_config(name, record, files)

    def _switch(self, commit: dict[str, list[str]]) -> None:
        """Upload what the mirror staged (but the executors' parts, already there), the commit record last, and
        apply it in the bucket."""
        assert self.staging is not None and self.remote_staging is not None
        for path in sorted(self.staging.rglob("*")):
            relative = path.relative_to(self.staging).as_posix()
            if path.is_file() and relative not in (COMMIT_RECORD, STAGING_RECORD, *self._remote_parts):
                self.bucket.upload(path, f"{self.remote_staging}/{relative}")
        self._verify_remote(commit)
        self.bucket.put(f"{self.remote_staging}/{COMMIT_RECORD}", (json.dumps(commit, indent=2) + "\n").encode())
        staging, self.remote_staging = self.remote_staging, None
        apply_bucket(self.bucket, staging)
        shutil.rmtree(self.staging, ignore_errors=True)

    def _verify_remote(self, commit: dict[str, list[str]]) -> None:
        """Refuse to commit a card naming a file that is neither in the staging prefix, as the switch lists it, nor
        kept in the folder: the card names only files that are there once it is."""
        assert self.staging is not None and self.remote_staging is not None
        staged = {path.removeprefix(self.remote_staging + "/") for path in self.bucket.files_under(self.remote_staging)}
        kept = set(self.bucket.files_under("")) - set(commit["obsolete"])
        named = [CARD] + [
            f"{name}/{file}" for name, files in (card_configs(self.staging) or {}).items() for file in [*files, FUNNEL]
        ]
        missing = [path for path in named if path not in staged and path not in kept]
        if missing:
            raise OutputError(
                f"{self.bucket.where(self.remote_staging)}: the card would name {', '.join(missing[:3])}, which the "
                "store does not list there; refusing to publish a card whose files are missing"
            )

    def close(self) -> None:
        """Discard an uncommitted staging prefix and the mirror, and release the lock object."""
        if self.remote_staging is not None:
            with contextlib.suppress(OSError):  # what is left is removed by the next build
                remove_staging(self.bucket, self.remote_staging)
            self.remote_staging = None
        super().close()
        self._work.close()
        self._bucket_lock.release()


def publisher_for(output: str | Path, configs: list[str], overwrite: bool = False) -> Publisher:
    """The publisher of an output folder: a local folder's, or an object store's for a URL."""
    from builder.storage import is_url

    if is_url(output):
        return BucketPublisher(str(output), configs, overwrite)
    return Publisher(Path(output), configs, overwrite)


def card_data_files(url: str, config: str) -> dict[str, list[str]]:
    """A config's parquet URLs per split, as the folder's card names them: what ``datasets.load_dataset("parquet",
    data_files=…)`` reads. The card is the manifest: files beside it that it does not name (another build's, while
    it publishes) are never read."""
    folder = BucketFolder(url)
    data = folder.read(CARD)
    pending = [name for name, is_folder in folder.entries() if is_folder and name.startswith(STAGING_PREFIX)]
    if data is None and any(folder.exists(f"{name}/{COMMIT_RECORD}") for name in pending):
        raise OutputError(
            f"{folder.where(CARD)}: no dataset card: a build was stopped while it switched the folder to its files "
            f"(the card is taken away while the funnels change); the next build into {folder.url} finishes it"
        )
    if data is None:
        raise OutputError(f"{folder.where(CARD)}: no dataset card; not a Wikipedia-IPC build")
    with temporary_work_folder(SCRATCH_PREFIX) as scratch:
        card = Path(scratch) / CARD
        card.write_bytes(data)
        loadable = metadata_load(card).get("configs") or []
    for entry in loadable:
        if entry.get("config_name") == config:
            return {data["split"]: [folder.where(path) for path in data["path"]] for data in entry["data_files"]}
    names = ", ".join(str(entry.get("config_name")) for entry in loadable) or "none"
    raise OutputError(f"{folder.where(CARD)}: no loadable config {config!r} (the card names {names})")
