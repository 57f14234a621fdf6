"""Semantic similarity: BERTScore F1, sentence-embedding cosine (ST) and Word Mover's similarity (WMS).

Sentences repeat across the pairs of a corpus (a caption pairs with every other
caption of its image), so every unique sentence is encoded once, in batches.
When the sentence model and the BERTScore model are the same transformer (the
``minilm`` profile), one forward pass gives both: the mean-pooled last layer is
the sentence embedding, and the same token vectors feed BERTScore's greedy
matching – exactly what sentence-transformers and bert_score compute separately.

Texts longer than the model's position embeddings allow are cut to that limit (the
libraries do the same, silently); the encoder reports which ones. A text most of whose
word pieces are the tokenizer's unknown token (more than half of the pieces between
``[CLS]`` and ``[SEP]``: Amharic, Thai or runic text for MiniLM) is one the model cannot
read: its measures are NaN, not the similarity of two ``[UNK]`` sequences.

Word Mover's distance needs a cost matrix of every word of one text against every word
of the other, so it reads a text up to its :data:`WMS_WORDS`-th distinct known content
word (like the transformers' cut); longer texts are counted as truncated.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import importlib.metadata
import importlib.util
import io
import logging
import math
import os
import warnings
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from builder.progress import progress_bar
from metrics.profiles import ModelUnavailable, Profile

# torch and POT are imported where a text is encoded or a distance computed, not with the module: the
# command line's --help and its argument choices (RUNTIME_CHOICES) answer without them.
if TYPE_CHECKING:
    import torch


@contextlib.contextmanager
def quiet_transformers() -> Iterator[None]:
    """Silence transformers' per-load "Loading weights" bars and length warnings; ours stay."""
    from transformers.utils import logging

    verbosity = logging.get_verbosity()
    bars = logging.is_progress_bar_enabled()
    logging.set_verbosity_error()
    logging.disable_progress_bar()
    try:
        yield
    finally:
        logging.set_verbosity(verbosity)
        if bars:
            logging.enable_progress_bar()


def model_limit(tokenizer, config) -> int:  # noqa: ANN001 - any transformers tokenizer and config
    """Word pieces (special tokens included) the model can read: its tokenizer's limit, else its position table."""
    limit = getattr(tokenizer, "model_max_length", None)
    if limit is None or limit > 100_000:  # transformers' "no limit set" sentinel is huge
        limit = config.max_position_embeddings
    return int(limit)


@dataclasses.dataclass
class Encoding:
    """What the semantic measures need of one sentence."""

    sentence: np.ndarray  # unit-length sentence embedding (ST)
    tokens: np.ndarray  # unit-length token vectors of the BERTScore layer, specials included
    content: np.ndarray  # which of ``tokens`` are not [CLS]/[SEP] ([UNK] is content, as in bert_score)
    unknown: bool = False  # most content word pieces are the unknown token: the model cannot read the text


def greedy_f1(a: Encoding, b: Encoding) -> float:
    """BERTScore F1 without idf: each content token's best cosine match on the other side."""
    if a.unknown or b.unknown:
        return math.nan
    if not a.content.any() or not b.content.any():
        return 0.0
    similarity = a.tokens @ b.tokens.T
    precision = float(similarity.max(axis=1)[a.content].mean())
    recall = float(similarity.max(axis=0)[b.content].mean())
    return 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0


def cosine(a: Encoding, b: Encoding) -> float:
    """ST: cosine of the unit sentence embeddings; NaN when a side is invisible to the model."""
    if a.unknown or b.unknown:
        return math.nan
    return float(a.sentence @ b.sentence)


@dataclasses.dataclass
class Pieces:
    """One tokenizer pass over the texts: word pieces as the model reads them, and what was lost."""

    inputs: list[list[int]]  # special tokens included, cut to the limit
    truncated: list[bool]  # the text had more word pieces than the limit
    unknown: list[bool]  # more than half of the content word pieces are the unknown token


def framing_ids(tokenizer) -> set[int]:  # noqa: ANN001 - any transformers tokenizer
    """The special ids that are not content ([CLS], [SEP], padding, ...): every special id but the unknown one."""
    return set(tokenizer.all_special_ids) - {tokenizer.unk_token_id}


