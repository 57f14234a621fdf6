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

The image's extension follows img2dataset's ``encode_format`` (``jpg`` by default; ``png``, ``webp``). The key
numbers the input rows; a shard's metadata rows (and a parquet shard's rows, a tar's members) are in the order the
downloads finished. Every sample a shard lists is one record, read or counted under a reason (``DATASET_SKIPS``):
one listed as downloaded whose image is not in the shard is ``missing_image``, one whose caption is no UTF-8 text
``unreadable_caption``. A caption is cleaned as a web caption is (:func:`builder.lang.text.preprocess_caption`).

The TSV is Conceptual Captions' own (caption, tab, image URL; no header: a row is split on its last tab) or one
with a header naming ``caption`` and ``url`` (as img2dataset's ``--input_format tsv`` reads). With a TSV, a sample
without a caption takes a TSV caption of its URL (the URL's rows go to its samples in key order, so the sharding
does not change them), and each TSV row whose image is not in the folder is a ``not_downloaded`` record.

The reader reads nothing outside the folder it is given: a shard, a metadata parquet or a sample's file that is a
symbolic link leading out of the folder is not read (each such link counted, ``outside_links``, and named with its
target; a sample with such a file is ``outside_link``, a shard behind one loses its samples). It holds no member
larger than :data:`MAX_MEMBER` (the WARC reader's cap on a payload): a sample with a larger image, caption or
metadata file is ``too_large``, its file left unread (a compressed tar shard is read past it as a stream).

§5.1.1's checks, each a counted skip reason: the image must open and decode with Pillow (``unreadable``,
``corrupt``, ``decompression_bomb``), be a JPEG (``not_jpeg``; the thesis read the HTTP content type,
here the decoded format is read) and measure at least 400 × 400 pixels (``under_400x400``).
img2dataset resizes to 256 × 256 and re-encodes as JPEG by default: for these checks to mean what they
say, download with ``--resize_mode no`` (and ``--skip_reencode True`` to keep the original files).
"""

from __future__ import annotations

import hashlib
import json
import tarfile
from collections import Counter, OrderedDict
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

from builder.sources.captions import MAX_PROBLEMS, field_text, read_caption_tsv, sample_caption, tsv_columns, user_value
from builder.sources.http import MAX_PAYLOAD  # the WARC reader's cap on a payload
from builder.sources.images import DEFAULT_HASH_SIZE, DEFAULT_MAX_PIXELS, ImageFacts, ImageSkip, inspect_image
from builder.storage import as_path, is_url, readable

__all__ = [
    "DATASET_SKIPS",
    "LAYOUTS",
    "MAX_MEMBER",
    "MIN_SIDE",
    "USER_COLUMNS",
    "DatasetRecord",
    "ImageDataset",
    "SampleRead",
    "dataset_layout",
    "in_place_order",
    "user_column",
]

LAYOUTS = ("files", "webdataset", "parquet")
IMAGE_EXTENSIONS = ("jpg", "jpeg", "png", "webp")
MIN_SIDE = 400  # §5.1.1: at least 400 × 400 pixels, as Conceptual Captions' own filter
# Why a record brings no image facts: the order in which they are checked.
DATASET_SKIPS = (
    "not_downloaded",  # img2dataset failed to download it (its metadata says so), or a TSV row without a sample
    "missing_image",  # listed as downloaded (status success, or its .txt/.json written) but no image in the shard
    "outside_link",  # one of its files is a symbolic link leading out of the folder: not read
    "too_large",  # one of its files is larger than MAX_MEMBER: not read
    "bad_metadata",
    "unreadable_caption",  # its caption is not UTF-8 text (binary, U+FFFD, control characters)
    "no_caption",
    "unreadable",
    "corrupt",
    "decompression_bomb",
    "not_jpeg",
    "under_400x400",
)
# a sample's file (image, caption, metadata) read at most: a larger one is a counted skip, never read into memory
MAX_MEMBER = MAX_PAYLOAD
CHECKED = 1024  # checks kept by the bytes' digest: facts are at most a few KB (a vector), so 1,024 a few MB
# the columns that name a sample's user (its writer, owner or author), looked for in this order when no column is
# given: RedCaps's ``author`` (the Reddit user who posted it), YFCC100M's owner (``user_nsid``, as its metadata names
# it; ``owner``, as Flickr's API does), a plain ``user``. img2dataset keeps such a column of its input
# (``--save_additional_columns``) in each sample's ``.json`` and in the shard's metadata parquet.
USER_COLUMNS = ("author", "user_nsid", "owner", "user")
_BATCH_ROWS = 64  # parquet rows read at once: images are large, memory stays flat
_LISTING_ROWS = 65_536  # metadata rows (key and URL alone) read at once


class DatasetRecord(NamedTuple):
    """One sample: its img2dataset key (None for a TSV row without an image), URL, caption, and the facts
    of its image or the reason (``DATASET_SKIPS``) it has none; where the caption came from: the sample's own
    ``.txt``/``.json``/``txt`` column (``sample``) or the caption TSV (``tsv``)."""

    key: str | None
    url: str
    caption: str | None
    image: ImageFacts | str
    source: str = "sample"


def user_column(folder: str | Path, tsv: str | Path | None = None, given: str = "") -> str:
    """The column of a dataset that names its samples' users: ``given`` (a ValueError naming it and the columns
    found when the dataset has no such column), else the first of :data:`USER_COLUMNS` it has; "" when none."""
    found = ImageDataset(folder).metadata_columns()
    if tsv is not None:
        found += [name for name in tsv_columns(tsv) if name not in found]
    if given:
        if given not in found and given.lower() not in found:
            listed = ", ".join(found) or "none"
            raise ValueError(
                f"--deja-user-column {given}: {folder} has no column {given!r} (its shards' metadata and caption TSV "
                f"have: {listed})"
            )
        return given if given in found else given.lower()
    return next((name for name in USER_COLUMNS if name in found), "")


def _open_tar(path: Path) -> tarfile.TarFile:
    """A webdataset shard, on a disk or in a store (there read as one stream)."""
    if is_url(str(path)):
        return tarfile.open(fileobj=readable(path), mode="r:*")  # type: ignore[arg-type]
    return tarfile.open(path, "r:*")


def _shard_dirs(folder: Path) -> list[Path]:
    return sorted(path for path in folder.iterdir() if path.is_dir() and path.name.isdigit())


def _leads_out(folder: Path, path: Path) -> bool:
    """Whether ``path`` (in ``folder``, on a disk) is, or lies behind, a symbolic link leading out of the folder."""
    if is_url(str(path)):
        return False  # an object store has no links
    return not path.resolve().is_relative_to(folder.resolve())


def _image_parquets(folder: Path) -> list[Path]:
    """The parquet files of the folder with a ``jpg`` column; one behind a link out of the folder is not read (it is
    listed, and refused when read)."""
    import pyarrow.parquet as pq

    found = []
    for path in sorted(folder.glob("*.parquet")):
        if _leads_out(folder, path):
            found.append(path)
            continue
        try:
            names = pq.read_schema(readable(path)).names
        except (OSError, ValueError) as error:
            raise ValueError(f"{path}: not a readable parquet file ({error})") from None
        if "jpg" in names:
            found.append(path)
    return found


def dataset_layout(folder: str | Path) -> str:
    """Which of img2dataset's layouts ``folder`` holds (``LAYOUTS``); ValueError names the folder if none."""
    folder = as_path(folder)
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
    caption: str | None  # cleaned; "" when nothing is left of it, None when it has none
    data: bytes | None  # None: no image
    skip: str | None = None  # a reason known before its image is read: not_downloaded, missing_image, …
    problem: str | None = None  # where and why, for ``problems``
    user: str | None = None  # the user column's value (None: no column read, or none given)


