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
these are the duplicate uploads, a small fraction of the table. That is the local engine's map.

The Spark engine keeps the map where the input is: the File redirects stay on the executors that read
them, the image tables are read there too, and :func:`map_in_tables` computes the same map in Spark SQL
(redirect chains by pointer doubling, SHA-1 groups by rounds of smallest labels), a table the references
are joined with; only its counts (:class:`MapCounts`) reach the driver.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Protocol

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
    "ImageIdentity",
    "InProcessIdentity",
    "IdentityTables",
    "MapCounts",
    "build_identity",
    "check_identities",
    "local_files",
    "map_in_tables",
    "pairs_per_identity",
    "read_image_tables",
    "table_titles",
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


def _file_title(raw_name: bytes | None) -> str | None:
    """An image table's ``img_name`` as a normalized ``File:`` title; None when it is not UTF-8 or no title."""
    try:
        return normalize_title("File:" + (raw_name or b"").decode("utf-8"), DEFAULT_FILE_ALIASES)
    except UnicodeDecodeError:
        return None


def _image_rows(paths: Sequence[str | Path], stats: ImageTableStats) -> Iterator[dict[str, str]]:
    """``{name, sha1}`` of every usable row of the image tables; what is skipped is counted."""
    for path in paths:
        counts = SqlStats()
        for raw_name, raw_sha1 in iter_rows(path, IMAGE_TABLE, IMAGE_COLUMNS, counts):
            stats.rows += 1
            if not raw_sha1:
                stats.without_sha1 += 1
                continue
            name = _file_title(raw_name)
            if name is None:
                stats.unusable_names += 1
                continue
            yield {"name": name, "sha1": raw_sha1.decode("ascii", "replace")}


def table_titles(path: str | Path, sha1: bool, stats: ImageTableStats) -> Iterator[tuple[str, str | None]]:
    """Every usable title of one image table with its SHA-1 (read only when ``sha1``; None when empty), for an
    engine that reads the tables where it keeps them; ``stats`` counts what :func:`sha1_groups` counts."""
    columns = IMAGE_COLUMNS if sha1 else IMAGE_COLUMNS[:1]
    for raw_name, *raw_sha1 in iter_rows(path, IMAGE_TABLE, columns):
        stats.rows += 1
        value = raw_sha1[0] if raw_sha1 else None
        if sha1 and not value:
            stats.without_sha1 += 1
        name = _file_title(raw_name)
        if name is None:
            stats.unusable_names += bool(value)
            continue
        yield name, value.decode("ascii", "replace") if value else None


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

    def changed_titles(self) -> int:
        """Titles whose canonical image is another title (the rows of :meth:`table`)."""
        return len(self.image)

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


@dataclasses.dataclass(frozen=True)
class MapCounts:
    """What funnel.json records of an identity map an engine holds as a table (:func:`map_in_tables`): the
    counts :class:`IdentityMap` gives for the same input."""

    cycles: int = 0
    conflicts: int = 0
    redirected: int = 0  # titles whose redirect target is another title
    sha1: int = 0  # titles that join another title's image through equal files
    changed: int = 0  # titles whose canonical image is another title

    def merged_by_redirect(self) -> int:
        return self.redirected

    def merged_by_sha1(self) -> int:
        return self.sha1

    def changed_titles(self) -> int:
        return self.changed


class IdentityTables(Protocol):
    """Where an engine computes the identity map in SQL (the subset DuckDB and Spark SQL both read). It starts
    with two views: ``redirects(source, target)``, the File redirects, and ``image_names(name, sha1)``, the
    image tables' usable titles that have a SHA-1."""

    def table(self, name: str, query: str) -> None:
        """Make table ``name`` from ``query``."""

    def rows(self, query: str) -> list[tuple]:
        """A small result (counts), brought to Python."""


def _ended(tables: IdentityTables, hops: str) -> int:
    """How many redirect titles' hops reached a title that redirects nowhere."""
    ((ended,),) = tables.rows(
        f"SELECT count(*) FROM {hops} h LEFT JOIN targets t ON h.hop = t.source WHERE t.source IS NULL"
    )
    return ended


