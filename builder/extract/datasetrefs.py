"""An image–caption dataset's shard as a unit of a build's extraction (thesis §5.1): its samples as the engine
joins them to the caption TSV, and from the join the reference rows and image index every engine groups, as a
WARC file's are (:mod:`builder.extract.webrefs`).

:class:`builder.sources.img2dataset.ImageDataset` reads a shard of an img2dataset output folder (a numbered
folder, a ``.tar`` or a ``.parquet`` file) and checks each image as §5.1.1 says. A task writes one row per sample
(:data:`SAMPLE_SCHEMA`): its key and URL as the shard holds them, its own caption, the reason known before its image
is read, its image's facts (the MD5 of its pixels, its perceptual hashes, as JSON) or the reason a check refused it,
and what its rows will carry: the URL normalized as the build normalizes URLs, its ``page_id`` (the shard's number
× ``PAGE_STRIDE`` + the sample's key: img2dataset's keys are numbers in the order of the TSV rows; else its place
in the shard, so rows sort the same in every engine and whatever order the downloads finished in) and the shard's
path. With a caption TSV it also writes the shard's listing (:data:`LISTING_SCHEMA`: every sample its metadata
lists, in the order a URL's samples take the URL's TSV rows) and checks the images of samples without a caption of
their own, which a TSV row may caption.

A task never reads the TSV: Conceptual Captions' 3.3 million rows would be read by every shard's task, and held
by each. The engine reads the TSV once, in parts (:mod:`builder.extract.captiontsv`), and joins it to the samples
by URL in its own tables; what a sample becomes is decided there. Each sample whose image passed and that has a
caption becomes one reference row (:data:`builder.extract.webrefs.DATASET_ROW_SCHEMA`: ``image`` and ``page`` the
normalized URL, ``record`` the key, ``source`` where the caption came from, ``sample`` or ``tsv``, ``warc`` the
shard's path, ``user`` the sample's user when the build reads a column of users) and one image-index row
(:data:`builder.extract.web.WEB_IMAGE_SCHEMA`); any other is counted by its reason. If a URL repeats, the index
keeps the first sample's image, as a crawl's does.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa

from builder.extract.web import callable_name, write_task_files
from builder.extract.webrefs import PAGE_STRIDE
from builder.sources.captions import MAX_PROBLEMS
from builder.sources.img2dataset import DATASET_SKIPS, ImageDataset, in_place_order
from builder.storage import exists, identity, join, name_of

__all__ = [
    "LISTING_SCHEMA",
    "SAMPLE_SCHEMA",
    "DatasetBuildResult",
    "DatasetBuildTask",
    "DatasetRead",
    "dataset_tasks",
    "run_dataset_task",
]

_KEY_PLACES = PAGE_STRIDE // 2  # page ids below it are img2dataset keys, above it places as read
NO_URL = "no_url"  # a sample img2dataset wrote without its URL: nothing to trace it to, not compared
# what a shard's task counts itself: its samples, and the problems of the shard as a whole
SHARD_COUNTS = ("samples", "unreadable_shard", "unreadable_metadata", "outside_links")
# a sample as its shard holds it, and what its rows carry if the join keeps it
SAMPLE_SCHEMA = pa.schema(
    [
        ("task", pa.int64()),  # the shard's number
        ("number", pa.int64()),  # the sample's place in the shard, as read
        ("key", pa.string()),
        ("url", pa.string()),  # as the shard holds it ("" for none): the TSV is joined on it
        ("image", pa.string()),  # the URL normalized; "" when it cannot be
        ("page_id", pa.int64()),
        ("caption", pa.string()),  # its own, cleaned; null when it has none
        ("skip", pa.string()),  # the reason known before its image is read
        ("verdict", pa.string()),  # why a check refused its image; null when it passed or was not checked
        ("facts", pa.string()),  # its image's facts as JSON, when it passed
        ("length", pa.int64()),
        ("warc", pa.string()),  # the shard's path
        ("user", pa.string()),  # its user (the build's user column, in its metadata); null: none
    ]
)
# the sample files' format in their names: a work folder's files of another format (before ``user``) are read anew,
# never read as this one
SAMPLES_FORMAT = "samples 2"
# every sample a shard's metadata lists: ``rank`` its place in the shard's listing in place order
LISTING_SCHEMA = pa.schema([("task", pa.int64()), ("rank", pa.int64()), ("key", pa.string()), ("url", pa.string())])


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
        """The shard's samples (what the engines' progress shows; the join decides which become references)."""
        return self.counts.get("samples", 0)

    def problems(self) -> list[str]:
        return list(self.shard_problems)

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> DatasetBuildResult:
        return cls(**json.loads(text))


@dataclasses.dataclass(frozen=True)
class DatasetBuildTask:
    """One shard of an img2dataset folder: its number among the shards, where it is, whether the build joins a
    caption TSV (the task writes the shard's listing, and checks the images of samples without a caption), the
    hash length of the images' facts, how URLs are normalized, and the work folder. It holds nothing of the TSV."""

    number: int
    folder: str
    shard_name: str
    tsv: bool
    hash_size: int
    work: str
    normalize: Callable[[str], str] | None = None
    stamp: str = ""  # the shard's identity (:func:`shard_identity`): a shard rewritten in place is read again
    feature: str = ""  # the feature vector each image keeps (a Déjà paraphrases config's); "": none
    user: str = ""  # the column of users each sample's metadata holds (a Déjà config's); "": none read

    def _stem(self) -> str:
        """The task's files are named by what they are read from and how, so a resumed build reuses only its own."""
        what = "\x1f".join(
            (self.folder, self.shard_name, str(self.tsv), str(self.hash_size), self._normalizer(), SAMPLES_FORMAT)
        )
        what += f"\x1f{self.stamp}" if self.stamp else ""
        what += f"\x1ffeature {self.feature}" if self.feature else ""
        what += f"\x1fuser {self.user}" if self.user else ""
        digest = hashlib.blake2b(what.encode(), digest_size=6).hexdigest()
        return f"dataset-{self.number:05d}-{digest}"

    @property
    def samples(self) -> Path:
        return Path(self.work) / f"{self._stem()}.parquet"

    @property
    def listing(self) -> Path:
        return Path(self.work) / f"{self._stem()}-listing.parquet"

    def new_result(self) -> DatasetBuildResult:
        return DatasetBuildResult()

    def run(self) -> DatasetBuildResult:
        """Write the shard's samples and listing (and its counts beside them); a task done before is not run again."""
        files = {"sample": (self.samples, SAMPLE_SCHEMA), "listing": (self.listing, LISTING_SCHEMA)}
        return write_task_files(files, self.rows, self.new_result())

    def rows(self, result: DatasetBuildResult) -> Iterator[tuple[str, dict[str, Any]]]:
        """``("sample", row)`` per sample in the shard's order, then (with a TSV) ``("listing", row)`` per sample
        the shard lists, in place order."""
        place = str(join(self.folder, self.shard_name))
        dataset: ImageDataset | None = None
        read: list[tuple[str, str]] = []
        try:
            dataset = ImageDataset(
                self.folder, hash_size=self.hash_size, shards=[self.shard_name], feature=self.feature, user=self.user
            )
            for number, sample in enumerate(dataset.read_samples(check_uncaptioned=self.tsv)):
                facts = sample.image if sample.image is not None and not isinstance(sample.image, str) else None
                if self.tsv:
                    read.append((sample.key, sample.url))
                yield (
                    "sample",
                    {
                        "task": self.number,
                        "number": number,
                        "key": sample.key,
                        "url": sample.url,
                        "image": self._url(sample.url),
                        "page_id": self.number * PAGE_STRIDE + _place(sample.key, number),
                        "caption": sample.caption,
                        "skip": sample.skip,
                        "verdict": sample.image if isinstance(sample.image, str) else None,
                        "facts": None if facts is None else json.dumps(facts.as_dict(), sort_keys=True),
                        "length": None if facts is None else facts.bytes,
                        "warc": place,
                        "user": sample.user,
                    },
                )
            if self.tsv:  # the samples as read are the listing of a shard without metadata
                listed = dataset.listing()
                for rank, (key, url) in enumerate(in_place_order(read if listed is None else listed)):
                    yield "listing", {"task": self.number, "rank": rank, "key": key, "url": url}
        except (OSError, ValueError) as error:  # a shard that vanished or whose parquet cannot be read at all
            result.failure = f"{place}: {error}"
        if dataset is not None:
            result.shard_problems.extend(dataset.problems[:MAX_PROBLEMS])
            result.counts = {name: dataset.counts[name] for name in SHARD_COUNTS}

    def _normalizer(self) -> str:
        """The normalizer's name (its repr holds an address, which changes from run to run)."""
        return callable_name(self.normalize)

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


def run_dataset_task(task: Any) -> Any:
    """A dataset build's unit of work in a worker: a shard's task, or a part of the caption TSV."""
    return task.run()


def dataset_tasks(
    folder: str | Path,
    tsv: bool,
    hash_size: int,
    work: Path,
    normalize: Callable[[str], str] | None = None,
    *,
    feature: str = "",
    user: str = "",
) -> list[DatasetBuildTask]:
    """One task per shard of the folder, in the layout's order (the unit of work of both engines); none reads the
    caption TSV (``tsv``: whether the build joins one). ``user``: the column of users the samples carry."""
    dataset = ImageDataset(folder)
    return [
        DatasetBuildTask(
            number,
            str(folder),
            name,
            tsv,
            hash_size,
            str(work),
            normalize,
            shard_identity(folder, name, dataset.layout),
            feature,
            user,
        )
        for number, name in enumerate(dataset.shard_names())
    ]


def shard_identity(folder: str | Path, name: str, layout: str) -> str:
    """A shard's identity on a disk or a store: its file or folder, and the metadata parquet img2dataset wrote
    beside it (the parquet layout's shard is that file)."""
    parts = [name] if layout == "parquet" else [name, f"{name.removesuffix('.tar')}.parquet"]
    return "\x1f".join(identity(where) for part in parts if exists(where := join(folder, part)))


@dataclasses.dataclass
class DatasetRead:
    """What a dataset build's extraction read: the folder, its layout and shards, each shard's result, the caption
    TSV's counts, what the engine's join of the TSV to the samples counted (``joined``: ``samples``, ``kept``, each
    reason, ``tsv_matched``), and the files the core reads after it (the image index files, each image URL's
    references)."""

    folder: str
    layout: str
    tsv: str | None
    tsv_rows: int  # the TSV's rows with a caption and a URL (0 without a TSV)
    tsv_unreadable: int  # its rows left out (a row without a URL, or no UTF-8 text)
    tsv_problems: list[str]  # the first of those, named
    sources: list[str]  # the shards' names
    results: list[DatasetBuildResult]
    joined: Mapping[str, int]
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
                "name": name_of(self.folder),
                "source": self.folder,
                "kind": "dataset",
                "layout": self.layout,
                "shards": len(self.sources),
                "tsv": self.tsv,
            }
        ]

    def counts(self) -> dict[str, object]:
        """The dataset's counts (§5.1.1) over the shards that were read: the shards' own, and the join's."""
        read = [result for result in self.results if result.error is None]
        added: Counter[str] = Counter()
        for result in read:
            added.update(result.counts)
        joined = Counter(self.joined)
        counts: dict[str, object] = {
            "folder": self.folder,
            "layout": self.layout,
            "shards": len(self.sources),
            "shards_failed": len(self.results) - len(read),
            "records": joined["samples"],
            "images": joined["kept"],
            "skipped": {reason: joined[reason] for reason in (*DATASET_SKIPS, NO_URL)},
            "unreadable_shards": added["unreadable_shard"],
            "unreadable_metadata": added["unreadable_metadata"],
            "links_outside_the_folder": added["outside_links"],  # not followed: shards, metadata, samples' files
        }
        if self.tsv is not None:
            counts["tsv"] = self.tsv
            counts["tsv_rows"] = self.tsv_rows
            counts["tsv_rows_matched"] = joined["tsv_matched"]
            counts["tsv_rows_without_an_image"] = max(0, self.tsv_rows - joined["tsv_matched"])
            counts["tsv_rows_unreadable"] = self.tsv_unreadable
        return counts


def with_unusable_urls(results: Sequence[DatasetBuildResult], unusable: Sequence[tuple[int, str]]) -> None:
    """Put in front of each shard's problems its samples the join kept but whose URL is unusable (``unusable``:
    the first ``(shard number, problem)``, in sample order), as a shard's reading named them before its own."""
    named: dict[int, list[str]] = {}
    for number, problem in unusable:
        named.setdefault(number, []).append(problem)
    for number, result in enumerate(results):
        first = named.get(number, [])[:MAX_PROBLEMS]
        if first:
            result.shard_problems = [*first, *result.shard_problems[: MAX_PROBLEMS - len(first)]]