class SampleRead(NamedTuple):
    """A sample as its shard holds it, before any caption TSV: its key, URL ("" when it has none), own caption
    (cleaned; None when it has none), the reason known before its image is read (``DATASET_SKIPS``), and its
    image's facts or the reason a check refused it (None: not checked)."""

    key: str
    url: str
    caption: str | None
    skip: str | None
    image: ImageFacts | str | None
    user: str | None = None  # its user (the ``user`` column a build reads), None when it names none


def _place_order(key: str, place: int) -> tuple[int, int, int]:
    """Where a listed sample comes among its shard's samples of a URL: img2dataset's keys by their number (the
    TSV row it was downloaded for), other keys in the shard's order (``place``)."""
    return (0, int(key), 0) if key.isdigit() else (1, 0, place)


def in_place_order(listed: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    """A shard's listing (``(key, url)`` rows) in the order a URL's samples take its TSV rows (:func:`_place_order`)."""
    order = sorted(range(len(listed)), key=lambda place: _place_order(listed[place][0], place))
    return [listed[place] for place in order]


class _Listed(NamedTuple):
    """A sample's row in its shard's metadata parquet (files and webdataset layouts)."""

    url: str | None
    caption: object
    status: str | None
    user: str | None = None


def _quiet_caption(value: object) -> str | None:
    """The caption of a sample skipped for another reason, as far as it can be read (the record shows it)."""
    try:
        return sample_caption(value)  # type: ignore[arg-type]
    except ValueError:
        return None


class ImageDataset:
    """The records of an img2dataset output folder (and optionally its caption TSV), in shard order.

    Iterating reads the folder once, one sample at a time; ``counts`` then holds ``samples`` (records
    yielded), ``kept`` (records with image facts) and one count per skip reason, ``problems`` the places
    of unreadable metadata, shards, captions and TSV rows and of missing images (the first 100). Every sample
    a shard lists (its metadata parquet's rows, else the samples found in it) is one record: ``samples`` is
    ``kept`` plus the skip reasons.

    With a TSV, a sample without a caption of its own takes a TSV caption of its URL: the TSV's rows of a URL go
    to the URL's samples in key order (the order of the TSV rows img2dataset downloaded them for), the first
    sample the first row, the second the second, and so on; a sample past its URL's rows takes none, and a URL
    the TSV names once gives its caption to each of its samples. So a URL's captions do not depend on how the
    samples were split into shards, nor on which shards are read (``shards``): the places of the samples of URLs
    the TSV repeats are found over the whole folder (``places``: :meth:`tsv_places`; else found when reading).
    This reader holds the TSV in one process; a build's tasks read their shards with :meth:`read_samples`, and the
    engine joins the TSV to the samples (:mod:`builder.extract.captiontsv`) by the same rule."""

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
        places: Mapping[str, int] | None = None,
        max_member: int = MAX_MEMBER,
        feature: str = "",
        user: str = "",
    ) -> None:
        self.folder = as_path(folder)
        self.layout = dataset_layout(self.folder)
        # a build's unit of work: only these shards (names from shard_names()); TSV rows left over are then
        # not records here (another shard may hold their images): ``counts["tsv_matched"]`` says how many matched
        self.only = None if shards is None else frozenset(shards)
        if self.only is not None and not self.only <= set(self.shard_names()):
            unknown = sorted(self.only - set(self.shard_names()))
            raise ValueError(f"{self.folder}: no shard {', '.join(unknown)} ({self.layout} layout)")
        self.tsv = as_path(tsv) if tsv is not None else None
        if self.tsv is not None and not self.tsv.is_file():
            raise ValueError(f"{self.tsv}: no such caption TSV")
        # key → the sample's place among the samples of its URL, for the URLs the TSV repeats (None: found on reading)
        self.places = None if places is None else dict(places)
        self.min_side = min_side
        self.require_jpeg = require_jpeg
        self.max_pixels = max_pixels
        self.hash_size = hash_size
        self.max_member = max_member
        self.feature = feature  # each checked image's feature vector (builder.sources.features), when set
        self.user = user  # the column of users each sample's metadata may hold (USER_COLUMNS); "": none read
        self._describe = None
        if feature:
            from builder.sources.features import Describer

            self._describe = Describer(feature)
        self.counts: Counter[str] = Counter()
        self.problems: list[str] = []
        self._refused: set[Path] = set()  # the links out of the folder counted in this read
        # the checks of the last images read, by their bytes' digest: a dataset holds the same file under several
        # URLs (a picture reposted, a caption row per writer), and the same bytes give the same facts
        self._checked: OrderedDict[bytes, ImageFacts | str] = OrderedDict()

    def _problem(self, message: str) -> None:
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append(message)

    def _clear(self) -> None:
        self.counts.clear()
        self.problems.clear()
        self._refused.clear()

    def _outside(self, path: Path) -> bool:
        """Whether ``path`` leads out of the folder through a symbolic link: then it is not read, and the link is
        counted (``outside_links``, once per read) and named, not where it leads (that is no part of the dataset)."""
        if not _leads_out(self.folder, path):
            return False
        if path not in self._refused:
            self._refused.add(path)
            self.counts["outside_links"] += 1
            self._problem(f"{path}: a symbolic link leading out of {self.folder}; not read")
        return True

    # ---- the three layouts ----

    def _all_shard_paths(self) -> list[Path]:
        """The layout's shards in order: ``NNNNN/`` folders, ``NNNNN.tar`` files, or ``NNNNN.parquet`` files."""
        if self.layout == "files":
            return _shard_dirs(self.folder)
        if self.layout == "webdataset":
            return sorted(self.folder.glob("*.tar"))
        return _image_parquets(self.folder)

    def _shard_paths(self) -> list[Path]:
        """The shards this reader reads (``shards``)."""
        return [path for path in self._all_shard_paths() if self.only is None or path.name in self.only]

    def shard_names(self) -> list[str]:
        """Every shard's name (``00000``, ``00000.tar``, ``00000.parquet``): a build reads one shard per task."""
        return [path.name for path in self._all_shard_paths()]

    def _metadata_parquet(self, shard: Path) -> Path:
        """Where img2dataset wrote a shard's metadata: ``00000.parquet`` next to ``00000/`` or ``00000.tar``."""
        if self.layout == "files":
            return self.folder / f"{shard.name}.parquet"
        return shard.with_suffix(".parquet")

    def metadata_columns(self) -> list[str]:
        """The columns the samples carry, as the first shard's metadata parquet names them (the shard itself in the
        parquet layout; a sample's ``.json`` holds the same); none when it has none or it cannot be read."""
        import pyarrow.parquet as pq

        shards = self._all_shard_paths()
        if not shards:
            return []
        parquet = shards[0] if self.layout == "parquet" else self._metadata_parquet(shards[0])
        if not parquet.is_file() or _leads_out(self.folder, parquet):
            return []
        try:
            return list(pq.read_schema(readable(parquet)).names)
        except (OSError, ValueError):
            return []

    def _user(self, fields: Mapping[str, object]) -> str | None:
        """A sample's user from its metadata (a ``.json``, a metadata or shard row): the build's user column's
        value; None when the build reads none or the sample names none."""
        return user_value(fields.get(self.user)) if self.user else None

    def _listed(self, shard: Path) -> dict[str, _Listed]:
        """A shard's metadata parquet, key by key: every sample img2dataset tried, failed downloads included
        (files and webdataset layouts); empty when there is none or it cannot be read (counted and named)."""
        import pyarrow.parquet as pq

        parquet = self._metadata_parquet(shard)
        if not parquet.is_file() or self._outside(parquet):
            return {}
        try:
            source = pq.ParquetFile(readable(parquet))
            names = source.schema_arrow.names
            if "key" not in names:
                return {}
            columns = [name for name in dict.fromkeys(("key", "url", "caption", "status", self.user)) if name in names]
            listed = {}
            for batch in source.iter_batches(batch_size=_LISTING_ROWS, columns=columns):
                for row in batch.to_pylist():
                    user = self._user(row)
                    listed[str(row["key"])] = _Listed(
                        field_text(row.get("url")), row.get("caption"), row.get("status"), user
                    )
        except (OSError, ValueError) as error:
            self.counts["unreadable_metadata"] += 1
            self._problem(f"{parquet}: unreadable shard metadata ({error})")
            return {}
        return listed

    def _metadata(self, raw: bytes | None, place: str) -> tuple[str | None, object, str | None, str | None]:
        """URL, caption, problem and user from a sample's ``.json``."""
        if raw is None:
            return None, None, None, None
        try:
            meta = json.loads(raw)
            if not isinstance(meta, dict):
                raise ValueError("not a JSON object")
        except ValueError as error:
            return None, None, f"{place}: unreadable metadata ({error})", None
        user = self._user(meta)
        return field_text(meta.get("url")), meta.get("caption"), None, user

    def _sample(
        self,
        key: str,
        parts: dict[str, bytes],
        place: str,
        listed: _Listed | None,
        refused: tuple[str, str | None] | None = None,
    ) -> _Sample:
        """A sample of the files or webdataset layout from what the shard holds of it (``parts``, by extension)
        and its metadata row; its image missing is ``not_downloaded`` when the metadata says the download failed,
        else ``missing_image`` (img2dataset writes a sample's ``.txt`` and ``.json`` with its image alone).
        ``refused``: the reason (``outside_link``, ``too_large``) and place of a file of it that was not read."""
        url, caption, problem, user = self._metadata(parts.get("json"), f"{place}/{key}.json")
        status = None
        if listed is not None:
            url, status, user = url or listed.url, listed.status, user or listed.user
            caption = caption if caption is not None else listed.caption
        return self._sample_of(key, parts, place, url, caption, status, problem, refused)._replace(user=user)

    def _sample_of(
        self,
        key: str,
        parts: dict[str, bytes],
        place: str,
        url: str | None,
        caption: object,
        status: str | None,
        problem: str | None,
        refused: tuple[str, str | None] | None,
    ) -> _Sample:
        """The sample of :meth:`_sample` from its metadata, before its user."""
        if refused is not None:
            return _Sample(key, url, _quiet_caption(parts.get("txt", caption)), None, *refused)
        if "txt" in parts:
            caption = parts["txt"]
        data = next((parts[extension] for extension in IMAGE_EXTENSIONS if extension in parts), None)
        if data is None:
            if status != "success" and (status is not None or not parts):
                return _Sample(key, url, _quiet_caption(caption), None, "not_downloaded")
            why = "listed as downloaded" if status == "success" else "its caption or metadata written"
            return _Sample(key, url, _quiet_caption(caption), None, "missing_image", f"{place}/{key}: {why}, no image")
        if problem is not None:
            return _Sample(key, url, None, data, "bad_metadata", problem)
        return self._with_caption(key, url, caption, data, f"{place}/{key}")

    def _with_caption(self, key: str, url: str | None, caption: object, data: bytes | None, place: str) -> _Sample:
        try:
            return _Sample(key, url, sample_caption(caption), data)  # type: ignore[arg-type]
        except ValueError as error:
            return _Sample(key, url, None, data, "unreadable_caption", f"{place}: caption {error}")

    def _files(self, shards: list[Path]) -> Iterator[_Sample]:
        for shard in shards:
            if self._outside(shard):
                continue
            listed = self._listed(shard)
            found: dict[str, dict[str, Path]] = {}
            for path in shard.iterdir():
                stem, _, extension = path.name.partition(".")
                if path.is_file() and extension.lower() in (*IMAGE_EXTENSIONS, "txt", "json"):
                    found.setdefault(stem, {})[extension.lower()] = path
            for key in sorted(found.keys() | listed.keys()):
                parts: dict[str, bytes] = {}
                refused = None
                for extension, path in found.get(key, {}).items():
                    if self._outside(path):
                        refused = refused or ("outside_link", None)  # named as counted
                    elif path.stat().st_size > self.max_member:
                        refused = refused or ("too_large", self._too_large(path, path.stat().st_size))
                    else:
                        parts[extension] = path.read_bytes()
                yield self._sample(key, parts, str(shard), listed.get(key), refused)

    def _too_large(self, place: Path | str, size: int) -> str:
        return f"{place}: {size:,} bytes, over the cap of {self.max_member:,}; not read"

    def _webdataset(self, shards: list[Path]) -> Iterator[_Sample]:
        for path in shards:
            yield from self._tar(path)

    def _tar(self, path: Path) -> Iterator[_Sample]:
        """A webdataset shard's samples, one member group at a time, then those its metadata lists that it lacks."""
        if self._outside(path):
            return
        listed = self._listed(path)
        seen: set[str] = set()
        refused: tuple[str, str | None] | None = None  # the current sample's member left unread, and why

        def sample(key: str, parts: dict[str, bytes]) -> Iterator[_Sample]:
            stem = key.rpartition("/")[2]  # img2dataset's members have no folder; the metadata keys none either
            if parts or refused or stem in listed:  # members of no sample's kind (none img2dataset writes): none
                seen.add(stem)
                yield self._sample(key, parts, str(path), listed.get(stem), refused)

        current: str | None = None
        parts: dict[str, bytes] = {}
        try:
            with _open_tar(path) as archive:
                for member in archive:
                    if not member.isfile():
                        continue
                    folder, _, name = member.name.rpartition("/")
                    stem, _, extension = name.partition(".")
                    key = f"{folder}/{stem}" if folder else stem
                    if key != current:
                        if current is not None:
                            yield from sample(current, parts)
                        current, parts, refused = key, {}, None
                    if extension.lower() not in (*IMAGE_EXTENSIONS, "txt", "json"):
                        continue
                    if member.size > self.max_member:  # left unread: the archive skips it as a stream
                        refused = refused or ("too_large", self._too_large(f"{path}/{member.name}", member.size))
                        continue
                    reader = archive.extractfile(member)
                    if reader is not None:
                        parts[extension.lower()] = reader.read()  # at most the cap: its size is under it
            if current is not None:
                yield from sample(current, parts)
        except (tarfile.TarError, OSError, EOFError) as error:
            self.counts["unreadable_shard"] += 1
            self._problem(f"{path}: unreadable after sample {current} ({error}); its remaining samples are lost")
        for key, row in listed.items():  # listed, never reached: failed downloads, missing or lost images
            if key not in seen:
                yield self._sample(key, {}, str(path), row)

    def _parquet(self, shards: list[Path]) -> Iterator[_Sample]:
        import pyarrow.parquet as pq

        for path in shards:
            if self._outside(path):
                continue
            source = pq.ParquetFile(readable(path))
            names = source.schema_arrow.names
            known = ("key", "url", "caption", "txt", "status", "jpg", self.user)
            wanted = [name for name in dict.fromkeys(known) if name in names]
            number = 0
            for batch in source.iter_batches(batch_size=_BATCH_ROWS, columns=wanted):
                for row in batch.to_pylist():
                    key = str(row["key"]) if row.get("key") is not None else f"{path.stem}:{number}"
                    number += 1
                    user = self._user(row)
                    yield self._parquet_sample(path, key, row)._replace(user=user)

    def _parquet_sample(self, path: Path, key: str, row: dict) -> _Sample:
        """A row of a parquet shard as a sample, before its user."""
        url = field_text(row.get("url"))
        caption = row.get("txt") if row.get("txt") is not None else row.get("caption")
        if row.get("jpg") is None:
            listed = row.get("status") == "success"  # downloaded, says the row, yet no bytes
            skip, why = ("missing_image", f"{path}: sample {key}: no image") if listed else (None, None)
            return _Sample(key, url, _quiet_caption(caption), None, skip or "not_downloaded", why)
        if len(row["jpg"]) > self.max_member:  # a parquet cell is read whole: the verdict is the same
            why = self._too_large(f"{path}: sample {key}", len(row["jpg"]))
            return _Sample(key, url, _quiet_caption(caption), None, "too_large", why)
        return self._with_caption(key, url, caption, row["jpg"], f"{path}: sample {key}")

    def _samples(self, shards: list[Path]) -> Iterator[_Sample]:
        return {"files": self._files, "webdataset": self._webdataset, "parquet": self._parquet}[self.layout](shards)

    def _metadata_listing(self, shard: Path) -> Iterator[tuple[str, str]] | None:
        """``(key, url)`` of every sample a shard's metadata parquet lists (the shard itself in the parquet layout),
        or None when there is no such listing (no parquet, or one without the keys and URLs)."""
        import pyarrow.parquet as pq

        parquet = shard if self.layout == "parquet" else self._metadata_parquet(shard)
        if self._outside(parquet):
            return None
        try:
            source = pq.ParquetFile(readable(parquet)) if parquet.is_file() else None
        except (OSError, ValueError):
            source = None
        names = source.schema_arrow.names if source is not None else []
        if source is None or "url" not in names or ("key" not in names and self.layout != "parquet"):
            return None

        def rows() -> Iterator[tuple[str, str]]:
            number = 0
            columns = [name for name in ("key", "url") if name in names]
            for batch in source.iter_batches(batch_size=_LISTING_ROWS, columns=columns):
                for row in batch.to_pylist():
                    key = str(row["key"]) if row.get("key") is not None else f"{shard.stem}:{number}"
                    number += 1
                    yield key, field_text(row.get("url")) or ""

        return rows()

    def _listing(self, shard: Path) -> Iterator[tuple[str, str]]:
        """``(key, url)`` of every sample a shard lists: the rows of its metadata parquet (the shard itself in the
        parquet layout), else the samples found in it."""
        listed = self._metadata_listing(shard)
        if listed is not None:
            yield from listed
            return
        for sample in self._samples([shard]):
            yield sample.key, sample.url or ""

    def listing(self) -> list[tuple[str, str]] | None:
        """``(key, url)`` of every sample the shards read list in their metadata, shard by shard in the shard's
        order, or None when a shard has no metadata listing (its samples as read are then its listing)."""
        found: list[tuple[str, str]] = []
        for shard in self._shard_paths():
            listed = self._metadata_listing(shard)
            if listed is None:
                return None
            found += listed
        return found

    def tsv_places(self, urls: set[str] | None = None) -> dict[str, dict[str, int]]:
        """Shard name → key → the sample's place among the samples of its URL (0 for the first), for the ``urls``
        given, by default those the TSV repeats (none without a TSV).

        The samples of a URL are in key order over the whole folder: img2dataset numbers a sample by the TSV row
        it was downloaded for (its shard, then its row in the shard), whatever order the downloads finished in.
        Reads the shards' metadata (keys and URLs alone) when the TSV repeats a URL, else nothing."""
        if urls is None:
            if self.tsv is None:
                return {}
            rows = Counter(url for _line, _caption, url in read_caption_tsv(self.tsv, []))
            urls = {url for url, count in rows.items() if count > 1}
        if not urls:
            return {}
        counts, problems = self.counts.copy(), list(self.problems)  # a metadata problem is counted when read
        refused = set(self._refused)
        found = []
        for number, shard in enumerate(self._all_shard_paths()):
            for place, (key, url) in enumerate(self._listing(shard)):
                if url in urls:  # img2dataset's keys are numbers of one width; others keep the shard's order
                    found.append(((number, *_place_order(key, place)), shard, key, url))
        self.counts, self.problems, self._refused = counts, problems, refused
        seen: Counter[str] = Counter()
        places: dict[str, dict[str, int]] = {}
        for _order, shard, key, url in sorted(found, key=lambda entry: entry[0]):
            places.setdefault(shard.name, {})[key] = seen[url]
            seen[url] += 1
        return places

    # ---- the records ----

    def _check(self, data: bytes) -> ImageFacts | str:
        """The image's facts, or why it is refused; the same bytes are decoded once (the last ``CHECKED`` files)."""
        digest = hashlib.blake2b(data, digest_size=20).digest()
        known = self._checked.get(digest)
        if known is None:
            known = self._checked[digest] = self._inspect(data)
            if len(self._checked) > CHECKED:
                self._checked.popitem(last=False)
        else:
            self._checked.move_to_end(digest)
        return known

    def _inspect(self, data: bytes) -> ImageFacts | str:
        try:
            facts = inspect_image(data, max_pixels=self.max_pixels, hash_size=self.hash_size, describe=self._describe)
        except ImageSkip as skip:
            return skip.reason
        if self.require_jpeg and facts.format != "JPEG":
            return "not_jpeg"
        if min(facts.width, facts.height) < self.min_side:
            return "under_400x400"
        return facts

    def read_samples(self, check_uncaptioned: bool = False) -> Iterator[SampleRead]:
        """Every sample of the shards read, as its shard holds it (a build's task: the caption TSV is joined to the
        samples by the engine). Its image is checked when nothing before says why it has none (``skip``) and it has
        a caption of its own, or ``check_uncaptioned`` (a TSV may give it one). ``counts`` then holds ``samples``
        and the shards' problems (``unreadable_shard``, ``unreadable_metadata``), ``problems`` their places and
        the samples'."""
        self._clear()
        for sample in self._samples(self._shard_paths()):
            self.counts["samples"] += 1
            if sample.problem is not None:
                self._problem(sample.problem)
            image = None
            if sample.skip is None and (sample.caption or check_uncaptioned):
                image = self._check(sample.data)  # type: ignore[arg-type]
            yield SampleRead(sample.key, sample.url or "", sample.caption, sample.skip, image, sample.user)

    def _record(
        self, key: str | None, url: str, caption: str | None, image: ImageFacts | str, source: str = "sample"
    ) -> DatasetRecord:
        self.counts["samples"] += 1
        self.counts["kept" if isinstance(image, ImageFacts) else image] += 1
        return DatasetRecord(key, url, caption, image, source)

    def __iter__(self) -> Iterator[DatasetRecord]:
        captions: dict[str, list[str]] = {}
        tsv_problems: list[str] = []
        if self.tsv is not None:
            for _line, caption, url in read_caption_tsv(self.tsv, tsv_problems):
                captions.setdefault(url, []).append(caption)
        places = self.places
        if places is None:
            repeated = {url for url, rows in captions.items() if len(rows) > 1}
            places = {key: place for shard in self.tsv_places(repeated).values() for key, place in shard.items()}
        self._clear()
        if self.tsv is not None:
            # a shard of a build leaves the TSV's bad rows to the build, which reads them once for every shard
            if self.only is None:
                self.problems.extend(tsv_problems)
            self.counts["tsv_rows"] = sum(len(rows) for rows in captions.values())
        matched: set[tuple[str, int]] = set()  # (URL, row among the URL's rows) given to a sample
        for sample in self._samples(self._shard_paths()):
            url = sample.url or ""
            caption, source = sample.caption, "sample"
            rows = captions.get(url)
            if rows:
                place = 0 if len(rows) == 1 else places.get(sample.key)
                if place is not None and place < len(rows):
                    # a row counts once (a URL the TSV names once may have several samples, if the TSV is not
                    # the one img2dataset read; across a build's shards, each shard counts it)
                    self.counts["tsv_matched"] += (url, place) not in matched
                    matched.add((url, place))
                    if not caption and sample.skip != "unreadable_caption":
                        caption, source = rows[place] or None, "tsv"
            if sample.problem is not None:
                self._problem(sample.problem)
            if sample.skip is not None:
                yield self._record(sample.key, url, caption, sample.skip, source)
            elif not caption:
                yield self._record(sample.key, url, caption, "no_caption", source)
            else:
                yield self._record(sample.key, url, caption, self._check(sample.data), source)  # type: ignore[arg-type]
        if self.only is not None:
            return
        for url, rows in captions.items():  # TSV rows whose image img2dataset did not write
            for place, caption in enumerate(rows):
                if (url, place) not in matched:
                    yield self._record(None, url, caption or None, "not_downloaded", "tsv")

    def report(self) -> str:
        """One line of the counts, skip reasons in their order: what a build prints after reading."""
        reasons = ", ".join(
            f"{reason} {self.counts[reason]:,}"
            for reason in (*DATASET_SKIPS, "unreadable_shard", "unreadable_metadata", "outside_links")
            if self.counts[reason]
        )
        return f"{self.folder} ({self.layout}): {self.counts['samples']:,} samples, {self.counts['kept']:,} kept" + (
            f"; dropped: {reasons}" if reasons else ""
        )
