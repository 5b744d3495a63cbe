#!/usr/bin/env python3
"""Would storing symbol frequencies in the header pay?  (issue: online GLNN initialisation)

The most a frequency table can save is the cost of learning the order-0 distribution online:
adaptive KT code length minus the empirical entropy (the Krichevsky-Trofimov regret, about
(A - 1) / 2 * log2 n bits).  The table itself costs at least the Elias-gamma length of every
count.  Prints both for each file.

    python benchmarks/header_frequencies.py [FILES...]    # default: the three Canterbury texts
"""
from __future__ import annotations

import math
import os
import sys

import numpy as np

DIR = os.environ.get("SEQZIP_CORPORA", os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                     "..", "..", "shared", "corpora"))


def learning_cost_and_table(data: bytes) -> tuple[int, float, float]:
    alphabet = sorted(set(data))
    index = {b: i for i, b in enumerate(alphabet)}
    counts = np.zeros(len(alphabet))
    adaptive = 0.0
    for b in data:
        i = index[b]
        adaptive -= math.log2((counts[i] + 0.5) / (counts.sum() + len(alphabet) / 2))
        counts[i] += 1
    empirical = float(-(counts * np.log2(counts / counts.sum())).sum())
    table = sum(2 * math.floor(math.log2(c)) + 1 for c in counts)
    return len(alphabet), adaptive - empirical, table


def main() -> None:
    paths = sys.argv[1:] or [os.path.join(DIR, "canterbury", f)
                             for f in ("alice29.txt", "lcet10.txt", "plrabn12.txt")]
    print(f"{'file':<16} {'A':>4} {'learning cost':>14} {'table cost':>11}   (bits)")
    for path in paths:
        with open(path, "rb") as f:
            A, learn, table = learning_cost_and_table(f.read())
        print(f"{os.path.basename(path):<16} {A:>4} {learn:>14.0f} {table:>11.0f}")


if __name__ == "__main__":
    main()
