"""Build of seqzip's Cython kernels.

Determinism is part of the file format (SPEC section 2): the kernels are compiled without
fast-math and without tuning for the build machine's CPU, and with -ffp-contract=off so that no
a*b+c is fused into an FMA on one build and not on another (-fno-math-errno changes no value:
below).  SEQZIP_OPT overrides the
optimisation level (e.g. ``-O0``) so the tests can build a second copy and check that streams
cross between builds; SEQZIP_DEBUG=1 turns Cython's bounds and wraparound checks on;
SEQZIP_SANITIZE=address builds the kernels with AddressSanitizer (for the fuzz runs: see
benchmarks/model_fuzz.py for running Python with libasan preloaded).
"""
import glob
import os
import platform

from Cython.Build import cythonize
from setuptools import Extension, setup

# -O3: its vectoriser (not -O2's "very cheap" one) runs the recurrent kernels' row loops two
# doubles at a time: mLSTM 11.5 vs 9.5 KB/s (-O2) vs 9.3 KB/s (-O2 -fno-tree-vectorize), with
# bit-identical streams (benchmarks/vectorise.py).  No reassociation without fast-math.
# -fno-math-errno: sqrt is the instruction, not a call that may set errno, so loops holding one
# (Adam's step) vectorise; IEEE sqrt rounds correctly either way, so no result changes (session
# 16: the same streams for cm levels 7-9, the network models at levels 1, 6 and 9 on 40 KB of
# text, and every pinned stream of tests/test_container.py).
OPT = os.environ.get("SEQZIP_OPT", "-O3")
DEBUG = os.environ.get("SEQZIP_DEBUG", "") == "1"
COMPILE_ARGS = [OPT, "-ffp-contract=off", "-fno-math-errno", "-fno-strict-aliasing"]
LINK_ARGS = []
SANITIZE = os.environ.get("SEQZIP_SANITIZE", "")
if SANITIZE:
    if SANITIZE != "address":
        raise SystemExit("SEQZIP_SANITIZE takes only 'address'")
    COMPILE_ARGS += ["-fsanitize=address", "-fno-omit-frame-pointer", "-g"]
    LINK_ARGS += ["-fsanitize=address"]
DIRECTIVES = {
    "language_level": 3,
    "boundscheck": DEBUG,
    "wraparound": DEBUG,
    "initializedcheck": DEBUG,
    "cdivision": True,
    "embedsignature": True,
}

# seqzip/_core.pyx (the model interface and the coding step) and one module per kernel family
# (the context mixer's in its subpackage seqzip/_kernels/cm/).
SOURCES = ["seqzip/_core.pyx"] + sorted(glob.glob("seqzip/_kernels/**/*.pyx", recursive=True))

# A module named *_avx2.pyx is another build of its namesake for CPUs with AVX2 (its loops four
# doubles at a time, the same bits: the package imports it only where the CPU has AVX2); it is
# built for x86-64 only.
X86_64 = platform.machine().lower() in ("x86_64", "amd64")
SOURCES = [path for path in SOURCES if X86_64 or not path.endswith("_avx2.pyx")]

extensions = [
    Extension(
        path[:-len(".pyx")].replace("/", "."),
        [path],
        extra_compile_args=COMPILE_ARGS + (["-mavx2"] if path.endswith("_avx2.pyx") else []),
        extra_link_args=LINK_ARGS,
    )
    for path in SOURCES
]

# Cython and the C compiler run one module per core (the install's share of CI: 3.5 minutes
# serial on 2 cores); the modules are independent, so the order changes nothing that is built.
JOBS = os.cpu_count() or 1
setup(ext_modules=cythonize(extensions, compiler_directives=DIRECTIVES, nthreads=JOBS),
      options={"build_ext": {"parallel": JOBS}})
