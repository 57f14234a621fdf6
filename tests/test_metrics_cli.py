"""``python -m metrics score``: clear errors for bad files, kept headers, output that reads back, kept configs,
a help that loads no model, one colour scale for a scored folder's maps."""

from __future__ import annotations

import csv
import dataclasses
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path
from random import Random

import datasets
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from PIL import Image

from builder.common import FolderLock
from builder.config import GOLD, SILVER
from builder.data.make_sample import dump_xml, page_xml
from builder.engines.local import build
from builder.publish.layout import card_manifest
from builder.publish.publisher import Publisher, published_files, recover
from metrics.cli import PROBABILITY, SCORE_COLUMNS, main
from metrics.compare import SCALE_KEY, characteristic_map, colour_limits

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
        rows = list(csv.reader(handle, delimiter="\t", quoting=csv.QUOTE_NONE))
    assert rows[0] == ["a", "b", "id", *SCORE_COLUMNS, PROBABILITY]  # the default classifier reads the texts alone
    assert [(row[0], row[1], row[2]) for row in rows[1:]] == [(x, y, str(n)) for n, (x, y) in enumerate(texts)]
    assert all(0 <= float(row[3]) <= 1 for row in rows[1:])

    code, _ = run([str(path), "--no-header", "--output", str(tmp_path / "raw.tsv")], capsys)
    assert code == 0
    with open(tmp_path / "raw.tsv", encoding="utf-8", newline="") as handle:
        rows = list(csv.reader(handle, delimiter="\t", quoting=csv.QUOTE_NONE))
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


# The libraries of the scorer and the plots: none is needed to print a help (round four: POT and torch were
# loaded for it, 4.2 s and 431 MB; 13-19 s on a loaded machine).
HEAVY_MODULES = (
    "ot",
    "torch",
    "transformers",
    "sentence_transformers",
    "bert_score",
    "matplotlib",
    "sklearn",
    "evaluate",
    "datasets",
    "nltk",  # its package import loads scikit-learn, SciPy and pandas
    "scipy",
    "pandas",
)


@pytest.mark.parametrize("arguments", [["--help"], ["score", "--help"]], ids=["help", "score-help"])
def test_help_loads_no_model_or_plotting_library(arguments: list[str]) -> None:
    """``python -m metrics [score] --help`` as run from a shell, in a fresh interpreter: the help is printed and
    none of the heavy libraries is imported (the argparse choices come from light modules)."""
    probe = (
        "import contextlib, io, runpy, sys\n"
        f"sys.argv = ['metrics', *{arguments!r}]\n"
        "with contextlib.suppress(SystemExit), contextlib.redirect_stdout(io.StringIO()) as shown:\n"
        "    runpy.run_module('metrics', run_name='__main__', alter_sys=True)\n"
        "print(shown.getvalue().splitlines()[0])\n"
        f"print(sorted({{name.partition('.')[0] for name in sys.modules}} & set({HEAVY_MODULES!r})))\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=REPO, check=True)
    usage, loaded = result.stdout.splitlines()
    assert usage.startswith("usage: python -m metrics")
    assert loaded == "[]", f"--help imported {loaded}"


def test_a_scored_folder_keeps_each_split(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], perceptron_available: None
) -> None:
    """Scoring never moves a pair to another split: each split is scored into a file of its own."""
    from builder.publish.card import SAMPLE_DUMP

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
        rows = list(csv.reader(handle, delimiter="\t", quoting=csv.QUOTE_NONE))
    assert [row[:2] for row in rows] == [
        ["sentence1", "sentence2"],
        ["Hello", "Hi"],
        ["A harbour at dusk", "Boats in a harbour"],
    ]


OTHER_PAGES = [
    *PAGES[:2],
    page_xml("Easter", f"[[File:{POSTCARD}|thumb|A vintage card from 1907 shows a bunny that carries a basket.]]", 3),
]


def built_folder(tmp_path: Path, name: str, pages: list[str], configs: tuple = (GOLD, SILVER)) -> Path:
    """A small build of the pages, into ``tmp_path / name``."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    dump = tmp_path / f"{name}-enwiki-20240101-pages-articles.xml"
    dump.write_text(dump_xml(pages), encoding="utf-8")
    build([dump], list(configs), tmp_path / name, tagger="perceptron", show_progress=False)
    return tmp_path / name


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every visible file under the folder with its bytes (hidden staging folders left out)."""
    return {
        path.relative_to(folder).as_posix(): path.read_bytes()
        for path in sorted(folder.rglob("*"))
        if path.is_file() and not any(part.startswith(".") for part in path.relative_to(folder).parts)
    }