def word_pieces(tokenizer, texts: Sequence[str], limit: int) -> Pieces:  # noqa: ANN001 - a fast tokenizer
    """Word pieces cut to ``limit`` exactly as the libraries' truncation cuts them; the overflow says which were cut."""
    if not texts:
        return Pieces([], [], [])
    with quiet_transformers():
        encoded = tokenizer(list(texts), truncation=True, max_length=limit, return_overflowing_tokens=True)
    inputs: list[list[int] | None] = [None] * len(texts)
    truncated = [False] * len(texts)
    for ids, sample in zip(encoded["input_ids"], encoded["overflow_to_sample_mapping"], strict=True):
        if inputs[sample] is None:
            inputs[sample] = ids
        else:
            truncated[sample] = True
    special = framing_ids(tokenizer)
    unknown = []
    for ids in inputs:
        content = [piece for piece in ids if piece not in special]  # type: ignore[union-attr]
        unseen = sum(piece == tokenizer.unk_token_id for piece in content)
        unknown.append(2 * unseen > len(content))
    return Pieces(inputs, truncated, unknown)  # type: ignore[arg-type]


RUNTIMES = ("torch", "onnx")
RUNTIME_CHOICES = ("auto", *RUNTIMES)
ONNX_PACKAGES = ("onnxruntime", "onnx", "onnxscript")  # running the model, and exporting it once


def onnx_installed() -> bool:
    """ONNX Runtime and the exporter's packages (the ``onnx`` extra) are installed."""
    return all(importlib.util.find_spec(package) is not None for package in ONNX_PACKAGES)


def resolve_runtime(runtime: str, shared: bool, device: str, fp16: bool) -> str:
    """The runtime that runs: ``auto`` is the fastest exact one installed for the device.

    ONNX Runtime gives torch's scores within 1e-5 and is faster on the CPU in full precision; it
    serves a shared transformer only (``minilm``, ``multilingual``), so elsewhere ``auto`` is torch.
    """
    if runtime not in RUNTIME_CHOICES:
        raise ValueError(f"unknown runtime {runtime!r}; choose from {list(RUNTIME_CHOICES)}")
    if runtime != "auto":
        return runtime
    return "onnx" if shared and device == "cpu" and not fp16 and onnx_installed() else "torch"


