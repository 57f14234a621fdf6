"""Which pairs are paraphrases: the labelled study, its figures, the shipped classifier, and the scored folder."""

from __future__ import annotations

import csv
import dataclasses
import hashlib
import importlib.util
import json
import math
import sys
from collections import Counter
from pathlib import Path

import datasets
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import wikipedia_ipc
from benchmarks import paraphrase_study as study
from builder.config import GOLD, SILVER
from builder.engines.local import build
from builder.publish.card import SAMPLE_DUMP
from builder.publish.layout import card_manifest, funnel_manifest, read_built, read_config
from builder.publish.publisher import published_files
from metrics.cli import PROBABILITY, SCORE_COLUMNS, main
from metrics.paraphrase import (
    FEATURES,
    META,
    MODEL_PATH,
    RULE_LEVELS,
    Classifier,
    image_references,
    load_classifier,
    meta_features,
    names_title,
    pair_key,
)

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "tests" / "data" / "paraphrases"
LABELS = DATA / "labelled_pairs.tsv"
DOCS = REPO / "docs" / "paraphrases.md"
LABEL_COLUMNS = ("paraphrase", "relation", "paraphrase2", "relation2")


def _rows() -> list[dict[str, str]]:
    with open(LABELS, encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle, delimiter="\t"))


def test_the_labelled_file_holds_300_real_pairs_a_fifth_labelled_twice() -> None:
    rows = study.read_labels(LABELS)  # every label 0/1, every relation one of the thesis's five
    assert len(rows) >= 300
    assert len({row["pair"] for row in rows}) == len(rows)
    for row in rows:  # provenance: where the pair comes from, and the config it reaches
        assert row["source"] and row["reaches"] and row["image"] and row["page1"] and row["page2"]
        assert row["revision1"].isdigit() and row["revision2"].isdigit()
        assert row["rule"] in ("sentence", "verb", "none")
    twice = {row["pair"] for row in rows if row["paraphrase2"]}
    rounds = _draw_module().ROUNDS
    fifth = set()
    for number in sorted(set(rounds.values())):  # the guideline's fifth of each labelling round, no other
        labelled = [row for row in rows if rounds[row["source"]] == number]
        drawn = sorted(labelled, key=lambda row: hashlib.sha256(f"second labeller {row['pair']}".encode()).hexdigest())
        fifth |= {row["pair"] for row in drawn[: math.ceil(len(labelled) / 5)]}
    assert twice == fifth and len(twice) == 78 + 32
    kinds = {study.kind(row) for row in rows}
    assert {"English", "cross-lingual"} <= kinds
    assert sum(study.kind(row) == "English" for row in rows) >= 150


@pytest.fixture(scope="module")
def drawn(tmp_path_factory: pytest.TempPathFactory, nltk_perceptron: None) -> Path:
    """The labelled pairs drawn anew, once for the module, with the builds kept (``work/``): the history's builds
    are scored by a test of their own instead of being built a second time."""
    folder = tmp_path_factory.mktemp("drawn")
    assert _draw_module().main(["--output", str(folder / "candidates.tsv"), "--work", str(folder / "work")]) == 0
    return folder


def test_the_labelled_pairs_are_what_the_named_sources_give(drawn: Path) -> None:
    """Drawing anew from the shipped history, gensim's excerpt, the minidumps and the crowd excerpts gives every
    pair of the file (drawn with NLTK's perceptron: the fallback model gives other caption rules, so offline the test
    is skipped)."""
    with open(drawn / "candidates.tsv", encoding="utf-8", newline="") as handle:
        drawn = list(csv.DictReader(handle, delimiter="\t"))
    labelled = [{key: value for key, value in row.items() if key not in LABEL_COLUMNS} for row in _rows()]
    assert drawn == labelled


CROWD = {
    "coco-crowd": (56, {"sentence": 4, "verb": 37, "none": 39}),
    "flickr8k-crowd": (68, {"sentence": 21, "verb": 40, "none": 19}),
}


def test_the_crowd_excerpts_hold_five_writers_captions_of_80_images_each() -> None:
    coco = json.loads((DATA / "crowd" / "captions_val2017.json").read_text(encoding="utf-8"))
    images = {image["id"] for image in coco["images"]}
    per_image = Counter(note["image_id"] for note in coco["annotations"])
    assert len(images) == 80 and set(per_image) == images and set(per_image.values()) == {5}
    lines = (DATA / "crowd" / "Flickr8k.token.txt").read_text(encoding="utf-8").splitlines()
    per_file = Counter(line.split("#", 1)[0] for line in lines)
    assert len(per_file) == 80 and set(per_file.values()) == {5}
    assert {line.split("\t", 1)[0].rsplit("#", 1)[1] for line in lines} == set("01234")


