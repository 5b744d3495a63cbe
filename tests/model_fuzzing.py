"""The model-file fuzz target shared by the suite (a short seeded run) and
``benchmarks/model_fuzz.py`` (long runs, one child process per batch).

A model file (``.sqm``) is untrusted input.  ``mutate(data, rng)`` changes a model file the way
an attacker would: it reads the file's state arrays, changes a few values of one or more of
them (bit flips, extreme and random values, indices copied from elsewhere, NaN and infinities,
cut or grown arrays, dropped entries), or the metadata, or the raw bytes, and writes the file
again with its SHA-256 repaired, so that the mutation reaches the loader's checks instead of
stopping at the checksum.  ``check(data, payload)`` loads the file and, when it loads, asks
for a prediction, then compresses ``payload`` from it and decompresses with the same file:
the outcome must be a ``DictionaryError`` (``ModelFileError``) or an exact round trip; any
other exception is a finding (and a signal kills the process: the long run counts those).

    >>> seeds = seed_models(["order2"])
    >>> check(seeds["order2"][0], seeds["order2"][1])
    'round trip'
"""
from __future__ import annotations

import hashlib
import io
import json
import os
import random
import struct
import tempfile
import zlib

import numpy as np

import seqzip
from seqzip.errors import DictionaryError
from seqzip.predictor import _ENTRY, MODEL_MAGIC, MODEL_VERSION, Predictor

FAMILIES = ("ctw", "order2", "glnn", "lstm", "mlstm", "mrnn", "relu-rnn", "cm")
TEXT = (b"It was the best of times, it was the worst of times, it was the age of wisdom, "
        b"it was the age of foolishness, it was the epoch of belief. ") * 8


class Finding(Exception):
    """A mutated model file broke a promise (the message says which)."""


def seed_models(families=FAMILIES) -> dict[str, tuple[bytes, bytes]]:
    """Per family a small trained model file (level 1, the text's alphabet) and a payload over
    its alphabet.  ctw gets a small memory budget and a long run, so its file holds moved
    blocks, free lists and a pending prediction."""
    out = {}
    for family in families:
        if family == "ctw":
            from seqzip.models.ctw import CTWConfig
            p = Predictor("ctw", config=CTWConfig(depth=6, memory_mb=1),
                          alphabet=bytes(sorted(set(TEXT))))
        else:
            p = Predictor(family, 1, alphabet=bytes(sorted(set(TEXT))))
        p.feed(TEXT[:600])
        if family != "cm":  # cm's probs() walks save points; ctw's leaves a prediction pending
            p.probs()
        out[family] = (p.to_bytes(), TEXT[600:760])
    return out


# ------------------------------------------------------------------ the file format

def read_file(data: bytes) -> tuple[dict, list[tuple[str, np.ndarray]]]:
    """(metadata, [(name, array)]) of a valid model file (the seeds), in file order."""
    body = data[:-32]
    (meta_len,) = struct.unpack_from("<I", body, 5)
    meta = json.loads(body[9:9 + meta_len])
    p = Predictor.from_bytes(data)
    state = p.kernel.get_state()
    return meta, [(name, np.asarray(state[name])) for name in sorted(state)]


def write_file(meta, arrays, *, raw_meta: bytes | None = None,
               entry_hook=None) -> bytes:
    """A model file with a correct SHA-256 whatever it holds (``to_bytes``'s layout).
    ``entry_hook(name, raw, stored) -> (raw_len, stored)`` may lie about an entry."""
    meta_bytes = raw_meta if raw_meta is not None else \
        json.dumps(meta, sort_keys=True).encode("utf-8")
    out = io.BytesIO()
    out.write(MODEL_MAGIC + bytes([MODEL_VERSION]))
    out.write(struct.pack("<I", len(meta_bytes)) + meta_bytes)
    out.write(struct.pack("<I", len(arrays)))
    for name, array in arrays:
        array = np.asarray(array, order="C")
        dtype = array.dtype.str.encode("ascii")
        raw = array.tobytes()
        raw_len, stored = len(raw), zlib.compress(raw, 1)
        if entry_hook is not None:
            raw_len, stored = entry_hook(name, raw, stored)
        key = name.encode("utf-8")
        out.write(struct.pack("<H", len(key)) + key)
        out.write(_ENTRY.pack(len(dtype), array.ndim, raw_len, len(stored)) + dtype)
        out.write(struct.pack(f"<{array.ndim}Q", *array.shape) + stored)
    body = out.getvalue()
    return body + hashlib.sha256(body).digest()


