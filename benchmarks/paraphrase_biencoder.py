"""A road not taken for the default classifier: all-MiniLM-L6-v2 fine-tuned as a bi-encoder, measured on dev pairs.

The cross-encoder (:mod:`benchmarks.paraphrase_crossencoder`) trails the plain cosine of the sentence model on the
STS Benchmark's caption pairs. This script asks whether the sentence model itself, fine-tuned with
sentence-transformers' ``CoSENTLoss`` on pairs people scored, would do better, and whether its cosine would do
better than the untuned one in the shipped calibration (the logit, the cosine and the length terms). It chooses
nothing on a test split: every figure is out of fold over the calibration pairs, read on STS-B dev's
``main-captions`` pairs among them (the ones ``--min-precision`` cuts on) and on MSRPC train's held-out tenth, as
the module docstring of :mod:`benchmarks.paraphrase_crossencoder` splits them::

    python benchmarks/paraphrase_biencoder.py [--corpora sts|all] [--epochs 3]   # ~12 min (sts) or ~40 min (all)
    python benchmarks/paraphrase_biencoder.py --tuned FOLDER   # a model kept by --save FOLDER, measured again

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

from benchmarks.paraphrase_crossencoder import (  # noqa: E402
    SEED,
    design,
    dev_table,
    reported_pairs,
    splits,
    stsb,
    without,
)


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

    from metrics.crossencoder import TERMS, load, minilm_cosine, pair_words
    from metrics.profiles import minilm_path

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpora", choices=("sts", "all"), default="sts")
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--learning-rate", type=float, default=2e-5)
    parser.add_argument("--save", type=Path, help="keep the fine-tuned model in this folder")
    parser.add_argument("--tuned", type=Path, help="measure this fine-tuned model (a --save folder), not train one")
    options = parser.parse_args(argv)
    torch.manual_seed(SEED)
    data = splits(soft=True)
    if options.tuned:
        tuned = SentenceTransformer(str(options.tuned), device="cpu")
        print(f"measuring {options.tuned}, not trained here")
    else:
        first, second, scores = (
            without(stsb("train", soft=True), reported_pairs(), "STS-B train", {})
            if options.corpora == "sts"
            else data["train"]
        )
        tuned = SentenceTransformer(minilm_path(), device="cpu")
        started = time.monotonic()
        with tempfile.TemporaryDirectory() as out:
            arguments = Arguments(output_dir=out, num_train_epochs=options.epochs, per_device_train_batch_size=32,
                                  learning_rate=options.learning_rate, warmup_ratio=0.1, seed=SEED, data_seed=SEED,
                                  save_strategy="no", report_to="none", use_cpu=True, disable_tqdm=True)  # fmt: skip
            pairs = Dataset.from_dict({"s1": list(first), "s2": list(second), "score": scores.astype(np.float32)})
            SentenceTransformerTrainer(model=tuned, args=arguments, train_dataset=pairs, loss=CoSENTLoss(tuned)).train()
        minutes = (time.monotonic() - started) / 60
        print(f"trained on {len(scores):,} pairs ({options.corpora}, {options.epochs} epochs) in {minutes:.1f} min")
        if options.save:
            tuned.save(str(options.save))
    card = load()
    a, b, labels = data["calibration"]
    logits = card.logits(a, b, kind="float32")  # the precision the card's figures were measured in
    untuned = np.asarray(minilm_cosine(a, b), dtype=np.float64)  # as the shipped calibration weighs it
    fine_tuned, words = cosines(tuned, a, b), pair_words(a, b)
    print("Out of fold (five folds over the calibration pairs); the cut pairs are STS-B dev's captions among them.")
    print(dev_table({
        "the cosine alone, all-MiniLM-L6-v2": untuned[:, None],
        "the cosine alone, fine-tuned": fine_tuned[:, None],
        "shipped: logit, cosine and length terms": design(logits, untuned, words, TERMS),
        "the same, the fine-tuned cosine in its place": design(logits, fine_tuned, words, TERMS),
        "the same, both cosines": np.column_stack([design(logits, untuned, words, TERMS), fine_tuned,
                                                   fine_tuned * np.log(words)]),
    }, data))  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
