"""Semantic similarity: BERTScore F1, sentence-embedding cosine (ST) and Word Mover's similarity (WMS).

Sentences repeat across the pairs of a corpus (a caption pairs with every other
caption of its image), so every unique sentence is encoded once, in batches.
When the sentence model and the BERTScore model are the same transformer (the
``minilm`` profile), one forward pass gives both: the mean-pooled last layer is
the sentence embedding, and the same token vectors feed BERTScore's greedy
matching – exactly what sentence-transformers and bert_score compute separately.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence

import numpy as np
import ot
import torch

from metrics.profiles import ModelUnavailable, Profile

_WORDS = re.compile(r"\w+")


def _stop_words() -> frozenset[str]:
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return frozenset(ENGLISH_STOP_WORDS)


@dataclasses.dataclass
class Encoding:
    """What the semantic measures need of one sentence."""

    sentence: np.ndarray  # unit-length sentence embedding (ST)
    tokens: np.ndarray  # unit-length token vectors of the BERTScore layer, specials included
    content: np.ndarray  # which of ``tokens`` are not [CLS]/[SEP]


def greedy_f1(a: Encoding, b: Encoding) -> float:
    """BERTScore F1 without idf: each content token's best cosine match on the other side."""
    if not a.content.any() or not b.content.any():
        return 0.0
    similarity = a.tokens @ b.tokens.T
    precision = float(similarity.max(axis=1)[a.content].mean())
    recall = float(similarity.max(axis=0)[b.content].mean())
    return 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0


class SharedEncoder:
    """One transformer for ST and BERTScore: a forward pass per batch of unique sentences."""

    def __init__(self, path: str, layer: int, device: str, batch_size: int, max_length: int) -> None:
        from transformers import AutoModel, AutoTokenizer

        self.tokenizer = AutoTokenizer.from_pretrained(path)
        self.model = AutoModel.from_pretrained(path).eval().to(device)
        self.layer = layer
        self.device = device
        self.batch_size = batch_size
        self.max_length = max_length

    def word_piece_matrix(self) -> np.ndarray:
        return self.model.get_input_embeddings().weight.detach().cpu().numpy()

    @torch.inference_mode()
    def encode(self, sentences: Sequence[str]) -> list[Encoding]:
        order = sorted(range(len(sentences)), key=lambda i: len(sentences[i]))
        encodings: list[Encoding | None] = [None] * len(sentences)
        special = set(self.tokenizer.all_special_ids)
        for start in range(0, len(order), self.batch_size):
            chosen = order[start : start + self.batch_size]
            batch = self.tokenizer(
                [sentences[i].strip() for i in chosen],
                padding=True,
                truncation=True,
                max_length=self.max_length,
                return_tensors="pt",
            ).to(self.device)
            output = self.model(**batch, output_hidden_states=True)
            hidden = output.hidden_states[self.layer]
            mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)
            pooled = torch.nn.functional.normalize(pooled, dim=-1).cpu().numpy()
            tokens = torch.nn.functional.normalize(hidden, dim=-1).cpu().numpy()
            ids = batch["input_ids"].cpu().numpy()
            lengths = batch["attention_mask"].sum(dim=1).cpu().numpy()
            for row, index in enumerate(chosen):
                length = int(lengths[row])
                content = np.array([token not in special for token in ids[row, :length]])
                encodings[index] = Encoding(pooled[row], tokens[row, :length], content)
        return encodings  # type: ignore[return-value]


class WordVectors:
    """Unit-length word vectors for Word Mover's distance, from a KeyedVectors or a word-piece matrix."""

    def __init__(self, lookup, dimension: int) -> None:  # noqa: ANN001 - a callable word -> vector or None
        self._lookup = lookup
        self._cache: dict[str, np.ndarray | None] = {}
        self.dimension = dimension

    @classmethod
    def from_word_pieces(cls, tokenizer, matrix: np.ndarray) -> WordVectors:  # noqa: ANN001
        """A word's vector is the mean of its word pieces' input embeddings."""

        def lookup(word: str) -> np.ndarray | None:
            pieces = tokenizer.convert_tokens_to_ids(tokenizer.tokenize(word))
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


class WordMover:
    """Word Mover's similarity ``1 - WMD / 2`` on unit vectors, English stop words removed."""

    def __init__(self, vectors: WordVectors) -> None:
        self.vectors = vectors
        self.stop_words = _stop_words()

    def bag(self, text: str) -> tuple[np.ndarray, np.ndarray]:
        """The text's known content words as unit vectors, with normalized counts as weights."""
        counts: dict[str, int] = {}
        for word in _WORDS.findall(text.lower()):
            if word not in self.stop_words and self.vectors.vector(word) is not None:
                counts[word] = counts.get(word, 0) + 1
        if not counts:
            return np.zeros((0, self.vectors.dimension)), np.zeros(0)
        matrix = np.stack([self.vectors.vector(word) for word in counts])  # type: ignore[misc]
        weights = np.array(list(counts.values()), dtype=np.float64)
        return matrix, weights / weights.sum()

    def similarity(self, a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray]) -> float:
        """An empty bag is infinitely far from anything: similarity 0."""
        (words_a, weights_a), (words_b, weights_b) = a, b
        if not len(weights_a) or not len(weights_b):
            return 0.0
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
