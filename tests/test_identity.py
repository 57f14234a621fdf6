"""The image identity map: the SQL dump reader, File redirects from the dump pass, and the map itself."""

from __future__ import annotations

import bz2
import gzip
import json
import random
from dataclasses import replace
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import builder.sources.sqldump
import wikipedia_ipc
from builder.config import SILVER
from builder.data import make_sample
from builder.data.make_sample import IMAGE_FILES, IMAGE_TABLE, page_xml, sample_image_sql
from builder.engines.local import build, extract_references
from builder.extract.tasks import plan_tasks
from builder.filters.identity import IdentityMap, IdentityTables, MapCounts, map_in_tables, sha1_groups
from builder.sources.sqldump import SqlDumpError, SqlStats, iter_rows
from builder.sources.xml import DumpReader

COLUMNS = ("img_name", "img_metadata", "img_sha1")


def expected_rows() -> list[tuple[bytes, bytes, bytes]]:
    """What the sample table holds, from the values make_sample escaped into it."""
    return [
        (name.encode("utf-8"), metadata, make_sample.base36_sha1(content) if content is not None else b"")
        for name, content, metadata in IMAGE_FILES
    ]


def test_the_sample_image_table_reads_back_every_value() -> None:
    stats = SqlStats()
    rows = list(iter_rows(IMAGE_TABLE, "image", COLUMNS, stats))
    assert rows == expected_rows()
    assert stats.rows == len(IMAGE_FILES) == 18
    blobs = {name: metadata for name, metadata, _ in rows}
    # escaped quotes, backslashes, NUL, newlines, and "),(" and ";" inside strings come back as they were
    assert blobs[b"Flag_of_France.svg"] == b'{"data":{"title":"Flag of France","bytes":"\x00\x01\\\'"}}'
    assert blobs[b"Easter_Bunny_Postcard_1907.jpg"] == b'a:2:{s:5:"width";i:600;s:4:"note";s:9:"a),(b;c\n";}'
    assert b"Saint_Peter's_Church_Leuven.jpg" in blobs
    assert all(len(sha1) in (0, 31) for _, _, sha1 in rows)


