"""The context-mixing model's levels, ablations and mixer optimisers on the Canterbury corpus.

    python benchmarks/cm.py                       # levels 1-9 on the text files (model bits)
    python benchmarks/cm.py --levels 1,6,9 --api  # through compress/decompress: bytes, KB/s
    python benchmarks/cm.py --ablation --level 6  # each expert group removed in turn, ...
    python benchmarks/cm.py --files kennedy.xls,ptt5,sum --levels 9 --api
    python benchmarks/cm.py --xml --levels 6 --api   # 1 MB of generated UTF-8 XML (A > 128)

Without --api the figure is the model's log-loss (sum of -log2 p over the file, what the coder
spends up to its rounding and the header) and its CPU time; with --api every file is
compressed and decompressed through the public API, the round trip checked, and the size is
the real stream's.  The targets of issue 11 are printed beside the figures.  Reads the corpus
from $SEQZIP_CORPORA or ../shared/corpora; run it alone on the machine for speed figures.
"""
from __future__ import annotations

import argparse
import dataclasses
import os
import pathlib
import sys
import time

from seqzip import baselines, coder
from seqzip.api import compress, decompress, symbols_of
from seqzip.models import create
from seqzip.models.cm import CMConfig

ROOT = pathlib.Path(__file__).resolve().parent.parent
CORPUS = pathlib.Path(os.environ.get("SEQZIP_CORPORA", ROOT.parent / "shared" / "corpora")) \
    / "canterbury"
TEXT = ["alice29.txt", "asyoulik.txt", "lcet10.txt", "plrabn12.txt", "cp.html", "fields.c",
        "grammar.lsp", "xargs.1"]
BINARY = ["kennedy.xls", "ptt5", "sum"]


def model_bits(config: CMConfig, data: bytes) -> tuple[float, float]:
    """(bits per character of the model's log-loss, KB/s of CPU time)."""
    symbols, alphabet = symbols_of(data)
    start = time.process_time()
    bits = coder.log_loss_bits(create("cm", config, alphabet=alphabet, seed=0), symbols).sum()
    seconds = time.process_time() - start
    return bits / len(data), len(data) / 1000 / max(seconds, 1e-9)


def api_bits(level: int, data: bytes) -> tuple[float, float, float]:
    """(bits per character of the stream, compress KB/s, decompress KB/s), CPU time."""
    start = time.process_time()
    packed = compress(data, model="cm", level=level)
    middle = time.process_time()
    assert decompress(packed) == data, "round trip failed"
    end = time.process_time()
    kb = len(data) / 1000
    return 8 * len(packed) / len(data), kb / (middle - start), kb / (end - middle)


def generated_xml(size: int = 1_000_000) -> bytes:
    """A text with a large alphabet: seqzip's generated English in XML elements with attributes,
    every third paragraph spelled in Cyrillic and every third in Greek letters (a fixed letter
    for letter map), so that the UTF-8 file holds more than 128 byte values: 8 binary decisions
    per symbol instead of 7, as in real multilingual XML."""
    from seqzip import corpora
    lower = "abcdefghijklmnopqrstuvwxyz"
    cyrillic = str.maketrans(lower + lower.upper(),
                             "".join(chr(0x430 + i) for i in range(26))
                             + "".join(chr(0x410 + i) for i in range(26)))
    greek = str.maketrans(lower + lower.upper(),
                          "".join(chr(0x3B1 + i) for i in range(25)) + "\u03c9"
                          + "".join(chr(0x391 + i) for i in range(17))
                          + "".join(chr(0x3A3 + i) for i in range(9)))
    text = corpora.generate("english", size, seed=7).data.decode("ascii")
    out = ['<?xml version="1.0" encoding="UTF-8"?>\n<book lang="x-generated">\n']
    total = 0
    for n, para in enumerate(p for p in text.split("\n\n") if p.strip()):
        kind = ("en", "ru", "el")[n % 3]
        body = para if kind == "en" else para.translate(cyrillic if kind == "ru" else greek)
        line = f'  <p id="p{n}" lang="{kind}">' + " ".join(body.split()) + "</p>\n"
        out.append(line)
        total += len(line.encode("utf-8"))
        if total >= size:
            break
    out.append("</book>\n")
    return "".join(out).encode("utf-8")[:size]


