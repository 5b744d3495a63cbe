"""Kind words2 (CMConfig.words2): round trips of the field's values, determinism, the field's
bounds, the trackers' state restored mid-stream, and every context's hash checked against a
plain-Python reference of the trackers (context.ctx_words2, kinds.words2_hash)."""
import io
import random

import pytest

import seqzip
from seqzip._kernels import cm
from seqzip._kernels.cm import KINDS
from seqzip.models.cm import CMConfig
from tests.kernels.test_cm import feed, kernel, resumes

M = (1 << 64) - 1
W2 = KINDS["words2"]
TEXT = (b"Alice was beginning to get very tired of sitting by her sister on the bank,\n"
        b"and of having nothing to do: once or twice she had peeped into the book (\"it\n"
        b"had no pictures [or conversations] in it\"), 'and what is the use of a book,'\n"
        b"thought Alice, 'without pictures?' In 1865 &amp; 1871 the NASA Rabbit ran.\n"
        b"   The cats jumped quickly, walking; the dogs barked loudly.\n")


def hash2(a: int, b: int) -> int:
    z = (a + (b + 0x9E3779B97F4A7C15) * 0xD6E8FEB86659FD93) & M
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M
    return z ^ (z >> 31)


def is_letter(b: int) -> bool:
    return 97 <= (b | 32) <= 122 or b >= 128