def test_the_crowd_pairs_are_what_the_excerpts_give(nltk_perceptron: None) -> None:
    """One pair of two workers' captions per image of each excerpt, drawn again as the file has it, rule included
    (the perceptron tagger's verdicts), with the labels pinned per source."""
    draw = _draw_module()
    rows = _rows()
    for source, (paraphrases, rules) in CROWD.items():
        drawn = draw.crowd_pairs(source.removesuffix("-crowd"))
        for row in drawn:
            row["pair"] = draw.pair_id(row)
        labelled = [row for row in rows if row["source"] == source]
        assert [{column: str(row[column]) for column in draw.COLUMNS} for row in sorted(drawn, key=draw.pair_id)] == [
            {column: row[column] for column in draw.COLUMNS} for row in labelled
        ]
        assert len(labelled) == 80 and len({row["image"] for row in labelled}) == 80
        assert all(row["page1"] != row["page2"] and row["references"] == "5" for row in labelled)
        assert sum(row["paraphrase"] == "1" for row in labelled) == paraphrases
        assert Counter(row["rule"] for row in labelled) == rules
    assert sum(bool(row["paraphrase2"]) for row in rows if row["source"] in CROWD) == math.ceil(160 / 5)


def test_the_labels_readme_states_the_counts_per_source() -> None:
    """Per source: its round, pairs, paraphrases, pairs labelled twice and their κ, as the labels' README says."""
    rows = study.read_labels(LABELS)
    rounds = _draw_module().ROUNDS
    readme = (DATA / "README.md").read_text(encoding="utf-8")
    for source, number in rounds.items():
        picked = [row for row in rows if row["source"] == source]
        twice = study.agreement(picked)
        kappa = f"{twice['kappa']:.2f} ({twice['agreed']})" if twice["pairs"] else ""
        paraphrases = sum(row["paraphrase"] == "1" for row in picked)
        assert f"| `{source}` | {number} | {len(picked)} | {paraphrases} | {twice['pairs']} | {kappa} |" in readme
    assert {row["source"] for row in rows} == set(rounds)
    pooled = study.agreement(rows)
    total = sum(row["paraphrase"] == "1" for row in rows)
    assert (
        f"| all | | {len(rows)} | {total} | {pooled['pairs']} | {pooled['kappa']:.2f} ({pooled['agreed']}) |" in readme
    )


def _draw_module():  # noqa: ANN202 - the module tests/data/paraphrases/draw_pairs.py
    spec = importlib.util.spec_from_file_location("draw_pairs", DATA / "draw_pairs.py")
    assert spec is not None and spec.loader is not None
    draw = importlib.util.module_from_spec(spec)
    sys.modules["draw_pairs"] = draw  # its dataclasses look their module up
    spec.loader.exec_module(draw)
    return draw


