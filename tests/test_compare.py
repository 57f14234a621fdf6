"""Corpus adapters (each release format) and the comparison of Table 7 end to end."""

from __future__ import annotations

import csv
import json
import math
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import datasets
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from PIL import Image

from metrics import score_pairs
from metrics.compare import (
    BIN_LABELS,
    MEASURES,
    SCALE_KEY,
    characteristic_map,
    colour_limits,
    main,
    map_legend,
    map_panels,
    parser,
    plot_maps,
    scatter_figure,
    summary_rows,
)
from metrics.corpora import (
    CORPORA,
    HUB_COPIES,
    CorpusError,
    PairRecord,
    ReadReport,
    hub_records,
    load,
    load_hub,
    read_pairs_file,
    read_pairs_parquet,
    sample,
)
from metrics.profiles import StThreshold, get_profile

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "data" / "corpora"


def test_msrpc_with_bom_crlf_and_header() -> None:
    records, report = load("msrpc", FIXTURES / "msrpc" / "msr_paraphrase_train.txt")
    assert report.read == 3 and not report.skipped
    assert records[0] == PairRecord(
        "msr_paraphrase_train-1001-1002",
        "The committee approved the new budget on Tuesday.",
        "On Tuesday the committee passed the new budget.",
        1,
        "1001",
    )
    assert [r.label for r in records] == [1, 0, 1]
    both, report = load("msrpc", FIXTURES / "msrpc")  # the folder: train and test, as released
    assert report.read == 43 and both[:3] == records and both[3].id == "msr_paraphrase_test-2001-2002"


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


def test_ppdb_folder_with_several_sizes_asks_for_one(tmp_path: Path) -> None:
    release = (FIXTURES / "ppdb" / "ppdb-2.0-s-phrasal").read_text(encoding="utf-8")
    (tmp_path / "ppdb-2.0-xxxl-all").write_text(release, encoding="utf-8")
    assert len(load("ppdb", tmp_path)[0]) == 2
    (tmp_path / "ppdb-2.0-s-phrasal").write_text(release, encoding="utf-8")
    with pytest.raises(CorpusError, match=r"several PPDB files \(ppdb-2\.0-s-phrasal, ppdb-2\.0-xxxl-all\)"):
        load("ppdb", tmp_path)


def test_caption_corpora_pair_captions_of_one_image() -> None:
    flickr, _ = load("flickr8k", FIXTURES / "flickr8k")
    assert [r.group for r in flickr] == ["1000268201_693b08cb0e.jpg"] * 3 + ["1001773457_577c3a7d70.jpg"]
    pascal, report = load("pascal", FIXTURES / "pascal")
    assert report.read == 5 and len(pascal) == 4
    assert {r.group for r in pascal} == {"aeroplane/2008_000033", "cat/2008_000116"}
    coco, _ = load("coco", FIXTURES / "coco")
    assert len(coco) == 4 and coco[2].sentence2 == "Someone is surfing on a blue wave."


