"""The Hub-ready dataset folder (step 9's pairs, written out), published so that a build never loses a user's data.

``OUT/README.md`` is the dataset card (rendered from ``dataset_card.md``) whose
YAML ``configs:`` names every config with pairs, file by file;
``OUT/<config>/{train,validation,test}-*.parquet`` hold the pairs of each split
(:mod:`builder.publish.splits`; one ``train`` split when splits are off) and ``OUT/<config>/funnel.json``
the Table 3 counts and how the config was built. ``datasets.load_dataset(OUT, config)``
reads it offline.

How the folder is kept safe:

* **Ownership.** The card's YAML and every ``funnel.json`` carry a ``wikipedia_ipc``
  entry listing the files the toolkit wrote. Only those are ever replaced or
  deleted; a non-empty folder without such a card is refused unless the user
  allows it (``overwrite``), and even then no file of theirs is deleted: one that
  sits where the toolkit must write (``README.md``, ``<config>/funnel.json``) is
  renamed ``<name>.orig``. The configs are those the card's entry names (a copy
  ``gold-backup/`` with a ``funnel.json`` is the user's), each in the folder of its
  name. Every name read from these records (and from a commit record) must be a
  plain file or config name inside the folder, or the build stops naming the record.
* **Atomic publishing.** A build writes its configs and card into a hidden staging
  folder inside the output (same file system; marked by ``staging.json``, so that a
  user's folder of a similar name is left alone), checks that the card names each
  config once and only files that will be there, writes a commit record when all
  of it is complete, and only then moves the files in. The parquet names are new
  (they carry a hash of their content), so the old build stays readable until the
  card is replaced by an atomic rename, the last move and the one point where the folder
  turns into the new build; the configs' ``funnel.json`` move just before it, and the
  deletion of the old build's files follows. The card and every ``funnel.json`` carry the
  build's id (:func:`build_id`), so a funnel.json moved in before a kill, beside the old card,
  is recognised as an unfinished publish by every reader. An interrupted build leaves the
  old build intact; a staging folder left by a killed build is rolled forward (committed) or discarded (not committed)
  by the next build, and by any reader that locks the folder (``push``, the scorer)
  before it reads. A build that fails in a folder it created removes that folder again
  while it is empty.
* **One build at a time.** The output folder is locked (``flock`` on the folder)
  from before the first dump is read to the end of the build.
* **Reload after rebuild.** ``datasets`` keys its cache of a local folder on the
  card's ``data_files`` patterns, not on the files' contents; content-hashed file
  names listed in the card make every rebuilt folder a new cache entry.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
import warnings
from collections.abc import Iterable, Sequence
from pathlib import Path

from huggingface_hub.repocard import metadata_load

from builder.common import FolderLock, OutputError, write_atomic
from builder.publish.card import render_card
from builder.publish.layout import (
    BUILD,
    CARD,
    FORMAT,
    FUNNEL,
    MARKER,
    card_configs,
    card_manifest,
    config_folder,
    config_record,
    funnel_manifest,
    is_output_file,
    is_plain_name,
    manifest_files,
    refusal,
)
from builder.publish.writer import PairWriter
from builder.storage import name_of

__all__ = ["Publisher", "build_id", "published_files", "recover"]


STAGING_PREFIX = ".wikipedia_ipc-staging-"
COMMIT_RECORD = "publish.json"
COMMIT_KEYS = ("configs", "aside", "obsolete")
STAGING_RECORD = "staging.json"  # the marker of a staging folder the toolkit made


def write_funnel(
    folder: Path, record: dict[str, object], files: Sequence[Path | str], build: str | None = None
) -> dict[str, object]:
    """``funnel.json``: the Table 3 rows, how the config was built, the files the toolkit wrote and the build's id."""
    marker: dict[str, object] = {"format": FORMAT, "files": [name_of(path) for path in files]}
    if build is not None:
        marker[BUILD] = build
    text = json.dumps({**record, MARKER: marker}, indent=2, ensure_ascii=False) + "\n"
    write_atomic(folder / FUNNEL, text)
    return json.loads(text)  # as a reader of funnel.json sees it, so that the card says the same


