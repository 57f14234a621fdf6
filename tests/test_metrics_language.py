"""Δsem,syn in other languages: English-only profiles refused, English checked, Unicode tokens, the signature."""

from __future__ import annotations

from pathlib import Path

import mwparserfromhell
import pytest
from rouge_score import tokenize

import metrics
from builder.extract.wikitext import extract_images
from builder.sources.xml import iter_pages
from metrics import score_pairs
from metrics.cli import main
from metrics.corpora import CORPORA, load
from metrics.language import MIN_FUNCTION_SHARE, LanguageMismatch, check_english, english_evidence
from metrics.syntactic import SyntacticScorer

ROOT = Path(__file__).resolve().parent.parent
MINIDUMPS = ROOT / "tests" / "data" / "minidumps"
FRENCH = (
    ["Une carte postale de Pâques de 1907 représentant un lapin dans la neige."],
    ["Le lapin de Pâques sur une carte postale de 1907, avec un panier et des œufs."],
)
RUSSIAN = (["Москва — столица России и крупнейший город страны"], ["Москва — крупнейший город России"])
CHINESE = (["北京是中华人民共和国的首都"], ["北京是中国的首都"])
ENGLISH = (["An Easter postcard from 1907 depicting a rabbit."], ["A 1907 postcard featuring the Easter Bunny."])


@pytest.mark.parametrize("profile", ["minilm", "paper"])
def test_english_only_profiles_refuse_another_language(profile: str) -> None:
    with pytest.raises(ValueError, match=rf"profile '{profile}' reads 'en' only .* not 'fr'.*profile='multilingual'"):
        score_pairs(*FRENCH, profile=profile, language="fr")
    with pytest.raises(ValueError, match="language 'français' is not an ISO 639 code"):
        score_pairs(*FRENCH, profile=profile, language="français")
    # ROUGE and BLEU use no profile: they score French, in Unicode words
    r = score_pairs(*FRENCH, profile=profile, language="fr", measures=["rouge1", "rougeL", "bleu"])
    assert 0.3 < r["syn"][0] < 0.7


def test_the_evaluate_module_and_the_command_line_refuse_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    metric = metrics.load(cache_dir=str(tmp_path / "cache"))
    with pytest.raises(ValueError, match="profile 'minilm' reads 'en' only"):
        metric.compute(predictions=FRENCH[0], references=FRENCH[1], language="fr")
    with pytest.raises(LanguageMismatch, match="given as English"):
        metric.compute(predictions=RUSSIAN[0], references=RUSSIAN[1])
    pairs = tmp_path / "pairs.tsv"
    pairs.write_text(f"{FRENCH[0][0]}\t{FRENCH[1][0]}\n", encoding="utf-8")
    assert main(["score", str(pairs), "--language", "fr", "--no-progress"]) == 2
    assert "error: profile 'minilm' reads 'en' only" in capsys.readouterr().err
    assert main(["score", str(pairs), "--no-progress"]) == 2  # French given as English
    err = capsys.readouterr().err
    assert "given as English" in err and "--no-language-check" in err and not (tmp_path / "pairs.scored.tsv").exists()
    assert main(["score", str(pairs), "--no-progress", "--no-language-check"]) == 0
    assert (tmp_path / "pairs.scored.tsv").is_file()


@pytest.mark.parametrize("pair", [FRENCH, RUSSIAN, CHINESE], ids=["french", "russian", "chinese"])
def test_text_of_another_language_given_as_english_is_refused(pair: tuple[list[str], list[str]]) -> None:
    with pytest.raises(LanguageMismatch, match="given as English .* Name their language"):
        score_pairs(*pair)
    r = score_pairs(*pair, check_language=False, measures=["rouge1", "rougeL", "bleu"])  # the override
    assert 0 < r["syn"][0] < 1


def _plain_lines(dump: Path) -> list[str]:
    """A minidump's article text without markup, one line per paragraph of 40 characters or more."""
    lines = []
    for page in iter_pages(dump):
        text = mwparserfromhell.parse(page.text).strip_code()
        lines.extend(" ".join(line.split()) for line in text.split("\n") if len(line.strip()) >= 40)
    return lines


# Real Wikipedia text of 24 editions in Latin, Cyrillic, Greek, Arabic, Hebrew, Devanagari, CJK, Thai, Georgian,
# Armenian scripts (the "Berlin" articles of DBpedia's minidumps, tests/data/minidumps/SOURCE.md).
OTHER_EDITIONS = "de fr es it pt nl pl sv da cs ro tr hu fi vi id ru el ar he hi zh ja th".split()


@pytest.mark.parametrize("edition", OTHER_EDITIONS)
def test_real_wikipedia_text_of_other_editions_is_not_taken_for_english(edition: str) -> None:
    lines = _plain_lines(MINIDUMPS / edition / "wiki.xml.bz2")
    assert len(lines) >= 5
    with pytest.raises(LanguageMismatch):
        check_english(lines)


