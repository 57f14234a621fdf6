"""Image–caption datasets (thesis §5.1): a Conceptual Captions–style TSV and its images as ``img2dataset``
wrote them, read without downloading anything, each image checked as §5.1.1 says.

img2dataset (github.com/rom1504/img2dataset) writes one of three layouts into its output folder, a shard
of ``number_sample_per_shard`` samples at a time. A sample's key is the shard number (5 digits,
``oom_shard_count``) followed by its place in the shard (4 digits for 10,000 per shard): ``000010005``.

- ``files``: a folder per shard, ``00000/000000000.jpg`` with ``000000000.txt`` (the caption) and
  ``000000000.json`` (its metadata: ``url``, ``caption``, ``key``, ``status``, ``error_message``,
  ``width``, ``height``, …), and next to it ``00000.parquet``, the metadata of every sample of the
  shard, those that failed to download included (``status`` other than ``success``).
- ``webdataset``: ``00000.tar`` holding ``000000000.jpg``, ``.txt`` and ``.json`` per sample, one
  sample's members one after the other, and the same ``00000.parquet``.
- ``parquet``: ``00000.parquet`` alone, the metadata columns with the image bytes in ``jpg`` (null for a
  failed download) and the caption in ``txt``.

The image's extension follows img2dataset's ``encode_format`` (``jpg`` by default; ``png``, ``webp``).
The TSV is Conceptual Captions' own (caption, tab, image URL; no header) or one with a header naming
``caption`` and ``url`` (as img2dataset's ``--input_format tsv`` reads). With a TSV, a sample without a
caption takes the TSV's caption of its URL, and each TSV row whose image is not in the folder is a
``not_downloaded`` record.

§5.1.1's checks, each a counted skip reason: the image must open and decode with Pillow (``unreadable``,
``corrupt``, ``decompression_bomb``), be a JPEG (``not_jpeg``; the thesis read the HTTP content type,
here the decoded format is read) and measure at least 400 × 400 pixels (``under_400x400``).
img2dataset resizes to 256 × 256 and re-encodes as JPEG by default: for these checks to mean what they
say, download with ``--resize_mode no`` (and ``--skip_reencode True`` to keep the original files).
"""

from __future__ import annotations

import csv
import json
import tarfile
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import NamedTuple

from builder.sources.images import DEFAULT_HASH_SIZE, DEFAULT_MAX_PIXELS, ImageFacts, ImageSkip, inspect_image

__all__ = [
    "DATASET_SKIPS",
    "LAYOUTS",
    "MIN_SIDE",
    "DatasetRecord",
    "ImageDataset",
    "dataset_layout",
    "read_caption_tsv",
]

LAYOUTS = ("files", "webdataset", "parquet")
IMAGE_EXTENSIONS = ("jpg", "jpeg", "png", "webp")
MIN_SIDE = 400  # §5.1.1: at least 400 × 400 pixels, as Conceptual Captions' own filter
# Why a record brings no image facts: the order in which they are checked.
DATASET_SKIPS = (
    "not_downloaded",
    "bad_metadata",
    "no_caption",
    "unreadable",
    "corrupt",
    "decompression_bomb",
    "not_jpeg",
    "under_400x400",
)
MAX_PROBLEMS = 100  # places of problems kept for the report; all are counted
_BATCH_ROWS = 64  # parquet rows read at once: images are large, memory stays flat


class DatasetRecord(NamedTuple):
    """One sample: its img2dataset key (None for a TSV row without an image), URL, caption, and the facts
    of its image or the reason (``DATASET_SKIPS``) it has none; where the caption came from: the sample's own
    ``.txt``/``.json``/``txt`` column (``sample``) or the caption TSV (``tsv``)."""

    key: str | None
    url: str
    caption: str | None
    image: ImageFacts | str
    source: str = "sample"


