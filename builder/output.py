"""Stage 8: the Hub-ready dataset folder, published so that a build never loses a user's data.

``OUT/README.md`` is the dataset card (rendered from ``dataset_card.md``) whose
YAML ``configs:`` names every config with pairs, file by file;
``OUT/<config>/{train,validation,test}-*.parquet`` hold the pairs of each split
(:mod:`builder.splits`; one ``train`` split when splits are off) and ``OUT/<config>/funnel.json``
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
  card is replaced by an atomic rename, the one point where the folder turns into
  the new build; the configs' ``funnel.json`` and the deletion of the old build's
  files follow. An interrupted build leaves the old build intact; a staging folder left
  by a killed build is rolled forward (committed) or discarded (not committed)
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
import fcntl
import hashlib
import json
import os
import secrets
import shutil
import string
import tempfile
import time
import warnings
from collections.abc import Iterable, Sequence
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import yaml
from huggingface_hub.repocard import metadata_load

from builder.clusters import Pair
from builder.fidelity import markdown_table
from builder.pipeline import Funnel
from builder.splits import SPLIT_NAMES, split_of_file

PAIR_SCHEMA = pa.schema(
    [
        ("id", pa.string()),
        ("image", pa.string()),
        ("caption_type", pa.string()),
        ("sentence1", pa.string()),
        ("sentence2", pa.string()),
        ("page1", pa.string()),
        ("page2", pa.string()),
        ("source1", pa.string()),
        ("source2", pa.string()),
        ("revision1", pa.int64()),
        ("revision2", pa.int64()),
        ("same_page", pa.bool_()),
        # which titles the two references used, and what made them one image (builder.identity)
        ("file1", pa.string()),
        ("file2", pa.string()),
        ("identity", pa.string()),
    ]
)
# a cross-lingual config's pairs also say the language of each text (its wiki's content language)
CROSSLINGUAL_PAIR_SCHEMA = PAIR_SCHEMA.append(pa.field("language1", pa.string())).append(
    pa.field("language2", pa.string())
)
CARD_TEMPLATE = Path(__file__).resolve().parent.parent / "dataset_card.md"
SAMPLE_DUMP = Path(__file__).resolve().parent / "data" / "enwiki-20240101-sample-pages-articles.xml.bz2"
ROWS_PER_SHARD = 500_000
MARKER = "wikipedia_ipc"
FORMAT = 1
CARD = "README.md"
FUNNEL = "funnel.json"
STAGING_PREFIX = ".wikipedia_ipc-staging-"
COMMIT_RECORD = "publish.json"
COMMIT_KEYS = ("configs", "aside", "obsolete")
STAGING_RECORD = "staging.json"  # the marker of a staging folder the toolkit made
CONFIG_ORDER = {"gold": 0, "silver": 1, "bronze": 2}


class OutputError(Exception):
    """The output folder cannot be written (or pushed) safely; the message names the path and why."""


def pair_id(pair: Pair) -> str:
    """A stable id: the same image and texts give the same id in every build.

    A pair of one title keeps the id it has without an identity map, whatever its cluster merged with.
    """
    image = pair.first.file if pair.identity == "title" else pair.image
    key = "\x1f".join((image, pair.caption_type, pair.sentence1, pair.sentence2))
    return hashlib.blake2b(key.encode("utf-8"), digest_size=8).hexdigest()


def pair_row(pair: Pair, languages: bool = False) -> dict[str, object]:
    """A pair as an output row; ``languages`` adds the two texts' languages (cross-lingual configs)."""
    row: dict[str, object] = {
        "id": pair_id(pair),
        "image": pair.image,
        "caption_type": pair.caption_type,
        "sentence1": pair.sentence1,
        "sentence2": pair.sentence2,
        "page1": pair.first.page,
        "page2": pair.second.page,
        "source1": pair.first.source,
        "source2": pair.second.source,
        "revision1": pair.first.revision_id,
        "revision2": pair.second.revision_id,
        "same_page": pair.first.page_key == pair.second.page_key,
        "file1": pair.first.file,
        "file2": pair.second.file,
        "identity": pair.identity,
    }
    if languages:
        row["language1"] = pair.first.language
        row["language2"] = pair.second.language
    return row


