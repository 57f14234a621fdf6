"""Corpus adapters (each release format) and the comparison of Table 7 end to end."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from benchmarks.compare import main
from benchmarks.corpora import CorpusError, PairRecord, load, sample
from metrics import score_pairs

FIXTURES = Path(__file__).resolve().parent / "data" / "corpora"


def test_msrpc_with_bom_crlf_and_header() -> None:
    records, report = load("msrpc", FIXTURES / "msrpc")
    assert report.read == 3 and not report.skipped
    assert records[0] == PairRecord(
        "msr_paraphrase_train-1001-1002",
        "The committee approved the new budget on Tuesday.",
        "On Tuesday the committee passed the new budget.",
        1,
        "1001",
    )
    assert [r.label for r in records] == [1, 0, 1]


def test_paws_tapaco_and_paranmt() -> None:
    paws, _ = load("paws", FIXTURES / "paws")
    assert [(r.id, r.label) for r in paws] == [("dev-1", 0), ("dev-2", 1)]
    tapaco, report = load("tapaco", FIXTURES / "tapaco")
    assert report.read == 5
    assert [(r.sentence1, r.sentence2) for r in tapaco] == [
        ("I am very tired.", "I'm really tired."),
        ("I am very tired.", "I am exhausted."),
        ("I'm really tired.", "I am exhausted."),
        ("Where is the station?", "Where's the train station?"),
    ]
    paranmt, _ = load("paranmt", FIXTURES / "paranmt")
    assert paranmt[1].sentence2 == "i have no idea where he is gone ."


def test_ppdb_keeps_phrasal_pairs_of_four_tokens_without_nonterminals() -> None:
    records, report = load("ppdb", FIXTURES / "ppdb")
    assert [(r.sentence1, r.sentence2) for r in records] == [
        ("the members of the committee", "the committee 's members"),
        ("have been working on this", "have worked on this issue"),
    ]
    assert report.read == 4 and report.skipped == {"non-terminal": 1, "fewer than 4 tokens": 1}


def test_caption_corpora_pair_captions_of_one_image() -> None:
    flickr, _ = load("flickr8k", FIXTURES / "flickr8k")
    assert [r.group for r in flickr] == ["1000268201_693b08cb0e.jpg"] * 3 + ["1001773457_577c3a7d70.jpg"]
    pascal, report = load("pascal", FIXTURES / "pascal")
    assert report.read == 5 and len(pascal) == 4
    assert {r.group for r in pascal} == {"aeroplane/2008_000033", "cat/2008_000116"}
    coco, _ = load("coco", FIXTURES / "coco")
    assert len(coco) == 4 and coco[2].sentence2 == "Someone is surfing on a blue wave."


def test_wikipedia_ipc_jsonl_and_built_folder(tmp_path: Path) -> None:
    records, _ = load("wikipedia_ipc", FIXTURES / "wikipedia_ipc" / "wikipedia-ipc-silver.jsonl")
    assert records[0].sentence1 == "An Easter postcard from 1907 depicting a rabbit." and records[0].group == "7"
    (tmp_path / "gold").mkdir()
    (tmp_path / "gold" / "funnel.json").write_text("{}")
    with pytest.raises(CorpusError, match=r"no parquet files; name a config folder, e\.g\. .*gold"):
        load("wikipedia_ipc", tmp_path)


def test_errors_name_the_file_and_the_line(tmp_path: Path) -> None:
    with pytest.raises(CorpusError, match="no such file or folder"):
        load("msrpc", tmp_path / "missing")
    bad = tmp_path / "msr_paraphrase_train.txt"
    bad.write_text("Quality\t#1 ID\t#2 ID\t#1 String\t#2 String\n1\t1\t2\tonly four fields\n", encoding="utf-8")
    with pytest.raises(CorpusError, match=r"msr_paraphrase_train\.txt:2: expected 5 tab-separated fields"):
        load("msrpc", bad)
    flickr = tmp_path / "Flickr8k.token.txt"
    flickr.write_text("image.jpg#0\tfine caption\nno tab here\n", encoding="utf-8")
    with pytest.raises(CorpusError, match=r"Flickr8k\.token\.txt:2: expected 'image\.jpg#N\\tcaption'"):
        load("flickr8k", flickr)
    with pytest.raises(CorpusError, match="unknown corpus 'sick'"):
        load("sick", tmp_path)


def test_sample_is_seeded_and_spread_over_groups() -> None:
    records = [PairRecord(f"{g}-{i}", "a", "b", None, str(g)) for g in range(4) for i in range(10)]
    first = sample(records, 6, seed=3)
    assert first == sample(records, 6, seed=3)
    assert len(first) == 6 and len({r.group for r in first}) == 4


def test_compare_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "comparison"
    arguments = ["--corpus", f"msrpc={FIXTURES / 'msrpc'}", "--corpus", f"tapaco={FIXTURES / 'tapaco'}"]
    assert main([*arguments, "--output", str(out)]) == 0
    with open(out / "table.csv", encoding="utf-8") as handle:
        rows = {(row["corpus"], row["subset"]): row for row in csv.DictReader(handle)}
    records, _ = load("tapaco", FIXTURES / "tapaco")
    direct = score_pairs([r.sentence1 for r in records], [r.sentence2 for r in records], profile="minilm")
    everything = rows[("TaPaCo", "all")]
    assert int(everything["n"]) == 4 and float(everything["share"]) == 1.0
    for measure in ("rouge1", "bleu", "wms", "bert", "st", "delta"):
        assert float(everything[f"{measure}_mean"]) == pytest.approx(direct["aggregates"][measure]["mean"])
    similar = [i for i, st in enumerate(direct["st"]) if st > 0.8]
    assert int(rows[("TaPaCo", "st>0.8")]["n"]) == len(similar)
    assert float(rows[("TaPaCo", "st>0.8")]["share"]) == pytest.approx(len(similar) / 4)
    assert "| MSRPC | H | all | 3 | 100% |" in (out / "table.md").read_text(encoding="utf-8")
    assert {p.name for p in (out / "maps").iterdir()} >= {"all.png", "msrpc.png", "tapaco.png", "tapaco-scatter.png"}
    capsys.readouterr()
    # adding a corpus reuses the scores of the others
    assert main([*arguments, "--corpus", f"paws={FIXTURES / 'paws'}", "--output", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "msrpc: cached scores" in printed and "tapaco: cached scores" in printed
    assert "paws: read 2 records" in printed


def test_compare_reports_bad_arguments(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--corpus", "msrpc", "--output", str(tmp_path)]) == 2
    assert "expected NAME=PATH" in capsys.readouterr().err
    assert main(["--output", str(tmp_path)]) == 2
    assert "no corpus given" in capsys.readouterr().err


def test_config_file_and_sampling(tmp_path: Path) -> None:
    config = tmp_path / "corpora.json"
    config.write_text(f'{{"corpora": {{"tapaco": "{FIXTURES / "tapaco"}"}}, "sample": 2, "seed": 1}}', encoding="utf-8")
    out = tmp_path / "out"
    assert main(["--config", str(config), "--output", str(out)]) == 0
    with open(out / "table.csv", encoding="utf-8") as handle:
        rows = {row["subset"]: row for row in csv.DictReader(handle)}
    assert int(rows["all"]["n"]) == 2