def card_view(folder: Path) -> dict[str, bytes]:
    """What a reader of the card sees (``datasets`` among them): the card and the parquet files it names."""
    configs = card_manifest(folder / "README.md")["configs"]
    paths = ["README.md", *(f"{name}/{file}" for name, entry in configs.items() for file in entry["files"])]
    return {path: (folder / path).read_bytes() for path in paths}


@pytest.mark.parametrize(
    ("where", "message"),
    [
        ("same", "--output is the input folder"),
        ("inside", "--output is inside the input folder"),
        ("around", "--output holds the input folder"),
    ],
)
def test_the_scored_copy_must_not_overlap_the_input(
    where: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], perceptron_available: None
) -> None:
    built = built_folder(tmp_path / "data", "built", PAGES)
    before = snapshot(tmp_path)
    output = {"same": built, "inside": built / "scored", "around": tmp_path}[where]
    code, err = run([str(built), "--output", str(output)], capsys)
    assert code == 2 and f"{output}: {message}" in err
    assert snapshot(tmp_path) == before


def test_scoring_into_a_users_folder_is_refused_or_sets_their_files_aside(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], perceptron_available: None
) -> None:
    built = built_folder(tmp_path, "built", PAGES)
    mine = tmp_path / "mine"
    (mine / "gold").mkdir(parents=True)
    (mine / "README.md").write_text("my notes\n")
    (mine / "gold" / "funnel.json").write_text('{"mine": true}\n')
    before = snapshot(mine)
    code, err = run([str(built), "--output", str(mine)], capsys)
    assert code == 2 and f"{mine}: not empty (README.md, gold) and not a Wikipedia-IPC build" in err
    assert snapshot(mine) == before
    code, err = run([str(built), "--output", str(mine), "--overwrite"], capsys)
    assert code == 0, err
    assert (mine / "README.md.orig").read_text() == "my notes\n"
    assert (mine / "gold" / "funnel.json.orig").read_text() == '{"mine": true}\n'
    assert "## Δsem,syn scores" in (mine / "README.md").read_text()
    assert {path.as_posix() for path in published_files(mine)} >= {"README.md", "gold/funnel.json"}


def test_a_rescoring_holds_only_the_configs_scored_now(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], perceptron_available: None
) -> None:
    """A scored copy is all of one scoring: a config of an earlier one that the input no longer has goes."""
    both = built_folder(tmp_path, "both", PAGES)
    scored = tmp_path / "scored"
    assert run([str(both), "--output", str(scored)], capsys)[0] == 0
    (scored / "silver" / "mine.txt").write_text("keep me\n")
    (scored / "notes.txt").write_text("keep me\n")
    gold_only = built_folder(tmp_path, "gold-only", OTHER_PAGES, (GOLD,))
    code, err = run([str(gold_only), "--output", str(scored)], capsys)
    assert code == 0, err
    assert set(card_manifest(scored / "README.md")["configs"]) == {"gold"}
    assert sorted(path.name for path in (scored / "silver").iterdir()) == ["mine.txt"]
    assert (scored / "notes.txt").read_text() == "keep me\n"
    card = (scored / "README.md").read_text()
    assert "config_name: silver" not in card and "## Δsem,syn scores" in card and "profile:minilm" in card
    pairs = datasets.load_dataset(str(scored), "gold", cache_dir=str(tmp_path / "cache"))
    assert "A vintage card from 1907 shows a bunny that carries a basket." in {
        text for split in pairs.values() for text in [*split["sentence1"], *split["sentence2"]]
    }


def test_a_folder_being_built_is_not_scored(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], perceptron_available: None
) -> None:
    built = built_folder(tmp_path, "built", PAGES)
    with Publisher(built, ["gold"]):
        code, err = run([str(built), "--output", str(tmp_path / "scored")], capsys)
    assert code == 2 and f"{built}: another build is writing into this folder" in err
    assert not (tmp_path / "scored").exists()


@pytest.mark.parametrize("folder", ["input", "output"])
def test_a_path_out_of_the_folder_in_a_record_stops_the_scorer(
    folder: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], perceptron_available: None
) -> None:
    built = built_folder(tmp_path / "a", "built", PAGES)
    scored = tmp_path / "a" / "scored"
    assert run([str(built), "--output", str(scored)], capsys)[0] == 0
    victim = tmp_path / "victim" / "file.parquet"
    victim.parent.mkdir()
    victim.write_bytes(b"precious")
    funnel = (built if folder == "input" else scored) / "gold" / "funnel.json"
    record = json.loads(funnel.read_text())
    record["wikipedia_ipc"]["files"].append("../../../victim/file.parquet")
    funnel.write_text(json.dumps(record))
    before = snapshot(tmp_path)
    code, err = run([str(built), "--output", str(scored)], capsys)
    assert code == 2 and f"{funnel}: the file '../../../victim/file.parquet' is not a plain name" in err
    assert snapshot(tmp_path) == before