def repair(data: bytes) -> bytes:
    """``data`` with its trailing SHA-256 recomputed."""
    body = data[:-32]
    return body + hashlib.sha256(body).digest()


# ------------------------------------------------------------------ mutations

_INTEGER_EXTREMES = (0, 1, 2, 7, 8, 9, 31, 32, 33, 255, 256, 65535, 65536, 0xFFFFFFFF,
                     0xFFFFFFFE, 1 << 31, 1 << 32, 1 << 62, (1 << 63) - 1, -1, -2)


def _mutate_array(array: np.ndarray, rng: random.Random) -> np.ndarray:
    with np.errstate(all="ignore"):
        return _change_values(np.array(array), rng)  # a copy


def _change_values(a: np.ndarray, rng: random.Random) -> np.ndarray:
    flat = a.reshape(-1)
    kind = rng.random()
    if flat.size == 0 or kind < 0.05:  # cut or grow the array
        n = flat.size
        new = rng.choice([0, max(n - 1, 0), n + 1, n * 2 + 3, rng.randrange(n + 8)])
        grown = np.zeros(new, dtype=a.dtype)
        grown[:min(n, new)] = flat[:min(n, new)]
        return grown  # a shape the kernel does not have
    count = rng.choice([1, 1, 1, 2, 3, 8])
    for _ in range(count):
        i = rng.randrange(flat.size)
        how = rng.random()
        if a.dtype.kind == "f":
            if how < 0.3:
                flat[i] = rng.choice([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e308, -1e308,
                                      5e-324, 2.0 ** 600, 2.0 ** -600, 1.0])
            elif how < 0.6:
                flat[i] = flat[i] * rng.choice([-1.0, 2.0, 0.5, 1e6, 1e-6])
            else:
                raw = bytearray(flat[i:i + 1].tobytes())
                raw[rng.randrange(8)] ^= 1 << rng.randrange(8)
                flat[i] = np.frombuffer(bytes(raw), dtype=a.dtype)[0]
        elif a.dtype.kind == "b":
            flat[i] = not flat[i]
        else:
            info = np.iinfo(a.dtype)
            if a.dtype == np.uint8 and rng.random() < 0.7:
                # raw struct bytes (ctw's entries, nodes, child map): one byte or a whole word
                width = rng.choice([1, 2, 4, 8])
                at = rng.randrange(max(flat.size - width + 1, 1))
                value = rng.choice(_INTEGER_EXTREMES) if rng.random() < 0.5 else \
                    rng.getrandbits(8 * width)
                if rng.random() < 0.3 and flat.size > width:  # a word copied from elsewhere
                    src = rng.randrange(flat.size - width + 1)
                    flat[at:at + width] = flat[src:src + width].copy()
                else:
                    flat[at:at + width] = np.frombuffer(
                        (value % (1 << (8 * width))).to_bytes(width, "little"), np.uint8)[
                        :len(flat[at:at + width])]
                continue
            if how < 0.4:
                value = rng.choice(_INTEGER_EXTREMES)
            elif how < 0.7:
                value = int(flat[i]) ^ (1 << rng.randrange(8 * a.dtype.itemsize))
            elif how < 0.85:
                value = int(flat[rng.randrange(flat.size)])
            else:
                value = int(flat[i]) + rng.choice([-1, 1, -2, 2])
            flat[i] = min(max(value, info.min), info.max) if rng.random() < 0.5 else \
                value % (int(info.max) - int(info.min) + 1) + int(info.min)
    return a