def read_caption_tsv(path: str | Path, problems: list[str] | None = None) -> Iterator[tuple[int, str, str]]:
    """``(line, caption, url)`` for each row of a caption TSV; a row without two fields is left out and
    named in ``problems`` (``path:line: …``) when a list is given, else it stops the read as ValueError."""
    path = Path(path)
    with path.open(encoding="utf-8", newline="") as stream:
        rows = csv.reader(stream, delimiter="\t", quoting=csv.QUOTE_NONE)
        caption_column, url_column = 0, 1
        for line, row in enumerate(rows, start=1):
            if line == 1 and {"caption", "url"} <= {field.strip().lower() for field in row}:
                names = [field.strip().lower() for field in row]
                caption_column, url_column = names.index("caption"), names.index("url")
                continue
            if not row:
                continue
            if len(row) <= max(caption_column, url_column) or not row[url_column].strip():
                message = f"{path}:{line}: expected a caption and a URL separated by a tab, found {len(row)} field(s)"
                if problems is None:
                    raise ValueError(message)
                if len(problems) < MAX_PROBLEMS:
                    problems.append(message)
                continue
            yield line, row[caption_column].strip(), row[url_column].strip()


def _shard_dirs(folder: Path) -> list[Path]:
    return sorted(path for path in folder.iterdir() if path.is_dir() and path.name.isdigit())


def _image_parquets(folder: Path) -> list[Path]:
    import pyarrow.parquet as pq

    found = []
    for path in sorted(folder.glob("*.parquet")):
        try:
            names = pq.read_schema(path).names
        except (OSError, ValueError) as error:
            raise ValueError(f"{path}: not a readable parquet file ({error})") from None
        if "jpg" in names:
            found.append(path)
    return found