def build_id(records: Iterable[dict]) -> str:
    """A build's id: 16 hex digits of a hash of its configs' records, parquet file names (content hashes) included.

    Builds with equal ids hold the same pairs with the same records; the id is the same for the local and the
    Spark engine, and for a rebuild of the same dumps with the same versions and parameters.
    """
    digest = hashlib.blake2b(digest_size=8)
    for record in sorted(records, key=lambda record: str(record["config"])):
        marker = {key: value for key, value in record[MARKER].items() if key != BUILD}
        canonical = json.dumps({**record, MARKER: marker}, sort_keys=True, ensure_ascii=False)
        digest.update(canonical.encode("utf-8") + b"\0")
    return digest.hexdigest()


def _aside_name(path: Path) -> Path:
    candidate = path.with_name(path.name + ".orig")
    number = 1
    while candidate.exists():
        candidate = path.with_name(f"{path.name}.orig{number}")
        number += 1
    return candidate


def _is_ours(path: Path) -> bool:
    if path.name == CARD:
        return card_manifest(path) is not None
    return funnel_manifest(path) is not None


def _new_staging(output: Path) -> Path:
    """A staging folder with the toolkit's marker: only such folders (or committed ones) are ever removed."""
    staging = Path(tempfile.mkdtemp(prefix=STAGING_PREFIX, dir=output))
    marker = {MARKER: {"format": FORMAT, "pid": os.getpid()}}
    write_atomic(staging / STAGING_RECORD, json.dumps(marker) + "\n")
    return staging


def _commit_record(staging: Path) -> dict | None:
    """A staging folder's commit record, None if it has none; one that is not the toolkit's is an error."""
    path = staging / COMMIT_RECORD
    if not path.is_file():
        return None
    try:
        commit = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise OutputError(f"{path}: not a readable commit record ({error})") from None
    if not isinstance(commit, dict) or not all(isinstance(commit.get(key), list) for key in COMMIT_KEYS):
        raise OutputError(f"{path}: not a commit record of the toolkit (lists {', '.join(COMMIT_KEYS)} expected)")
    return commit


