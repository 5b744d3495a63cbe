"""What a dictionary (``seqzip train``, ``--dict``) gains: train a model file on some Canterbury
text files, then compress the other files with and without it (whole streams, headers
included: a dictionary stream's header is 16 bytes longer).

    python benchmarks/dictionary.py --models cm:1,cm:6,ctw:6,order2:6,mlstm:3:120,glnn:3:60

Each ``family:level[:budget]`` is trained on --train files (the budget bounds the offline fit
of glnn and the LSTM family) and tested on --test files; every decode is checked.  Prints a
markdown table of compressed bytes and the gain; CPU seconds of training and coding.
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import seqzip  # noqa: E402
from seqzip.research.dictionary import train_dictionary  # noqa: E402

CANTERBURY = "/work/shared/corpora/canterbury"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", default=CANTERBURY)
    ap.add_argument("--train", default="asyoulik.txt,lcet10.txt,plrabn12.txt")
    ap.add_argument("--test", default="alice29.txt,cp.html,fields.c,grammar.lsp,xargs.1,"
                    "kennedy.xls,sum")
    ap.add_argument("--models", default="cm:1")
    args = ap.parse_args()
    files = [open(os.path.join(args.corpus, f), "rb").read() for f in args.train.split(",")]
    tests = {f: open(os.path.join(args.corpus, f), "rb").read() for f in args.test.split(",")}
    print(f"train: {args.train} ({sum(map(len, files)):,} bytes)\n")
    print("| model | file | bytes | without | with --dict | gain | bpc without | bpc with |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for spec in args.models.split(","):
        name, level, *budget = spec.split(":")
        t = time.process_time()
        d, summary = train_dictionary(files, name, int(level),
                                      budget=float(budget[0]) if budget else 60.0)
        train_s = time.process_time() - t
        t = time.process_time()
        for fname, data in tests.items():
            plain = seqzip.compress(data, int(level), model=name)
            packed = seqzip.compress(data, dictionary=d)
            assert seqzip.decompress(packed, dictionary=d) == data
            gain = 1 - len(packed) / len(plain)
            print(f"| {name} -{level} | {fname} | {len(data):,} | {len(plain):,} | "
                  f"{len(packed):,} | {100 * gain:+.1f}% | {8 * len(plain) / len(data):.3f} | "
                  f"{8 * len(packed) / len(data):.3f} |", flush=True)
        print(f"<!-- {name} -{level}: training {train_s:.0f} CPU s ({summary}), coding "
              f"{time.process_time() - t:.0f} CPU s -->", flush=True)


if __name__ == "__main__":
    main()