def file_digest(path: Path) -> str:
    """16 hex digits of the file's content hash, read in chunks."""
    digest = hashlib.blake2b(digest_size=8)
    with path.open("rb") as stream:
        while chunk := stream.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def finalize_parts(folder: Path, parts: Sequence[Path], split: str = "train") -> list[Path]:
    """Give one split's written part files, in output order, their names ``{split}-XXXXX-of-YYYYY-<hash>.parquet``."""
    files = []
    for index, part in enumerate(parts):
        name = folder / f"{split}-{index:05d}-of-{len(parts):05d}-{file_digest(part)}.parquet"
        part.rename(name)
        files.append(name)
    return files


class PairWriter:
    """Write one split's pairs into ``{split}-XXXXX-of-YYYYY-<hash>.parquet`` shards of a (staging) config folder.

    Shards are written as ``<prefix>-*.tmp`` and get their final, content-hashed names on
    :meth:`close`. A config without pairs gets one shard with no rows (the schema, for
    parquet readers); the card leaves it out of ``configs:``, as ``datasets`` cannot load it.
    A writer that holds one slice of the output (a Spark partition) stops at :meth:`finish`
    instead, under a ``prefix`` of its own, and the parts of all slices are named together
    by :func:`finalize_parts`. ``languages`` writes :data:`CROSSLINGUAL_PAIR_SCHEMA`.
    """

    def __init__(
        self,
        folder: Path,
        rows_per_shard: int = ROWS_PER_SHARD,
        batch_size: int = 10_000,
        prefix: str = "part",
        split: str = "train",
        languages: bool = False,
    ) -> None:
        self.folder = folder
        self.languages = languages
        self.schema = CROSSLINGUAL_PAIR_SCHEMA if languages else PAIR_SCHEMA
        self.split = split
        self.rows_per_shard = rows_per_shard
        self.batch_size = batch_size
        self.prefix = prefix
        self.rows = 0
        self.seconds = 0.0  # spent encoding and writing parquet, for the build's stage times
        self.files: list[Path] = []
        self._batch: list[dict[str, object]] = []
        self._parts: list[Path] = []
        self._writer: pq.ParquetWriter | None = None
        self._in_part = 0
        folder.mkdir(parents=True, exist_ok=True)

    def write(self, pairs: Iterable[Pair]) -> None:
        self.write_rows(pair_row(pair, self.languages) for pair in pairs)

    def write_rows(self, rows: Iterable[dict[str, object]]) -> None:
        """Rows already made by :func:`pair_row` (engines that build them on workers)."""
        for row in rows:
            self._batch.append(row)
            if len(self._batch) >= self.batch_size:
                self._flush()

    def _flush(self) -> None:
        started = time.perf_counter()
        self._write_batch()
        self.seconds += time.perf_counter() - started

    def _write_batch(self) -> None:
        while self._batch:
            if self._writer is None or self._in_part >= self.rows_per_shard:
                self._open_part()
            room = self.rows_per_shard - self._in_part
            chunk, self._batch = self._batch[:room], self._batch[room:]
            self._writer.write_table(pa.Table.from_pylist(chunk, schema=self.schema))  # type: ignore[union-attr]
            self._in_part += len(chunk)
            self.rows += len(chunk)

    def _open_part(self) -> None:
        if self._writer is not None:
            self._writer.close()
        part = self.folder / f"{self.prefix}-{len(self._parts):05d}.tmp"
        self._parts.append(part)
        self._writer = pq.ParquetWriter(part, self.schema, compression="zstd")
        self._in_part = 0

    def finish(self) -> list[Path]:
        """Write what is left and close the last part; the parts written, none if no row came."""
        self._flush()
        started = time.perf_counter()
        if self._writer is not None:
            self._writer.close()
            self._writer = None
        self.seconds += time.perf_counter() - started
        return list(self._parts)

    def close(self) -> list[Path]:
        """Finish the last shard and give the shards their final names."""
        self.finish()
        started = time.perf_counter()
        if not self._parts:
            self._open_part()
            self._writer.close()  # type: ignore[union-attr]
            self._writer = None
        self.files = finalize_parts(self.folder, self._parts, self.split)
        self.seconds += time.perf_counter() - started
        return self.files


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