def _is_staging(path: Path) -> bool:
    """A staging folder the toolkit made (its marker, or a commit record); a user's namesake is not one. An empty
    one counts too: its removal was killed after its marker went, and there is nothing in it to lose."""
    if path.is_symlink() or not path.is_dir():
        return False
    if (path / COMMIT_RECORD).is_file() or not any(path.iterdir()):
        return True
    try:
        marker = json.loads((path / STAGING_RECORD).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return False
    return isinstance(marker, dict) and isinstance(marker.get(MARKER), dict)


def stagings(output: Path) -> list[Path]:
    """The toolkit's staging folders in the output folder, in name order."""
    return [path for path in sorted(output.glob(STAGING_PREFIX + "*")) if _is_staging(path)]


def _commit_path(output: Path, entry: object, record: Path, kind: str) -> Path:
    """A path of a commit record: ``README.md`` or ``<config>/funnel.json`` set ``aside``,
    ``<config>/<file>.parquet`` or ``<config>/funnel.json`` ``obsolete``; anything else is refused."""
    if kind == "aside" and entry == CARD:
        return output / CARD
    parts = entry.split("/") if isinstance(entry, str) else []
    if len(parts) == 2 and is_plain_name(parts[0]):
        name, file = parts
        if file == FUNNEL or (kind == "obsolete" and is_output_file(file)):
            return config_folder(output, name, record) / file
    raise refusal(record, f"{kind} path", entry)


def _apply(output: Path, staging: Path) -> None:
    """Move a committed staging folder into the output; safe to run again after an interruption.

    Every path of the commit record is checked before the first file moves. The new parquet
    files come first (new names: the old card does not see them), then each config's
    ``funnel.json``, then the card, the last file to switch: a card of build X means that every file
    it names, funnel.json included, is of build X. In between, a funnel.json is of another build than
    the card names for it, which :func:`builder.publish.layout.config_record` (every reader of the
    folder) reports as an unfinished publish; readers that lock the folder finish it before they read.
    """
    record = staging / COMMIT_RECORD
    commit = _commit_record(staging)
    assert commit is not None
    configs = [config_folder(output, name, record).name for name in commit["configs"]]
    aside = [_commit_path(output, entry, record, "aside") for entry in commit["aside"]]
    obsolete = [_commit_path(output, entry, record, "obsolete") for entry in commit["obsolete"]]
    for path in aside:
        if path.exists() and not _is_ours(path):
            path.rename(_aside_name(path))
    for name in configs:
        source, target = staging / name, output / name
        if not source.is_dir():  # moved and removed already: this is a second run after a kill
            continue
        target.mkdir(exist_ok=True)
        for file in sorted(path for path in source.iterdir() if is_output_file(path.name)):
            os.replace(file, target / file.name)
    for name in configs:
        if (staging / name / FUNNEL).exists():
            os.replace(staging / name / FUNNEL, output / name / FUNNEL)
    if (staging / CARD).exists():
        os.replace(staging / CARD, output / CARD)  # the point where readers switch to the new build
    for path in obsolete:
        if path.name != FUNNEL or funnel_manifest(path) is not None:
            path.unlink(missing_ok=True)
    for folder in sorted({path.parent for path in obsolete} - {output / name for name in configs}):
        with contextlib.suppress(OSError):  # a config no longer published: its folder goes when nothing else is in it
            folder.rmdir()
    _remove_staging(staging)


def _remove_staging(staging: Path) -> None:
    """Remove a staging folder so that a kill at any point leaves one :func:`recover` still knows and can finish:
    its files and folders first, then the commit record (until then, a second :func:`_apply` finds every file
    moved and changes nothing), the marker, and the empty folder last (an empty staging folder is still ours)."""
    records = {staging / COMMIT_RECORD, staging / STAGING_RECORD}
    for root, folders, files in os.walk(staging, topdown=False):
        for name in files:
            if Path(root) / name not in records:
                (Path(root) / name).unlink()
        for name in folders:
            folder = Path(root) / name
            folder.unlink() if folder.is_symlink() else folder.rmdir()
    for record in (staging / COMMIT_RECORD, staging / STAGING_RECORD):
        record.unlink(missing_ok=True)
    staging.rmdir()


def recover(output: Path) -> list[str]:
    """Finish or discard what killed builds left behind (call under the folder's lock); say what was done.

    Only the toolkit's staging folders count; a user's file or folder of the same name is left alone.
    """
    notes = []
    for staging in stagings(output):
        if _commit_record(staging) is not None:
            _apply(output, staging)
            notes.append(f"{output}: finished publishing a build that was interrupted while its files were moved in")
        else:
            emptied = {path.name for path in staging.iterdir()} <= {STAGING_RECORD}
            _remove_staging(staging)
            what = "the empty staging folder" if emptied else "the unfinished files"
            notes.append(f"{output}: removed {what} of an interrupted build ({staging.name})")
    return notes


def _fsync_tree(folder: Path) -> None:
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            with path.open("rb") as stream:
                os.fsync(stream.fileno())


class Publisher:
    """Owns the output folder for one build: checks and locks it first, stages the configs, swaps them in.

    Engines call :meth:`open` before reading any dump, :meth:`writer` and
    :meth:`add_config` per config, :meth:`publish` at the end, and :meth:`close`
    in any case (it discards an unfinished staging folder and releases the lock).
    Configs of an earlier build that this one does not write stay (``keep_earlier``),
    or are removed with their files (a scored copy holds exactly what was scored).
    """

    def __init__(
        self, output: str | Path, configs: Sequence[str], overwrite: bool = False, keep_earlier: bool = True
    ) -> None:
        self.output = Path(output)
        self.configs = list(configs)
        self.overwrite = overwrite
        self.keep_earlier = keep_earlier
        self.staging: Path | None = None
        self.notes: list[str] = []
        self.build: str | None = None  # the build's id, once published
        self._lock = FolderLock(self.output)
        self._aside: list[str] = []
        self._earlier: dict[str, list[str]] = {}  # the configs the card names, with the files their records list
        self._kept: dict[str, dict] = {}  # their records, for the configs this build keeps as they are
        self._writers: dict[str, PairWriter] = {}
        self._records: dict[str, dict] = {}
        self._created = False  # the build made the output folder: a failed build removes it again if empty

    def __enter__(self) -> Publisher:
        return self.open()

    def __exit__(self, *exception: object) -> None:
        self.close()

    def open(self) -> Publisher:
        """Create and lock the folder, finish what killed builds left, check it may be written."""
        if self.output.exists() and not self.output.is_dir():
            raise OutputError(f"{self.output}: exists and is not a folder")
        self._created = not self.output.exists()
        try:
            self.output.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise OutputError(f"{self.output}: cannot create the output folder ({error.strerror})") from None
        self._lock.acquire()
        try:
            self.notes += recover(self.output)
            self._check()
            self.staging = _new_staging(self.output)
        except PermissionError as error:
            self.close()
            raise OutputError(f"{self.output}: cannot write into the output folder ({error.strerror})") from None
        except BaseException:
            self.close()
            raise
        for note in self.notes:
            warnings.warn(note, stacklevel=2)
        return self

    def _check(self) -> None:
        card = self.output / CARD
        if card.is_dir():
            raise OutputError(f"{card}: is a folder; the dataset card must go there")
        earlier = card_configs(self.output)
        ours = earlier is not None
        entries = sorted(path.name for path in self.output.iterdir())
        if not ours and entries and not self.overwrite:
            shown = ", ".join(entries[:5]) + (", …" if len(entries) > 5 else "")
            raise OutputError(
                f"{self.output}: not empty ({shown}) and not a Wikipedia-IPC build (no README.md with a "
                "`wikipedia_ipc` entry); refusing to write into it. Choose a new or empty output folder, or allow "
                "it with --overwrite (the build's files are added beside yours; none of yours is deleted, and one "
                "where the build must write, such as README.md, is renamed to <name>.orig)"
            )
        self._earlier = {}
        for name, files in (earlier or {}).items():  # with the funnel's own list: all of it goes when replaced
            funnel = self.output / name / FUNNEL
            manifest = funnel_manifest(funnel)
            self._earlier[name] = list(dict.fromkeys([*files, *(manifest_files(manifest, funnel) if manifest else [])]))
        if self.keep_earlier:
            self._kept = {
                name: config_record(self.output, name, files)
                for name, files in (earlier or {}).items()
                if name not in self.configs
            }
        conflicts = [CARD] if card.exists() and not ours else []
        for name in self.configs:
            folder = self.output / name
            if folder.exists() and not folder.is_dir():
                raise OutputError(f"{folder}: is a file, but the {name} config must be written into a folder there")
            if folder.is_dir() and not os.access(folder, os.W_OK | os.X_OK):
                raise OutputError(f"{folder}: the config folder is not writable")
            funnel = folder / FUNNEL
            if funnel.exists() and funnel_manifest(funnel) is None:
                conflicts.append(f"{name}/{FUNNEL}")
        if conflicts and not self.overwrite:
            raise OutputError(
                f"{self.output}: the build would replace {', '.join(conflicts)}, which the toolkit did not write; "
                "move them away, or pass --overwrite to have them renamed to <name>.orig"
            )
        self._aside = conflicts

    def writer(self, name: str, languages: bool = False, web: str = "", rows: str = "pairs") -> PairWriter:
        """A writer of the config's single ``train`` split into its staging folder (``rows``: :data:`ROW_KINDS`)."""
        if self.staging is None:
            raise RuntimeError("Publisher.open() must come first")
        self._writers[name] = PairWriter(self.staging / name, languages=languages, web=web, rows=rows)
        return self._writers[name]

    def config_folder(self, name: str) -> Path:
        """The config's staging folder, for an engine whose workers write the parquet shards themselves."""
        if self.staging is None:
            raise RuntimeError("Publisher.open() must come first")
        folder = self.staging / name
        folder.mkdir(exist_ok=True)
        return folder

    def shard_folder(self, name: str) -> str | Path:
        """Where an engine's workers write the config's parquet parts: its staging folder here; a folder on an
        object store gives a URL every executor can write to."""
        return self.config_folder(name)

    def add_config(self, name: str, record: dict[str, object], files: Sequence[Path] | None = None) -> None:
        """The config's pairs are written (its writer closed, or ``files`` finalized): stage its funnel.json."""
        written = self._writers[name].files if files is None else files
        self._records[name] = write_funnel(self.config_folder(name), record, written)

    def _obsolete(self) -> list[str]:
        """The earlier build's files that the new card no longer names: deleted after the swap."""
        obsolete = []
        for name, files in self._earlier.items():
            if name in self._kept:
                continue
            new = set(self._records[name][MARKER]["files"]) if name in self._records else set()
            obsolete += [f"{name}/{file}" for file in files if file not in new]
            if name not in self._records:
                obsolete.append(f"{name}/{FUNNEL}")
        return obsolete

    def _verify(self, obsolete: Sequence[str]) -> None:
        """Refuse to publish a staged card that names a config twice, or a file that will not be there after it."""
        assert self.staging is not None
        card = self.staging / CARD
        loadable = metadata_load(card).get("configs", [])
        named = [entry["config_name"] for entry in loadable]
        twice = sorted({name for name in named if named.count(name) > 1})
        if twice:
            raise OutputError(f"{card}: names the config {twice[0]!r} twice; refusing to publish it")
        manifest = card_configs(self.staging) or {}
        paths = [f"{name}/{file}" for name, files in manifest.items() for file in [*files, FUNNEL]]
        paths += [path for entry in loadable for data in entry["data_files"] for path in data["path"]]
        for path in paths:
            staged = (self.staging / path).is_file()
            if not staged and (path in obsolete or not (self.output / path).is_file()):
                raise OutputError(
                    f"{card}: lists {path}, which is neither staged nor kept in {self.output}; "
                    "refusing to publish a card whose files are missing"
                )

    def publish(self, card_suffix: str = "") -> Path:
        """Render the card (``card_suffix`` appended), check it, commit the staged build and swap it in."""
        assert self.staging is not None
        obsolete = self._obsolete()
        self.build = build_id(self._records.values())
        for name, record in self._records.items():  # each staged funnel.json names the build, as the card will
            self._records[name] = write_funnel(self.config_folder(name), record, record[MARKER]["files"], self.build)
        records = {**self._kept, **self._records}
        card = render_card(records.values(), build=self.build) + card_suffix
        (self.staging / CARD).write_text(card, encoding="utf-8")
        self._verify(obsolete)
        _fsync_tree(self.staging)
        commit = {"configs": sorted(self._records), "aside": self._aside, "obsolete": obsolete}
        write_atomic(self.staging / COMMIT_RECORD, json.dumps(commit, indent=2) + "\n")
        self._switch(commit)
        self.staging = None
        self._created = False
        return self.output / CARD

    def _switch(self, commit: dict[str, list[str]]) -> None:
        """Move the committed staging folder in (a folder on an object store copies it instead)."""
        assert self.staging is not None
        _apply(self.output, self.staging)

    def close(self) -> None:
        """Discard an uncommitted staging folder, release the lock, and remove the folder if this build made it
        and it is still empty (a build that failed leaves no trace)."""
        if self.staging is not None and not (self.staging / COMMIT_RECORD).exists():
            with contextlib.suppress(OSError):  # what is left is an unfinished staging folder: the next build's
                _remove_staging(self.staging)
        self.staging = None
        self._lock.release()
        if self._created:
            with contextlib.suppress(OSError):  # not empty: someone wrote into it meanwhile, and it stays
                self.output.rmdir()
            self._created = False


def published_files(output: str | Path) -> list[Path]:
    """Every file of a complete build, relative to the folder: the card, each config's funnel and parquet.

    The card says what the build is; call under the folder's lock, after :func:`recover`.
    Raises :class:`OutputError` naming what is missing or inconsistent.
    """
    output = Path(output)
    if not output.is_dir():
        raise OutputError(f"{output}: no such folder")
    configs = card_configs(output)
    if configs is None:
        raise OutputError(f"{output}: not a Wikipedia-IPC build (no README.md with a `wikipedia_ipc` entry)")
    if not configs:
        raise OutputError(f"{output / CARD}: the `wikipedia_ipc` entry lists no configs")
    pending = stagings(output)
    if pending:
        raise OutputError(
            f"{pending[0]}: an interrupted build is not finished; the next build into {output}, or push, finishes it"
        )
    files = [Path(CARD)]
    for name, listed in configs.items():
        config_record(output, name, listed)
        files.append(Path(name) / FUNNEL)
        for file in listed:
            if not (output / name / file).is_file():
                raise OutputError(f"{output / name / file}: listed in the card but missing")
            files.append(Path(name) / file)
    return files
