"""splitmix64, the one random stream of seqzip (part of the format): its published first word,
an independent Python implementation, and the derived uniform and normal streams."""
import numpy as np

from seqzip._kernels.prng import SplitMix64, normal_stream

MASK = (1 << 64) - 1


def reference(seed: int, count: int) -> list[int]:
    out, state = [], seed
    for _ in range(count):
        state = (state + 0x9E3779B97F4A7C15) & MASK
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        out.append(z ^ (z >> 31))
    return out


def test_words_are_splitmix64():
    assert SplitMix64(0).next() == 0xE220A8397B1DCDAF  # the published first output for seed 0
    rng = SplitMix64(12345)
    assert [rng.next() for _ in range(100)] == reference(12345, 100)


def test_uniform_below_and_normal_streams_derive_from_the_words():
    words = reference(7, 12 * 40)
    rng = SplitMix64(7)
    assert rng.uniform() == (words[0] >> 11) * 2.0 ** -53
    assert SplitMix64(7).below(10) == words[0] % 10
    uniforms = [(w >> 11) * 2.0 ** -53 for w in words]
    want = []
    for i in range(40):
        s = 0.0
        for u in uniforms[12 * i:12 * i + 12]:
            s = s + u
        want.append(s - 6.0)
    assert normal_stream(7, 40).tolist() == want
    assert abs(normal_stream(3, 20000).std() - 1.0) < 0.03