def write_funnel(folder: Path, record: dict[str, object], files: Sequence[Path]) -> dict[str, object]:
    """``funnel.json``: the Table 3 rows, how the config was built, and the files the toolkit wrote."""
    marked = {**record, MARKER: {"format": FORMAT, "files": [path.name for path in files]}}
    text = json.dumps(marked, indent=2, ensure_ascii=False) + "\n"
    write_atomic(folder / FUNNEL, text)
    return json.loads(text)  # as a reader of funnel.json sees it, so that the card says the same


def funnel_manifest(path: Path) -> dict | None:
    """The ``wikipedia_ipc`` entry of a funnel.json, or None if the toolkit did not write it."""
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    manifest = record.get(MARKER) if isinstance(record, dict) else None
    return manifest if isinstance(manifest, dict) else None


def card_manifest(path: Path) -> dict | None:
    """The ``wikipedia_ipc`` entry of a dataset card's YAML, or None if the toolkit did not write it."""
    if not path.is_file():
        return None
    try:
        metadata = metadata_load(path)
    except (OSError, UnicodeDecodeError, yaml.YAMLError, ValueError):
        return None
    manifest = metadata.get(MARKER) if isinstance(metadata, dict) else None
    return manifest if isinstance(manifest, dict) else None


def _is_sample(dump: dict[str, str]) -> bool:
    return dump["name"] == SAMPLE_DUMP.name


def _dump_line(dump: dict[str, object]) -> str:
    language = f", language: {dump['language']}" if "language" in dump else ""
    line = (
        f"  - `{dump['name']}` ({dump['dbname']}, dump date {dump['date']}, kind: {dump.get('kind', 'unknown')}"
        f"{language})"
    )
    if "failed" in dump:
        return line + f": **failed**, none of its pages are in this config ({dump['failed']})"
    source = dump.get("download")
    if isinstance(source, dict):
        line += (
            f": downloaded from {source['mirror']} ({source['wiki']} dump run {source['run']}), "
            f"SHA-1 `{source['sha1']}` verified {source['verified']}"
        )
    if _is_sample(dump):
        line += (
            ": the toolkit's embedded sample, pages written for the project to exercise the pipeline "
            "(synthetic, not real Wikipedia content)"
        )
    return line


def _build_section(record: dict[str, object]) -> str:
    parameters = record["parameters"]
    assert isinstance(parameters, dict)
    dumps = record["dumps"]
    assert isinstance(dumps, list)
    versions = record["versions"]
    assert isinstance(versions, dict)
    dump_lines = "\n".join(_dump_line(dump) for dump in dumps)
    parameter_lines = "\n".join(f"  - `{key}`: `{value}`" for key, value in parameters.items())
    version_lines = ", ".join(f"{name} {version}" for name, version in versions.items())
    skipped = record["skipped"]
    assert isinstance(skipped, dict)
    skipped_lines = ", ".join(f"{key.replace('_', ' ')}: {value:,}" for key, value in skipped.items())
    empty = (
        "No pair survived the filters: this config's parquet file has no rows, and the config is not in the "
        "card's `configs:` (`datasets` cannot load a split with no rows).\n\n"
        if not record["rows"]
        else ""
    )
    return (
        f"### `{record['config']}` – {record['rows']:,} pairs\n\n"
        f"{empty}"
        f"- Dumps:\n{dump_lines}\n"
        f"{_language_lines(record)}"
        f"- Tagger: `{record['tagger']}`\n"
        f"- Parameters:\n{parameter_lines}\n"
        f"- Library versions: {version_lines}\n"
        f"- Skipped while reading: {skipped_lines}\n"
        f"{_identity_line(record.get('identity'))}"
        f"- Splits: {_splits_line(record)}\n\n"
        f"{Funnel.from_list(record['funnel']).markdown()}"  # type: ignore[arg-type]
    )


def _language_lines(record: dict) -> str:
    """What the card says of languages: nothing for an English build, as before; else each language's counting."""
    languages = record.get("languages") or {}
    lines = ""
    if languages:
        counted = "; ".join(f"`{code}`: {words}" for code, words in languages.items())
        lines += f"- Languages: {', '.join(f'`{code}`' for code in languages)}; words of step 4 counted as {counted}\n"
    if record["parameters"].get("crosslingual"):
        lines += (
            "- Cross-lingual: each pair joins captions of one image written in two language editions (`language1` "
            "< `language2`); the bounds of steps 1, 2 and 6 are read across languages (references in at least two "
            f"languages, at most the upper bound in each). {_local_files_note(record.get('local_files'))}\n"
        )
    if record["parameters"]["caption_rule"] == "none":
        lines += (
            "- Caption rule: none. Step 5 keeps every caption (no tagger judged them): the pairs are not filtered "
            "for sentences or verbs as the paper's levels are.\n"
        )
    return lines


