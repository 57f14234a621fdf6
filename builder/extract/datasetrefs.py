"""An image–caption dataset's shard as a unit of a build's extraction (thesis §5.1): its samples as the reference
rows and image index every engine groups, as a WARC file's are (:mod:`builder.extract.webrefs`).

:class:`builder.sources.img2dataset.ImageDataset` reads a shard of an img2dataset output folder (a numbered
folder, a ``.tar`` or a ``.parquet`` file) and checks each image as §5.1.1 says. Each sample whose image passed
becomes one reference row and one image-index row:

- the reference (:data:`builder.extract.webrefs.WEB_ROW_SCHEMA`): ``image`` and ``page`` the sample's image URL
  (normalized as the build normalizes URLs; a dataset has no pages, and the URL is where the caption's image
  was found), ``record`` its img2dataset key, ``caption`` its caption, ``source`` where the caption came from
  (``sample``: its own ``.txt``/``.json``; ``tsv``: the caption TSV), ``warc`` the shard's path; ``page_id`` the
  shard's number × ``PAGE_STRIDE`` + the sample's key (img2dataset's keys are numbers in the order of the TSV rows;
  else its place in the shard), so rows sort the same in every engine and whatever order the downloads finished in;
- the index row (:data:`builder.extract.web.WEB_IMAGE_SCHEMA`): the same URL and key, the image's bytes and its
  :class:`builder.sources.images.ImageFacts` as JSON (the MD5 of its pixels, its perceptual hashes).

A sample whose image failed a §5.1.1 check, that has no caption or no URL, is no row: it is counted by its
reason in the task's result. If a URL repeats, the index keeps the first sample's image, as a crawl's does.

A task reads its shard alone, but a URL's TSV captions must not depend on which shard holds which of its samples:
:func:`dataset_tasks` finds, once, the place of each sample of a URL the TSV repeats among that URL's samples
(:meth:`builder.sources.img2dataset.ImageDataset.tsv_places`) and hands each task its shard's.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from builder.extract.webrefs import PAGE_STRIDE, run_build_task
from builder.sources.img2dataset import DATASET_SKIPS, MAX_PROBLEMS, ImageDataset

__all__ = ["DatasetBuildResult", "DatasetBuildTask", "DatasetRead", "dataset_tasks", "run_dataset_build_task"]

_KEY_PLACES = PAGE_STRIDE // 2  # page ids below it are img2dataset keys, above it places as read
NO_URL = "no_url"  # a sample img2dataset wrote without its URL: nothing to trace it to, not compared
# the counters of a shard's reading: the reasons of ImageDataset, then the build's own, then shard-level problems
SHARD_COUNTS = ("samples", "kept", *DATASET_SKIPS, NO_URL, "unreadable_shard", "unreadable_metadata", "tsv_matched")


@dataclasses.dataclass
class DatasetBuildResult:
    """A shard's counts (:data:`SHARD_COUNTS`) and the places of its problems; ``failure`` when it could not be
    read at all."""

    counts: dict[str, int] = dataclasses.field(default_factory=dict)
    shard_problems: list[str] = dataclasses.field(default_factory=list)
    failure: str | None = None

    @property
    def error(self) -> str | None:
        return self.failure

    @property
    def references(self) -> int:
        """The shard's reference rows: its samples kept (what the engines' progress shows)."""
        return self.counts.get("kept", 0)

    def problems(self) -> list[str]:
        return list(self.shard_problems)

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> DatasetBuildResult:
        return cls(**json.loads(text))


@dataclasses.dataclass(frozen=True)
class DatasetBuildTask:
    """One shard of an img2dataset folder: its number among the shards, where it is, the caption TSV, the hash
    length of the images' facts, the build's language, how URLs are normalized, and the work folder."""

    number: int
    folder: str
    shard_name: str
    tsv: str | None
    hash_size: int
    language: str
    work: str
    normalize: Callable[[str], str] | None = None
    # (key, place) of this shard's samples of URLs the TSV repeats, found over the whole folder by dataset_tasks;
    # None: the task finds them itself (reading every shard's metadata)
    places: tuple[tuple[str, int], ...] | None = None

    def _stem(self) -> str:
        """The task's files are named by what they are read from and how, so a resumed build reuses only its own."""
        what = "\x1f".join(
            (
                self.folder,
                self.shard_name,
                self.tsv or "",
                str(self.hash_size),
                self.language,
                self._normalizer(),
                repr(self.places),
            )
        )
        digest = hashlib.blake2b(what.encode(), digest_size=6).hexdigest()
        return f"dataset-{self.number:05d}-{digest}"

    @property
    def shard(self) -> Path:
        return Path(self.work) / f"{self._stem()}.parquet"

    @property
    def images(self) -> Path:
        return Path(self.work) / f"{self._stem()}-images.parquet"

    def new_result(self) -> DatasetBuildResult:
        return DatasetBuildResult()

    def rows(self, result: DatasetBuildResult) -> Iterator[tuple[str, dict[str, Any]]]:
        """``("image", row)`` and ``("reference", row)`` per kept sample, in the shard's order."""
        counts: Counter[str] = Counter()
        place = str(Path(self.folder) / self.shard_name)
        dataset: ImageDataset | None = None
        try:
            places = None if self.places is None else dict(self.places)
            dataset = ImageDataset(
                self.folder, self.tsv, hash_size=self.hash_size, shards=[self.shard_name], places=places
            )
            for number, record in enumerate(dataset):
                if isinstance(record.image, str):
                    continue  # counted by the reader under its reason
                url = self._url(record.url)
                if not url:
                    counts[NO_URL] += 1
                    counts["kept"] -= 1
                    if len(result.shard_problems) < MAX_PROBLEMS:
                        result.shard_problems.append(f"{place}: sample {record.key} has no usable URL; left out")
                    continue
                yield (
                    "image",
                    {
                        "image": url,
                        "record_id": record.key,
                        "date": None,
                        "content_type": None,
                        "length": record.image.bytes,
                        "facts": json.dumps(dataclasses.asdict(record.image), sort_keys=True),
                        "skip": None,
                        "warc": place,
                    },
                )
                yield (
                    "reference",
                    {
                        "image": url,
                        "page": url,
                        "page_id": self.number * PAGE_STRIDE + _place(record.key, number),
                        "revision_id": 0,
                        "position": 0,
                        "source": record.source,
                        "template": None,
                        "caption": record.caption,
                        "alt": "",
                        "language": self.language,
                        "parameters": None,
                        "record": record.key,
                        "date": None,
                        "page_language": None,
                        "warc": place,
                    },
                )
        except (OSError, ValueError) as error:  # a shard that vanished or whose parquet cannot be read at all
            result.failure = f"{place}: {error}"
        if dataset is not None:
            counts.update(dataset.counts)
            result.shard_problems.extend(dataset.problems[: MAX_PROBLEMS - len(result.shard_problems)])
        result.counts = {name: counts[name] for name in SHARD_COUNTS}

    def _normalizer(self) -> str:
        """The normalizer's name (its repr holds an address, which changes from run to run)."""
        if self.normalize is None:
            return ""
        return f"{getattr(self.normalize, '__module__', '')}.{getattr(self.normalize, '__qualname__', '')}"

    def _url(self, url: str) -> str:
        if not url or self.normalize is None:
            return url
        try:
            return self.normalize(url)
        except ValueError:
            return ""