def reference(name: str, data: bytes) -> dict[str, float]:
    out = {}
    for method, (comp, _) in baselines.available().items():
        if method in ("bzip2-9", "xz-9e", "ppmd-o6"):
            out[method] = 8 * len(comp(data)) / len(data)
    return out


def ablations(level: int) -> dict[str, CMConfig]:
    """The level's config with each expert group removed in turn, the network removed (a
    constant state: no input, no gate), the mixer trained by SGD or Adam instead of QDH, and
    the secondary estimation off."""
    base = CMConfig.for_level(level)
    sets = [s for s in base.sets.split(",") if s not in ("gate", "net")]
    out = {"full": base}
    variants = {
        "no orders 2+": dict(orders=""), "no match": dict(match=0, match2=0),
        "no word": dict(word=0), "no sparse": dict(sparse=0), "no record": dict(record=0),
        "no indirect": dict(indirect=0), "no CTW/order2": dict(experts=""),
        "no network": dict(network="", network_config="", gate_units=0, sets=",".join(sets)),
        "SGD mixer": dict(optimizer="sgd", rate=0.005, rate2=0.003, gate_rate=0.002),
        "Adam mixer": dict(optimizer="adam", rate=0.002, rate2=0.001, gate_rate=0.001),
        "no SSE": dict(apm=0), "no second layer": dict(layer2=False),
    }
    for name, fields in variants.items():
        if all(getattr(base, k) == v for k, v in fields.items()):
            continue  # the level has no such group
        out[name] = dataclasses.replace(base, **fields)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--levels", default="1,2,3,4,5,6,7,8,9")
    parser.add_argument("--files", default=",".join(TEXT[:4]))
    parser.add_argument("--api", action="store_true", help="through compress/decompress")
    parser.add_argument("--ablation", action="store_true")
    parser.add_argument("--level", type=int, default=6, help="the level ablated")
    parser.add_argument("--xml", action="store_true",
                        help="code 1 MB of generated UTF-8 XML instead of the corpus files")
    args = parser.parse_args()
    files = [f for f in args.files.split(",") if f]
    if args.xml:
        data = {"generated.xml": generated_xml()}
    elif not CORPUS.exists():
        sys.exit(f"{CORPUS} not found: set SEQZIP_CORPORA")
    else:
        data = {f: (CORPUS / f).read_bytes() for f in files}
    refs = {f: reference(f, d) for f, d in data.items()}
    print("file: " + "  ".join(f"{f} ({len(d):,} B: bzip2 {refs[f]['bzip2-9']:.3f}, xz "
                                f"{refs[f]['xz-9e']:.3f}"
                                + (f", PPMd o6 {refs[f]['ppmd-o6']:.3f}"
                                   if 'ppmd-o6' in refs[f] else "") + ")"
                                for f, d in data.items()), flush=True)
    if args.ablation:
        rows = ablations(args.level)
        for name, config in rows.items():
            cells = [model_bits(config, d) for d in data.values()]
            print(f"{name:<18} " + " ".join(f"{f}: {b:.4f} ({s:.0f} KB/s)"
                                           for f, (b, s) in zip(data, cells)), flush=True)
        return
    for level in [int(v) for v in args.levels.split(",")]:
        cells = []
        for f, d in data.items():
            if args.api:
                bpc, comp, dec = api_bits(level, d)
                cells.append(f"{f}: {bpc:.4f} ({comp:.0f}/{dec:.0f} KB/s)")
            else:
                bpc, speed = model_bits(CMConfig.for_level(level), d)
                cells.append(f"{f}: {bpc:.4f} ({speed:.0f} KB/s)")
        print(f"-{level} " + "  ".join(cells), flush=True)


if __name__ == "__main__":
    main()