def _local_files_note(local: object) -> str:
    """How the cross-lingual config told files uploaded to one wiki from the Commons files of the same name."""
    if not isinstance(local, dict):
        return (
            "Every file is taken for the Commons file of its name (no image table was given): a file uploaded "
            "locally to one wiki under the name of a Commons file is paired with it."
        )
    tables = ", ".join(f"{wiki} ({files:,} files)" for wiki, files in local["image_tables"].items())
    return (
        f"Files uploaded locally to one wiki are kept apart, as the image tables of {tables} list them: "
        f"{plural(local['references_kept_apart'], 'reference')} to them left out before step 0."
    )


def _identity_line(identity: object) -> str:
    """The card's account of the identity map: what it merged and how many pairs each kind added."""
    if not isinstance(identity, dict) or identity["identities"] == ["title"]:
        return "- Image identity: the normalized `File:` title (as in the paper)\n"
    pairs = identity["pairs"]
    return (
        f"- Image identity: {', '.join(identity['identities'])} (beyond the paper). "
        f"File redirects read: {identity['file_redirects']:,} ({identity['file_redirects_ignored']:,} ignored, "
        f"{identity['redirect_cycles']:,} cycles); image table rows: {identity['image_table_rows']:,} "
        f"({identity['image_table_rows_without_sha1']:,} without SHA-1, "
        f"{identity['image_table_rows_with_unusable_names']:,} with unusable names); titles merged by redirect: "
        f"{identity['titles_merged_by_redirect']:,}, by SHA-1: {identity['titles_merged_by_sha1']:,}; images "
        f"{identity['images_before']:,} → {identity['images_after']:,} ({identity['images_merged']:,} merged); "
        f"pairs added by redirect: {pairs['redirect']:,}, by SHA-1: {pairs['sha1']:,} "
        f"(of {sum(pairs.values()):,})\n"
    )


def _split_rows(record: dict) -> dict[str, int]:
    """Pairs per split; a config built without splits (or by an earlier version) has one ``train`` split."""
    splits = record.get("splits")
    return dict(splits["pairs"]) if splits else {"train": record["rows"]}


def _splits_line(record: dict) -> str:
    """Each split's size, the components, and the overlap check as the build computed it on the written pairs."""
    splits = record.get("splits")
    if not splits:
        return "none; every pair is in `train` (the paper's single set)"
    sizes = "; ".join(
        f"`{name}` {plural(pairs, 'pair')}, {plural(splits['images'][name], 'image')}, "
        f"{plural(splits['texts'][name], 'text')}"
        for name, pairs in splits["pairs"].items()
    )
    percentages = "/".join(f"{fraction * 100:g}" for fraction in splits["fractions"])
    line = (
        f"{sizes} (fractions {percentages} of the components; {plural(splits['components'], 'component')} "
        f"of pairs linked by a shared image or text, the largest with "
        f"{plural(splits['largest_component'], 'pair')}). {splits['shared_images']:,} images and "
        f"{splits['shared_texts']:,} texts are shared by two splits (checked on the written pairs; texts with "
        "equal skeletons are one text)."
    )
    empty = [name for name, pairs in splits["pairs"].items() if not pairs]
    if empty and record["rows"]:
        line += (
            f" No pair fell into {', '.join(f'`{name}`' for name in empty)}: left out of `configs:` "
            "(`datasets` cannot load a split with no rows)."
        )
    return line


def plural(number: int, word: str) -> str:
    """``1 pair``, ``2 pairs``: a count with its noun, for the card and the build's summary."""
    return f"{number:,} {word if number == 1 else word + 's'}"