def _place(key: str | None, number: int) -> int:
    """A sample's place in its shard's page ids: its img2dataset key, a number that follows the TSV rows' order
    (a shard's metadata and parquet rows follow the order its downloads finished in), else its place as read."""
    if key is not None and key.isdigit() and int(key) < _KEY_PLACES:
        return int(key)
    return _KEY_PLACES + number


def run_dataset_build_task(task: DatasetBuildTask) -> DatasetBuildResult:
    """:func:`builder.extract.webrefs.run_build_task` for a dataset shard."""
    return run_build_task(task)


def dataset_tasks(
    folder: str | Path,
    tsv: str | Path | None,
    hash_size: int,
    language: str,
    work: Path,
    normalize: Callable[[str], str] | None = None,
) -> list[DatasetBuildTask]:
    """One task per shard of the folder, in the layout's order (the unit of work of both engines); with a TSV that
    repeats URLs, each task gets the places of its samples of those URLs (read here once from the shards' metadata)."""
    dataset = ImageDataset(folder, tsv)
    places = dataset.tsv_places()
    text = None if tsv is None else str(tsv)
    return [
        DatasetBuildTask(
            number,
            str(folder),
            name,
            text,
            hash_size,
            language,
            str(work),
            normalize,
            tuple(sorted(places.get(name, {}).items())),
        )
        for number, name in enumerate(dataset.shard_names())
    ]


@dataclasses.dataclass
class DatasetRead:
    """What a dataset build's extraction read: the folder, its layout and shards, each shard's result, and the
    files the core reads after it (the image index files, each image URL's references)."""

    folder: str
    layout: str
    tsv: str | None
    tsv_rows: int  # the TSV's rows with a caption and a URL (0 without a TSV)
    tsv_problems: list[str]
    sources: list[str]  # the shards' names
    results: list[DatasetBuildResult]
    index: list[Path]
    referenced: Path | None = None

    def failures(self) -> list[str]:
        return [result.error for result in self.results if result.error is not None]  # type: ignore[misc]

    def problems(self) -> list[str]:
        return [*self.tsv_problems, *(problem for result in self.results for problem in result.problems())]

    def dumps(self) -> list[dict[str, object]]:
        """The input as funnel.json and the card name it: the dataset folder, its layout and shards, the TSV."""
        return [
            {
                "name": Path(self.folder).name,
                "source": self.folder,
                "kind": "dataset",
                "layout": self.layout,
                "shards": len(self.sources),
                "tsv": self.tsv,
            }
        ]

    def counts(self) -> dict[str, object]:
        """The dataset's counts (§5.1.1), added over the shards that were read."""
        read = [result for result in self.results if result.error is None]
        added: Counter[str] = Counter()
        for result in read:
            added.update(result.counts)
        counts: dict[str, object] = {
            "folder": self.folder,
            "layout": self.layout,
            "shards": len(self.sources),
            "shards_failed": len(self.results) - len(read),
            "records": added["samples"],
            "images": added["kept"],
            "skipped": {reason: added[reason] for reason in (*DATASET_SKIPS, NO_URL)},
            "unreadable_shards": added["unreadable_shard"],
            "unreadable_metadata": added["unreadable_metadata"],
        }
        if self.tsv is not None:
            counts["tsv"] = self.tsv
            counts["tsv_rows"] = self.tsv_rows
            counts["tsv_rows_matched"] = added["tsv_matched"]
            counts["tsv_rows_without_an_image"] = max(0, self.tsv_rows - added["tsv_matched"])
            counts["tsv_rows_unreadable"] = len(self.tsv_problems)
        return counts