def test_a_scored_folder_gives_the_probability_of_the_studys_own_features(
    tmp_path: Path, drawn: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """No train/score skew: the history's configs built as the study drew them, then scored as a user scores a
    folder, give each labelled pair the probability the classifier gives the study's features of it.

    The one difference is the study's: it takes a pair's rule as the strictest of every config that holds it,
    across the two builds that count the history apart (bronze per revision, the others first-seen), where a
    scored folder sees its own configs; the 3 pairs that bronze-sentence's build also holds are bronze's in its
    folder (the verb rule), and with that rule their probability is the study's too."""
    probabilities = {}
    for counting in ("revision", "first_seen"):  # each build folder of the draw scored as it is
        scored = tmp_path / f"scored-{counting}"
        folder = drawn / "work" / "enwiki-history" / counting
        assert main(["score", str(folder), "--output", str(scored), "--no-progress", "--classifier", "measures"]) == 0
        for name, built in read_built(scored).items():
            for row in pa.concat_tables(pq.read_table(file) for file in built.files).to_pylist():
                probabilities[name, pair_key(row)] = row[PROBABILITY]
    capsys.readouterr()
    rows = [row for row in study.english_rows(study.read_labels(LABELS)) if row["source"] == "enwiki-history"]
    scored_rows = np.array([probabilities[row["reaches"], pair_key(row)] for row in rows])
    matrix, _ = study.english_features(rows)
    classifier = load_classifier("measures")
    across = [row["reaches"] == "bronze" and row["rule"] == "sentence" for row in rows]
    assert len(rows) == 188 and sum(across) == 3
    same = ~np.array(across)
    assert np.allclose(scored_rows[same], classifier.probability(matrix)[same], rtol=0, atol=1e-6)
    matrix[np.array(across), FEATURES.index("rule")] = RULE_LEVELS["verb"]  # bronze's own rule, in its folder
    assert np.allclose(scored_rows, classifier.probability(matrix), rtol=0, atol=1e-6)


def test_the_docs_state_the_agreement_and_the_shares_the_file_gives() -> None:
    rows = study.read_labels(LABELS)
    agreement = study.agreement(rows)
    assert agreement["pairs"] == math.ceil(len(rows) / 5)
    assert agreement["kappa"] >= 0.6  # substantial agreement, or the guideline is not one
    docs = DOCS.read_text(encoding="utf-8")
    assert f"κ = {agreement['kappa']:.2f}" in docs
    for entry in study.shares(rows):
        share = f"{entry['paraphrases'] / entry['pairs']:.0%} [{entry['low']:.0%}, {entry['high']:.0%}]"
        assert f"| {entry['group']} | {entry['pairs']} | {entry['paraphrases']} | {share} |" in docs


def test_the_measures_model_was_trained_on_the_labelled_file_as_committed() -> None:
    """Retraining runs outside the suite (``python benchmarks/paraphrase_study.py --write-model``); the shipped
    model names the labelled file it learnt from, and that file is the one committed."""
    measures = load_classifier("measures")
    assert measures.trained_on["sha256"] == hashlib.sha256(LABELS.read_bytes()).hexdigest()
    english = study.english_rows(study.read_labels(LABELS))
    assert measures.trained_on["pairs"] == len(english) == len(measures.labelled["label"])


def test_the_probability_is_scikit_learns() -> None:
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    rng = np.random.default_rng(0)
    matrix = rng.normal(size=(200, len(FEATURES)))
    labels = (matrix[:, 5] + rng.normal(scale=0.5, size=200) > 0).astype(int)
    model = make_pipeline(StandardScaler(), LogisticRegression()).fit(matrix, labels)
    ours = Classifier(
        "test",
        "minilm",
        FEATURES,
        tuple(model[0].mean_),
        tuple(model[0].scale_),
        tuple(model[1].coef_[0]),
        float(model[1].intercept_[0]),
        {},
        {},
    )
    assert np.allclose(ours.probability(matrix), model.predict_proba(matrix)[:, 1])
    matrix[3, 0] = np.nan  # a measure that could not be computed: no probability either
    assert np.isnan(ours.probability(matrix)[3]) and not np.isnan(ours.probability(matrix)[4])


def test_a_classifier_for_other_features_is_refused(tmp_path: Path) -> None:
    data = json.loads(MODEL_PATH.read_text(encoding="utf-8"))
    data["features"] = [*data["features"][:-1], "something_else"]
    path = tmp_path / "model.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ValueError, match=f"{path}: the classifier takes the features"):
        load_classifier(path)
    path.write_text("{}", encoding="utf-8")
    with pytest.raises(ValueError, match=f"{path}: not a paraphrase classifier"):
        load_classifier(path)


def test_meta_features_of_rows() -> None:
    table = pa.table(
        {
            "image": ["File:A.jpg", "File:A.jpg", "File:B.jpg"],
            "page1": ["Antique (band)", "Antique (band)", "Pear"],
            "page2": ["Greece", "Cyprus", "Pear"],
            "sentence1": ["Antique on stage in 2001", "Antique on stage in 2001", "A pear"],
            "sentence2": ["The band Antique in Athens", "A Greek duo on stage", "A pear, cut in half on a plate"],
            "same_page": [False, False, True],
            "identity": ["title", "sha1", "title"],
            "source1": ["link", "template", "link"],
            "source2": ["link", "link", "link"],
        }
    )
    assert image_references(table) == [3, 3, 2]  # File:A.jpg: three (page, caption) references in the config
    assert names_title("Antique on stage", "Antique (band)") and not names_title("A Greek duo", "Antique (band)")
    features = meta_features(table, ["sentence", "verb", "none"])
    column = {name: features[:, META.index(name)].tolist() for name in META}
    assert column["same_page"] == [0, 0, 1] and column["rule"] == [2, 1, 0]
    assert column["names_title"] == [1, 1, 2] and column["title_identity"] == [1, 0, 1]
    assert column["template"] == [0, 1, 0] and column["words_ratio"][2] == pytest.approx(2 / 8)
    with pytest.raises(ValueError, match="caption rules must be one per row"):
        meta_features(table, ["sentence"])


@pytest.fixture(scope="module")
def sample_build(tmp_path_factory: pytest.TempPathFactory, perceptron_available: None) -> Path:
    """The embedded sample's gold and silver (their one-split layout keeps the test short)."""
    folder = tmp_path_factory.mktemp("sample") / "built"
    configs = [dataclasses.replace(config, splits=()) for config in (GOLD, SILVER)]
    build([str(SAMPLE_DUMP)], configs, folder, tagger="perceptron", show_progress=False)
    return folder


def test_a_scored_folder_carries_the_probability_and_shows_each_maps(
    sample_build: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scored = tmp_path / "scored"
    assert main(["score", str(sample_build), "--output", str(scored), "--no-progress"]) == 0
    out = capsys.readouterr().out
    card = (scored / "README.md").read_text(encoding="utf-8")
    shipped = load_classifier()
    assert f"classifier `{shipped.version}`" in card and "| config | pairs scored | probability > 0.5 | share |" in card
    assert f'paraphrases = dataset.filter(lambda row: row["{PROBABILITY}"] > 0.5)' in card
    # the default classifier beats the cosine on people's labels, so the card states both and keeps p > 0.5
    captions = shipped.evaluation["stsb_test_captions"]
    assert f"ROC AUC {captions['crossencoder']['auc']:.3f}" in card and f"AUC {captions['cosine']['auc']:.3f}" in card
    assert "default cut is the rule" not in card
    for name in ("gold", "silver"):
        gold = datasets.load_dataset(str(scored.resolve()), name, split="train")
        assert set(SCORE_COLUMNS) | {PROBABILITY} <= set(gold.column_names)
        probability = np.array(gold[PROBABILITY], dtype=float)
        assert ((probability > 0) & (probability < 1)).all()
        likely = int((probability > 0.5).sum())
        assert f"| {name} | {len(gold):,} | {likely:,} | {likely / len(gold):.0%} |" in card
        assert f"{name}: " in out and f"{PROBABILITY} > 0.5: {likely:,} of {len(gold):,}" in out
        maps = sorted((scored / name).glob("map-*.png"))
        assert len(maps) == 1 and maps[0].read_bytes().startswith(b"\x89PNG")
        assert f"![{name}: characteristic map]({name}/{maps[0].name})" in card
        assert maps[0].name in funnel_manifest(scored / name / "funnel.json")["files"]
        assert Path(name) / maps[0].name in published_files(scored)  # pushed to the Hub with the card
        source = pq.read_table(sorted((sample_build / name).glob("*.parquet")))
        assert pq.read_table(sorted((scored / name).glob("*.parquet"))).select(source.column_names) == source
    # scored again into the same folder: the first scoring's maps are replaced, not left beside the new ones
    assert main(["score", str(sample_build), "--output", str(scored), "--no-progress"]) == 0
    assert all(len(list((scored / name).glob("map-*.png"))) == 1 for name in ("gold", "silver"))
    assert set(card_manifest(scored / "README.md")["configs"]) == {"gold", "silver"}
    # readers of a config's pairs see its parquet files only, not its map
    assert all(file.suffix == ".parquet" for file in read_built(scored)["gold"].files)
    assert all(file.suffix == ".parquet" for file in read_config(scored / "gold").files)
    # a scored folder scored again: its scores are computed anew, not doubled
    again = tmp_path / "again"
    assert main(["score", str(scored), "--output", str(again), "--no-progress"]) == 0
    assert pq.read_table(sorted((again / "gold").glob("*.parquet"))).column_names.count(PROBABILITY) == 1


def test_a_scored_folder_states_the_cut_by_precision_and_what_it_keeps(
    sample_build: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--classifier seed --min-precision 0.9`` on the sample's gold and silver: every row's probability is the
    seed model's of its two texts, and the card and the summary state the cut, the pairs each config keeps and
    the estimated share of paraphrases kept with its Wilson interval."""
    from metrics.paraphrase import cut_for_precision
    from metrics.seed_features import seed_features

    scored = tmp_path / "scored"
    code = main(["score", str(sample_build), "--output", str(scored), "--no-progress", "--classifier", "seed",
                 "--min-precision", "0.9"])  # fmt: skip
    assert code == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    card = (scored / "README.md").read_text(encoding="utf-8")
    model = load_classifier("seed")
    cut = cut_for_precision(model, 0.9)
    assert f"classifier `{model.version}`" in card and "MSRPC train (4,076 pairs; SHA-256" in card
    assert (
        f"**estimated share of paraphrases in what is kept {cut.precision:.0%} [{cut.low:.0%}, {cut.high:.0%}]**"
        in card
    )
    assert f'dataset.filter(lambda row: row["{PROBABILITY}"] >= {cut.threshold:.6f})' in card
    for name in ("gold", "silver"):
        table = pq.read_table(sorted((scored / name).glob("*.parquet")))
        probability = np.array(table.column(PROBABILITY).to_pylist())
        texts = table.column("sentence1").to_pylist(), table.column("sentence2").to_pylist()
        assert np.allclose(probability, model.probability(seed_features(*texts)), rtol=0, atol=1e-12)
        kept = int((probability >= cut.threshold).sum())
        assert f"| {name} | {len(probability):,} | {kept:,} | {kept / len(probability):.0%} |" in card
        assert f"kept at {PROBABILITY} ≥ {cut.threshold:.4f}: {kept:,} of {len(probability):,}" in out


def test_build_with_score_publishes_the_scored_folder_and_leaves_nothing_beside_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], sample_build: Path, perceptron_available: None
) -> None:
    output = tmp_path / "scored"
    code = wikipedia_ipc.main(["build", "--configs", "gold", "silver", "--output", str(output), "--score", "minilm",
                               "--splits", "none", "--quiet", "--tagger", "perceptron"])  # fmt: skip
    assert code == 0, capsys.readouterr().err
    assert sorted(path.name for path in tmp_path.iterdir()) == ["scored"]  # the unscored copy is gone
    for name in ("gold", "silver"):
        table = pq.read_table(sorted((output / name).glob("*.parquet")))
        built = pq.read_table(sorted((sample_build / name).glob("*.parquet")))
        assert PROBABILITY in table.column_names and table.select(built.column_names) == built  # the build's rows
    assert "Built; scoring the pairs into" in capsys.readouterr().out


def test_build_with_score_is_refused_before_any_dump_is_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import builder.engines.local

    monkeypatch.setattr(builder.engines.local, "extract_references", lambda *a, **k: pytest.fail("a dump was read"))
    output = tmp_path / "out"
    code = wikipedia_ipc.main(["build", "x.xml", "--configs", "crosslingual", "--output", str(output), "--score",
                               "minilm"])  # fmt: skip
    assert code == 2 and "a crosslingual config needs --score multilingual" in capsys.readouterr().err
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_OFFLINE", True)
    code = wikipedia_ipc.main(["build", "--output", str(output), "--score", "paper"])
    assert code == 2 and "--score paper: profile 'paper': cannot load" in capsys.readouterr().err
    assert not output.exists()


def test_another_profile_than_the_classifiers_gets_no_probability(capsys: pytest.CaptureFixture[str]) -> None:
    from metrics.cli import _classifier_for

    assert _classifier_for("minilm", "measures") is not None
    assert _classifier_for("paper", "measures") is None
    assert "no paraphrase_probability column: the classifier was trained on profile 'minilm'" in capsys.readouterr().err
    # Brockett & Dolan's features read the texts alone, in English: any profile, not another language
    assert _classifier_for("paper") is not None and _classifier_for("multilingual", "seed") is not None
    assert _classifier_for("multilingual", "seed", "fr") is None
    assert "reads English words (WordNet, an English stemmer), and the texts are 'fr'" in capsys.readouterr().err
    # the cross-encoder learnt from English pairs only: another language gets no column, and stderr says why
    assert _classifier_for("multilingual", "crossencoder", "fr") is None
    assert "was trained and measured on English pairs only, and the texts are 'fr'" in capsys.readouterr().err


def test_build_with_score_for_configs_without_pairs_is_refused_before_the_work(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--configs deja`` (captions in repetition) or ``references`` (a row per image reference) hold no pairs: the
    scoring is refused in one line before any dump is read, and nothing is written."""
    import builder.engines.local

    monkeypatch.setattr(builder.engines.local, "extract_references", lambda *a, **k: pytest.fail("a dump was read"))
    for configs in (["deja"], ["references"], ["deja", "references"]):
        output = tmp_path / "out"
        code = wikipedia_ipc.main(["build", "--configs", *configs, "--output", str(output), "--score", "minilm"])
        err = capsys.readouterr().err
        assert code == 2 and f"--score scores pairs, and {', '.join(configs)} hold" in err, err
        assert not output.exists()


def test_a_memory_below_the_floor_is_refused_before_the_work(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for size in ("1KB", "1MB", "127MB"):
        code = wikipedia_ipc.main(["build", "--memory", size, "--output", str(tmp_path / "out")])
        assert code == 2 and f"memory limit '{size}' is below the 128MB a build needs" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
