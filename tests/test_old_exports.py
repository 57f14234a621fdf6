"""Export formats before 0.5: no ``<ns>`` (the title prefix tells it) and, before 0.4, no ``<redirect>``."""

from __future__ import annotations

import bz2
from pathlib import Path

from builder.extract.tasks import ExtractResult, ExtractTask, iter_task_references
from builder.extract.wikitext import ExtractStats
from builder.sources.files import ReadStats
from builder.sources.xml import DumpReader

DATA = Path(__file__).parent / "data" / "old_exports"
EXPORT_03 = DATA / "enwiki-2006-export-0.3.xml"
EXPORT_04 = DATA / "enwiki-2008-export-0.4.xml"


def test_export_0_3_namespaces_come_from_the_title_prefix_and_redirects_from_the_text() -> None:
    reader = DumpReader(EXPORT_03)
    pages = [(page.title, page.revision_id, page.namespace) for page in reader]
    # the first revision of Anarchism ("#redirect [[Anarchy]]") is a redirect; the later two are the article
    assert pages == [("Anarchism", 42136831, 0), ("Anarchism", 42136832, 0), ("Albedo: a measure", 15898945, 0)]
    stats = reader.stats
    assert (stats.pages, stats.revisions) == (6, 8)
    assert (stats.skipped_namespace, stats.skipped_redirect, stats.redirect_revisions) == (3, 1, 1)
    assert (stats.malformed_pages, stats.namespace_mismatches) == (0, 0)
    assert reader.problems == []


def test_export_0_3_every_namespace_is_known_case_insensitively() -> None:
    reader = DumpReader(EXPORT_03, namespaces=None, skip_redirects=False)
    namespaces = {page.title: page.namespace for page in reader}
    assert namespaces == {
        "AmericanSamoa": 0,
        "Anarchism": 0,
        "Talk:Anarchism": 1,
        "IMAGE TALK:Proudhon-children.jpg": 7,
        "Image:Proudhon.jpg": 6,
        "Albedo: a measure": 0,
    }
    assert (reader.stats.skipped_redirect, reader.stats.redirect_revisions) == (0, 0)


def test_export_0_3_file_redirects_are_read_from_the_text() -> None:
    reader = DumpReader(EXPORT_03, file_redirects=True)
    list(reader)
    assert reader.redirects == [("Image:Proudhon.jpg", "Image:Proudhon-children.jpg")]
    assert reader.stats.file_redirects == 1


def test_export_0_3_redirects_in_the_wiki_language_by_its_xml_lang(tmp_path: Path) -> None:
    german = EXPORT_03.read_text(encoding="utf-8").replace('xml:lang="en"', 'xml:lang="de"')
    german = german.replace("#REDIRECT [[American Samoa]]", "#WEITERLEITUNG [[Amerikanisch-Samoa]]")
    path = tmp_path / "dewiki-2006-pages-articles.xml"
    path.write_text(german, encoding="utf-8")
    reader = DumpReader(path)
    assert [page.title for page in reader] == ["Anarchism", "Anarchism", "Albedo: a measure"]
    assert (reader.stats.skipped_redirect, reader.stats.redirect_revisions) == (1, 1)


def test_export_0_4_redirects_by_element_and_a_contradicting_ns_is_counted() -> None:
    reader = DumpReader(EXPORT_04, namespaces=None)
    pages = [(page.title, page.namespace) for page in reader]
    # 0.4 has <redirect>: a page without it is no redirect whatever its text says
    assert pages == [("Albedo", 0), ("#redirect in a title is no redirect", 0), ("Wikipedia:Sandbox", 0)]
    assert (reader.stats.skipped_redirect, reader.stats.redirect_revisions) == (1, 0)
    assert reader.stats.namespace_mismatches == 1
    [problem] = [problem.render() for problem in reader.problems]
    assert "page at line 58 " in problem
    assert "('Wikipedia:Sandbox') has <ns> 0, but its title names namespace 4: read as namespace 0" in problem


def test_old_exports_are_extracted_from_bz2_like_current_ones(tmp_path: Path) -> None:
    packed = tmp_path / "enwiki-20060304-pages-meta-history.xml.bz2"
    packed.write_bytes(bz2.compress(EXPORT_03.read_bytes()))
    task = ExtractTask(str(packed), None, ("File", "Image"), (0,), str(tmp_path / "shard.parquet"))
    result = ExtractResult(ReadStats(), ExtractStats())
    rows = [
        (row["page"], row["revision_id"], row["image"], row["caption"]) for row in iter_task_references(task, result)
    ]
    assert rows == [
        ("Anarchism", 42136831, "File:Proudhon-children.jpg", "Pierre-Joseph Proudhon with his children"),
        ("Anarchism", 42136832, "File:Proudhon-children.jpg", "Proudhon and his children in 1853"),
        ("Albedo: a measure", 15898945, "File:Albedo-e hg.svg", "Percentage of diffusely reflected sun light"),
    ]
    assert result.read.redirect_revisions == 1