class Reference:
    """The trackers kind words2 reads, in plain Python (markup off)."""

    def __init__(self):
        self.hist = bytearray()
        self.c8 = self.word0 = self.word1 = self.word_len = 0
        self.line_start = self.prev_line_start = 0
        self.t = [0, 0, 0]
        self.p = [0, 0, 0]
        self.digits = self.spos = self.lpos = 0
        self.sfirst = self.lfirst = self.plfirst = 0
        self.stack, self.since_open = [], 0
        self.phrase = self.capw = self.since = self.since_h = self.entity = 0
        self.first_upper = self.all_upper = False
        self.classes = self.lens = 0

    def token(self, t):
        self.t = [t] + self.t[:2]

    def update(self, b: int):
        self.hist.append(b)
        self.c8 = ((self.c8 << 8) | b) & M
        folded = b | 32 if 65 <= b <= 90 else b
        upper = 65 <= b <= 90
        n = self.word_len
        if is_letter(b):
            self.p = [self.word0 if n else 0] + self.p[:2]
            if n == 0:
                self.first_upper = self.all_upper = upper
            elif not upper:
                self.all_upper = False
        elif n:
            tail = bytes(self.hist[-4:-1]).lower()
            stem = self.word0
            if n >= 5 and tail.endswith(b"ing"):
                stem = self.p[2]
            elif n >= 4 and (tail.endswith(b"ed") or tail.endswith(b"ly")):
                stem = self.p[1]
            elif n >= 3 and tail.endswith(b"s") and not tail.endswith(b"ss"):
                stem = self.p[0]
            self.token(stem)
            if self.spos == 0:
                self.sfirst = self.word0
            if self.lpos == 0:
                self.lfirst = self.word0
            cls = (2 if self.all_upper and n > 1 else 1) if self.first_upper else 0
            self.classes = ((self.classes << 2) | cls) & 0xFF
            if cls and self.spos:
                self.capw, self.since, self.since_h = self.word0, 0, 0
            else:
                self.since = min(self.since + 1, 255)
            self.spos, self.lpos = min(self.spos + 1, 255), min(self.lpos + 1, 255)
            self.lens = ((self.lens << 4) | min(n, 15)) & 0xFFF
            self.since_open = min(self.since_open + 1, 255)
        if 48 <= b <= 57:
            self.digits += 1
        elif self.digits:
            self.digits = 0
            self.token(0x4E554D42)
        if b in b".!?":
            self.spos = 0
        if b == 10:
            self.plfirst, self.lfirst, self.lpos = self.lfirst, 0, 0
        top = self.stack[-1] if self.stack else 0
        if b in b"([{" or b == 34 and top != 34:
            self.stack.append(b)
            self.since_open = 0
        elif b in b")]}\"" and self.stack:
            self.stack.pop()
            if len(self.stack) >= 4:
                self.stack[-4] = 0x3F  # the outermost of the four kept: forgotten
            self.since_open = 0
        self.phrase = b if b in b",;:.!?()[]{}\"" else \
            hash2(self.phrase + 0x50, 32 if b == 10 else folded)
        self.since_h = hash2(self.since_h + 0x43, folded)
        if b == 38:
            self.entity = 38
        elif self.entity and (97 <= folded <= 122 or 48 <= b <= 57 or b == 35):
            self.entity = hash2(self.entity, b)
        else:
            self.entity = 0
        # the words and lines (context.ctx_update)
        if is_letter(b):
            self.word0 = hash2(self.word0 + 0x57, folded)
            self.word_len += 1
        elif self.word_len:
            self.word1, self.word0, self.word_len = self.word0, 0, 0
        if b == 10:
            self.prev_line_start, self.line_start = self.line_start, len(self.hist)

    def word_above(self) -> int:
        column = len(self.hist) - self.line_start
        if self.line_start <= self.prev_line_start or \
                column >= self.line_start - self.prev_line_start:
            return 0
        a, k = self.prev_line_start + column, 0
        while k < 12 and a > self.prev_line_start and is_letter(self.hist[a - 1]):
            a, k = a - 1, k + 1
        h = 0
        for _ in range(24):
            if a >= self.line_start or not is_letter(self.hist[a]):
                break
            b = self.hist[a]
            h = hash2(h + 0x41, b | 32 if 65 <= b <= 90 else b)
            a += 1
        return (h + 1) & M

    def hashes(self) -> list:
        out = []
        pos = len(self.hist)
        s, ln = min(self.spos, 15), min(self.lpos, 15)
        for j in range(16):
            tag = (W2 * 64 + j + 1) << 48
            h = self.word0 if self.word_len else hash2(tag, (self.c8 & 0xFFFF) | 0x2020)
            th = hash2(tag, h)
            if j == 0:
                v = hash2(hash2(th, self.t[0]), self.t[1])
            elif j == 1:
                v = hash2(th, self.t[0])
            elif j == 2:
                v = hash2(hash2(th, self.t[1]), self.t[2])
            elif j == 3:
                v = hash2(th, s | ln << 4)
            elif j == 4:
                v = hash2(hash2(th, self.sfirst), s)
            elif j == 5:
                v = hash2(hash2(th, self.plfirst), ln)
            elif j == 6:
                packed = sum(ch << (8 * i) for i, ch in enumerate(reversed(self.stack[-4:])))
                v = hash2(th, packed | len(self.stack) << 32 | min(self.since_open, 7) << 40)
            elif j == 7:
                v = hash2(th, self.word_above())
            elif j == 8:
                v = hash2(tag, self.phrase)
            elif j == 9:
                v = hash2(hash2(th, self.capw), min(self.since, 7))
            elif j == 10:
                v = hash2(hash2(hash2(hash2(th, 9), 0), 0), self.entity)
            elif j == 11:
                v = hash2(th, self.classes << 8 | self.first_upper | self.all_upper << 1)
            elif j == 12:
                v = hash2(th, self.lens | min(self.word_len, 15) << 12)
            elif j == 13:
                column = pos - self.line_start
                above = 0
                if self.line_start > self.prev_line_start and \
                        column + 1 < self.line_start - self.prev_line_start:
                    a = self.prev_line_start + column
                    above = self.hist[a] | self.hist[a + 1] << 8
                v = hash2(th, above << 8 | min(column, 255))
            elif j == 14:
                v = hash2(hash2(th, self.lfirst), self.word1)
            else:
                v = hash2(tag, self.since_h)
            out.append(v)
        return out