def _splits_note(records: list[dict]) -> str:
    """How the configs are split, for the card's introduction."""
    whole = [f"`{record['config']}`" for record in records if not record.get("splits")]
    if len(whole) == len(records):
        return "Every config is one `train` split (built with `--splits none`): the paper's single set of pairs."
    note = (
        "The configs are split into `train`, `validation` and `test` so that no image and no text occurs in two "
        "splits. Texts are compared by their skeleton, as the near-duplicate step (9) compares them: case, "
        "punctuation, spacing, Unicode form and bracketed parts ignored, so 'The bridge over the River Thames' and "
        "'The bridge over the River Thames.' are one text (a text that only contains another, 'X' and 'X, 1941', "
        "may be in another split). Pairs that share an image or a text form one component, and each "
        "component goes whole to one split, chosen by a stable hash of its content. A split that got no pair is "
        "left out of its config. Each config's section below gives the split sizes, the largest component and the "
        "overlap check computed on the written pairs."
    )
    if whole:
        note += f" Built without splits, as one `train` split: {', '.join(whole)}."
    return note


def _data_files(record: dict) -> list[dict[str, object]]:
    """One ``data_files`` entry per split with rows, its files picked by their name."""
    rows = _split_rows(record)
    entries = []
    for split in SPLIT_NAMES:
        files = [f"{record['config']}/{name}" for name in record[MARKER]["files"] if split_of_file(name) == split]
        if rows.get(split) and files:
            entries.append({"split": split, "path": files})
    return entries


def _front_matter(records: list[dict]) -> str:
    """The card's YAML: ``configs:`` with each loadable config's files by name, and the toolkit's manifest."""
    configs = [
        {"config_name": record["config"], "data_files": _data_files(record)} for record in records if record["rows"]
    ]
    manifest = {
        "format": FORMAT,
        "configs": {record["config"]: {"rows": record["rows"], "files": record[MARKER]["files"]} for record in records},
    }
    front: dict[str, object] = {"configs": configs} if configs else {}
    front[MARKER] = manifest
    return yaml.safe_dump(front, sort_keys=False, allow_unicode=True).rstrip("\n")


def build_languages(records: Iterable[dict]) -> list[str]:
    """The languages of a build's dumps (a build whose dumps say none is English)."""
    codes = {dump["language"] for record in records for dump in record["dumps"] if "language" in dump}
    return sorted(codes) or ["en"]


def _languages_yaml(records: list[dict]) -> str:
    """The card's ``language:`` codes, and ``multilinguality:`` when the build has more than one language."""
    languages = build_languages(records)
    front: dict[str, object] = {"language": languages}
    if len(languages) > 1:
        front["multilinguality"] = ["multilingual"]
    return yaml.safe_dump(front, sort_keys=False, allow_unicode=True).rstrip("\n")


def render_card(records: Iterable[dict], template: Path = CARD_TEMPLATE) -> str:
    """The dataset card for the given funnel records (as :func:`write_funnel` returns them)."""
    ordered = sorted(records, key=lambda record: (CONFIG_ORDER.get(record["config"], 3), record["config"]))
    if not ordered:
        raise ValueError("no built config to describe")
    samples = sorted({dump["name"] for record in ordered for dump in record["dumps"] if _is_sample(dump)})
    notice = (
        f"> **Sample build.** The pairs come from `{samples[0]}`, the small synthetic dump that ships with the "
        "toolkit to show how the pipeline works; its pages were written for the project and are not Wikipedia "
        "articles. Build from a real dump for real data.\n\n"
        if samples
        else ""
    )
    return string.Template(template.read_text(encoding="utf-8")).substitute(
        languages=_languages_yaml(ordered),
        front_matter=_front_matter(ordered),
        sample_notice=notice,
        config_list=", ".join(f"`{record['config']}`" for record in ordered),
        builds="\n".join(_build_section(record) for record in ordered),
        splits_note=_splits_note(ordered),
        fidelity=markdown_table(),
    )


_HELD_LOCKS: set[int] = set()


def _close_locks_in_child() -> None:
    """Forked workers drop their copy of the lock: orphans of a killed build must not keep the folder locked."""
    for descriptor in _HELD_LOCKS:
        os.close(descriptor)
    _HELD_LOCKS.clear()


os.register_at_fork(after_in_child=_close_locks_in_child)


class FolderLock:
    """An exclusive, non-blocking ``flock`` on the output folder itself: no lock file to leave behind."""

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
            descriptor = os.open(self.folder, os.O_RDONLY)
        except OSError as error:
            raise OutputError(f"{self.folder}: cannot open the folder to lock it ({error.strerror})") from None
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(descriptor)
            raise OutputError(
                f"{self.folder}: another build is writing into this folder (it holds the folder's lock); "
                "wait for it to finish or choose another output folder"
            ) from None
        self._descriptor = descriptor
        _HELD_LOCKS.add(descriptor)

    def release(self) -> None:
        if self._descriptor is not None:
            _HELD_LOCKS.discard(self._descriptor)
            os.close(self._descriptor)  # closing the last descriptor of the lock releases it
            self._descriptor = None


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


