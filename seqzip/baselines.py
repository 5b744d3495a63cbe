"""The compressors seqzip is measured against: real implementations, never stand-ins.

bzip2 -9 (stdlib ``bz2``) and xz -9e (stdlib ``lzma``) are always present; PPMd order 6
(``pyppmd``) and zstd -19 (``zstandard``) when their packages are installed
(``pip install "seqzip[bench]"``).  seqzip's own CTW is a model (``--model ctw``), not here.

    >>> {"bzip2-9", "xz-9e"} <= set(available())
    True
    >>> set(available()) | set(missing()) == {"bzip2-9", "xz-9e", *OPTIONAL}
    True
    >>> compress, decompress = available()["bzip2-9"]
    >>> decompress(compress(b"abc" * 100)) == b"abc" * 100
    True
"""
from __future__ import annotations

import bz2
import lzma
from typing import Callable

Codec = tuple[Callable[[bytes], bytes], Callable[[bytes], bytes]]

OPTIONAL = {"ppmd-o6": "pyppmd", "zstd-19": "zstandard"}  # baseline -> the package it needs


def available() -> dict[str, Codec]:
    """Baseline name -> (compress, decompress), for every baseline installed here.

        >>> comp, decomp = available()["bzip2-9"]
        >>> decomp(comp(b"abc" * 10)) == b"abc" * 10
        True
    """
    found: dict[str, Codec] = {
        "bzip2-9": (lambda d: bz2.compress(d, 9), bz2.decompress),
        "xz-9e": (lambda d: lzma.compress(d, preset=9 | lzma.PRESET_EXTREME), lzma.decompress),
    }
    try:
        import pyppmd

        found["ppmd-o6"] = (lambda d: pyppmd.compress(d, max_order=6, mem_size=16 << 20),
                            lambda c: pyppmd.decompress(c, max_order=6, mem_size=16 << 20))
    except ImportError:
        pass
    try:
        import zstandard

        found["zstd-19"] = (zstandard.ZstdCompressor(level=19).compress,
                            zstandard.ZstdDecompressor().decompress)
    except ImportError:
        pass
    return found


def missing() -> dict[str, str]:
    """Optional baselines that are not installed, with the package each needs.

        >>> set(missing()) <= set(OPTIONAL)
        True
    """
    have = available()
    return {name: package for name, package in OPTIONAL.items() if name not in have}