def small(**fields) -> CMConfig:
    return CMConfig(**dict(dict(orders="2,3,4", table_bits=16, history_bits=16), **fields))


def pack(data: bytes, **fields) -> bytes:
    out = io.BytesIO()
    seqzip.compress_file(io.BytesIO(data), out, model="cm", config=small(**fields), seed=1)
    return out.getvalue()


@pytest.mark.parametrize("words2", [1, 0x0103, 0x8000, 0xFFFF])
@pytest.mark.parametrize("data", [b"", b"A", bytes(random.Random(3).randbytes(3000)), TEXT * 4])
def test_round_trips_and_is_deterministic(words2, data):
    z = pack(data, words2=words2)
    assert seqzip.decompress(z) == data
    assert pack(data, words2=words2) == z


def test_the_contexts_pay_on_text():
    assert kernel(words2=0xFFFF).context_count() == kernel().context_count() + 16
    assert kernel(words2=0x0105).context_count() == kernel().context_count() + 3
    assert len(pack(TEXT * 6, words2=0x0107)) < len(pack(TEXT * 6))


def test_bounds_are_refused():
    for bad in (-1, 65536):
        with pytest.raises(ValueError):
            CMConfig(words2=bad)


@pytest.mark.parametrize("cut", [1, 40, 75, 76, 150, 171, 200, len(TEXT) - 1, len(TEXT)])
def test_hashes_match_the_reference(cut):
    data = TEXT[:cut]
    ref = Reference()
    for b in data:
        ref.update(b)
    kinds = [(W2, j) for j in range(16)]
    got = cm.py_context_hashes(data, kinds, False, False, False, False, False, True)
    assert got == ref.hashes()


def test_every_prefix_matches_the_reference():
    data = TEXT * 2 + b"((((([x y z])))))\n" + bytes(range(256))
    ref = Reference()
    kinds = [(W2, j) for j in range(16)]
    for i, b in enumerate(data):
        ref.update(b)
        if i % 5 == 0:
            got = cm.py_context_hashes(data[:i + 1], kinds, False, False, False, False, False,
                                       True)
            assert got == ref.hashes(), i


def test_trackers_off_give_other_hashes_and_state_restores_mid_stream():
    kinds = [(W2, j) for j in (0, 3, 8)]
    assert cm.py_context_hashes(TEXT, kinds, words2=False) != \
        cm.py_context_hashes(TEXT, kinds, words2=True)
    a, b = kernel(words2=0xFFFF), kernel(words2=0xFFFF)
    feed(a, TEXT[:200])
    state = a.get_state()
    assert "words2" in state and "words2" not in kernel().get_state()
    assert resumes(a, b, state, TEXT[200:])


def selector_reference(data: bytes, node: int) -> int:
    ref = Reference()
    for b in data:
        ref.update(b)
    n = ref.word_len
    n = n if n < 4 else 4 + (n >= 6) + (n >= 8) + (n >= 12)
    last = data[-1] if data else 0
    kind = 0 if is_letter(last) else 1 if 48 <= last <= 57 else 2 if last in b" \n\r\t" else 3
    place = 0 if ref.spos == 0 else 1 if ref.stack else 2 if ref.lpos == 0 else 3
    return ((n * 4 + kind) * 4 + place) * 8 + node.bit_length() - 1


@pytest.mark.parametrize("cut", [0, 1, 5, 30, 75, 76, 100, 150, 171, 250, len(TEXT)])
def test_selector_rows_match_the_reference(cut):
    sel = cm.SELECTORS["words2"]
    for node in (1, 5, 200):
        assert cm.py_selector_row(TEXT[:cut], sel, node) == selector_reference(TEXT[:cut], node)


def test_selector_round_trips_with_and_without_the_contexts():
    for fields in (dict(sets="node,words2"), dict(sets="words2,match", words2=0x0100)):
        z = pack(TEXT * 3, **fields)
        assert seqzip.decompress(z) == TEXT * 3
    assert "words2" in kernel(sets="node,words2").get_state()