def _plain(entry: object) -> bool:
    """One path component the toolkit could have written: no separator, no ``..``, not hidden."""
    return isinstance(entry, str) and bool(entry) and not entry.startswith(".") and not set(entry) & set("/\\\x00")


def _refuse(record: Path, what: str, entry: object) -> OutputError:
    return OutputError(
        f"{record}: the {what} {entry!r} is not a plain name inside the output folder; refusing to move or "
        "delete any file by this record (it was not written this way by the toolkit)"
    )


def manifest_files(manifest: dict, record: Path) -> list[str]:
    """The parquet files a ``wikipedia_ipc`` entry lists, each a plain ``*.parquet`` name, else an OutputError."""
    files = manifest.get("files")
    if not isinstance(files, list):
        raise OutputError(f"{record}: the `wikipedia_ipc` entry has no list of files")
    for entry in files:
        if not _plain(entry) or not entry.endswith(".parquet"):
            raise _refuse(record, "file", entry)
    return files


def config_folder(output: Path, name: object, record: Path) -> Path:
    """The folder of a config a record names: a plain name whose folder resolves inside the output folder."""
    if not _plain(name):
        raise _refuse(record, "config", name)
    folder = output / str(name)
    if not folder.resolve().is_relative_to(output.resolve()):
        raise OutputError(
            f"{record}: the config {name!r} leads out of the output folder ({folder} is a link to "
            f"{folder.resolve()}); refusing to write or delete there"
        )
    return folder


def card_configs(output: Path) -> dict[str, list[str]] | None:
    """The configs of the build in the folder, as its card names them, each with its parquet files.

    The card is the build's record: a folder holding a ``funnel.json`` is no config unless
    the card names it (a user's copy ``gold-backup/`` is not one). None if the card is not ours.
    """
    card = output / CARD
    manifest = card_manifest(card)
    if manifest is None:
        return None
    configs = manifest.get("configs")
    if not isinstance(configs, dict):
        raise OutputError(f"{card}: the `wikipedia_ipc` entry has no `configs`")
    checked = {}
    for name, entry in configs.items():
        config_folder(output, name, card)
        if not isinstance(entry, dict):
            raise OutputError(f"{card}: the `wikipedia_ipc` entry of config {name!r} lists no files")
        checked[name] = manifest_files(entry, card)
    return checked


def config_record(output: Path, name: str, files: Sequence[str]) -> dict:
    """The ``funnel.json`` record of a config the card names: the toolkit's, of this config, with the card's files."""
    funnel = config_folder(output, name, output / CARD) / FUNNEL
    manifest = funnel_manifest(funnel)
    if manifest is None:
        raise OutputError(f"{funnel}: missing or not written by the toolkit, but the card lists config {name!r}")
    record = json.loads(funnel.read_text(encoding="utf-8"))
    if record.get("config") != name:
        raise OutputError(
            f"{funnel}: describes config {record.get('config')!r}, not {name!r}, the folder it is in and the name "
            "the card gives it"
        )
    if manifest_files(manifest, funnel) != list(files):
        raise OutputError(f"{funnel}: lists other parquet files than the card; the build is incomplete")
    return record


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
    """A staging folder the toolkit made (its marker, or a commit record); a user's namesake is not one."""
    if path.is_symlink() or not path.is_dir():
        return False
    if (path / COMMIT_RECORD).is_file():
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
    if len(parts) == 2 and _plain(parts[0]):
        name, file = parts
        if file == FUNNEL or (kind == "obsolete" and _plain(file) and file.endswith(".parquet")):
            return config_folder(output, name, record) / file
    raise _refuse(record, f"{kind} path", entry)


