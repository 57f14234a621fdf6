"""``python -m metrics score``: clear errors for bad files, kept headers, output that reads back, kept configs."""

from __future__ import annotations

import csv
import dataclasses
import subprocess
import sys
from pathlib import Path

import datasets
import pytest

from builder.config import GOLD, SILVER
from builder.data.make_sample import dump_xml, page_xml
from builder.local import build
from metrics.cli import SCORE_COLUMNS, main

REPO = Path(__file__).resolve().parent.parent
POSTCARD = "Easter Bunny Postcard 1907.jpg"
PAGES = [
    page_xml("Easter Bunny", f"[[File:{POSTCARD}|thumb|The 1907 postcard shows the Easter Bunny with a basket.]]", 1),
    page_xml("Eostre", f"[[File:{POSTCARD}|thumb|A rabbit is depicted on an Easter postcard from 1907.]]", 2),
    page_xml("Postcard", f"[[File:{POSTCARD}|thumb|A postcard featuring the Easter Bunny in the year 1907]]", 3),
]


def run(arguments: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(["score", *arguments, "--no-progress"])
    return code, capsys.readouterr().err


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("list.jsonl", b'{"sentence1": "a b", "sentence2": "c"}\n[1, 2]\n', "list.jsonl:2: a JSON list, not an object"),
        ("number.jsonl", b"5\n", "number.jsonl:1: a JSON int, not an object"),
        ("empty.jsonl", b"\n", "empty.jsonl: no JSON objects, no pairs to score"),
        ("header.tsv", b"sentence1\tsentence2\n", "header.tsv: only a header line, no pairs to score"),
        ("empty.tsv", b"", "empty.tsv: empty file, no pairs to score"),
        ("latin1.tsv", "a\tb\ncafé\tthé\n".encode("latin-1"), "latin1.tsv:2: not UTF-8 (byte 0xe9 at column 4)"),
        ("binary.tsv", b"a\tb\n\x00\x01\x02\tx\n", "binary.tsv:2: a NUL byte: a binary file"),
        ("missing.tsv", b"x\ty\nsome text\tother text\n", "missing.tsv:1: the header has no column 'a'"),
    ],
)
def test_bad_input_is_an_error_naming_file_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, content: bytes, message: str
) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    columns = ["--columns", "a", "b"] if name == "missing.tsv" else []
    code, err = run([str(path), *columns], capsys)
    assert code == 2
    assert message in err and str(tmp_path) in err


def test_header_is_detected_kept_and_the_texts_round_trip(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    texts = [
        ("A path a\\b on a map of the town.", '"quoted words start this caption'),
        ("The 1907 postcard shows the Easter Bunny.", "A rabbit is depicted on a postcard from 1907."),
    ]
    path = tmp_path / "pairs.tsv"
    path.write_text("a\tb\tid\n" + "".join(f"{x}\t{y}\t{n}\n" for n, (x, y) in enumerate(texts)), encoding="utf-8")
    code, _ = run([str(path)], capsys)
    assert code == 0
    with open(tmp_path / "pairs.scored.tsv", encoding="utf-8", newline="") as handle:
        rows = list(csv.reader(handle, delimiter="\t"))
    assert rows[0] == ["a", "b", "id", *SCORE_COLUMNS]
    assert [(row[0], row[1], row[2]) for row in rows[1:]] == [(x, y, str(n)) for n, (x, y) in enumerate(texts)]
    assert all(0 <= float(row[3]) <= 1 for row in rows[1:])

    code, _ = run([str(path), "--no-header", "--output", str(tmp_path / "raw.tsv")], capsys)
    assert code == 0
    with open(tmp_path / "raw.tsv", encoding="utf-8", newline="") as handle:
        rows = list(csv.reader(handle, delimiter="\t"))
    assert rows[0][:3] == ["sentence1", "sentence2", "column3"] and rows[1][:2] == ["a", "b"] and len(rows) == 4


def test_scored_folder_keeps_its_configs(
    write_dump, tmp_path: Path, capsys: pytest.CaptureFixture[str], perceptron_available: None
) -> None:
    dump = tmp_path / "enwiki-20240101-pages-articles.xml"
    dump.write_text(dump_xml(PAGES), encoding="utf-8")
    built = tmp_path / "wikipedia_ipc"
    build([dump], [GOLD, SILVER], built, tagger="perceptron", show_progress=False)
    code, _ = run([str(built)], capsys)
    assert code == 0
    scored = tmp_path / "wikipedia_ipc-scored"
    card = (scored / "README.md").read_text(encoding="utf-8")
    assert "config_name: gold" in card and "config_name: silver" in card and "profile:minilm" in card
    for config in ("gold", "silver"):
        original = datasets.load_dataset(str(built), config, cache_dir=str(tmp_path / "cache"))
        pairs = datasets.load_dataset(str(scored), config, cache_dir=str(tmp_path / "cache"))
        assert list(pairs) == list(original)  # the same splits, each with the same pairs
        for split in original:
            assert len(pairs[split]) == len(original[split]) > 0
            assert pairs[split]["id"] == original[split]["id"]
            assert set(SCORE_COLUMNS) <= set(pairs[split].column_names)


def test_every_option_has_help() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "metrics", "score", "--help"], capture_output=True, text=True, cwd=REPO, check=True
    )
    options = ("--output", "--columns", "--header", "--profile", "--tokenize", "--batch-size", "--device", "--runtime")
    assert all(option in result.stdout for option in options)
    assert "sentences per transformer batch" in result.stdout and "the two text columns" in result.stdout