def _shipped_english() -> dict[str, list[str]]:
    """Every English text the repository ships for the metric: the corpora fixtures, the sample dump's captions,
    the labelled captions, the English and Simple English editions' text."""
    texts = {}
    for name in CORPORA:
        path = ROOT / "tests" / "data" / "corpora" / name
        records, _ = load(name, path / "wikipedia-ipc-silver.jsonl" if name == "wikipedia_ipc" else path)
        texts[name] = [text for record in records for text in (record.sentence1, record.sentence2)]
    sample = ROOT / "builder" / "data" / "enwiki-20240101-sample-pages-articles.xml.bz2"
    texts["sample dump captions"] = [
        text
        for page in iter_pages(sample)
        for reference in extract_images(page.text, page.title)
        for text in (reference.caption, reference.alt)
        if text
    ]
    labelled = (ROOT / "tests" / "data" / "labelled_captions.tsv").read_text(encoding="utf-8").splitlines()
    rows = [line.split("\t") for line in labelled if not line.startswith("#")]
    assert rows[0][0] == "caption"
    texts["labelled captions"] = [row[0] for row in rows[1:]]
    for edition in ("en", "simple"):
        texts[f"{edition} minidump"] = _plain_lines(MINIDUMPS / edition / "wiki.xml.bz2")
    return texts


def test_the_check_never_fires_on_the_english_texts_we_ship() -> None:
    """Measured: every shipped English corpus is far above the threshold, with no non-Latin text to speak of."""
    for name, texts in _shipped_english().items():
        assert texts, name
        check_english(texts)
        evidence = english_evidence(texts)
        assert evidence.non_latin_share < 0.1, name
        if evidence.function_share is not None:
            assert evidence.function_share > 2 * MIN_FUNCTION_SHARE, (name, evidence)
            assert evidence.foreign_share < evidence.function_share / 5, (name, evidence)  # type: ignore[operator]


def test_another_language_is_tokenized_in_unicode_words_without_english_stemming() -> None:
    # rouge_score's own tokenizer keeps [a-z0-9]: French loses its accented letters, Russian and Chinese everything
    assert tokenize.tokenize("Une élève à Noël", None) == ["une", "l", "ve", "no", "l"]
    assert tokenize.tokenize(RUSSIAN[0][0], None) == [] and tokenize.tokenize(CHINESE[0][0], None) == []
    french = SyntacticScorer("auto", "fr")
    assert french.tokens("Les élèves travaillaient à Noël", "x")[0] == ["les", "élèves", "travaillaient", "à", "noël"]
    assert SyntacticScorer("auto", "zh").tokens(*CHINESE[0], "x")[0][:3] == ["北", "京", "是"]
    english = SyntacticScorer("auto")
    assert english.tokens("The rabbits were depicted", "x")[0] == ["the", "rabbit", "were", "depict"]  # as before
    with pytest.raises(ValueError, match=r"tokenize='rouge' keeps .* drops the words of language 'fr'"):
        SyntacticScorer("rouge", "fr")
    for pair, code in ((FRENCH, "fr"), (RUSSIAN, "ru"), (CHINESE, "zh")):
        r = score_pairs(*pair, language=code, measures=["rouge1", "rougeL", "bleu"])
        assert 0.2 < r["rouge1"][0] < 1.0 and 0.0 < r["bleu"][0] < 1.0, code
        assert f"|tok:unicode|lang:{code}|" in r["signature"] and "+nostem|" in r["signature"]
        assert score_pairs(pair[0], pair[0], language=code, measures=["bleu"])["bleu"] == [1.0]


def test_english_signature_and_scores_unchanged_by_the_language_argument() -> None:
    default = score_pairs(*ENGLISH)
    named = score_pairs(*ENGLISH, language="en-GB")
    assert default["delta"] == named["delta"] and default["signature"] == named["signature"]
    assert "lang:" not in default["signature"] and "|tok:auto|" in default["signature"]
    assert "+stem|" in default["signature"] and "sklearn-stop-words" in default["signature"]
    assert [round(default[m][0], 2) for m in ("rouge1", "rougeL", "bleu", "syn")] == [0.53, 0.13, 0.14, 0.27]


def test_multilingual_profile_serves_any_language_without_its_model_for_rouge_and_bleu() -> None:
    r = score_pairs(*FRENCH, profile="multilingual", language="fr", measures=["rouge1", "rougeL", "bleu"])
    signature = r["signature"]
    assert signature.startswith("profile:multilingual|st:paraphrase-multilingual-MiniLM-L12-v2|")
    assert "@L12+rescale:none|" in signature and "+none-stop-words+" in signature and "|lang:fr|" in signature
    # the same texts as English with the multilingual profile: still checked
    with pytest.raises(LanguageMismatch):
        score_pairs(*FRENCH, profile="multilingual")
