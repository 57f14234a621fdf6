"""No page too big for the workers: a history page's revisions are split across tasks, with the same output."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq

from builder.data.make_sample import page_xml
from builder.engines.local import extract_references
from builder.extract.tasks import plan_tasks
from builder.sources.xml import DumpReader

REVISIONS = 10_500


def long_history() -> list[str]:
    """Revisions of one article: words added, a caption rewritten now and then, vandalism reverted."""
    texts = []
    text = "'''Harbour''' is a town.\n[[File:Harbour.jpg|thumb|Boats in the harbour]]\n"
    for number in range(REVISIONS):
        if number % 50 == 0:
            text = text.replace("the harbour", f"the harbour ({number})", 1)
        elif number % 97 == 0:
            texts.append(text + "[[File:Vandal.jpg|thumb|")  # unclosed, reverted by the next revision
            continue
        else:
            text = text.replace("is a town", f"is a town {number % 10}", 1) if number % 7 else text
        texts.append(text)
    return texts


def write_history(tmp_path: Path, write_dump) -> Path:
    pages = [
        page_xml("Pier", ["[[File:Pier.jpg|thumb|The pier]]", "[[File:Pier.jpg|thumb|The old pier]]"], 1),
        page_xml("Harbour", long_history(), 2),
        page_xml("Lighthouse", ["{{Infobox|image=Light.jpg|caption=The light}}"] * 3, 3),
    ]
    dump = write_dump(pages, name="enwiki-20240101-pages-meta-history1.xml")
    # a revision without its id in the long page: skipped, and named at the same place by every reader
    xml = dump.read_text(encoding="utf-8").replace("<id>9200</id>", "<id>x</id>", 1)
    dump.write_text(xml, encoding="utf-8")
    return dump


def rows(shards: list[Path]) -> list[dict]:
    return [row for shard in shards for row in pq.read_table(shard).to_pylist()]


def test_a_page_of_ten_thousand_revisions_is_split_across_workers(tmp_path: Path, write_dump) -> None:
    dump = write_history(tmp_path, write_dump)
    tasks, _ = plan_tasks([dump], 2, (0,), tmp_path / "plan", history=True)
    assert len(tasks) > 4
    starts = [task.byte_range[0] for task in tasks if task.byte_range is not None]
    with open(dump, "rb") as handle:
        inside = [start for start in starts if handle.seek(start) is not None and handle.read(9) == b"<revision"]
    assert len(inside) >= 4  # cut inside the long page, not only between pages

    one = extract_references([dump], tmp_path / "one", workers=1, show_progress=False, history=True)
    two = extract_references([dump], tmp_path / "two", workers=2, show_progress=False, history=True)
    assert len(one.shards) == 1 and len(two.shards) == len(tasks)
    assert rows(two.shards) == rows(one.shards)
    assert (two.read, two.extract, two.problems) == (one.read, one.extract, one.problems)
    assert one.read.pages == 3 and one.read.pages_with_several_revisions == 3
    assert one.read.malformed_revisions == 1 and "a revision of page " in one.problems[0]
    assert len(rows(one.shards)) == one.extract.references > REVISIONS


def test_a_range_inside_a_page_reads_its_revisions_only(tmp_path: Path, write_dump) -> None:
    dump = write_history(tmp_path, write_dump)
    tasks, _ = plan_tasks([dump], 2, (0,), tmp_path / "plan", history=True)
    whole = [(page.title, page.revision_id) for page in DumpReader(dump)]
    parts = [(page.title, page.revision_id) for task in tasks for page in DumpReader(dump, byte_range=task.byte_range)]
    assert parts == whole
    assert len(whole) == 2 + (REVISIONS - 1) + 3  # the revision without an id is skipped


def test_a_range_finds_its_page_back_through_many_windows(tmp_path: Path, write_dump, monkeypatch) -> None:
    """The page a range starts in is searched backwards a window at a time: found whatever the window, also where
    a window's start cuts a tag, and a page's ``<page>`` alone counts (not ``<pages>``, not a title's text)."""
    import builder.sources.multistream as multistream

    pages = [page_xml("A title with <pages> and <page", ["Text " * 40 for _ in range(3)], 1)]
    pages += [
        page_xml(f"Long {number}", [f"Words {index} " * 30 for index in range(12)], number + 50) for number in range(9)
    ]
    dump = write_dump(pages, name="enwiki-20240101-pages-meta-history1.xml")
    data = dump.read_bytes()
    revisions = [index for index in range(len(data)) if data.startswith(b"<revision", index)]
    for window in (4096, 8192, 1 << 26):
        monkeypatch.setattr(multistream, "PAGE_SEARCH_WINDOW", window)
        for start in revisions:
            found = multistream.page_opening(dump, start)
            assert found is not None
            expected = max(data.rfind(b"<page>", 0, start), data.rfind(b"<page ", 0, start))
            assert found[0] == expected and found[1].lstrip().startswith("<page")
