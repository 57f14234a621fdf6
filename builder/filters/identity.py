"""Image identity beyond the title: File redirects and files with equal SHA-1, as one map.

The paper identifies an image by its normalized ``File:`` title. This toolkit can also
recognise one image under several titles:

* **redirect** – a File-namespace page that redirects (``File:Old.jpg`` →
  ``File:New.jpg``, read from the pages-articles dump in the same pass as the articles):
  references to the old title belong to the target's cluster. Chains resolve to their
  end; a cycle resolves to its smallest title and is counted.
* **sha1** – the ``image`` table of a wiki (``…-image.sql.gz``; Commons publishes its own)
  gives each file's SHA-1 (``img_sha1``); titles whose files have the same SHA-1 are one
  image.

:class:`IdentityMap` turns both into a map title → canonical image that does not depend
on the order of its input: a title first follows its redirects; the canonical image of
a SHA-1 group is the smallest of its members' redirect targets. Engines apply it before
grouping, so that step 0 of Table 3 already counts merged clusters.

Memory: the image table is streamed row by row (:mod:`builder.sources.sqldump`) into a parquet
file in the work folder; DuckDB groups it by SHA-1 under the build's memory limit
(spilling to disk) and only the groups of two or more titles come back. The map then
holds the File redirects and the titles of those groups: on Commons (about 100 M files)
these are the duplicate uploads, a small fraction of the table.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from builder.common import duckdb_connection, sql_text
from builder.extract.tasks import Extraction
from builder.extract.wikitext import DEFAULT_FILE_ALIASES, normalize_title
from builder.sources.sqldump import SqlStats, iter_rows
from builder.storage import check_file, name_of

__all__ = [
    "Identity",
    "IdentityMap",
    "build_identity",
    "check_identities",
    "local_files",
    "pairs_per_identity",
    "read_image_tables",
]

IMAGE_TABLE = "image"
IMAGE_COLUMNS = ("img_name", "img_sha1")
MAP_SCHEMA = pa.schema([("file", pa.string()), ("redirect", pa.string()), ("image", pa.string())])
_SHA1_SCHEMA = pa.schema([("name", pa.string()), ("sha1", pa.string())])
_BATCH_ROWS = 100_000


@dataclasses.dataclass
class ImageTableStats:
    """What reading the image tables found and skipped."""

    rows: int = 0
    without_sha1: int = 0  # broken or missing files have an empty img_sha1
    unusable_names: int = 0  # not UTF-8, or no valid file title
    sha1_groups: int = 0  # SHA-1s shared by two or more titles


def _image_rows(paths: Sequence[str | Path], stats: ImageTableStats) -> Iterator[dict[str, str]]:
    """``{name, sha1}`` of every usable row of the image tables; what is skipped is counted."""
    for path in paths:
        counts = SqlStats()
        for raw_name, raw_sha1 in iter_rows(path, IMAGE_TABLE, IMAGE_COLUMNS, counts):
            stats.rows += 1
            if not raw_sha1:
                stats.without_sha1 += 1
                continue
            try:
                name = normalize_title("File:" + (raw_name or b"").decode("utf-8"), DEFAULT_FILE_ALIASES)
            except UnicodeDecodeError:
                name = None
            if name is None:
                stats.unusable_names += 1
                continue
            yield {"name": name, "sha1": raw_sha1.decode("ascii", "replace")}


def check_image_tables(paths: Sequence[str | Path]) -> None:
    """Refuse, before any dump is read, an image table path that is missing or not a file."""
    for path in paths:
        check_file(path, "image table dump", "an")


def sha1_groups(paths: Sequence[str | Path], work: Path, memory_limit: str) -> tuple[list[list[str]], ImageTableStats]:
    """The titles that share a file (SHA-1), two or more per group, sorted; grouped by DuckDB on disk."""
    stats = ImageTableStats()
    work.mkdir(parents=True, exist_ok=True)
    table = work / "image-sha1.parquet"
    rows: list[dict[str, str]] = []
    with pq.ParquetWriter(table, _SHA1_SCHEMA, compression="zstd") as writer:
        for row in _image_rows(paths, stats):
            rows.append(row)
            if len(rows) >= _BATCH_ROWS:
                writer.write_table(pa.Table.from_pylist(rows, schema=_SHA1_SCHEMA))
                rows.clear()
        writer.write_table(pa.Table.from_pylist(rows, schema=_SHA1_SCHEMA))
    with duckdb_connection(work / "duckdb", memory_limit) as connection:
        groups = connection.sql(
            f"SELECT list(DISTINCT name ORDER BY name) AS names FROM read_parquet({sql_text(table)}) "
            "GROUP BY sha1 HAVING count(DISTINCT name) > 1 ORDER BY names"
        ).fetchall()
    table.unlink()
    stats.sha1_groups = len(groups)
    return [list(names) for (names,) in groups], stats


class IdentityMap:
    """Title → redirect target and title → canonical image, the same for any order of the input."""

    def __init__(self, redirects: Iterable[tuple[str, str]] = (), groups: Iterable[Sequence[str]] = ()) -> None:
        targets: dict[str, str] = {}
        self.conflicts = 0  # titles that several redirect pages (in several dumps) send to different targets
        for source, target in sorted(set(redirects)):
            if source in targets:
                self.conflicts += 1
            else:
                targets[source] = target
        self.cycles = 0
        self.redirect: dict[str, str] = {}
        for source in sorted(targets):
            self._resolve(source, targets)
        self.redirect = {title: end for title, end in self.redirect.items() if end != title}
        self.image = self._merge_groups(groups)
        for title, end in self.redirect.items():
            self.image.setdefault(title, self.image.get(end, end))

    def _resolve(self, title: str, targets: dict[str, str]) -> str:
        """Follow redirects from ``title`` to the end of the chain; a cycle ends at its smallest title."""
        path: list[str] = []
        seen: dict[str, int] = {}
        current = title
        while current in targets and current not in self.redirect and current not in seen:
            seen[current] = len(path)
            path.append(current)
            current = targets[current]
        if current in self.redirect:
            end = self.redirect[current]
        elif current in seen:  # back to a title of this path: the titles from there on form a cycle
            self.cycles += 1
            end = min(path[seen[current] :])
        else:
            end = current
        for step in path:
            self.redirect[step] = end
        return end

    def _merge_groups(self, groups: Iterable[Sequence[str]]) -> dict[str, str]:
        """Titles of one file (after their redirects) get the smallest of them; groups sharing a title join."""
        parent: dict[str, str] = {}

        def root(title: str) -> str:
            while parent.setdefault(title, title) != title:
                parent[title] = parent[parent[title]]
                title = parent[title]
            return title

        members: set[str] = set()
        for group in groups:
            ends = [self.redirect_of(title) for title in group]
            members.update(group)
            members.update(ends)
            first = root(ends[0])
            for end in ends[1:]:
                other = root(end)
                if other != first:
                    low, high = sorted((first, other))
                    parent[high] = low
                    first = low
        images = {}
        for title in members:
            image = root(self.redirect_of(title))
            if image != title:
                images[title] = image
        return images

    def redirect_of(self, title: str) -> str:
        return self.redirect.get(title, title)

    def image_of(self, title: str) -> str:
        return self.image.get(title, title)

    def merged_by_redirect(self) -> int:
        """Titles whose redirect target is another title."""
        return len(self.redirect)

    def merged_by_sha1(self) -> int:
        """Titles that join another title's image through equal files (beyond their redirect)."""
        return sum(1 for title, image in self.image.items() if image != self.redirect_of(title))

    def table(self) -> pa.Table:
        """Every title the map changes, as ``file, redirect, image`` rows (for a join in SQL)."""
        titles = sorted(self.image)
        redirects = [self.redirect_of(title) for title in titles]
        images = [self.image[title] for title in titles]
        return pa.Table.from_pydict({"file": titles, "redirect": redirects, "image": images}, schema=MAP_SCHEMA)

    def apply(self, row: dict) -> dict:
        """A reference row with its image replaced by the canonical one; ``file`` and ``redirect`` added."""
        title = row["image"]
        return {**row, "image": self.image_of(title), "file": title, "redirect": self.redirect_of(title)}