def dataset_layout(folder: str | Path) -> str:
    """Which of img2dataset's layouts ``folder`` holds (``LAYOUTS``); ValueError names the folder if none."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ValueError(f"{folder}: not a folder (an img2dataset output folder is expected)")
    if any(folder.glob("*.tar")):
        return "webdataset"
    if _shard_dirs(folder):
        return "files"
    if _image_parquets(folder):
        return "parquet"
    raise ValueError(
        f"{folder}: not an img2dataset output folder: no shard NNNNN.tar, NNNNN/ or NNNNN.parquet with a jpg column"
    )


class _Sample(NamedTuple):
    key: str
    url: str | None
    caption: str | None
    data: bytes | None  # None: not downloaded
    problem: str | None  # bad metadata


def _text(value: object) -> str | None:
    if value is None:
        return None
    text = value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
    return text.strip()


class ImageDataset:
    """The records of an img2dataset output folder (and optionally its caption TSV), in shard order.

    Iterating reads the folder once, one sample at a time; ``counts`` then holds ``samples`` (records
    yielded), ``kept`` (records with image facts) and one count per skip reason, ``problems`` the places
    of unreadable metadata, shards and TSV rows (the first 100)."""

    def __init__(
        self,
        folder: str | Path,
        tsv: str | Path | None = None,
        *,
        min_side: int = MIN_SIDE,
        require_jpeg: bool = True,
        max_pixels: int = DEFAULT_MAX_PIXELS,
        hash_size: int = DEFAULT_HASH_SIZE,
        shards: Sequence[str] | None = None,
    ) -> None:
        self.folder = Path(folder)
        self.layout = dataset_layout(self.folder)
        # a build's unit of work: only these shards (names from shard_names()); TSV rows left over are then
        # not records here (another shard may hold their images): ``counts["tsv_matched"]`` says how many matched
        self.only = None if shards is None else frozenset(shards)
        if self.only is not None and not self.only <= set(self.shard_names()):
            unknown = sorted(self.only - set(self.shard_names()))
            raise ValueError(f"{self.folder}: no shard {', '.join(unknown)} ({self.layout} layout)")
        self.tsv = Path(tsv) if tsv is not None else None
        if self.tsv is not None and not self.tsv.is_file():
            raise ValueError(f"{self.tsv}: no such caption TSV")
        self.min_side = min_side
        self.require_jpeg = require_jpeg
        self.max_pixels = max_pixels
        self.hash_size = hash_size
        self.counts: Counter[str] = Counter()
        self.problems: list[str] = []

    def _problem(self, message: str) -> None:
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append(message)

    # ---- the three layouts ----

    def _shard_paths(self) -> list[Path]:
        """The layout's shards in order: ``NNNNN/`` folders, ``NNNNN.tar`` files, or ``NNNNN.parquet`` files."""
        if self.layout == "files":
            paths = _shard_dirs(self.folder)
        elif self.layout == "webdataset":
            paths = sorted(self.folder.glob("*.tar"))
        else:
            paths = _image_parquets(self.folder)
        return [path for path in paths if self.only is None or path.name in self.only]

    def shard_names(self) -> list[str]:
        """Every shard's name (``00000``, ``00000.tar``, ``00000.parquet``): a build reads one shard per task."""
        only, self.only = getattr(self, "only", None), None
        try:
            return [path.name for path in self._shard_paths()]
        finally:
            self.only = only

    def _failed_in_metadata(self, parquet: Path) -> Iterator[_Sample]:
        """The samples a shard's metadata parquet lists as not downloaded (files and webdataset layouts)."""
        import pyarrow.parquet as pq

        if not parquet.is_file():
            return
        try:
            table = pq.read_table(parquet)
        except (OSError, ValueError) as error:
            self.counts["unreadable_metadata"] += 1
            self._problem(f"{parquet}: unreadable shard metadata ({error})")
            return
        names = set(table.column_names)
        if not {"key", "status"} <= names:
            return
        for row in table.to_pylist():
            if row.get("status") not in (None, "success"):
                yield _Sample(str(row["key"]), _text(row.get("url")), _text(row.get("caption")), None, None)

    def _metadata(self, raw: bytes | None, place: str) -> tuple[str | None, str | None, str | None]:
        """URL, caption and problem from a sample's ``.json``."""
        if raw is None:
            return None, None, None
        try:
            meta = json.loads(raw)
            if not isinstance(meta, dict):
                raise ValueError("not a JSON object")
        except ValueError as error:
            return None, None, f"{place}: unreadable metadata ({error})"
        return _text(meta.get("url")), _text(meta.get("caption")), None

    def _sample(self, key: str, parts: dict[str, bytes], place: str) -> _Sample:
        url, caption, problem = self._metadata(parts.get("json"), f"{place}/{key}.json")
        if "txt" in parts:
            caption = _text(parts["txt"])
        data = next((parts[extension] for extension in IMAGE_EXTENSIONS if extension in parts), None)
        return _Sample(key, url, caption, data, problem)

    def _files(self) -> Iterator[_Sample]:
        for shard in self._shard_paths():
            keys = sorted({path.name.split(".", 1)[0] for path in shard.iterdir() if path.is_file()})
            for key in keys:
                parts = {}
                for extension in (*IMAGE_EXTENSIONS, "txt", "json"):
                    path = shard / f"{key}.{extension}"
                    if path.is_file():
                        parts[extension] = path.read_bytes()
                if any(extension in parts for extension in IMAGE_EXTENSIONS):
                    yield self._sample(key, parts, str(shard))
            yield from self._failed_in_metadata(self.folder / f"{shard.name}.parquet")

    def _webdataset(self) -> Iterator[_Sample]:
        for path in self._shard_paths():
            current: str | None = None
            parts: dict[str, bytes] = {}
            try:
                with tarfile.open(path, "r:*") as archive:
                    for member in archive:
                        if not member.isfile():
                            continue
                        folder, _, name = member.name.rpartition("/")
                        stem, _, extension = name.partition(".")
                        key = f"{folder}/{stem}" if folder else stem
                        if key != current:
                            if current is not None and any(ext in parts for ext in IMAGE_EXTENSIONS):
                                yield self._sample(current, parts, str(path))
                            current, parts = key, {}
                        reader = archive.extractfile(member)
                        if reader is not None:
                            parts[extension.lower()] = reader.read()
            except (tarfile.TarError, OSError, EOFError) as error:
                self.counts["unreadable_shard"] += 1
                self._problem(f"{path}: unreadable after sample {current} ({error}); its remaining samples are lost")
            if current is not None and any(ext in parts for ext in IMAGE_EXTENSIONS):
                yield self._sample(current, parts, str(path))
            yield from self._failed_in_metadata(path.with_suffix(".parquet"))

    def _parquet(self) -> Iterator[_Sample]:
        import pyarrow.parquet as pq

        for path in self._shard_paths():
            source = pq.ParquetFile(path)
            wanted = [name for name in ("key", "url", "caption", "txt", "jpg") if name in source.schema_arrow.names]
            number = 0
            for batch in source.iter_batches(batch_size=_BATCH_ROWS, columns=wanted):
                for row in batch.to_pylist():
                    key = str(row["key"]) if row.get("key") is not None else f"{path.stem}:{number}"
                    number += 1
                    caption = _text(row.get("txt")) if row.get("txt") is not None else _text(row.get("caption"))
                    yield _Sample(key, _text(row.get("url")), caption, row.get("jpg"), None)

    # ---- the records ----

    def _check(self, data: bytes) -> ImageFacts | str:
        try:
            facts = inspect_image(data, max_pixels=self.max_pixels, hash_size=self.hash_size)
        except ImageSkip as skip:
            return skip.reason
        if self.require_jpeg and facts.format != "JPEG":
            return "not_jpeg"
        if min(facts.width, facts.height) < self.min_side:
            return "under_400x400"
        return facts

    def _record(
        self, key: str | None, url: str, caption: str | None, image: ImageFacts | str, source: str = "sample"
    ) -> DatasetRecord:
        self.counts["samples"] += 1
        self.counts["kept" if isinstance(image, ImageFacts) else image] += 1
        return DatasetRecord(key, url, caption, image, source)

    def __iter__(self) -> Iterator[DatasetRecord]:
        self.counts.clear()
        self.problems.clear()
        captions: dict[str, list[str]] = {}
        if self.tsv is not None:
            # a shard of a build leaves the TSV's bad rows to the build, which reads them once for every shard
            problems = self.problems if self.only is None else []
            for _line, caption, url in read_caption_tsv(self.tsv, problems):
                captions.setdefault(url, []).append(caption)
                self.counts["tsv_rows"] += 1
        samples = {"files": self._files, "webdataset": self._webdataset, "parquet": self._parquet}[self.layout]()
        for sample in samples:
            url = sample.url or ""
            caption = sample.caption
            rows = captions.get(url)
            source = "sample"
            if rows:  # one TSV row per sample, in order: img2dataset wrote a sample per row
                from_tsv = rows.pop(0)
                self.counts["tsv_matched"] += 1
                if not rows:
                    del captions[url]
                if not caption:
                    caption, source = from_tsv, "tsv"
            if sample.problem is not None:
                self._problem(sample.problem)
                yield self._record(sample.key, url, caption, "bad_metadata")
            elif sample.data is None:
                yield self._record(sample.key, url, caption, "not_downloaded")
            elif not caption:
                yield self._record(sample.key, url, caption, "no_caption")
            else:
                yield self._record(sample.key, url, caption, self._check(sample.data), source)
        if self.only is not None:
            return
        for url, rows in captions.items():  # TSV rows whose image img2dataset did not write
            for caption in rows:
                yield self._record(None, url, caption, "not_downloaded", "tsv")

    def report(self) -> str:
        """One line of the counts, skip reasons in their order: what a build prints after reading."""
        reasons = ", ".join(
            f"{reason} {self.counts[reason]:,}"
            for reason in (*DATASET_SKIPS, "unreadable_shard", "unreadable_metadata")
            if self.counts[reason]
        )
        return f"{self.folder} ({self.layout}): {self.counts['samples']:,} samples, {self.counts['kept']:,} kept" + (
            f"; dropped: {reasons}" if reasons else ""
        )