def test_coco_folder_with_both_years_is_read_once_and_paws_final_folder(tmp_path: Path) -> None:
    release = (FIXTURES / "coco" / "annotations" / "captions_val2014.json").read_text(encoding="utf-8")
    (tmp_path / "annotations").mkdir()
    for year in (2014, 2017):
        (tmp_path / "annotations" / f"captions_val{year}.json").write_text(release, encoding="utf-8")
    records, report = load("coco", tmp_path)
    assert len(records) == 4 and report.read == 5
    assert records[0].group.startswith("captions_val2017-")
    (tmp_path / "paws" / "final").mkdir(parents=True)
    tsv = (FIXTURES / "paws" / "dev.tsv").read_text(encoding="utf-8")
    (tmp_path / "paws" / "final" / "dev.tsv").write_text(tsv, encoding="utf-8")
    assert len(load("paws", tmp_path / "paws")[0]) == 2


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
    msrpc = FIXTURES / "msrpc" / "msr_paraphrase_train.txt"
    arguments = ["--corpus", f"msrpc={msrpc}", "--corpus", f"tapaco={FIXTURES / 'tapaco'}"]
    assert main([*arguments, "--output", str(out)]) == 0
    with open(out / "table.csv", encoding="utf-8") as handle:
        rows = {(row["corpus"], row["subset"]): row for row in csv.DictReader(handle)}
    records, _ = load("tapaco", FIXTURES / "tapaco")
    direct = score_pairs([r.sentence1 for r in records], [r.sentence2 for r in records], profile="minilm")
    everything = rows[("TaPaCo", "all")]
    assert int(everything["n"]) == 4 and float(everything["share"]) == 1.0
    for measure in ("rouge1", "bleu", "wms", "bert", "st", "delta"):
        assert float(everything[f"{measure}_mean"]) == pytest.approx(direct["aggregates"][measure]["mean"])
    default = get_profile("minilm").st_threshold  # no --threshold: the profile's calibrated default
    similar = [i for i, st in enumerate(direct["st"]) if st > default.value]
    label = f"st>{default.value!r}"
    assert int(rows[("TaPaCo", label)]["n"]) == len(similar)
    assert float(rows[("TaPaCo", label)]["share"]) == pytest.approx(len(similar) / 4)
    assert float(rows[("TaPaCo", label)]["threshold"]) == default.value
    table_md = (out / "table.md").read_text(encoding="utf-8")
    assert "| MSRPC | H | all | 3 | 0 | 100% |" in table_md
    assert "C = image captions, G = automatically generated, H = human-written" in table_md
    assert {p.name for p in (out / "maps").iterdir()} >= {"all.png", "msrpc.png", "tapaco.png", "tapaco-scatter.png"}
    capsys.readouterr()
    # adding a corpus reuses the scores of the others
    assert main([*arguments, "--corpus", f"paws={FIXTURES / 'paws'}", "--output", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "msrpc: cached scores" in printed and "tapaco: cached scores" in printed
    assert "paws: read 2 records" in printed


def test_compare_reports_bad_arguments(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--corpus", "msrpc=", "--output", str(tmp_path)]) == 2
    assert "expected NAME=PATH" in capsys.readouterr().err
    config = tmp_path / "corpora.json"
    config.write_text('{"corpora": {}}', encoding="utf-8")
    assert main(["--config", str(config), "--output", str(tmp_path)]) == 2
    assert f"{config}: 'corpora' names no corpus" in capsys.readouterr().err


def test_config_file_and_sampling(tmp_path: Path) -> None:
    config = tmp_path / "corpora.json"
    config.write_text(f'{{"corpora": {{"tapaco": "{FIXTURES / "tapaco"}"}}, "sample": 2, "seed": 1}}', encoding="utf-8")
    out = tmp_path / "out"
    assert main(["--config", str(config), "--output", str(out)]) == 0
    with open(out / "table.csv", encoding="utf-8") as handle:
        rows = {row["subset"]: row for row in csv.DictReader(handle)}
    assert int(rows["all"]["n"]) == 2


def test_fixture_config_runs_every_corpus_from_any_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)  # the config's corpus paths are relative to the config file, not to here
    assert main(["--config", str(ROOT / "benchmarks" / "fixtures.json")]) == 0
    out = tmp_path / "comparison" / "fixtures"
    with open(out / "table.csv", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert [row["corpus"] for row in rows[::2]] == [corpus.title for corpus in CORPORA.values()]
    assert all(row["subset"] == "all" and int(row["n"]) > 0 and row["unscored"] == "0" for row in rows[1::2])
    assert {f"{name}.png" for name in CORPORA} | {"all.png"} <= {p.name for p in (out / "maps").iterdir()}
    assert "profile:minilm" in capsys.readouterr().out


def test_characteristic_map_bins_and_leaves_out_unscored_pairs() -> None:
    table = pa.table({"syn": [0.0, 0.19, 0.2, 1.0, float("nan")], "sem": [0.05, 0.99, 0.2, 1.0, 0.5]})
    grid, unscored = characteristic_map(table)
    assert unscored == 1 and grid.sum() == pytest.approx(1.0)
    expected = np.zeros((5, 5))  # [sem level, syn level]; 1.0 falls in the last bin, 0.2 starts the second
    expected[0, 0] = expected[4, 0] = expected[1, 1] = expected[4, 4] = 0.25
    np.testing.assert_allclose(grid, expected)
    assert BIN_LABELS == ["0.0–0.2", "0.2–0.4", "0.4–0.6", "0.6–0.8", "0.8–1.0"]


def test_maps_are_drawn_with_unscored_pairs(tmp_path: Path) -> None:
    some = pa.table({"syn": [0.3, float("nan")], "sem": [0.9, float("nan")], "st": [0.95, float("nan")]})
    none = pa.table({"syn": [float("nan")], "sem": [float("nan")], "st": [float("nan")]})
    plot_maps({"msrpc": some, "paws": none}, tmp_path, StThreshold(0.8, math.nan, math.nan, "given"))
    written = {p.name: p.stat().st_size for p in (tmp_path / "maps").iterdir()}
    expected = {"all.png", "subset.png", "msrpc.png", "paws.png", "msrpc-scatter.png", "paws-scatter.png"}
    assert set(written) == expected
    assert all(size > 0 for size in written.values())


def test_a_runs_maps_share_one_colour_scale(tmp_path: Path) -> None:
    """``all.png`` and each corpus's map take their limits from :func:`colour_limits` (the one place for the scale,
    which a scored folder's maps use too): 0 to the largest cell of any corpus."""
    spread = pa.table({"syn": [0.1, 0.3, 0.5, 0.7], "sem": [0.9] * 4, "st": [0.95] * 4})  # four cells of 25%
    together = pa.table({"syn": [0.1, 0.1], "sem": [0.9, 0.9], "st": [0.95, 0.95]})  # one cell of 100%
    assert colour_limits(characteristic_map(table)[0] for table in (spread, together)) == (0.0, 1.0)
    assert colour_limits([characteristic_map(spread)[0]]) == (0.0, 0.25)
    plot_maps({"msrpc": spread, "paws": together}, tmp_path, StThreshold(0.8, math.nan, math.nan, "given"))
    for name in ("all.png", "msrpc.png", "paws.png"):
        assert Image.open(tmp_path / "maps" / name).text[SCALE_KEY] == "0.0 1.0"


def test_summary_counts_nan_scores_and_leaves_them_out_of_the_means() -> None:
    scores = {measure: [0.5, 0.9, 0.7] for measure in MEASURES}
    scores["st"] = [0.9, float("nan"), 0.5]
    scores["wms"] = [0.2, float("nan"), float("nan")]
    table = pa.table({"length": [5.0, 6.0, 7.0], **scores, "truncated": [False, True, False]})
    similar, everything = summary_rows("tapaco", table, StThreshold(0.8, math.nan, math.nan, "given"))
    assert similar["subset"] == "st>0.8" and similar["threshold"] == 0.8
    assert (similar["n"], similar["share"], similar["unscored"]) == (1, 0.5, 0)  # 1 of the 2 pairs with an ST
    assert (everything["n"], everything["unscored"], everything["truncated"]) == (3, 2, 1)
    assert everything["wms_mean"] == 0.2 and everything["st_mean"] == pytest.approx(0.7)
    assert everything["rouge1_mean"] == pytest.approx(0.7)
    nothing = pa.table({"length": [5.0], **{m: [float("nan")] for m in MEASURES}, "truncated": [False]})
    similar, everything = summary_rows("tapaco", nothing, StThreshold(0.5, 0.9, 0.7, "calibrated"))
    assert similar["n"] == 0 and math.isnan(everything["delta_mean"]) and everything["unscored"] == 1


def test_binary_latin1_and_empty_files_are_errors_naming_file_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    binary = tmp_path / "msr_paraphrase_train.txt"
    binary.write_bytes(b"Quality\t#1 ID\t#2 ID\t#1 String\t#2 String\n\x1f\x8b\x08\x00\x00\x00\n")
    with pytest.raises(CorpusError, match=r"msr_paraphrase_train\.txt:2: binary data"):
        load("msrpc", binary)
    latin1 = tmp_path / "en.txt"
    latin1.write_bytes("1\t10\tI am tired.\n1\t11\tJe suis fatigué.\n".encode("latin-1"))
    with pytest.raises(CorpusError, match=r"en\.txt:2: not UTF-8 text \(byte 0xe9 at column 20\)"):
        load("tapaco", latin1)
    empty = tmp_path / "para-nmt-5m-processed.txt"
    empty.touch()
    with pytest.raises(CorpusError, match=r"para-nmt-5m-processed\.txt: empty file"):
        load("paranmt", empty)
    coco = tmp_path / "captions_val2014.json"
    coco.write_bytes('{"annotations": [{"image_id": 1, "caption": "café"}]}'.encode("latin-1"))
    with pytest.raises(CorpusError, match=r"captions_val2014\.json: not UTF-8 JSON"):
        load("coco", coco)
    for name, path in (("msrpc", binary), ("tapaco", latin1), ("paranmt", empty)):
        assert main(["--corpus", f"{name}={path}", "--output", str(tmp_path / "out")]) == 2
        assert str(path) in capsys.readouterr().err


def test_hub_rows_become_pairs() -> None:
    paws = datasets.DatasetDict(
        {
            "validation": datasets.Dataset.from_dict(
                {"id": [7], "sentence1": ["a b"], "sentence2": ["b a"], "label": [0]}
            )
        }
    )
    records, report = hub_records("paws", paws)
    assert records == [PairRecord("validation-7", "a b", "b a", 0, "validation-7")] and report.read == 1
    glue = {"test": [{"idx": 3, "sentence1": "x", "sentence2": "y", "label": -1}]}
    assert hub_records("msrpc", glue)[0] == [PairRecord("test-3", "x", "y", None, "test-3")]
    tapaco = {"train": [{"paraphrase_set_id": "1", "paraphrase": t} for t in ("A.", "B.", "C.")]}
    assert [(r.sentence1, r.sentence2) for r in hub_records("tapaco", tapaco)[0]] == [
        ("A.", "B."),
        ("A.", "C."),
        ("B.", "C."),
    ]
    coco = {"train": [{"set": ["A dog  runs.", "A dog is running.", "Dog running."]}]}
    records, report = hub_records("coco", coco)
    assert len(records) == 3 and records[0].sentence1 == "A dog runs." and report.read == 3
    flickr = {"test": [{f"caption_{i}": f"caption {i}" for i in range(5)}]}
    assert len(hub_records("flickr8k", flickr)[0]) == 10
    with pytest.raises(CorpusError, match="nyu-mll/glue split train: no column 'sentence2'"):
        hub_records("msrpc", {"train": [{"idx": 1, "sentence1": "x", "label": 1}]})


def test_hub_corpus_offline_is_a_clear_error(tmp_path: Path) -> None:
    environment = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "HF_HOME": str(tmp_path / "hf")}
    environment["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), environment.get("PYTHONPATH")]))
    command = [sys.executable, str(ROOT / "benchmarks" / "compare.py"), "--corpus", "paws", "--output", str(tmp_path)]
    finished = subprocess.run(command, env=environment, capture_output=True, text=True, timeout=300)
    assert finished.returncode == 2
    assert "'google-research-datasets/paws' config 'labeled_final'" in finished.stderr
    assert "pass a local path of the release instead: paws=PATH" in finished.stderr


def test_hub_corpus_unreachable_fails_fast(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Not in offline mode, but no server: one probe, then the cache (empty here) and a clear error, not half a
    minute of retries."""
    import huggingface_hub.constants

    from metrics import profiles

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path)  # no copy cached
    monkeypatch.setattr(huggingface_hub.constants, "ENDPOINT", "http://127.0.0.1:9")  # refused at once
    profiles.reachable.cache_clear()
    started = time.monotonic()
    try:
        message = r"http://127.0.0.1:9 is unreachable and no copy is cached; pass a local path .*paws=PATH"
        with pytest.raises(CorpusError, match=message):
            load_hub("paws")
    finally:
        profiles.reachable.cache_clear()
    assert time.monotonic() - started < 10  # a hang guard: datasets' own retries take about 30 s


def test_corpus_without_hub_copy_asks_for_a_path(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert set(HUB_COPIES) == {"paws", "msrpc", "tapaco", "coco", "flickr8k"}
    assert main(["--corpus", "pascal", "--output", str(tmp_path)]) == 2
    assert "corpus 'pascal' has no Hub copy" in capsys.readouterr().err


def test_every_option_has_help(capsys: pytest.CaptureFixture[str]) -> None:
    options = [action for action in parser()._actions if action.dest != "help"]
    assert {action.dest for action in options} == {
        "corpus",
        "default_corpora",
        "columns",
        "config",
        "profile",
        "language",
        "language_check",
        "threshold",
        "sample",
        "seed",
        "output",
    }
    assert all(action.help for action in options)
    with pytest.raises(SystemExit) as stopped:
        main(["--help"])
    assert stopped.value.code == 0 and "google-research-datasets/paws" in capsys.readouterr().out


def test_bad_config_is_reported(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "corpora.json"
    config.write_text('{"corpora": {"tapaco": "en.txt"}, "sampel": 2}', encoding="utf-8")
    assert main(["--config", str(config), "--output", str(tmp_path / "out")]) == 2
    assert f"{config}: unknown config key 'sampel'" in capsys.readouterr().err
    config.write_text('{"corpora": {"tapaco": "en.txt"}, "profile": "large"}', encoding="utf-8")
    assert main(["--config", str(config), "--output", str(tmp_path / "out")]) == 2
    assert f"{config}: unknown profile 'large'" in capsys.readouterr().err
    assert main(["--corpus", f"tapaco={FIXTURES / 'tapaco'}", "--sample", "-1", "--output", str(tmp_path)]) == 2
    assert "sample must be a whole number ≥ 0, not -1" in capsys.readouterr().err


def test_a_built_folder_is_read_from_its_own_files_only(tmp_path: Path, perceptron_available: None) -> None:
    """A parquet file of the user's beside a build (``--overwrite``) is not read as pairs."""
    from builder.config import SILVER
    from builder.engines.local import build
    from builder.publish.card import SAMPLE_DUMP

    report = build([SAMPLE_DUMP], [SILVER], tmp_path / "out", tagger="perceptron", show_progress=False)
    silver = report.output / "silver"
    theirs = next(silver.glob("*.parquet"))
    (silver / "my-results.parquet").write_bytes(theirs.read_bytes())
    records, _ = load("wikipedia_ipc", silver)
    assert len(records) == report.rows["silver"]


PAIRS = [
    ("An Easter postcard from 1907 depicting a rabbit.", "A 1907 postcard featuring the Easter Bunny."),
    ("Troops clearing rubble after the air raid on Belfast.", "Soldiers remove debris in Belfast after the raid."),
    ("The harbour of the town at dusk, with its boats.", "Boats in the town's harbour in the evening."),
]


def test_a_file_of_pairs_of_yours_lands_in_the_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tsv = tmp_path / "mine.tsv"
    tsv.write_text("id\ttext1\ttext2\n" + "".join(f"{i}\t{a}\t{b}\n" for i, (a, b) in enumerate(PAIRS)), "utf-8")
    spreadsheet = tmp_path / "sheet.csv"
    with open(spreadsheet, "w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["Sentence1", "Sentence2", "label"])  # any case
        writer.writerow(['A "quoted" postcard, from 1907,\nof a rabbit.', "A 1907 postcard of the Easter Bunny.", 1])
        writer.writerow([*PAIRS[1], 0])
    jsonl = tmp_path / "lines.jsonl"
    jsonl.write_text("".join(json.dumps({"first": a, "second": b}) + "\n" for a, b in PAIRS), "utf-8")
    report = ReadReport()
    records = list(read_pairs_file(spreadsheet, report))
    assert report.read == 2 and [r.id for r in records] == ["sheet-2", "sheet-4"]  # the line each pair starts on
    assert records[0].sentence1 == 'A "quoted" postcard, from 1907,\nof a rabbit.'
    options = ["--corpus", f"msrpc={FIXTURES / 'msrpc'}", "--corpus", f"mine={tsv}", "--corpus", f"sheet={spreadsheet}"]
    assert main([*options, "--corpus", f"lines={jsonl}", "--output", str(tmp_path / "out")]) == 0
    with open(tmp_path / "out" / "table.csv", encoding="utf-8") as handle:
        rows = [row for row in csv.DictReader(handle) if row["subset"] == "all"]
    assert [(row["corpus"], row["type"], row["n"]) for row in rows] == [
        ("MSRPC", "H", "43"),
        ("mine", "U", "3"),
        ("sheet", "U", "2"),
        ("lines", "U", "3"),
    ]
    assert "U = a user's file of pairs" in (tmp_path / "out" / "table.md").read_text(encoding="utf-8")
    assert {"mine.png", "mine-scatter.png"} <= {path.name for path in (tmp_path / "out" / "maps").iterdir()}
    named = tmp_path / "named.tsv"
    named.write_text("left\tright\n" + "".join(f"{a}\t{b}\n" for a, b in PAIRS), "utf-8")
    assert main(["--corpus", f"named={named}", "--output", str(tmp_path / "out")]) == 2
    assert "named.tsv:1: no known pair of text columns among 'left', 'right'" in capsys.readouterr().err
    assert main(["--corpus", f"named={named}", "--columns", "left,right", "--output", str(tmp_path / "out")]) == 0


def test_a_pair_with_a_long_text_is_counted_as_cut_in_the_table(tmp_path: Path) -> None:
    """A text longer than the model's limit: the table counts its pair as cut (the run used to stop on it)."""
    long_text = " ".join(["The boats lay in the harbour of the old town at dusk."] * 60)  # about 840 word pieces
    tsv = tmp_path / "long.tsv"
    tsv.write_text(f"text1\ttext2\n{PAIRS[0][0]}\t{PAIRS[0][1]}\n{long_text}\t{PAIRS[2][0]}\n", "utf-8")
    with pytest.warns(UserWarning, match=r"texts cut per measure: bert 1 \(to 512 word pieces\), st 1"):
        assert main(["--corpus", f"long={tsv}", "--output", str(tmp_path / "out")]) == 0
    with open(tmp_path / "out" / "table.csv", encoding="utf-8") as handle:
        rows = [row for row in csv.DictReader(handle) if row["subset"] == "all"]
    assert [(row["n"], row["truncated"]) for row in rows] == [("2", "1")]
    table_md = (tmp_path / "out" / "table.md").read_text(encoding="utf-8")
    assert "1 pairs had a text cut to the sentence models' input length." in table_md


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("short.tsv", "text1\ttext2\nA rabbit.\tA bunny.\nonly one text\n", "short.tsv:3: expected 2 fields"),
        ("open.csv", 'text1,text2\n"A rabbit,A bunny\n', "open.csv:2: not CSV"),
        ("field.jsonl", '{"text1": "A rabbit", "text2": "A bunny"}\n{"text1": "x"}\n', "field.jsonl:2: no text2"),
        # a missing text (a null, an empty field: what pandas and datasets read as missing) stops the run where read
        (
            "null.jsonl",
            '{"text1": "A rabbit", "text2": "A bunny"}\n{"text1": null, "text2": "x"}\n',
            "null.jsonl:2: no text1",
        ),
        ("number.jsonl", '{"text1": "A rabbit", "text2": 7}\n', "number.jsonl:1: text2 is 7 (int), not a text"),
        ("empty.tsv", "text1\ttext2\nA rabbit.\tA bunny.\nA hare.\t\n", "empty.tsv:3: no text2 (a missing text)"),
        ("empty.csv", 'text1,text2\n"A rabbit,\non two lines",A bunny.\n,A hare.\n', "empty.csv:4: no text1"),
        ("list.jsonl", '{"text1": "A rabbit", "text2": "A bunny"}\n[1]\n', "list.jsonl:2: a JSON list"),
        ("pairs.txt", "text1\ttext2\n", "pairs.txt: 'pairs' is no known corpus"),
    ],
)
def test_a_bad_row_of_a_file_of_pairs_names_file_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, content: str, message: str
) -> None:
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    assert main(["--corpus", f"{path.stem}={path}", "--output", str(tmp_path / "out")]) == 2
    assert message in capsys.readouterr().err
    assert main(["--corpus", "mine", "--output", str(tmp_path / "out")]) == 2
    assert "unknown corpus 'mine'; choose from" in capsys.readouterr().err


def test_other_languages_need_the_multilingual_profile(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    french = tmp_path / "french.tsv"
    french.write_text(
        "text1\ttext2\n"
        "Une carte postale de Pâques de 1907 représentant un lapin.\tLe lapin de Pâques sur une carte de 1907.\n"
        "Des soldats déblaient les décombres après le raid sur Belfast.\tLes ruines de Belfast après le raid aérien.\n",
        encoding="utf-8",
    )
    out = str(tmp_path / "out")
    assert main(["--corpus", f"french={french}", "--language", "fr", "--output", out]) == 2
    assert "profile 'minilm' reads 'en' only" in capsys.readouterr().err
    assert main(["--corpus", f"french={french}", "--output", out]) == 2  # given as English
    err = capsys.readouterr().err
    assert f"corpus french ({french}): the texts were given as English" in err and "--no-language-check" in err
    assert not (tmp_path / "out" / "table.md").exists()
    assert main(["--corpus", f"french={french}", "--no-language-check", "--output", out]) == 0
    assert main(["--corpus", f"msrpc={FIXTURES / 'msrpc'}", "--language", "en-US", "--output", out]) == 0


def test_scatter_plots_draw_the_diagonal_and_mark_the_subset() -> None:
    table = pa.table({"syn": [0.2, 0.5, 0.7, float("nan")], "sem": [0.9, 0.6, 0.3, 0.5], "st": [0.95, 0.5, 0.81, 0.9]})
    figure = scatter_figure(table, "MSRPC", StThreshold(0.8, math.nan, math.nan, "given"))
    axis = figure.axes[0]
    (diagonal,) = axis.get_lines()
    assert list(diagonal.get_xdata()) == [0, 1] and list(diagonal.get_ydata()) == [0, 1]
    others, subset = axis.collections
    np.testing.assert_allclose(subset.get_offsets(), [[0.2, 0.9], [0.7, 0.3], [float("nan"), 0.5]])
    np.testing.assert_allclose(others.get_offsets(), [[0.5, 0.6]])
    assert subset.get_paths()[0] != others.get_paths()[0]  # another marker, another colour
    assert tuple(subset.get_facecolor()[0]) != tuple(others.get_facecolor()[0])
    labels = [text.get_text() for text in axis.get_legend().get_texts()]
    assert labels == ["syn = sem (Δ = 0; above: Δ > 0)", "ST ≤ 0.8 or none", "st>0.8 (table.md's subset)"]


@pytest.mark.parametrize("corpora", [9, 4])
def test_all_maps_leave_room_between_a_panel_and_the_title_below(corpora: int) -> None:
    grid = np.full((5, 5), 0.04)
    names = [f"corpus{index}" for index in range(corpora)]
    titles = {name: f"{name} (n = 1,000)\nst>0.755: f = 50%" for name in names}
    heading = "Characteristic maps (Figure 2)\n" + map_legend(get_profile("minilm").st_threshold)
    figure, _ = map_panels({name: (grid, 0) for name in names}, titles, "share", heading)
    figure.canvas.draw()
    renderer = figure.canvas.get_renderer()
    panels = [axis for axis in figure.axes if axis.get_title()]
    for upper, lower in zip(panels, panels[3:], strict=False):  # the panel below, in the same column
        label = upper.xaxis.get_tightbbox(renderer)  # tick labels and the axis label
        assert label.y0 > lower.title.get_window_extent(renderer).y1, (upper.get_title(), lower.get_title())


def test_a_null_text_in_parquet_files_is_named_by_file_and_row(tmp_path: Path) -> None:
    """A null ``sentence2`` in a build's second parquet file: its file and its row index there, for every reader of
    a build's files (``python -m metrics score``'s and the comparison's)."""
    first, second = tmp_path / "train.parquet", tmp_path / "test.parquet"
    pairs = {"id": ["a", "b"], "image": ["x", "x"], "sentence1": ["A rabbit.", "A hare."]}
    pq.write_table(pa.table({**pairs, "sentence2": ["A bunny.", "A hare again."]}), first)
    pq.write_table(pa.table({**pairs, "sentence2": pa.array(["A bunny.", None], pa.string())}), second)
    assert read_pairs_parquet([first]).num_rows == 2
    with pytest.raises(CorpusError, match=rf"^{re.escape(str(second))}: row index 1: no sentence2 \(a missing text\)"):
        read_pairs_parquet([first, second])