def mutate(data: bytes, rng: random.Random) -> bytes:
    """One mutated model file with a valid SHA-256 (see the module docstring)."""
    meta, arrays = read_file(data)
    kind = rng.random()
    if kind < 0.75:  # the state arrays
        arrays = list(arrays)
        for _ in range(rng.choice([1, 1, 1, 2, 3])):
            j = rng.randrange(len(arrays))
            name, array = arrays[j]
            arrays[j] = (name, _mutate_array(array, rng))
        if rng.random() < 0.03:
            del arrays[rng.randrange(len(arrays))]
        return write_file(meta, arrays)
    if kind < 0.85:  # the metadata
        meta = dict(meta)
        key = rng.choice(["model", "config", "alphabet", "seed", "symbols", "bits", "info",
                          "extra"])
        meta[key] = rng.choice([None, -1, 1 << 70, 1e308, float("nan"), "x", [], {},
                                [1, 1], list(range(300)), 10 ** 9, [[[[]]]], True,
                                meta.get(key)])
        if rng.random() < 0.2:
            return write_file(meta, arrays, raw_meta=b"[" * rng.randrange(1, 5000))
        return write_file(meta, arrays)
    if kind < 0.92:  # a lying entry: wrong declared size, or a zlib bomb
        target = rng.randrange(len(arrays))

        def hook(name, raw, stored, _target=arrays[target][0]):
            if name != _target:
                return len(raw), stored
            if rng.random() < 0.5:
                return len(raw), zlib.compress(bytes(len(raw) + rng.choice([1, 1 << 20])), 9)
            return rng.choice([0, max(len(raw) - 1, 0), len(raw) + 1, 1 << 40]), stored
        return write_file(meta, arrays, entry_hook=hook)
    buf = bytearray(data[:-32])  # raw bytes of the body
    for _ in range(rng.choice([1, 2, 4])):
        buf[rng.randrange(5, len(buf))] ^= 1 << rng.randrange(8)
    return repair(bytes(buf) + bytes(32))


# ------------------------------------------------------------------ the target

def check(data: bytes, payload: bytes) -> str:
    """Load ``data`` as a model file, predict, and round-trip ``payload`` through compress and
    decompress with it as the dictionary.  Returns ``"rejected"`` (a ``DictionaryError``) or
    ``"round trip"``; raises :class:`Finding` for anything else (or lets a signal kill)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "m.sqm")
        with open(path, "wb") as f:
            f.write(data)
        try:
            first = Predictor.load(path)
        except DictionaryError:
            return "rejected"
        except Exception as exc:  # noqa: BLE001 - any other type is the finding
            raise Finding(f"load raised {type(exc).__name__}: {exc}") from exc
        try:
            probs = Predictor.load(path).probs()
            if not (np.isfinite(probs).all() and abs(float(probs.sum()) - 1.0) < 1e-6):
                raise Finding("probs() is not a distribution")
            alphabet = first.alphabet
            text = bytes(alphabet[b % len(alphabet)] for b in payload) \
                if payload.translate(None, alphabet) else payload
            packed = seqzip.compress(text, dictionary=first)
            got = seqzip.decompress(packed, dictionary=path)
        except Finding:
            raise
        except Exception as exc:  # noqa: BLE001
            raise Finding(f"coding raised {type(exc).__name__}: {exc}") from exc
        if got != text:
            raise Finding("decompress gave other data than was compressed")
        return "round trip"


def run(family: str, executions: int, seed: int = 0, seeds=None, last_input=None) -> dict:
    """``executions`` mutations of the family's seed file through :func:`check`: counts of
    outcomes (``rejected``, ``round trip`` and one key per finding's exception type).
    ``last_input``, when given, is a path rewritten with each input before it runs (a long
    run keeps the input that killed its process)."""
    seeds = seeds or seed_models([family])
    data, payload = seeds[family]
    rng = random.Random(seed)
    counts: dict[str, int] = {}
    findings = []
    for _ in range(executions):
        mutated = mutate(data, rng)
        if last_input is not None:
            with open(last_input, "wb") as f:
                f.write(mutated)
        try:
            outcome = check(mutated, payload)
        except Finding as exc:
            cause = exc.__cause__
            outcome = f"finding:{type(cause).__name__ if cause else 'wrong output'}"
            findings.append((mutated, str(exc)))
        counts[outcome] = counts.get(outcome, 0) + 1
        if last_input is not None:
            with open(last_input + ".json", "w") as f:
                json.dump(counts, f)
    counts["_findings"] = findings
    return counts


def finding_name(family: str, data: bytes, message: str) -> str:
    """File name of a finding kept as a regression input: family, kind, content hash."""
    kind = message.split(":")[0].replace(" ", "-").lower()
    return f"{family}-{kind}-{hashlib.sha256(data).hexdigest()[:12]}.sqm"
