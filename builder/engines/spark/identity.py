"""The image identity on Spark's executors (:meth:`.engine.SparkEngine.image_identity` drives it): the image tables
read one task each, their titles kept there; the identity map over them and the File redirects in Spark SQL; each
config's references joined with the map, and those of the images it leaves out taken out by a join."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from builder.engines.spark.sql import SparkTables, spill
from builder.filters.identity import Identity, ImageTableStats, MapCounts, map_in_tables, table_titles, table_wiki
from builder.sources.sqldump import SqlDumpError

if TYPE_CHECKING:
    from builder.engines.core import BuildPlan
    from builder.engines.spark.engine import SparkEngine
    from builder.extract.tasks import Extraction

__all__ = ["Apart", "SparkIdentity", "mapped_references", "without_left_out"]


def _image_table_partition(sha1: bool, tables: Iterable[tuple[int, str]]) -> Iterator[tuple[str, object]]:
    """Image tables read on an executor: each usable title as ``("title", (table number, title, SHA-1 or None))``,
    then ``("stats", (table number, (counters, titles)))``, or ``("error", (table number, error))``."""
    for number, path in tables:
        stats, titles = ImageTableStats(), 0
        try:
            for title, value in table_titles(path, sha1, stats):
                titles += 1
                yield "title", (number, title, value)
        except (SqlDumpError, OSError) as error:  # raised on the driver, as the local engine raises it
            yield "error", (number, error)
            continue
        yield "stats", (number, (stats, titles))


@dataclasses.dataclass
class Apart:
    """The images whose references a config leaves out, as RDDs on the executors: ``(language, image)`` pairs
    (left out in that language) and images left out in every language."""

    languages: object | None = None
    everywhere: object | None = None


class SparkIdentity:
    """:class:`builder.filters.identity.ImageIdentity` on the executors: one task per image table, whose titles stay
    there; the map computed over them and the File redirects the extraction left on the executors, in Spark SQL
    (:func:`builder.filters.identity.map_in_tables`). The driver gets each table's counters and the map's counts."""

    def __init__(self, engine: SparkEngine, plan: BuildPlan) -> None:
        self.engine = engine
        self.kinds = tuple(plan.settings.identities)
        self.paths = [str(path) for path in plan.options.image_tables]
        self.stats = ImageTableStats()
        self.titles = None  # an RDD of (table number, title, SHA-1 or None)
        self.given: list[int] = []  # the usable titles of each table
        sha1 = "sha1" in self.kinds
        if not self.paths or not (sha1 or plan.crosslingual):
            return
        context = engine.session.sparkContext
        read = context.parallelize(list(enumerate(self.paths)), len(self.paths))
        read = read.mapPartitions(lambda part, s=sha1: _image_table_partition(s, part)).persist(spill())
        engine.cached.append(read)
        reports = {
            number: (kind, report) for kind, (number, report) in read.filter(lambda x: x[0] != "title").collect()
        }
        for number in range(len(self.paths)):
            if reports[number][0] == "error":
                raise reports[number][1]
        for number in range(len(self.paths)):
            counted, titles = reports[number][1]
            self.given.append(titles)
            if sha1:
                self.stats.rows += counted.rows
                self.stats.without_sha1 += counted.without_sha1
                self.stats.unusable_names += counted.unusable_names
        self.titles = read.filter(lambda item: item[0] == "title").values()

    def identity(self, extraction: Extraction) -> Identity:
        redirect, sha1 = "redirect" in self.kinds, "sha1" in self.kinds
        counted = (extraction.read.file_redirects, extraction.redirects_ignored)
        if not (redirect or sha1):
            return Identity(self.kinds, MapCounts(), self.stats, *counted)
        engine = self.engine
        context = engine.session.sparkContext
        redirects = engine.redirects if redirect and engine.redirects is not None else context.emptyRDD()
        files = context.emptyRDD()
        if sha1 and self.titles is not None:
            files = self.titles.filter(lambda item: item[2] is not None).map(lambda item: (item[1], item[2]))
        with SparkTables(engine.session, engine.cached) as tables:
            tables.strings("redirects", redirects, ("source", "target"))
            tables.strings("image_names", files, ("name", "sha1"))
            counts = map_in_tables(tables)
            ((groups,),) = tables.rows("SELECT count(*) FROM shared")
            mapping = tables.keep("SELECT file, redirect, image FROM identity_map") if counts.changed else None
        stats = dataclasses.replace(self.stats, sha1_groups=groups)
        return Identity(self.kinds, counts, stats, *counted, mapping)

    def local_files(self, wikis: dict[str, str]) -> tuple[dict[str, int], Apart]:
        languages = {n: wikis[table_wiki(path)] for n, path in enumerate(self.paths) if table_wiki(path) in wikis}
        counts = {table_wiki(self.paths[number]): self.given[number] for number in languages}
        if not counts or self.titles is None:
            return {}, Apart()
        files = self.titles.filter(lambda item, n=languages: item[0] in n)
        return counts, Apart(files.map(lambda item, n=languages: (n[item[0]], item[1])))


def without_left_out(used, apart: Apart):  # noqa: ANN001, ANN202 - RDDs of reference rows
    """The references whose image the config does not leave out, in their language or in every language."""
    if apart.languages is not None:
        left_out = apart.languages.map(lambda item: (item, None))
        used = used.keyBy(lambda row: (row["language"], row["image"])).subtractByKey(left_out).values()
    if apart.everywhere is not None:
        left_out = apart.everywhere.map(lambda image: (image, None))
        used = used.keyBy(lambda row: row["image"]).subtractByKey(left_out).values()
    return used


def mapped_references(used, mapping):  # noqa: ANN001, ANN202 - RDDs
    """Each reference with its canonical image and its ``file`` and ``redirect``, as
    :meth:`builder.filters.identity.IdentityMap.apply` gives them: a join with the map's changed titles."""
    if mapping is None:
        return used.map(_own_file)
    return used.keyBy(lambda row: row["image"]).leftOuterJoin(mapping).values().map(_mapped_row)


def _own_file(row: dict) -> dict:
    """A reference whose title the identity map leaves as it is: its own file and redirect."""
    return {**row, "file": row["image"], "redirect": row["image"]}


def _mapped_row(item: tuple[dict, tuple[str, str] | None]) -> dict:
    row, mapped = item
    title = row["image"]
    redirect, image = mapped if mapped is not None else (title, title)
    return {**row, "image": image, "file": title, "redirect": redirect}