def _layer_module(model: torch.nn.Module, layer: int) -> torch.nn.Module:
    """The model up to the BERTScore layer, as one function of ids and mask (what gets exported)."""
    import torch

    class Layer(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
            output = self.model(input_ids=input_ids, attention_mask=attention_mask, output_hidden_states=True)
            return output.hidden_states[layer]

    return Layer()


def onnx_cache() -> Path:
    """Where exported models are kept: ``$XDG_CACHE_HOME/wikipedia-ipc/onnx`` (``~/.cache`` by default)."""
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "wikipedia-ipc" / "onnx"


class OnnxLayer:
    """The same layer in ONNX Runtime: exported once per model, layer and library versions, then cached.

    torch's dynamo exporter keeps the attention mask (the legacy tracer loses it); the hidden
    states agree with torch's within 1e-5, and the CPU forward pass is about twice as fast.
    """

    def __init__(self, model: torch.nn.Module, path: str, layer: int, limit: int) -> None:
        import torch

        try:
            import onnxruntime
        except ImportError as error:
            raise ImportError("runtime='onnx' needs onnxruntime: pip install 'wikipedia-ipc[onnx]'") from error
        versions = [importlib.metadata.version(name) for name in ("torch", "transformers", "onnxruntime")]
        weights = sorted(Path(path).glob("*.safetensors")) + sorted(Path(path).glob("*.bin"))
        stamp = [str(Path(path).resolve()), str(layer), *versions, *(f"{w.name}:{w.stat().st_size}" for w in weights)]
        target = onnx_cache() / hashlib.sha256("|".join(stamp).encode()).hexdigest()[:16] / "model.onnx"
        if not target.is_file():
            self._export(model, layer, limit, target)
        options = onnxruntime.SessionOptions()
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.intra_op_num_threads = torch.get_num_threads()
        self.session = onnxruntime.InferenceSession(str(target), options, providers=["CPUExecutionProvider"])

    @staticmethod
    def _export(model: torch.nn.Module, layer: int, limit: int, target: Path) -> None:
        import torch

        target.parent.mkdir(parents=True, exist_ok=True)
        example = {"input_ids": torch.ones((2, 8), dtype=torch.long), "attention_mask": torch.ones((2, 8))}
        example["attention_mask"][1, 5:] = 0
        batch, length = torch.export.Dim("batch"), torch.export.Dim("length", max=limit)
        shapes = {"input_ids": {0: batch, 1: length}, "attention_mask": {0: batch, 1: length}}
        partial = target.with_name(f"partial-{os.getpid()}.onnx")  # concurrent exports do not collide
        exporter_log = logging.getLogger("torch.onnx")
        level = exporter_log.level
        exporter_log.setLevel(logging.ERROR)  # its notes on skipped torchvision operators are noise here
        try:
            with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings(), quiet_transformers():
                warnings.simplefilter("ignore")
                program = torch.onnx.export(
                    _layer_module(model, layer), kwargs=example, dynamo=True, dynamic_shapes=shapes, verbose=False
                )
        finally:
            exporter_log.setLevel(level)
        program.save(str(partial), external_data=False)
        partial.replace(target)

    def __call__(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        import torch

        feed = {"input_ids": input_ids.numpy(), "attention_mask": attention_mask.to(torch.float32).numpy()}
        return torch.from_numpy(self.session.run(None, feed)[0])


class SharedEncoder:
    """One transformer for ST and BERTScore: a forward pass per batch of unique sentences."""

    def __init__(
        self, path: str, layer: int, device: str, batch_size: int, fp16: bool = False, runtime: str = "torch"
    ) -> None:
        from transformers import AutoModel, AutoTokenizer

        if runtime not in RUNTIMES:
            raise ValueError(f"unknown runtime {runtime!r}; choose from {list(RUNTIMES)}")
        if runtime == "onnx" and (device != "cpu" or fp16):
            raise ValueError("runtime='onnx' runs on the CPU in full precision; use runtime='torch' on a GPU")
        with quiet_transformers():
            self.tokenizer = AutoTokenizer.from_pretrained(path)
            self.model = AutoModel.from_pretrained(path).eval().to(device)
        if fp16:
            self.model = self.model.half()
        self.limit = model_limit(self.tokenizer, self.model.config)
        self.layer = layer
        self.device = device
        self.batch_size = batch_size
        self.last_layer = layer == self.model.config.num_hidden_layers
        self._onnx = OnnxLayer(self.model, path, layer, self.limit) if runtime == "onnx" else None
        self._word_pieces: np.ndarray | None = None
        if self._onnx is not None:  # ONNX Runtime holds its own copy: keep the word pieces WMS reads, not the model
            self._word_pieces = self.word_piece_matrix()
            self.model = None

    def _hidden(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        """The BERTScore layer's token vectors of one padded batch."""
        if self._onnx is not None:
            return self._onnx(batch["input_ids"], batch["attention_mask"])
        output = self.model(**batch, output_hidden_states=not self.last_layer)
        return output.last_hidden_state if self.last_layer else output.hidden_states[self.layer]

    def word_piece_matrix(self) -> np.ndarray:
        if self._word_pieces is not None:
            return self._word_pieces
        return self.model.get_input_embeddings().weight.detach().float().cpu().numpy()

    def encode(self, sentences: Sequence[str], progress: bool = False) -> tuple[list[Encoding], list[bool]]:
        """Encodings in input order, and which sentences were cut to the model's limit.

        Batches hold sentences of similar length (sorted by word pieces), so little is padding.
        """
        import torch

        with torch.inference_mode():
            return self._encode(sentences, progress)

    def _encode(self, sentences: Sequence[str], progress: bool) -> tuple[list[Encoding], list[bool]]:
        import torch

        pieces = word_pieces(self.tokenizer, [sentence.strip() for sentence in sentences], self.limit)
        inputs = pieces.inputs
        order = sorted(range(len(inputs)), key=lambda i: len(inputs[i]))
        encodings: list[Encoding | None] = [None] * len(sentences)
        special = framing_ids(self.tokenizer)
        bar = progress_bar(total=len(order), desc="encoding", unit=" texts", disable=not progress)
        for start in range(0, len(order), self.batch_size):
            chosen = order[start : start + self.batch_size]
            batch = self.tokenizer.pad({"input_ids": [inputs[i] for i in chosen]}, return_tensors="pt").to(self.device)
            hidden = self._hidden(batch).float()
            mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)
            pooled = torch.nn.functional.normalize(pooled, dim=-1).cpu().numpy()
            tokens = torch.nn.functional.normalize(hidden, dim=-1).cpu().numpy()
            ids = batch["input_ids"].cpu().numpy()
            lengths = batch["attention_mask"].sum(dim=1).cpu().numpy()
            for row, index in enumerate(chosen):
                length = int(lengths[row])
                content = np.array([token not in special for token in ids[row, :length]])
                encodings[index] = Encoding(pooled[row], tokens[row, :length], content, pieces.unknown[index])
            bar.update(len(chosen))
        bar.close()
        return encodings, pieces.truncated  # type: ignore[return-value]


class WordVectors:
    """Unit-length word vectors for Word Mover's distance, from a KeyedVectors or a word-piece matrix."""

    def __init__(self, lookup: Callable[[str], np.ndarray | None], dimension: int) -> None:
        self._lookup = lookup
        self._cache: dict[str, np.ndarray | None] = {}
        self.dimension = dimension

    @classmethod
    def from_word_pieces(cls, tokenizer, matrix: np.ndarray) -> WordVectors:  # noqa: ANN001
        """A word's vector is the mean of its word pieces' input embeddings; unknown pieces are no vector."""

        def lookup(word: str) -> np.ndarray | None:
            ids = tokenizer.convert_tokens_to_ids(tokenizer.tokenize(word))
            pieces = [piece for piece in ids if piece != tokenizer.unk_token_id]
            return matrix[pieces].mean(axis=0) if pieces else None

        return cls(lookup, matrix.shape[1])

    @classmethod
    def from_keyed_vectors(cls, vectors) -> WordVectors:  # noqa: ANN001 - gensim KeyedVectors
        def lookup(word: str) -> np.ndarray | None:
            return vectors[word] if word in vectors.key_to_index else None

        return cls(lookup, vectors.vector_size)

    def vector(self, word: str) -> np.ndarray | None:
        if word not in self._cache:
            raw = self._lookup(word)
            norm = float(np.linalg.norm(raw)) if raw is not None else 0.0
            self._cache[word] = raw / norm if norm > 0 else None
        return self._cache[word]


Bag = tuple[np.ndarray, np.ndarray]

# Distinct known content words WMS reads of a text: its cost matrix (8 MB at 1,000 × 1,000)
# and POT's network simplex grow with the product of both texts' vocabularies; two texts of
# 10,000 distinct words took 4 GB and 30 s, and POT stopped short of the optimum (numItermax).
# A caption has a few dozen; MiniLM reads 510 word pieces.
WMS_WORDS = 1000


class WordMover:
    """Word Mover's similarity ``1 - WMD / 2`` on unit vectors, stop words removed.

    ``words`` splits a text into the words that are looked up (the ``paper`` profile: the
    authors' Porter-stemmed rouge_score tokens); ``stop_words`` are dropped after splitting,
    as the authors did (so a stemmed stop word such as "thi" stays).
    """

    def __init__(self, vectors: WordVectors, stop_words: frozenset[str], words: Callable[[str], list[str]]) -> None:
        self.vectors = vectors
        self.stop_words = stop_words
        self.words = words

    def content_words(self, text: str) -> list[str]:
        return [word for word in self.words(text) if word not in self.stop_words]

    def bag(self, text: str) -> Bag:
        """The text's known content words as unit vectors, with normalized counts as weights."""
        return self.cut_bag(text)[0]

    def cut_bag(self, text: str) -> tuple[Bag, bool]:
        """The bag of the text up to its :data:`WMS_WORDS`-th distinct known content word, and whether it was cut."""
        counts: dict[str, int] = {}
        cut = False
        for word in self.content_words(text):
            if self.vectors.vector(word) is None:
                continue
            if word not in counts and len(counts) == WMS_WORDS:
                cut = True
                break
            counts[word] = counts.get(word, 0) + 1
        if not counts:
            return (np.zeros((0, self.vectors.dimension)), np.zeros(0)), cut
        matrix = np.stack([self.vectors.vector(word) for word in counts])  # type: ignore[misc]
        weights = np.array(list(counts.values()), dtype=np.float64)
        return (matrix, weights / weights.sum()), cut

    def similarity(self, a: Bag, b: Bag) -> float:
        """NaN when a side has no known content word: the distance is infinite, no similarity was measured."""
        import ot

        (words_a, weights_a), (words_b, weights_b) = a, b
        if not len(weights_a) or not len(weights_b):
            return math.nan
        cost = ot.dist(words_a.astype(np.float64), words_b.astype(np.float64), metric="euclidean")
        distance = float(ot.emd2(weights_a, weights_b, cost))
        return min(1.0, max(0.0, 1.0 - distance / 2.0))


def load_word_vectors(profile: Profile, encoder: SharedEncoder | None) -> WordVectors:
    """The profile's word vectors: MiniLM's word pieces, or gensim KeyedVectors (name or path)."""
    if profile.word_vectors == "word-pieces":
        if encoder is None:
            raise ValueError("word-piece vectors need the profile's shared transformer")
        return WordVectors.from_word_pieces(encoder.tokenizer, encoder.word_piece_matrix())
    try:
        from gensim.models import KeyedVectors
    except ImportError as error:
        raise ModelUnavailable(profile, "word vectors", "pip install gensim") from error
    source = profile.word_vectors
    try:
        if source.endswith((".bin", ".vec", ".txt")):
            vectors = KeyedVectors.load_word2vec_format(source, binary=source.endswith(".bin"))
        elif "/" in source or source.endswith(".kv"):
            vectors = KeyedVectors.load(source)
        else:
            import gensim.downloader

            vectors = gensim.downloader.load(source)
    except Exception as error:  # gensim raises OSError, ValueError or a network error here
        raise ModelUnavailable(profile, f"word vectors {source!r}", str(error)) from error
    return WordVectors.from_keyed_vectors(vectors)
