"""The markup contexts (CMConfig.markup, kind "markup"): round trips on well-formed and hostile
markup, the trackers' state (mode, open elements) read from the kernel's state, its check on
load, the field's bounds, a pinned stream and pinned hashes."""
import dataclasses
import hashlib
import io
import json

import numpy as np
import pytest

import seqzip
from seqzip.header import parse_header
from seqzip._kernels import cm
from seqzip._kernels.cm import KINDS
from seqzip.models.base import config_from_bytes, config_to_bytes
from seqzip.models.cm import CMConfig
from tests.kernels.test_cm import feed, kernel

PAGE = (b'<page>\n  <title>Alice &amp; the cat</title>\n  <text xml:space="preserve">'
        b"'''Alice''' met the [[Cheshire Cat|cat]] in {{cite book|title=Wonderland}}.\n"
        b"== Plot ==\n* She &lt;ref name=&quot;a&quot;&gt;fell&lt;/ref&gt; down.\n"
        b"{| class=\"wikitable\"\n|-\n| one || two\n|}\n</text>\n</page>\n")
HTML = (b'<html><body class="x"><p>The <code>for</code> loop, <em>not</em> the '
        b'<a href="#while">while</a> loop.<br/></p>\n<ul>\n  <li>one</li>\n  <li>two</li>\n'
        b'</ul><!-- a comment --></body></html>\n')
HOSTILE = [b"<", b"a < b > c <<<>>> <a href='x", b"<" + b"<d>" * 300 + b"x" + b"</d>" * 290,
           b"<a b=c d='e' f=\"g\">" * 3 + b"</z></a></a></a></a>" + b"&lt;&gt;&lt;/&gt;" * 5,
           b"<!DOCTYPE x><?xml v?><p/><p / ><\x00\xff>" + bytes(range(256)) + b"<"]
# markup=1023 on PAGE * 4 + HTML * 4, seed 1: size and SHA-256 of the stream
# the frames of the stream (its header lists every config field, so it grows with each new one)
PINNED_STREAM = (311, "33fbd95b3116d3bba3268dc082dbb64a857b6a62fb3bc742c73b1f2918493d11")
PINNED_HASHES = [1419514190530968136, 5666198509468747334, 13541981851363413254,
                 1121895912618999423, 8344613857638939447, 5663803008130449060,
                 683935416074709889, 12200909130001195381, 13173593594730414449,
                 255040768157829735]


def small(**fields) -> CMConfig:
    return CMConfig(**dict(dict(orders="2,3,4", table_bits=16, history_bits=16), **fields))


def round_trip(data: bytes, **fields) -> bytes:
    out = io.BytesIO()
    seqzip.compress_file(io.BytesIO(data), out, model="cm", config=small(**fields), seed=1)
    assert seqzip.decompress(out.getvalue()) == data
    return out.getvalue()


def markup_state(k) -> np.ndarray:
    return np.frombuffer(k.get_state()["markup"].tobytes(), dtype="=u8")


def test_markup_contexts_round_trip_and_pay_on_markup():
    data = (PAGE + HTML) * 6
    assert kernel(markup=526).context_count() == kernel().context_count() + 4
    assert kernel(markup=1023).context_count() == kernel().context_count() + 10
    assert kernel(markup=8191).context_count() == kernel().context_count() + 13
    assert len(round_trip(data, markup=526)) < len(round_trip(data))


@pytest.mark.parametrize("data", HOSTILE)
def test_hostile_markup_round_trips(data):
    round_trip(data, markup=1023)
    round_trip(data * 3, markup=526, text=1)
    round_trip(data * 2, markup=8191)


def test_the_trackers_follow_tags_and_open_elements():
    k = kernel(markup=1)
    feed(k, b"<a x='1'><b><c><br>text")
    m = markup_state(k)
    assert m[0] == 0 and m[1] == 4  # in text, a b c br open (br never closed)
    feed(k, b"</c>")  # pops br and c
    assert markup_state(k)[1] == 2
    feed(k, b"</zz>")  # an element never opened: nothing
    assert markup_state(k)[1] == 2
    feed(k, b"<p q=\"r")
    assert markup_state(k)[0] == 5  # in an attribute's value
    feed(k, b'"/>&lt;b&gt;')  # self-closing; an escaped tag counts as one
    assert markup_state(k)[:2].tolist() == [0, 3]
    deep = kernel(markup=1)
    feed(deep, b"<d>" * 400)
    assert markup_state(deep)[1] == 255  # the depth stops at its cap; the stack wraps
    feed(deep, b"</d>" * 400)
    assert markup_state(deep)[1] == 0