def test_a_scoring_killed_at_random_moments_leaves_the_old_or_the_new_scored_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], perceptron_available: None
) -> None:
    """``kill -9`` at random moments, then a rerun: the scored folder is the old one or the new one, never a mix.
    The scorings that are not killed run in this process (its models loaded once), but the one timed for the
    moments: a killed scoring is a process of its own, and so is the scoring that times one."""
    built = built_folder(tmp_path, "built", PAGES)
    scored, pristine, reference = tmp_path / "scored", tmp_path / "pristine", tmp_path / "reference"
    command = [sys.executable, "-m", "metrics", "score", str(built), "--output", str(scored), "--no-progress"]
    assert run([str(built), "--output", str(scored)], capsys)[0] == 0
    (scored / "notes.txt").write_text("keep me\n")
    (scored / "gold" / "mine.parquet").write_bytes(b"mine")
    shutil.copytree(scored, pristine)
    built_folder(tmp_path, "built", OTHER_PAGES)  # rebuilt: the next scoring has other pairs
    shutil.copytree(pristine, reference)
    started = time.monotonic()
    rescore = [*command[:6], str(reference), *command[7:]]
    assert subprocess.run(rescore, cwd=REPO, capture_output=True, timeout=600).returncode == 0
    seconds = time.monotonic() - started
    old, new = snapshot(pristine), snapshot(reference)
    assert old != new and {"notes.txt", "gold/mine.parquet"} <= set(new)
    random = Random(17)
    outcomes = []
    for attempt in range(4):
        shutil.rmtree(scored)
        shutil.copytree(pristine, scored)
        process = subprocess.Popen(command, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if attempt % 2:  # a moment once the first scored config is written, where the swap is near
            while process.poll() is None and not list(scored.glob(".*/*/*.parquet")):
                time.sleep(0.01)
            time.sleep(random.uniform(0, 0.3))
        else:
            time.sleep(random.uniform(0.3, 1.0) * seconds)
        process.kill()
        process.wait()
        view = card_view(scored)
        assert view in (card_view(pristine), card_view(reference))
        with FolderLock(scored):
            recover(scored)  # what the next scoring, build or push does first
        outcomes.append("old" if snapshot(scored) == old else "new")
        assert snapshot(scored) in (old, new)
        assert (outcomes[-1] == "new") == (view == card_view(reference))
    assert run([str(built), "--output", str(scored)], capsys)[0] == 0
    assert snapshot(scored) == new


def test_the_maps_of_a_scored_folder_share_one_colour_scale(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], perceptron_available: None
) -> None:
    """Gold's and silver's maps are drawn on one colour scale, the card states it (round four: gold's went to
    50%, bronze's to 23%, and they could not be compared by eye)."""
    built = built_folder(tmp_path, "built", PAGES)
    scored = tmp_path / "scored"
    code, err = run([str(built), "--output", str(scored)], capsys)
    assert code == 0, err
    grids = {
        name: characteristic_map(pq.read_table(sorted((scored / name).glob("*.parquet"))))[0]
        for name in ("gold", "silver")
    }
    highest = max(float(grid.max()) for grid in grids.values())
    assert float(grids["gold"].max()) != float(grids["silver"].max())  # on scales of their own the maps would differ
    assert colour_limits(grids.values()) == (0.0, highest)
    assert colour_limits([grids["silver"]]) == (0.0, float(grids["silver"].max()))
    assert colour_limits([np.zeros((5, 5))])[0] == 0.0 < colour_limits([np.zeros((5, 5))])[1]  # no pair: no 0/0
    for name in grids:
        (picture,) = (scored / name).glob("map-*.png")
        assert Image.open(picture).text[SCALE_KEY] == f"0.0 {highest!r}"  # the limits it was drawn with
    card = (scored / "README.md").read_text(encoding="utf-8")
    assert f"All maps share one colour scale, from 0% (white) to {highest:.0%} (darkest" in card


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("pairs.tsv", "sentence1\tsentence2\nA rabbit.\tA bunny.\nA hare.\t\n", "pairs.tsv:3: no sentence2"),
        ("plain.tsv", "A rabbit.\tA bunny.\n\tA hare.\n", "plain.tsv:2: no column 1"),
        ("pairs.jsonl", '{"sentence1": "A rabbit.", "sentence2": null}\n', "pairs.jsonl:1: no sentence2"),
        ("absent.jsonl", '{"a": "A rabbit.", "b": "A bunny."}\n{"a": "A hare."}\n', "absent.jsonl:2: no b"),
    ],
)
def test_a_missing_text_is_an_error_naming_file_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, content: str, message: str
) -> None:
    """A pair without one of its texts (an empty TSV field, a JSON null or absent key) stops the scoring, naming the
    file and the line, before any model is loaded and before an output is written."""
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    columns = ["--columns", "a", "b"] if name == "absent.jsonl" else []
    code, err = run([str(path), *columns], capsys)
    assert code == 2
    assert f"error: {tmp_path / message} (a missing text); every pair needs both texts" in err
    assert sorted(tmp_path.iterdir()) == [path]