def pairs_per_identity(files: Sequence[Path]) -> dict[str, int]:
    """How many pairs of the written output each kind of identity linked, read back from the parquet (the
    title, redirect and SHA-1 of a Wikipedia build always named)."""
    counts = {"title": 0, "redirect": 0, "sha1": 0}
    for file in files:
        parquet = pq.ParquetFile(file)
        for batch in parquet.iter_batches(columns=["identity"]):
            for kind, count in zip(*_value_counts(batch.column(0)), strict=True):
                counts[kind] = counts.get(kind, 0) + count  # a web config's kinds: url, pixels, phash≤4, …
    return counts


def _value_counts(column: pa.Array) -> tuple[list[str], list[int]]:
    counted = column.value_counts()
    return counted.field("values").to_pylist(), counted.field("counts").to_pylist()


def check_identities(identities: Sequence[str], image_tables: Sequence[str | Path], crosslingual: bool = False) -> None:
    """Before any dump is read: SHA-1 identity needs image tables, and image tables need a use.

    They serve the SHA-1 identity, and a cross-lingual build, which keeps each wiki's local files apart.
    """
    if "sha1" in identities and not image_tables:
        raise ValueError(
            "the sha1 identity needs the wiki's image table (…-image.sql.gz; Commons' own for Commons files): "
            "give it with --image-table"
        )
    if image_tables and "sha1" not in identities and not crosslingual:
        raise ValueError(
            "image tables are read for the sha1 identity and for the crosslingual config: add sha1 to --identity, "
            "or leave them out"
        )
    check_image_tables(image_tables)


