"""Two parts have two compiled copies, generic x86-64 and AVX2, chosen by the CPU (SEQZIP_SIMD=0
forces the generic ones): the mixer's QDH loops (mixer.pxd) and the recurrent networks
(lstm_avx2.pyx, lstm.pyx built for AVX2; models/lstm.py picks it).  They must give the same
bits: a stream made on a CPU with AVX2 decodes on one without.  Each test runs the generic
copies in a child process and compares them with this process's (the AVX2 ones where the CPU
has AVX2)."""
import hashlib
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import seqzip
from seqzip import corpora
from seqzip._kernels import cm

# the streams: levels 1, 6 (text and its binary variant's data) and 9 (its network too), the
# networks alone, and a level-6 stream made by the other process decoded
_STREAMS = r"""
import hashlib, json, sys
import seqzip
from seqzip import corpora
from seqzip._kernels import cm
from seqzip.models import lstm
out = {"path": cm.simd_path(), "networks": lstm.kernel_module().__name__}
text = corpora.generate("english", 12000, seed=5).data
binary = corpora.generate("binary", 9000, seed=6).data
for name, data, level in (("text1", text, 1), ("text6", text, 6), ("bin6", binary, 6),
                          ("text9", text[:2500], 9)):
    out[name] = hashlib.sha256(seqzip.compress(data, level=level)).hexdigest()
for cell in ("lstm", "mlstm"):  # the networks alone (symbol mode)
    out[cell] = hashlib.sha256(seqzip.compress(text[:4000], model=cell, level=1)).hexdigest()
out["mixed"] = hashlib.sha256(seqzip.decompress(bytes.fromhex(sys.argv[1]))).hexdigest()
print(json.dumps(out))
"""

_STEPS = r"""
import json, sys
import numpy as np
from seqzip._kernels import cm
rng = np.random.default_rng(7)
m, rows, n = 6, 3, 61
w = rng.normal(size=(m, rows, n)) * 0.4
hd = np.full((m, rows, n), 4.0)
hc = rng.normal(size=(m, rows, n)) * 0.1
trace = []
for t in range(60):
    x = np.concatenate([[1.0], rng.normal(size=n - 1) * 3])
    sel = rng.integers(0, rows, size=m).astype(np.int32)
    dots, ps = cm.py_mixer_sets_step(w, hd, hc, sel, x, int(rng.random() < 0.6), "qdh", 0.5,
                                     0.999, 10.0, 1.0, 1.0, 2, 0.3 if t % 2 else 0.0)
    trace.append([float(d) for d in dots])
print(json.dumps({"path": cm.simd_path(), "w": w.tobytes().hex(), "hd": hd.tobytes().hex(),
                  "hc": hc.tobytes().hex(), "dots": trace}))
"""


def _cpu_has_avx2():
    try:
        with open("/proc/cpuinfo") as f:
            return any(line.startswith("flags") and " avx2" in line for line in f)
    except OSError:
        return False


def _run(script, *args, simd=None):
    env = dict(os.environ)
    env.pop("SEQZIP_SIMD", None)
    if simd is not None:
        env["SEQZIP_SIMD"] = simd
    done = subprocess.run([sys.executable, "-c", script, *args], env=env, capture_output=True,
                          text=True, check=True)
    return json.loads(done.stdout)


def test_the_copy_follows_the_cpu_and_the_environment():
    assert _run("import json; from seqzip._kernels import cm; print(json.dumps(cm.simd_path()))",
                simd="0") == "generic"
    default = _run("import json; from seqzip._kernels import cm; print(json.dumps(cm.simd_path()))")
    if sys.platform.startswith("linux") and os.uname().machine == "x86_64":
        assert default == ("avx2" if _cpu_has_avx2() else "generic")
    else:
        assert default == "generic"


def test_both_copies_code_the_same_streams():
    # a stream this process made (its copy), decoded by the generic copy
    data = corpora.generate("markov2", 7000, seed=9).data
    packed = seqzip.compress(data, level=6)
    generic = _run(_STREAMS, packed.hex(), simd="0")
    here = _run(_STREAMS, packed.hex())
    assert generic["path"] == "generic" and here["path"] == cm.simd_path()
    assert generic["networks"] == "seqzip._kernels.lstm"
    assert generic == dict(here, path="generic", networks="seqzip._kernels.lstm")
    assert generic["mixed"] == hashlib.sha256(data).hexdigest()


def test_both_copies_take_the_same_mixer_steps():
    """The interleaved sets' step (loud and quiet sets, a gated set skipped) after 60 bits:
    weights, curvature and outputs bit for bit."""
    generic = _run(_STEPS, simd="0")
    here = _run(_STEPS)
    assert generic["path"] == "generic"
    assert generic == dict(here, path="generic")
    w = np.frombuffer(bytes.fromhex(generic["w"]))
    assert np.isfinite(w).all() and np.abs(w).max() > 0.1  # it learnt something


@pytest.mark.skipif(not _cpu_has_avx2(), reason="the CPU has no AVX2: one copy only")
def test_this_process_runs_the_avx2_copy():
    if "SEQZIP_SIMD" in os.environ:
        pytest.skip("SEQZIP_SIMD is set")
    assert cm.simd_path() == "avx2"
    from seqzip.models import lstm
    assert lstm.kernel_module().__name__ == "seqzip._kernels.lstm_avx2"