def _apply(output: Path, staging: Path) -> None:
    """Move a committed staging folder into the output; safe to run again after an interruption.

    Every path of the commit record is checked before the first file moves. The new parquet
    files come first (new names: the old card does not see them), then the card, the one
    point where readers switch to the new build; each config's ``funnel.json`` follows it, and
    readers that lock the folder finish a committed staging folder before they read.
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
        target.mkdir(exist_ok=True)
        for file in sorted(source.glob("*.parquet")):
            os.replace(file, target / file.name)
    if (staging / CARD).exists():
        os.replace(staging / CARD, output / CARD)  # the point where readers switch to the new build
    for name in configs:
        if (staging / name / FUNNEL).exists():
            os.replace(staging / name / FUNNEL, output / name / FUNNEL)
    for path in obsolete:
        if path.name != FUNNEL or funnel_manifest(path) is not None:
            path.unlink(missing_ok=True)
    for folder in sorted({path.parent for path in obsolete} - {output / name for name in configs}):
        with contextlib.suppress(OSError):  # a config no longer published: its folder goes when nothing else is in it
            folder.rmdir()
    shutil.rmtree(staging)


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
            shutil.rmtree(staging)
            notes.append(f"{output}: removed the unfinished files of an interrupted build ({staging.name})")
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

    def writer(self, name: str, languages: bool = False) -> PairWriter:
        """A writer of the config's single ``train`` split into its staging folder."""
        if self.staging is None:
            raise RuntimeError("Publisher.open() must come first")
        self._writers[name] = PairWriter(self.staging / name, languages=languages)
        return self._writers[name]

    def config_folder(self, name: str) -> Path:
        """The config's staging folder, for an engine whose workers write the parquet shards themselves."""
        if self.staging is None:
            raise RuntimeError("Publisher.open() must come first")
        folder = self.staging / name
        folder.mkdir(exist_ok=True)
        return folder

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
        records = {**self._kept, **self._records}
        (self.staging / CARD).write_text(render_card(records.values()) + card_suffix, encoding="utf-8")
        self._verify(obsolete)
        _fsync_tree(self.staging)
        commit = {"configs": sorted(self._records), "aside": self._aside, "obsolete": obsolete}
        write_atomic(self.staging / COMMIT_RECORD, json.dumps(commit, indent=2) + "\n")
        _apply(self.output, self.staging)
        self.staging = None
        self._created = False
        return self.output / CARD

    def close(self) -> None:
        """Discard an uncommitted staging folder, release the lock, and remove the folder if this build made it
        and it is still empty (a build that failed leaves no trace)."""
        if self.staging is not None and not (self.staging / COMMIT_RECORD).exists():
            shutil.rmtree(self.staging, ignore_errors=True)
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


class HubError(Exception):
    """Pushing to the Hub failed; the message names the repository and the reason."""


def push_to_hub(
    output: Path, files: Sequence[Path], repo_id: str, private: bool = False, revision: str | None = None
) -> str:
    """Upload exactly ``files`` (from :func:`published_files`) as one commit to a dataset repository.

    Parquet files of the pushed configs that the repository holds from an earlier push and
    that this build no longer lists are deleted in the same commit. Returns the commit URL.
    """
    from huggingface_hub import CommitOperationAdd, CommitOperationDelete, HfApi, constants
    from huggingface_hub.errors import HfHubHTTPError

    if constants.is_offline_mode():
        raise HubError(f"{repo_id}: the Hub is not reachable in offline mode (HF_HUB_OFFLINE is set)")
    # the base error of the HTTP client huggingface_hub uses, for connection failures before any response
    client_errors = (OSError, ValueError, *HfHubHTTPError.__bases__)
    api = HfApi()
    wanted = [file.as_posix() for file in files]
    configs = {file.parts[0] for file in files if len(file.parts) > 1}
    try:
        api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
        if revision:
            api.create_branch(repo_id, repo_type="dataset", branch=revision, exist_ok=True)
        present = api.list_repo_files(repo_id, repo_type="dataset", revision=revision)
        stale = [
            path
            for path in present
            if path not in wanted and path.endswith(".parquet") and path.split("/", 1)[0] in configs
        ]
        operations = [CommitOperationAdd(path_in_repo=path, path_or_fileobj=str(output / path)) for path in wanted]
        operations += [CommitOperationDelete(path_in_repo=path) for path in stale]
        commit = api.create_commit(
            repo_id,
            operations,
            commit_message=f"Wikipedia-IPC build: {', '.join(sorted(configs))}",
            repo_type="dataset",
            revision=revision,
        )
    except client_errors as error:
        raise HubError(f"{repo_id}: pushing to the Hub failed ({error})") from None
    return commit.commit_url
