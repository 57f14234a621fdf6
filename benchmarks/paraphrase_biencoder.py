"""A road not taken for the default classifier: all-MiniLM-L6-v2 fine-tuned as a bi-encoder, measured on dev pairs.

The cross-encoder (:mod:`benchmarks.paraphrase_crossencoder`) trails the plain cosine of the sentence model on the
STS Benchmark's caption pairs. This script asks whether the sentence model itself, fine-tuned with
sentence-transformers' ``CoSENTLoss`` on pairs people scored, would do better, and whether stacking it with the
cross-encoder would. It chooses nothing on a test split: every figure is on the STS-B dev ``main-captions`` pairs
(the ones ``--min-precision`` cuts on) and on the calibration pairs, as the module docstring of
:mod:`benchmarks.paraphrase_crossencoder` splits them::

    python benchmarks/paraphrase_biencoder.py [--corpora sts|all] [--epochs 3]   # ~12 min (sts) or ~40 min (all)

``sts`` trains on STS-B train alone (scores / 5, 5,234 pairs once the reporting splits' pairs are left out), ``all``
on the cross-encoder's training pairs (STS-B as scores / 5, MSRPC and PAWS-Wiki as 0/1).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.paraphrase_crossencoder import SEED, reported_pairs, splits, stsb, without  # noqa: E402


def cosines(model, first: Sequence[str], second: Sequence[str]) -> np.ndarray:  # noqa: ANN001 - a SentenceTransformer
    a = model.encode(list(first), normalize_embeddings=True, batch_size=64)
    b = model.encode(list(second), normalize_embeddings=True, batch_size=64)
    return (a * b).sum(axis=1)


def main(argv: Sequence[str] | None = None) -> int:
    import torch
    from datasets import Dataset
    from sentence_transformers import SentenceTransformer, SentenceTransformerTrainer
    from sentence_transformers import SentenceTransformerTrainingArguments as Arguments
    from sentence_transformers.losses import CoSENTLoss
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import roc_auc_score

    from metrics.crossencoder import load
    from metrics.profiles import minilm_path

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpora", choices=("sts", "all"), default="sts")
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--learning-rate", type=float, default=2e-5)
    options = parser.parse_args(argv)
    torch.manual_seed(SEED)
    data = splits(soft=True)
    first, second, scores = (
        without(stsb("train", soft=True), reported_pairs(), "STS-B train", {})
        if options.corpora == "sts"
        else data["train"]
    )
    base = SentenceTransformer(minilm_path(), device="cpu")
    tuned = SentenceTransformer(minilm_path(), device="cpu")
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as out:
        arguments = Arguments(output_dir=out, num_train_epochs=options.epochs, per_device_train_batch_size=32,
                              learning_rate=options.learning_rate, warmup_ratio=0.1, seed=SEED, data_seed=SEED,
                              save_strategy="no", report_to="none", use_cpu=True, disable_tqdm=True)  # fmt: skip
        pairs = Dataset.from_dict({"s1": list(first), "s2": list(second), "score": scores.astype(np.float32)})
        SentenceTransformerTrainer(model=tuned, args=arguments, train_dataset=pairs, loss=CoSENTLoss(tuned)).train()
    minutes = (time.monotonic() - started) / 60
    card = load()
    features = {}
    for split in ("calibration", "cut"):
        a, b, labels = data[split]
        logits = card.logits(a, b, kind="float32")  # the precision its figures were measured in
        features[split] = (np.column_stack([logits, cosines(tuned, a, b), cosines(base, a, b)]), labels)
    (calibration, c_labels), (dev, d_labels) = features["calibration"], features["cut"]
    print(f"trained on {len(scores):,} pairs ({options.corpora}, {options.epochs} epochs) in {minutes:.1f} min")
    print("| model | dev main-captions AUC | calibration pairs AUC |")
    print("|---|---:|---:|")
    for columns, name in (([2], "cosine, all-MiniLM-L6-v2"), ([0], "cross-encoder (shipped)"),
                          ([1], "cosine, fine-tuned bi-encoder"), ([0, 1], "stack: cross-encoder + fine-tuned"),
                          ([0, 2], "stack: cross-encoder + cosine")):  # fmt: skip
        if len(columns) == 1:
            dev_score, calibration_score = dev[:, columns[0]], calibration[:, columns[0]]
        else:  # logistic regression fitted on the calibration pairs, as Platt is
            stack = LogisticRegression().fit(calibration[:, columns], c_labels >= 0.5)
            dev_score = stack.predict_proba(dev[:, columns])[:, 1]
            calibration_score = stack.predict_proba(calibration[:, columns])[:, 1]
        print(f"| {name} | {roc_auc_score(d_labels >= 0.5, dev_score):.3f} | "
              f"{roc_auc_score(c_labels >= 0.5, calibration_score):.3f} |")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
