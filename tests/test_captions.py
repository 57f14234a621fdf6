"""Stage 4–5: caption length, the rules of Table 4, and the taggers behind them."""

from __future__ import annotations

import http.server
import re
import threading
import time
from pathlib import Path

import pytest

from builder.filters.captions import classify, has_verb, is_sentence, satisfies, strip_parentheticals
from builder.filters.tagging import StanzaTagger, TaggerUnavailable, get_tagger
from builder.lang.segmenters import word_count


@pytest.mark.parametrize(
    ("tags", "expected"),
    [
        # Rule 1: a modal must be followed by an optional adverb and a base-form verb.
        ("NNP NNP MD VB VBN IN NNP NNP", True),
        ("DT NN MD RB VB VBN", True),
        ("NNP MD NN", False),
        ("NNP VBD MD", False),  # the modal's premise decides, even with an inflected verb present
        # Rule 2: an inflected verb before the first wh-word.
        ("NNP NNP VBD VBN IN NNP NNP WDT VBZ DT JJ NN", True),
        ("DT NN WDT VBZ JJ", False),
        # Rule 3: an inflected verb before the first preposition.
        ("NNP VBD IN NNP", True),
        ("NNP IN DT NNP VBZ VBN", False),
        # Rule 4: any inflected verb.
        ("NNP NNP VBD DT NNP NNP", True),
        ("NNP NNP VBP", True),
        ("JJ NNP VBN", False),
        ("", False),
    ],
)
def test_table_4(tags: str, expected: bool) -> None:
    assert is_sentence(tags.split()) is expected


def test_every_sentence_must_pass_for_gold_any_verb_for_silver() -> None:
    sentence, fragment = ["NNP", "VBD", "NNP"], ["DT", "JJ", "VBG", "NN"]
    assert satisfies("sentence", [sentence, sentence])
    assert not satisfies("sentence", [sentence, fragment])
    assert satisfies("verb", [fragment])
    assert not satisfies("verb", [["DT", "NN"]])
    assert not satisfies("sentence", [])
    assert has_verb(["VBN"]) and not has_verb(["NN", "JJ"])
    with pytest.raises(ValueError, match="unknown caption rule 'noun'"):
        satisfies("noun", [sentence])


@pytest.mark.parametrize(
    ("text", "words"),
    [("Easter Bunny Postcard, 1907", 4), ("A  postcard – featuring the Easter Bunny .", 6), ("", 0), ("— – .", 0)],
)
def test_word_count(text: str, words: int) -> None:
    assert word_count(text) == words


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The Armenian genocide (pictured) was condemned.", "The Armenian genocide was condemned."),
        ("A train (left (1973 stock)) passes (right).", "A train passes."),
        ("An unclosed (bracket stays", "An unclosed (bracket stays"),
        ("Stray) closing", "Stray) closing"),
    ],
)
def test_strip_parentheticals(text: str, expected: str) -> None:
    assert strip_parentheticals(text) == expected


# The paper's own examples (section 3) of the three caption styles.
PAPER_EXAMPLES = [
    ("Last Supper by Dieric Bouts", False, False),
    ("The Last Supper was drawn by Dieric Bouts", True, True),
    ("Last Supper might be drawn by Dieric Bouts", True, True),
    ("Last Supper was drawn by Dieric Bouts which is an exceptional artwork", True, True),
    ("Dieric Bouts drew the Last Supper", True, True),
    ("Water bead on a fabric that has been made non-wetting by chemical treatment.", False, True),
    ("The Armenian genocide (pictured) was the first event officially condemned.", True, True),
]


@pytest.mark.usefixtures("perceptron_available")
def test_classify_with_the_perceptron_tagger() -> None:
    texts = [text for text, _, _ in PAPER_EXAMPLES]
    assert classify(texts, "sentence", tagger="perceptron") == [gold for _, gold, _ in PAPER_EXAMPLES]
    assert classify(texts, "verb", tagger="perceptron") == [silver for _, _, silver in PAPER_EXAMPLES]


@pytest.mark.usefixtures("perceptron_available")
def test_perceptron_keeps_abbreviations_inside_sentences() -> None:
    tagged = get_tagger("perceptron").tag(["A serf at work, c. 1170. St. Paul's was rebuilt."])[0]
    assert [" ".join(token for token, _ in sentence) for sentence in tagged] == [
        "A serf at work , c. 1170 .",
        "St. Paul 's was rebuilt .",
    ]


def test_stanza_without_models_says_how_to_get_them(tmp_path) -> None:
    with pytest.raises(TaggerUnavailable, match=r"stanza\.download\('en'"):
        StanzaTagger(model_dir=str(tmp_path))


def test_unknown_tagger_name() -> None:
    with pytest.raises(ValueError, match="unknown tagger 'treetagger'"):
        get_tagger("treetagger")


