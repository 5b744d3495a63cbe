# cython: language_level=3
# lstm.pyx compiled a second time, for CPUs with AVX2 (setup.py gives this module -mavx2 and
# builds it on x86-64 only).  models/lstm.py imports it only where the CPU has AVX2 (the cm
# kernel's check: ``seqzip._kernels.cm.simd_path()``, SEQZIP_SIMD=0 refusing it).  Its row
# loops then run four doubles at a time instead of two; the arithmetic is the same IEEE 754
# sequence (no fast-math, -ffp-contract=off, no FMA enabled), so the bits are lstm.pyx's:
# tests/kernels/test_cm_simd.py codes with both copies and compares.
include "lstm.pyx"