def test_state_restores_mid_stream_and_bad_state_is_refused():
    data = (PAGE + HTML) * 3
    a, b = kernel(markup=1023), kernel(markup=1023)
    feed(a, data[:700])
    state = a.get_state()
    b.set_state(state)
    feed(a, data[700:])
    feed(b, data[700:])
    assert a.predict_bit() == b.predict_bit()
    assert "markup" not in kernel().get_state()
    for index, value, words in ((0, 6, "mode 6"), (1, 256, "depth 256")):
        bad = dict(state)
        m = np.frombuffer(state["markup"].tobytes(), dtype="=u8").copy()
        m[index] = value
        bad["markup"] = np.frombuffer(m.tobytes(), dtype=np.uint8)
        with pytest.raises(ValueError, match=words):
            b.set_state(bad)


def test_markup_bounds_and_header():
    for bad in (-1, 8192):
        with pytest.raises(ValueError):
            CMConfig(markup=bad)
    assert CMConfig(markup=8191).markup == 8191
    old = config_to_bytes(CMConfig(record=2))
    assert len(json.loads(old)) == len(dataclasses.fields(CMConfig)) - len(CMConfig.ADDED_FIELDS)
    assert config_from_bytes(CMConfig, config_to_bytes(CMConfig(markup=526))).markup == 526
    # other added fields set, markup (and the rest of its generation) at its default: the
    # JSON of before that generation (and the image field) existed
    text = config_to_bytes(CMConfig(text=1, aligned=1))
    first_generation = CMConfig.ADDED_GENERATIONS[0]
    assert len(json.loads(text)) == len(dataclasses.fields(CMConfig)) - \
        (len(CMConfig.ADDED_FIELDS) - first_generation)
    assert config_from_bytes(CMConfig, text) == CMConfig(text=1, aligned=1)
    both = CMConfig(text=1, markup=526)
    assert config_from_bytes(CMConfig, config_to_bytes(both)) == both


def test_markup_stream_is_pinned(checked_streams):
    packed = round_trip(PAGE * 4 + HTML * 4, markup=1023)
    frames = packed[parse_header(packed)[1]:]
    assert (len(frames), hashlib.sha256(frames).hexdigest()) == PINNED_STREAM


def test_markup_hashes_are_pinned():
    """The hashes are part of the streams: a change here changes every stream using them."""
    kinds = [(KINDS["markup"], j) for j in range(10)]
    data = PAGE + HTML + b"<p>the <i>cat</i> sat"
    got = cm.py_context_hashes(data, kinds, True, False, False, True)
    assert got == PINNED_HASHES
    assert cm.py_context_hashes(data, kinds, True, False, False, False) != got  # trackers off


def test_value_and_place_contexts():
    """Bits 10-12: the start tag's value with the text's word, the element with the place in
    its text, the bytes at that place in the element's text before; off, the streams stay."""
    data = b"".join(b'<c lang="%s">%s</c>\n<id>%d</id>\n' % (lang, word, 1000 + 7 * i)
                    for i in range(40) for lang, word in ((b"de", b"Dokument"),
                                                          (b"fr", b"document")))
    assert kernel(markup=7694).context_count() == kernel(markup=526).context_count() + 3
    assert len(round_trip(data, markup=7694)) < len(round_trip(data, markup=526))
    assert round_trip(data, markup=1023) == round_trip(data, markup=1023)
    k = kernel(markup=4096)
    feed(k, b"<id>12</id><b><id>3")
    assert markup_state(k).size == 19 and "markup2" not in kernel(markup=1023).get_state()
    m = np.frombuffer(k.get_state()["markup2"].tobytes(), dtype="=u8")
    assert m[0] == 1 and m[2] == 4  # one byte into <id>'s text; the last began at 4
    a, b = kernel(markup=8191), kernel(markup=8191)
    feed(a, data[:900])
    b.set_state(a.get_state())
    feed(a, data[900:])
    feed(b, data[900:])
    assert a.predict_bit() == b.predict_bit()
    kinds = [(KINDS["markup"], j) for j in (10, 11, 12)]
    one = cm.py_context_hashes(b"<id>12</id><id>1", kinds, True, False, False, True)
    two = cm.py_context_hashes(b"<id>13</id><id>1", kinds, True, False, False, True)
    assert one[:2] == two[:2] and one[2] != two[2]  # only bit 12 sees the id before