LOCAL_FILES_SCHEMA = pa.schema([("language", pa.string()), ("image", pa.string())])


def table_wiki(path: str | Path) -> str:
    """The db name a Wikimedia SQL dump's file name starts with (``dewiki-20240101-image.sql.gz`` → ``dewiki``)."""
    return name_of(path).split("-", 1)[0]


def local_files(image_tables: Sequence[str | Path], wikis: dict[str, str], out: Path) -> dict[str, int]:
    """The files uploaded locally to the build's wikis, as ``(language, File:title)`` rows in ``out``.

    An image table lists the files uploaded to its own wiki, and its file name says which wiki that
    is; ``wikis`` maps the build's db names to their languages. Commons' table and the tables of
    other wikis hold no local file of the build. Returns how many local files each wiki has.
    """
    counts: dict[str, int] = {}
    rows: list[dict[str, str]] = []
    with pq.ParquetWriter(out, LOCAL_FILES_SCHEMA, compression="zstd") as writer:
        for path in image_tables:
            wiki = table_wiki(path)
            if wiki not in wikis:
                continue
            counts[wiki] = 0
            for (raw_name,) in iter_rows(path, IMAGE_TABLE, ("img_name",)):
                try:
                    name = normalize_title("File:" + (raw_name or b"").decode("utf-8"), DEFAULT_FILE_ALIASES)
                except UnicodeDecodeError:
                    name = None
                if name is None:
                    continue
                counts[wiki] += 1
                rows.append({"language": wikis[wiki], "image": name})
                if len(rows) >= _BATCH_ROWS:
                    writer.write_table(pa.Table.from_pylist(rows, schema=LOCAL_FILES_SCHEMA))
                    rows.clear()
        writer.write_table(pa.Table.from_pylist(rows, schema=LOCAL_FILES_SCHEMA))
    return counts


@dataclasses.dataclass
class Identity:
    """A build's identity map and what went into it, for funnel.json and the card."""

    kinds: tuple[str, ...]
    map: IdentityMap
    tables: ImageTableStats
    file_redirects: int = 0
    redirects_ignored: int = 0

    def record(self, titles: int | None, images: int, pairs: dict[str, int]) -> dict[str, object]:
        """``titles``: distinct titles a config's references used (None when the map changes no title, so
        that they are its images); ``images``: its clusters at step 0."""
        titles = images if titles is None else titles
        return {
            "identities": list(self.kinds),
            "file_redirects": self.file_redirects,
            "file_redirects_ignored": self.redirects_ignored,
            "redirect_cycles": self.map.cycles,
            "redirect_conflicts": self.map.conflicts,
            "image_table_rows": self.tables.rows,
            "image_table_rows_without_sha1": self.tables.without_sha1,
            "image_table_rows_with_unusable_names": self.tables.unusable_names,
            "sha1_groups": self.tables.sha1_groups,
            "titles_merged_by_redirect": self.map.merged_by_redirect(),
            "titles_merged_by_sha1": self.map.merged_by_sha1(),
            "images_before": titles,
            "images_after": images,
            "images_merged": titles - images,
            "pairs": pairs,
        }


def read_image_tables(
    identities: Sequence[str], image_tables: Sequence[str | Path], work: Path, memory_limit: str
) -> tuple[list[list[str]], ImageTableStats]:
    """The SHA-1 groups when the build asks for them (read before the dumps, so that a bad table fails early)."""
    if "sha1" not in identities:
        return [], ImageTableStats()
    return sha1_groups(image_tables, work, memory_limit)


def build_identity(
    identities: Sequence[str], extraction: Extraction, groups: list[list[str]], tables: ImageTableStats
) -> Identity:
    """The identity map of a build from the File redirects its dumps held (when asked for) and SHA-1 groups."""
    redirects = extraction.redirects if "redirect" in identities else []
    return Identity(
        tuple(identities),
        IdentityMap(redirects, groups),
        tables,
        extraction.read.file_redirects,
        extraction.redirects_ignored,
    )