def test_textblob_aptagger_model_is_a_working_fallback() -> None:
    """The model file that ships with textblob-aptagger loads into NLTK's perceptron and tags."""
    from nltk.tag.perceptron import PerceptronTagger as NLTKPerceptron

    from builder.filters.tagging import PerceptronTagger

    tagger = PerceptronTagger._textblob_model(NLTKPerceptron)
    assert [tag for _, tag in tagger.tag("Soldiers cleared the rubble .".split())] == ["NNS", "VBD", "DT", "NN", "."]


@pytest.fixture
def no_nltk_model(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """NLTK's search path holds no tagger model, as on a fresh machine."""
    import nltk

    monkeypatch.setattr(nltk.data, "path", [str(tmp_path / "nltk_data")])


def test_perceptron_offline_says_which_model_tags(no_nltk_model: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without NLTK's model and without a server to fetch it from, the older model tags, and a warning says so."""
    from builder.filters import tagging

    monkeypatch.setattr(tagging, "NLTK_INDEX", "http://127.0.0.1:9/index.xml")  # the discard port: refused at once
    started = time.monotonic()
    with pytest.warns(tagging.TaggerWarning, match=r"tagger_eng model is not installed.*nltk\.download"):
        tagger = tagging.PerceptronTagger()
    assert time.monotonic() - started < 20  # a hang guard, not a speed threshold
    assert tagger.signature().endswith("|textblob-aptagger:trontagger-0.1.0")
    assert tagger.tag(["Soldiers cleared the rubble."])[0][0][1] == ("cleared", "VBD")


def test_perceptron_fetch_failure_falls_back(no_nltk_model: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """A server that answers the probe but cannot deliver the model: NLTK's downloader fails, the fallback warns."""
    from builder.filters import tagging

    class Index(http.server.BaseHTTPRequestHandler):
        def do_HEAD(self) -> None:  # noqa: N802 - the handler's protocol
            self.send_response(200)
            self.end_headers()

        def do_GET(self) -> None:  # noqa: N802
            self.send_error(404)

        def log_message(self, *arguments: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Index)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        monkeypatch.setattr(tagging, "NLTK_INDEX", f"http://127.0.0.1:{server.server_address[1]}/index.xml")
        with pytest.warns(tagging.TaggerWarning, match="could not be downloaded"):
            tagger = tagging.PerceptronTagger()
    finally:
        server.shutdown()
        thread.join(timeout=10)
    assert tagger.model == "textblob-aptagger:trontagger-0.1.0"


@pytest.mark.parametrize("ci", ["", "true"])
def test_tests_of_nltks_model_skip_offline_and_fail_under_ci(
    no_nltk_model: None, monkeypatch: pytest.MonkeyPatch, ci: str
) -> None:
    """Offline without NLTK's data the fallback tags without an error: the tests of NLTK's model skip, saying why,
    and under CI they fail (the fixture used to look for TaggerUnavailable only, which the fallback never raises)."""
    from conftest import require_nltk_perceptron

    from builder.filters import tagging

    monkeypatch.setattr(tagging, "NLTK_INDEX", "http://127.0.0.1:9/index.xml")  # the discard port: refused at once
    monkeypatch.setenv("CI", ci)
    outcome = pytest.fail.Exception if ci else pytest.skip.Exception
    reason = r"tagger_eng model is not on NLTK's search path .* tags with textblob-aptagger:trontagger-0\.1\.0"
    with pytest.raises(outcome, match=("CI must have NLTK's tagger model: .*" if ci else "") + reason):
        require_nltk_perceptron()


@pytest.mark.parametrize("ci", ["", "true"])
def test_a_library_of_the_test_extras_missing_skips_and_fails_under_ci(
    monkeypatch: pytest.MonkeyPatch, ci: str
) -> None:
    """PySpark, stanza and spaCy are the test extras': their absence fails under CI, as NLTK's model's does, and
    no test asks pytest.importorskip for them, which would skip there too."""
    import sys

    from conftest import import_or_skip

    monkeypatch.setitem(sys.modules, "pyspark", None)  # an import of it raises ImportError
    monkeypatch.setenv("CI", ci)
    outcome = pytest.fail.Exception if ci else pytest.skip.Exception
    with pytest.raises(outcome, match="CI must have pyspark" if ci else "pyspark"):
        import_or_skip("pyspark")
    extras = "|".join(("pyspark", "stanza", "spacy", "onnxruntime", "moto", "s3fs", "warcio", "gensim", "torch"))
    asked = re.compile(rf"importorskip\(\s*[\"']({extras})[\"']")
    tests = Path(__file__).resolve().parent
    assert [path.name for path in sorted(tests.glob("*.py")) if asked.search(path.read_text(encoding="utf-8"))] == []


def test_perceptron_uses_nltk_model_without_warning(nltk_perceptron: None) -> None:
    """With NLTK's model on the search path (CI's NLTK_DATA) no fetch is tried and no warning is given."""
    import warnings

    from builder.filters.tagging import PerceptronTagger

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tagger = PerceptronTagger()
    assert tagger.model == "nltk:averaged_perceptron_tagger_eng"