def test_a_scored_folder_keeps_each_split(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], perceptron_available: None
) -> None:
    """Scoring never moves a pair to another split: each split is scored into a file of its own."""
    from builder.output import SAMPLE_DUMP

    built = tmp_path / "sample"
    # at 60/20/20 the sample's silver pairs fall into all three splits (at the default 80/10/10, into two)
    silver = dataclasses.replace(SILVER, splits=(0.6, 0.2, 0.2))
    build([SAMPLE_DUMP], [silver], built, tagger="perceptron", show_progress=False)
    code, _ = run([str(built)], capsys)
    assert code == 0
    original = datasets.load_dataset(str(built), "silver", cache_dir=str(tmp_path / "cache"))
    pairs = datasets.load_dataset(str(tmp_path / "sample-scored"), "silver", cache_dir=str(tmp_path / "cache"))
    assert list(pairs) == list(original) == ["train", "validation", "test"]
    assert all(pairs[split]["id"] == original[split]["id"] for split in original)


@pytest.mark.parametrize(
    ("first_line", "names", "texts", "said"),
    [
        ("Hello\tHi", None, (0, 1), "no header line, the first line is a pair: 'Hello', 'Hi'; pass --header"),
        ("sentence1\tsentence2", ["sentence1", "sentence2"], (0, 1), "first line taken as header"),
        ("id\tText_A\ttext_b\tlabel", ["id", "Text_A", "text_b", "label"], (1, 2), "first line taken as header"),
        (
            "Quality\t#1 ID\t#2 ID\t#1 String\t#2 String",
            ["Quality", "#1 ID", "#2 ID", "#1 String", "#2 String"],
            (3, 4),
            "first line taken as header: 'Quality', '#1 ID'",
        ),
        ("a\tb\tA caption of the town", None, (0, 1), "no header line"),  # a text is no column name
    ],
)
def test_header_only_when_the_first_line_clearly_names_columns(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    first_line: str,
    names: list[str] | None,
    texts: tuple[int, int],
    said: str,
) -> None:
    """A real first pair such as ``Hello<TAB>Hi`` is scored, not silently dropped as a header; stderr says which."""
    from metrics.cli import DEFAULT_COLUMNS, read_tsv, text_columns

    width = len(first_line.split("\t"))
    path = tmp_path / "pairs.tsv"
    path.write_text(f"{first_line}\n" + "\t".join(["A longer caption of the harbour"] * width) + "\n", encoding="utf-8")
    header, rows, _ = read_tsv(path, DEFAULT_COLUMNS, None)
    assert header == names and len(rows) == (1 if names else 2)
    assert text_columns(path, header, None) == texts
    assert said in capsys.readouterr().err
    read_tsv(path, DEFAULT_COLUMNS, not names)  # --header/--no-header decide, silently
    assert capsys.readouterr().err == ""


def test_a_first_pair_is_scored(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "pairs.tsv"
    path.write_text("Hello\tHi\nA harbour at dusk\tBoats in a harbour\n", encoding="utf-8")
    code, err = run([str(path)], capsys)
    assert code == 0 and "no header line" in err
    with open(tmp_path / "pairs.scored.tsv", encoding="utf-8", newline="") as handle:
        rows = list(csv.reader(handle, delimiter="\t"))
    assert [row[:2] for row in rows] == [
        ["sentence1", "sentence2"],
        ["Hello", "Hi"],
        ["A harbour at dusk", "Boats in a harbour"],
    ]