def map_in_tables(tables: IdentityTables) -> MapCounts:
    """:class:`IdentityMap` computed in the engine's tables, leaving ``identity_map(file, redirect, image)``: the
    rows of :meth:`IdentityMap.table` (in no order), with the same counts.

    Redirects: each title keeps its smallest target (the others are conflicts); every title then jumps
    ``hop`` = 2^k steps ahead and keeps ``low``, the smallest title within those steps (pointer doubling, a
    join per round). A chain's length to its end is every length below it too, so the first round that ends no
    more chains leaves only titles that lead into a cycle; rounds go on until 2^k passes their number, so that a
    hop lies on its cycle and its ``low`` is the cycle's smallest title. SHA-1: the titles of a file shared by
    two or more, taken to their redirect ends, are linked through the file; each end gets the smallest end of
    its component by rounds of smallest labels, as :func:`builder.filters.web._linked_groups` finds its sets.
    """
    tables.table("redirect_pairs", "SELECT DISTINCT source, target FROM redirects")
    tables.table("targets", "SELECT source, min(target) AS target FROM redirect_pairs GROUP BY source")
    ((pairs, sources),) = tables.rows("SELECT (SELECT count(*) FROM redirect_pairs), (SELECT count(*) FROM targets)")
    tables.table("hops_0", "SELECT source AS title, target AS hop, least(source, target) AS low FROM targets")
    rounds, ended, growing = 0, _ended(tables, "hops_0"), True
    while ended < sources and (growing or 2**rounds < sources - ended):
        last, rounds = f"hops_{rounds}", rounds + 1
        tables.table(
            f"hops_{rounds}",
            "SELECT a.title, coalesce(b.hop, a.hop) AS hop, least(a.low, coalesce(b.low, a.hop)) AS low "
            f"FROM {last} a LEFT JOIN {last} b ON a.hop = b.title",
        )
        now = _ended(tables, f"hops_{rounds}")
        growing, ended = now > ended, now
    hops = f"hops_{rounds}"
    tables.table(
        "resolved",
        "SELECT h.title, CASE WHEN t.source IS NULL THEN h.hop ELSE c.low END AS redirect, "
        f"t.source IS NOT NULL AS cyclic FROM {hops} h LEFT JOIN targets t ON h.hop = t.source "
        f"LEFT JOIN {hops} c ON h.hop = c.title",
    )
    ((cycles, redirected),) = tables.rows(
        "SELECT count(DISTINCT CASE WHEN cyclic THEN redirect END), count(CASE WHEN redirect <> title THEN 1 END) "
        "FROM resolved"
    )
    tables.table("files", "SELECT DISTINCT name, sha1 FROM image_names")
    tables.table("shared", "SELECT sha1 FROM files GROUP BY sha1 HAVING count(*) > 1")
    tables.table(
        "members",
        "SELECT f.name AS title, f.sha1, coalesce(r.redirect, f.name) AS node FROM files f "
        "JOIN shared s ON f.sha1 = s.sha1 LEFT JOIN resolved r ON f.name = r.title",
    )
    tables.table("labels_0", "SELECT DISTINCT node, node AS label, node AS own FROM members")
    rounds = 0
    while True:  # each round keeps a node's label of the round before (own): the change count reads one table
        last, rounds = f"labels_{rounds}", rounds + 1
        tables.table(
            f"labels_{rounds}",
            f"SELECT node, min(label) AS label, min(own) AS own FROM (SELECT node, label, label AS own FROM {last} "
            "UNION ALL SELECT m.node, g.label, NULL AS own FROM members m JOIN (SELECT n.sha1, min(l.label) AS label "
            f"FROM members n JOIN {last} l ON n.node = l.node GROUP BY n.sha1) g ON m.sha1 = g.sha1) passed "
            "GROUP BY node",
        )
        ((changed,),) = tables.rows(f"SELECT count(*) FROM labels_{rounds} WHERE label <> own")
        if not changed:
            break
    tables.table(
        "identity_map",
        "SELECT u.title AS file, coalesce(r.redirect, u.title) AS redirect, "
        "coalesce(l.label, r.redirect, u.title) AS image FROM (SELECT title FROM resolved UNION "
        "SELECT title FROM members UNION SELECT node AS title FROM members) u "
        "LEFT JOIN resolved r ON u.title = r.title "
        f"LEFT JOIN labels_{rounds} l ON coalesce(r.redirect, u.title) = l.node "
        "WHERE coalesce(l.label, r.redirect, u.title) <> u.title",
    )
    ((changed, sha1),) = tables.rows("SELECT count(*), count(CASE WHEN image <> redirect THEN 1 END) FROM identity_map")
    return MapCounts(cycles, pairs - sources, redirected, sha1, changed)


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
                name = _file_title(raw_name)
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
    map: IdentityMap | MapCounts  # the map in this process, or the counts of the one the engine holds
    tables: ImageTableStats
    file_redirects: int = 0
    redirects_ignored: int = 0
    table: object | None = None  # the engine's map (file → redirect, image) when it is not in this process

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


class ImageIdentity(Protocol):
    """A Wikipedia build's image tables as an engine read them (before any dump, so that a bad table fails
    first), and what it makes of them once the dumps are read."""

    def identity(self, extraction: Extraction) -> Identity:
        """The build's identity map from the File redirects the dumps held and the SHA-1 groups."""

    def local_files(self, wikis: dict[str, str]) -> tuple[dict[str, int], object]:
        """How many local files each of the build's wikis has (:func:`local_files`), and what the engine's
        ``select`` reads them from."""


class InProcessIdentity:
    """:class:`ImageIdentity` in this process: SHA-1 groups by DuckDB on disk, the map in memory, the local
    files in a parquet file of the work folder."""

    def __init__(self, identities: Sequence[str], image_tables: Sequence[str | Path], work: Path, memory: str) -> None:
        self.identities, self.image_tables, self.work = identities, image_tables, work
        self.groups, self.tables = read_image_tables(identities, image_tables, work / "identity", memory)

    def identity(self, extraction: Extraction) -> Identity:
        return build_identity(self.identities, extraction, self.groups, self.tables)

    def local_files(self, wikis: dict[str, str]) -> tuple[dict[str, int], Path]:
        path = self.work / "local-files.parquet"
        return local_files(self.image_tables, wikis, path), path


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