@pytest.mark.parametrize("chunk", [1, 7, 100])
def test_rows_and_statements_split_across_chunks(chunk: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(builder.sources.sqldump, "CHUNK_SIZE", chunk)
    assert list(iter_rows(IMAGE_TABLE, "image", COLUMNS)) == expected_rows()


def test_column_positions_come_from_create_table(tmp_path: Path) -> None:
    """The same rows with img_sha1 moved to the front: the reader finds it by name."""
    sql = sample_image_sql().decode("utf-8")
    moved = sql.replace("  `img_sha1` varbinary(32) NOT NULL DEFAULT '',\n", "")
    moved = moved.replace(
        "CREATE TABLE `image` (\n", "CREATE TABLE `image` (\n  `img_sha1` varbinary(32) NOT NULL DEFAULT '',\n"
    )
    rows = []
    for number, (name, content, metadata) in enumerate(IMAGE_FILES):
        row = make_sample.image_row(number, name, content, metadata)
        sha1_at = row.rindex(b",'")
        rows.append(b"(" + row[sha1_at + 1 : -1] + b"," + row[1:sha1_at] + b")")
    body = b"INSERT INTO `image` VALUES " + b",".join(rows) + b";\n"
    start = moved.index("INSERT INTO")
    end = moved.index("/*!40000 ALTER TABLE `image` ENABLE KEYS")
    path = tmp_path / "moved-image.sql"
    path.write_bytes(moved[:start].encode() + body + moved[end:].encode())
    assert list(iter_rows(path, "image", COLUMNS)) == expected_rows()


def test_other_tables_of_the_dump_are_passed_over_and_counted(tmp_path: Path) -> None:
    other = b"CREATE TABLE `page` (\n  `page_id` int(8) NOT NULL,\n  `page_title` varbinary(255) NOT NULL\n);\n"
    other += b"INSERT INTO `page` VALUES (1,'A;b'),(2,'c\\'),(d');\n"
    path = tmp_path / "two-tables.sql.bz2"
    path.write_bytes(bz2.compress(sample_image_sql() + other))
    stats = SqlStats()
    assert list(iter_rows(path, "image", COLUMNS, stats)) == expected_rows()
    assert stats.other_statements == 1


def test_a_table_that_is_not_the_image_table_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "enwiki-20240101-page.sql"
    path.write_bytes(
        b"-- dump\nCREATE TABLE `page` (\n  `page_id` int(8) NOT NULL\n);\nINSERT INTO `page` VALUES (1);\n"
    )
    with pytest.raises(SqlDumpError, match=r"page\.sql: INSERT into `page` at line 5: .* not `image`"):
        list(iter_rows(path, "image", COLUMNS))


def test_an_image_table_without_sha1_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "old-image.sql"
    path.write_bytes(sample_image_sql().replace(b"`img_sha1` varbinary(32)", b"`img_sha2` varbinary(32)"))
    with pytest.raises(SqlDumpError, match=r"old-image\.sql: table `image` \(at line \d+\) has no column img_sha1"):
        list(iter_rows(path, "image", COLUMNS))


def test_a_truncated_dump_names_file_and_line(tmp_path: Path) -> None:
    sql = sample_image_sql()
    cut = sql[: sql.index(b"Hare_in_snow") - 2]  # just after the comma that announces another row
    path = tmp_path / "cut-image.sql"
    path.write_bytes(cut)
    with pytest.raises(SqlDumpError, match=r"cut-image\.sql: the SQL dump ends inside an INSERT statement at line \d+"):
        list(iter_rows(path, "image", COLUMNS))
    inside_a_blob = tmp_path / "cut-blob-image.sql"
    inside_a_blob.write_bytes(sql[: sql.index(b"(lost)")])
    with pytest.raises(
        SqlDumpError, match=r"cut-blob-image\.sql: the SQL dump ends inside a string that starts at line"
    ):
        list(iter_rows(inside_a_blob, "image", COLUMNS))
    compressed = tmp_path / "cut-image.sql.gz"
    compressed.write_bytes(gzip.compress(sql)[:-40])
    with pytest.raises(SqlDumpError, match=r"cut-image\.sql\.gz: truncated or corrupt compressed data"):
        list(iter_rows(compressed, "image", COLUMNS))


def test_binary_data_that_is_no_sql_text_is_refused_at_once(tmp_path: Path) -> None:
    path = tmp_path / "enwiki-20240101-image.sql.gz"  # named like a gzip file, but random bytes
    path.write_bytes(random.Random(7).randbytes(5000))
    with pytest.raises(SqlDumpError, match=r"image\.sql\.gz: not SQL text, nor gzip or bz2 data"):
        list(iter_rows(path, "image", COLUMNS))


def test_a_malformed_row_names_file_line_and_what_was_expected(tmp_path: Path) -> None:
    path = tmp_path / "bad-image.sql"
    path.write_bytes(sample_image_sql().replace(b"'DRAWING','image'", b"'DRAWING' 'image'", 1))
    with pytest.raises(SqlDumpError, match=r"bad-image\.sql: malformed INSERT at line 47: expected ',' or '\)', found"):
        list(iter_rows(path, "image", COLUMNS))


def test_sha1_groups_of_the_sample(tmp_path: Path) -> None:
    groups, stats = sha1_groups([IMAGE_TABLE], tmp_path, "256MB")
    assert groups == [["File:Hare in snow.jpg", "File:Lepus europaeus (Causse Méjean).jpg"]]
    assert (stats.rows, stats.without_sha1, stats.unusable_names, stats.sha1_groups) == (18, 1, 0, 1)


REDIRECT_PAGES = [
    page_xml("Datei:Old hare.jpg", "#WEITERLEITUNG [[Datei:Hare.jpg]]", 10, 6, "Datei:Hare.jpg"),
    page_xml("Datei:Older hare.jpg", "#WEITERLEITUNG [[Datei:Old hare.jpg]]", 11, 6, "Datei:Old_hare.jpg"),
    page_xml("Datei:Section.jpg", "#WEITERLEITUNG [[Datei:Hare.jpg#Summary]]", 12, 6, "Datei:Hare.jpg#Summary"),
    page_xml("Datei:To an article.jpg", "#WEITERLEITUNG [[Hare]]", 13, 6, "Hare"),
    page_xml("Hase", "#WEITERLEITUNG [[Hare]]", 14, 0, "Hare"),
]


def test_file_redirects_are_read_in_the_same_pass_and_not_mined(write_dump) -> None:
    articles = [page_xml(f"Page {n}", f"[[Datei:Hare.jpg|thumb|Hare {n}.]]", 100 + n) for n in range(6)]
    path = write_dump(articles[:3] + REDIRECT_PAGES + articles[3:], file_namespace="Datei")
    reader = DumpReader(path, file_redirects=True)
    assert [page.title for page in reader] == [f"Page {n}" for n in range(6)]
    assert reader.redirects == [
        ("Datei:Old hare.jpg", "Datei:Hare.jpg"),
        ("Datei:Older hare.jpg", "Datei:Old_hare.jpg"),
        ("Datei:Section.jpg", "Datei:Hare.jpg#Summary"),
        ("Datei:To an article.jpg", "Hare"),
    ]
    # the File pages still count as pages of another namespace; the article redirect as a redirect
    assert (reader.stats.file_redirects, reader.stats.skipped_namespace, reader.stats.skipped_redirect) == (4, 4, 1)


def test_redirects_are_the_same_for_one_and_two_workers_on_a_multistream_dump(write_dump, tmp_path: Path) -> None:
    articles = [page_xml(f"Page {n}", f"[[Datei:Hare.jpg|thumb|Hare {n}.]]", 100 + n) for n in range(20)]
    pages = articles[:7] + REDIRECT_PAGES[:2] + articles[7:14] + REDIRECT_PAGES[2:] + articles[14:]
    name = "dewiki-20240101-pages-articles-multistream.xml.bz2"
    dump = write_dump(pages, name=name, multistream=True, file_namespace="Datei")
    tasks, _ = plan_tasks([dump], 2, (0,), tmp_path / "plan", file_redirects=True)
    assert len(tasks) > 2  # the dump is read in byte ranges
    one = extract_references([dump], tmp_path / "one", 1, show_progress=False, file_redirects=True)
    two = extract_references([dump], tmp_path / "two", 2, show_progress=False, file_redirects=True)
    expected = [
        ("File:Old hare.jpg", "File:Hare.jpg"),
        ("File:Older hare.jpg", "File:Old hare.jpg"),
    ]
    assert one.redirects == two.redirects == expected
    assert one.redirects_ignored == two.redirects_ignored == 2  # to a section, to an article
    assert one.read.file_redirects == two.read.file_redirects == 4


def test_chains_resolve_to_their_end() -> None:
    identity = IdentityMap([("File:A.jpg", "File:B.jpg"), ("File:B.jpg", "File:C.jpg"), ("File:X.jpg", "File:B.jpg")])
    assert [identity.redirect_of(title) for title in ("File:A.jpg", "File:B.jpg", "File:C.jpg", "File:X.jpg")] == [
        "File:C.jpg"
    ] * 4
    assert identity.image_of("File:A.jpg") == "File:C.jpg"
    assert (identity.merged_by_redirect(), identity.cycles) == (3, 0)


def test_cycles_end_at_their_smallest_title_and_are_counted() -> None:
    redirects = [("File:B.jpg", "File:C.jpg"), ("File:C.jpg", "File:B.jpg"), ("File:A.jpg", "File:C.jpg")]
    redirects += [("File:Self.jpg", "File:Self2.jpg"), ("File:Self2.jpg", "File:Self.jpg")]
    identity = IdentityMap(redirects)
    assert identity.cycles == 2
    assert {title: identity.redirect_of(title) for title in ("File:A.jpg", "File:B.jpg", "File:C.jpg")} == {
        "File:A.jpg": "File:B.jpg",
        "File:B.jpg": "File:B.jpg",
        "File:C.jpg": "File:B.jpg",
    }
    assert identity.redirect_of("File:Self2.jpg") == "File:Self.jpg"


def test_a_long_chain_resolves_without_recursion() -> None:
    chain = [(f"File:{n:06d}.jpg", f"File:{n + 1:06d}.jpg") for n in range(50_000)]
    identity = IdentityMap(chain)
    assert identity.redirect_of("File:000000.jpg") == "File:050000.jpg"
    assert identity.merged_by_redirect() == 50_000


def test_sha1_groups_join_through_redirects() -> None:
    """B redirects to C; C and D are one file; E and D are one file: A (→ B → C), C, D, E are one image."""
    identity = IdentityMap(
        [("File:A.jpg", "File:B.jpg"), ("File:B.jpg", "File:C.jpg")],
        [["File:D.jpg", "File:C.jpg"], ["File:E.jpg", "File:D.jpg"], ["File:Y.jpg", "File:Z.jpg"]],
    )
    images = {letter: identity.image_of(f"File:{letter}.jpg") for letter in "ABCDEYZ"}
    assert images == {
        "A": "File:C.jpg",
        "B": "File:C.jpg",
        "C": "File:C.jpg",
        "D": "File:C.jpg",
        "E": "File:C.jpg",
        "Y": "File:Y.jpg",
        "Z": "File:Y.jpg",
    }
    assert (identity.merged_by_redirect(), identity.merged_by_sha1()) == (2, 3)


def test_the_map_does_not_depend_on_the_order_of_its_input() -> None:
    redirects = [(f"File:R{n}.jpg", f"File:R{(n * 7) % 40}.jpg") for n in range(40)]
    groups = [[f"File:R{n}.jpg", f"File:S{n % 9}.jpg", f"File:T{n % 5}.jpg"] for n in range(0, 40, 3)]
    reference = IdentityMap(redirects, groups).table()
    shuffler = random.Random(7)
    for _ in range(20):
        shuffled_redirects = redirects[:]
        shuffler.shuffle(shuffled_redirects)
        shuffled_groups = [shuffler.sample(group, len(group)) for group in groups]
        shuffler.shuffle(shuffled_groups)
        assert IdentityMap(shuffled_redirects, shuffled_groups).table() == reference


def test_sha1_without_an_image_table_fails_before_any_dump_is_read(tmp_path: Path, capsys) -> None:
    missing_dump = tmp_path / "never-read.xml.bz2"
    missing_dump.write_bytes(b"not a dump")
    arguments = ["build", str(missing_dump), "--output", str(tmp_path / "out"), "--identity", "sha1"]
    assert wikipedia_ipc.main(arguments) == 2
    assert "the sha1 identity needs the wiki's image table" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
    table = ["--image-table", str(IMAGE_TABLE)]
    assert wikipedia_ipc.main(["build", "--output", str(tmp_path / "out"), *table]) == 2
    assert "add sha1 to --identity" in capsys.readouterr().err


def test_the_real_excerpt_has_no_file_redirects_and_keeps_its_output(
    tmp_path: Path, perceptron_available: None
) -> None:
    """gensim's enwiki excerpt holds articles and one project page, no File page: the map is empty."""
    from test_real_excerpt import EXCERPT

    plain, merged = tmp_path / "plain", tmp_path / "merged"
    build([EXCERPT], [SILVER], plain, tagger="perceptron", show_progress=False)
    build([EXCERPT], [replace(SILVER, identities=("redirect",))], merged, tagger="perceptron", show_progress=False)
    before, after = (
        json.loads((out / "silver" / "funnel.json").read_text(encoding="utf-8")) for out in (plain, merged)
    )
    assert after["funnel"] == before["funnel"]
    assert after["identity"]["file_redirects"] == 0
    assert after["identity"]["images_before"] == after["identity"]["images_after"] == before["funnel"][0]["images"]


@settings(max_examples=60, deadline=None, derandomize=True, database=None)
@given(
    blobs=st.lists(st.binary(max_size=40), min_size=1, max_size=12),
    chunk=st.integers(min_value=1, max_value=64),
    split=st.integers(min_value=1, max_value=12),
)
def test_any_blob_reads_back_as_written(blobs: list[bytes], chunk: int, split: int, tmp_path_factory) -> None:
    """Escaped by the sample's mysqldump writer, any bytes come back, however rows and chunks fall."""
    rows = [make_sample.image_row(n, f"F{n}.jpg", str(n), blob) for n, blob in enumerate(blobs)]
    inserts = b"".join(
        b"INSERT INTO `image` VALUES " + b",".join(rows[start : start + split]) + b";\n"
        for start in range(0, len(rows), split)
    )
    path = tmp_path_factory.mktemp("blobs") / "image.sql"
    path.write_bytes(make_sample.IMAGE_TABLE_HEADER.encode() + inserts + make_sample.IMAGE_TABLE_FOOTER.encode())
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(builder.sources.sqldump, "CHUNK_SIZE", chunk)
        read = [metadata for _, metadata in iter_rows(path, "image", ("img_name", "img_metadata"))]
    assert read == blobs


def test_resume_reads_the_redirects_that_an_earlier_build_did_not(tmp_path: Path, perceptron_available: None) -> None:
    """Shards read without File redirects are not taken for shards read with them."""
    work = tmp_path / "work"
    build(
        [wikipedia_ipc.SAMPLE_DUMP],
        [SILVER],
        tmp_path / "first",
        tagger="perceptron",
        show_progress=False,
        work_dir=work,
    )
    merged = replace(SILVER, identities=("redirect",))
    out = tmp_path / "second"
    build(
        [wikipedia_ipc.SAMPLE_DUMP], [merged], out, tagger="perceptron", show_progress=False, work_dir=work, resume=True
    )
    identity = json.loads((out / "silver" / "funnel.json").read_text(encoding="utf-8"))["identity"]
    assert (identity["file_redirects"], identity["titles_merged_by_redirect"], identity["pairs"]["redirect"]) == (
        3,
        2,
        2,
    )


# (File redirects, SHA-1 groups) that the map in SQL must resolve as IdentityMap does
IDENTITY_CASES = {
    "a chain and a title into its middle": ([("A", "B"), ("B", "C"), ("X", "B")], []),
    "cycles, and a chain into one": ([("B", "C"), ("C", "B"), ("A", "C"), ("S", "T"), ("T", "S")], []),
    "a title that redirects to itself": ([("Loop", "Loop"), ("Into", "Loop")], []),
    "a long tail into a long cycle": (
        [(f"T{n:02d}", f"T{n + 1:02d}") for n in range(40)] + [(f"C{n}", f"C{(n + 1) % 9}") for n in range(9)]
        + [("T40", "C5")],
        [],
    ),
    "conflicting targets": ([("A", "C"), ("A", "B"), ("A", "B"), ("B", "D")], []),
    "a redirect into a SHA-1 group": ([("A", "B"), ("B", "C")], [["D", "C"], ["E", "D"], ["Y", "Z"]]),
    "groups joined through redirects and a cycle": (
        [("F", "D"), ("S1", "S2"), ("S2", "S1"), ("Q", "S1"), ("G", "A")],
        [["C", "G"], ["D", "E", "S2"], ["A", "Y"], ["Y", "Z"]],
    ),
    "a group whose titles redirect to one title": ([("P", "R"), ("Q", "R")], [["P", "Q"]]),
    "a long chain": ([(f"L{n:05d}", f"L{n + 1:05d}") for n in range(3000)], [["L03000", "M"]]),
}  # fmt: skip


def string_table(rows: list[tuple[str, str]], columns: tuple[str, str]) -> pa.Table:
    return pa.table({column: pa.array([row[n] for row in rows], pa.string()) for n, column in enumerate(columns)})


def file_titles(redirects: list[tuple[str, str]], groups: list[list[str]]) -> tuple[list, list]:
    """The case's titles as File titles, and its groups as (title, SHA-1) rows of an image table."""
    titles = [(f"File:{source}.jpg", f"File:{target}.jpg") for source, target in redirects]
    names = [(f"File:{title}.jpg", f"{number:031d}") for number, group in enumerate(groups) for title in group]
    return titles, names


def in_process(redirects: list[tuple[str, str]], names: list[tuple[str, str]]) -> tuple[list[tuple], MapCounts]:
    """IdentityMap's rows and counts, from the image table's groups as sha1_groups gives them."""
    members: dict[str, set[str]] = {}
    for name, sha1 in names:
        members.setdefault(sha1, set()).add(name)
    identity = IdentityMap(redirects, [sorted(group) for group in members.values() if len(group) > 1])
    table = identity.table()
    rows = sorted(zip(*(table.column(column).to_pylist() for column in ("file", "redirect", "image")), strict=True))
    counts = MapCounts(
        identity.cycles,
        identity.conflicts,
        identity.merged_by_redirect(),
        identity.merged_by_sha1(),
        identity.changed_titles(),
    )
    return rows, counts


def in_tables(tables: IdentityTables) -> tuple[list[tuple], MapCounts]:
    counts = map_in_tables(tables)
    return sorted(tables.rows("SELECT file, redirect, image FROM identity_map")), counts


def duckdb_map(redirects: list[tuple[str, str]], names: list[tuple[str, str]], work: Path) -> tuple:
    from builder.filters.web import DuckDBImageTables

    work.mkdir(parents=True, exist_ok=True)
    with DuckDBImageTables([], None, work) as tables:
        tables.register("redirects", string_table(redirects, ("source", "target")))
        tables.register("image_names", string_table(names, ("name", "sha1")))
        return in_tables(tables)


@pytest.mark.parametrize("case", list(IDENTITY_CASES))
def test_the_map_in_sql_is_the_map_in_process(tmp_path: Path, case: str) -> None:
    """Chains, cycles (a title to itself, a tail into a cycle), conflicts and redirects into SHA-1 groups: the rows
    and the counts of the map the Spark engine computes in SQL (run here by DuckDB) are IdentityMap's."""
    redirects, names = file_titles(*IDENTITY_CASES[case])
    expected = in_process(redirects, names)
    assert expected[0]  # every case changes titles
    assert duckdb_map(redirects, names, tmp_path) == expected


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 14), st.integers(0, 14)), max_size=20),
    st.lists(st.tuples(st.integers(0, 14), st.integers(0, 5)), max_size=12),
)
def test_the_map_in_sql_on_random_graphs(tmp_path_factory: pytest.TempPathFactory, edges: list, files: list) -> None:
    """Random redirect graphs (every title one target or several, cycles of any length) and image tables."""
    redirects = [(f"File:{a:02d}.jpg", f"File:{b:02d}.jpg") for a, b in edges]
    names = [(f"File:{a:02d}.jpg", f"{sha1:031d}") for a, sha1 in files]
    assert duckdb_map(redirects, names, tmp_path_factory.mktemp("map")) == in_process(redirects, names)