def test_a_missing_text_in_a_built_folder_names_the_parquet_file_and_row(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], perceptron_available: None
) -> None:
    """A null text in a config's parquet file (e.g. written by pandas) is named by file and row index, not left to
    the scorer's nameless ``references[1] is a NoneType``."""
    built = built_folder(tmp_path, "built", PAGES)
    (silver,) = (built / "silver").glob("*.parquet")
    table = pq.read_table(silver)
    assert table.num_rows > 2
    texts = table.column("sentence1").to_pylist()
    texts[1] = None
    pq.write_table(table.set_column(table.schema.get_field_index("sentence1"), "sentence1", pa.array(texts)), silver)
    code, err = run([str(built), "--output", str(tmp_path / "scored")], capsys)
    assert code == 2
    assert f"error: {silver}: row index 1: no sentence1 (a missing text)" in err
    assert not (tmp_path / "scored").exists()


def _no_scoring(monkeypatch: pytest.MonkeyPatch) -> None:
    """A refusal must come before the work: scoring here fails the test."""
    import metrics.cli

    monkeypatch.setattr(metrics.cli, "_score", lambda *a, **k: pytest.fail("scored before the refusal"))


def test_an_output_that_is_the_input_is_refused_however_spelled(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "pairs.tsv"
    content = "sentence1\tsentence2\nA dog runs in the park.\tIn the park a dog is running.\n"
    path.write_text(content, encoding="utf-8")
    (tmp_path / "sub").mkdir()
    (tmp_path / "link.tsv").symlink_to(path)
    import os

    os.link(path, tmp_path / "hard.tsv")
    _no_scoring(monkeypatch)
    monkeypatch.chdir(tmp_path)
    for output in (str(path), "pairs.tsv", "sub/../pairs.tsv", str(tmp_path / "link.tsv"), "hard.tsv"):
        code, err = run([str(path), "--output", output], capsys)
        assert code == 2 and f"--output {output} is the input file" in err, output
    assert path.read_text(encoding="utf-8") == content


def test_an_output_in_a_missing_folder_or_a_folder_is_refused_before_the_work(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "pairs.tsv"
    path.write_text("A dog runs in the park.\tIn the park a dog is running.\n", encoding="utf-8")
    _no_scoring(monkeypatch)
    code, err = run([str(path), "--output", str(tmp_path / "nowhere" / "out.tsv")], capsys)
    assert code == 2 and f"the folder {tmp_path / 'nowhere'} does not exist" in err
    code, err = run([str(path), "--output", str(tmp_path)], capsys)
    assert code == 2 and "is a folder; a file's scores go to a file" in err


def test_a_scored_tsv_scored_again_reads_its_own_texts_back(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """One TSV dialect both ways: quotes stay as written however often a file is scored, the earlier score columns
    are replaced, not doubled, and the second scoring's texts and scores are the first's."""
    path = tmp_path / "pairs.tsv"
    texts = [('"Quoted" words open this caption of a dog.', 'A dog, "quoted", runs in a park.'),
             ("It's a 5'' tall statue of a horse.", 'A statue of a horse, 5" tall.')]  # fmt: skip
    path.write_text("sentence1\tsentence2\tid\n" + "".join(f"{a}\t{b}\t{n}\n" for n, (a, b) in enumerate(texts)),
                    encoding="utf-8")  # fmt: skip
    once, twice = tmp_path / "once.tsv", tmp_path / "twice.tsv"
    assert run([str(path), "--output", str(once)], capsys)[0] == 0
    code, err = run([str(once), "--output", str(twice)], capsys)
    assert code == 0 and "the columns of an earlier scoring (rouge1, " in err
    first, second = (
        list(csv.reader(file.read_text(encoding="utf-8").splitlines(), delimiter="\t", quoting=csv.QUOTE_NONE))
        for file in (once, twice)
    )
    assert first[0] == second[0] == ["sentence1", "sentence2", "id", *SCORE_COLUMNS, PROBABILITY]
    assert [tuple(row[:2]) for row in second[1:]] == texts
    assert [row[3:] for row in first[1:]] == [row[3:] for row in second[1:]]


def test_a_header_repeated_inside_and_one_column_twice_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "joined.tsv"
    path.write_text("sentence1\tsentence2\nA dog runs.\tA dog is running.\nsentence1\tsentence2\nA b c.\tA b d.\n",
                    encoding="utf-8")  # fmt: skip
    _no_scoring(monkeypatch)
    code, err = run([str(path)], capsys)
    assert code == 2 and f"{path}:3: the header line again, inside the file" in err
    code, err = run([str(path), "--columns", "sentence1", "sentence1"], capsys)
    assert code == 2 and "--columns names 'sentence1' twice" in err


@pytest.mark.parametrize(("name", "content", "where"), [
    ("blank.tsv", "A dog runs in the park.\t   \n", "blank.tsv:1"),
    ("empty.jsonl", '{"sentence1": "A dog runs.", "sentence2": ""}\n', "empty.jsonl:1: sentence2 is empty"),
    ("blank.jsonl", '{"sentence1": "  ", "sentence2": "A dog."}\n', "blank.jsonl:1: sentence1 is empty"),
])  # fmt: skip
def test_an_empty_text_is_an_error_naming_the_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, name: str, content: str,
    where: str,
) -> None:  # fmt: skip
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    _no_scoring(monkeypatch)
    code, err = run([str(path)], capsys)
    assert code == 2 and where in err and not (tmp_path / name.replace(".", ".scored.")).exists()


def test_texts_that_readers_take_for_missing_values_read_back_as_the_help_says(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``nan``, ``None``, ``NULL``, ``N/A``, ``NA`` are texts: each reader the help names, called as it says, reads
    them back exactly."""
    import pandas as pd

    words = ["nan", "None", "NULL", "N/A", "NA"]
    path = tmp_path / "pairs.tsv"
    path.write_text("sentence1\tsentence2\n" + "".join(f"{w}\tThe word {w} is written here.\n" for w in words),
                    encoding="utf-8")  # fmt: skip
    assert run([str(path), "--no-language-check"], capsys)[0] == 0
    scored = tmp_path / "pairs.scored.tsv"
    import metrics.cli

    help_text = metrics.cli.parser()._subparsers._group_actions[0].choices["score"].format_help()  # noqa: SLF001
    assert 'pandas.read_csv(path, sep="\\t", quoting=csv.QUOTE_NONE, keep_default_na=False, dtype=str)' in help_text
    frame = pd.read_csv(scored, sep="\t", quoting=csv.QUOTE_NONE, keep_default_na=False, dtype=str)
    assert frame["sentence1"].tolist() == words
    assert 'converters={"sentence1": str, "sentence2": str})' in help_text
    loaded = datasets.load_dataset("csv", data_files=str(scored), sep="\t", quoting=csv.QUOTE_NONE,
                                   keep_default_na=False, converters={"sentence1": str, "sentence2": str},
                                   split="train")  # fmt: skip
    assert loaded["sentence1"] == words
    with open(scored, encoding="utf-8", newline="") as handle:
        assert [row[0] for row in csv.reader(handle, delimiter="\t", quoting=csv.QUOTE_NONE)][1:] == words


def test_a_text_without_words_is_counted_apart_and_said(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "pairs.tsv"
    path.write_text("A dog runs in the park.\tIn the park a dog is running.\n!!!\tA cat sleeps on the sofa.\n",
                    encoding="utf-8")  # fmt: skip
    assert main(["score", str(path), "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "1 of 2 pairs have a text without words (no measures, no probability; left out of the means)" in out
    assert f"{PROBABILITY} > 0.5: 1 of 1" in out or f"{PROBABILITY} > 0.5: 0 of 1" in out
    rows = (tmp_path / "pairs.scored.tsv").read_text(encoding="utf-8").splitlines()
    assert rows[2].split("\t")[-1] == "nan" and rows[1].split("\t")[-1] != "nan"
