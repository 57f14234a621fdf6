"""Stage 4–5: caption length, the rules of Table 4, and the taggers behind them."""

from __future__ import annotations

import pytest

from builder.captions import classify, has_verb, is_sentence, satisfies, strip_parentheticals, word_count
from builder.tagging import StanzaTagger, TaggerUnavailable, get_tagger


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

    from builder.tagging import PerceptronTagger

    tagger = PerceptronTagger._textblob_model(NLTKPerceptron)
    assert [tag for _, tag in tagger.tag("Soldiers cleared the rubble .".split())] == ["NNS", "VBD", "DT", "NN", "."]
