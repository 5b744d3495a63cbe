"""Bit identity of the context mixer through its restructuring into a bank of components
(issue 19): the SHA-256 (first 16 hex digits) of the stream of 3,000 bytes of four generated
corpora and of the first 3,000 bytes of each Canterbury file at every level, as the
single-class kernel (main at 0cd69a4) wrote them; and a model file that kernel saved (its
state's scalars were positional lists then) still loads and predicts the same."""
import hashlib
from pathlib import Path

import numpy as np
import pytest

import seqzip
from seqzip import corpora
from seqzip.models.cm import CMConfig
from seqzip.predictor import Predictor

CANTERBURY = Path("/work/shared/corpora/canterbury")
PREFIX = 3000
GENERATED = {
    1: {"english": "8220af320ef14de3", "binary": "d3ccda8897462bf7", "insertions": "3edad47d77f7dfa2", "markov2": "20374bb924876fcf"},
    2: {"english": "9883ad3b3e5e1117", "binary": "50f5fa6869de856c", "insertions": "2c663e1cf14e134e", "markov2": "e618ba7c80b638c6"},
    3: {"english": "d8fa9ee4fc83f027", "binary": "f3f96d4361e5e24f", "insertions": "b4a2a00cdb7847c6", "markov2": "b7ff85f00d96f6b9"},
    4: {"english": "c328b354c5a0d69f", "binary": "0d4e1078723435ea", "insertions": "f52cf9db79e39dfc", "markov2": "f5f84b2b42c1c7ee"},
    5: {"english": "4d803f29690d0e37", "binary": "7c72f8e18a5b7ba4", "insertions": "871015d8e3ac1dc8", "markov2": "2775043c5da60d97"},
    6: {"english": "30b0f838117c3f45", "binary": "2c8690f41d71a44a", "insertions": "91fde285019d5495", "markov2": "36c7d49dfe2e04d5"},
    7: {"english": "87afbf35df23b841", "binary": "f5d17a69f2807545", "insertions": "e67e185a8f8c2ee9", "markov2": "da459cc189b53118"},
    8: {"english": "616c76914fff418e", "binary": "315da544ac0e6017", "insertions": "958cf13df1a40644", "markov2": "4e679f8328da5a9a"},
    9: {"english": "6f1b6a95179b0bf9", "binary": "45178a70bc2695a9", "insertions": "a575c8ed8f47c15d", "markov2": "3ebe9c35e10130ca"},
}
STREAMS = {
    1: {
        "alice29.txt": "beb735da3d9614e6",
        "asyoulik.txt": "9545a153db7f96f7",
        "cp.html": "8be97a070d06d407",
        "fields.c": "8181892cf99e1433",
        "grammar.lsp": "385e24579b346c98",
        "kennedy.xls": "8b3a3c373bb39409",
        "lcet10.txt": "ac71dc3a02944a7a",
        "plrabn12.txt": "a2ee904b2eb4cdbe",
        "ptt5": "a2315ce7d3af05ca",
        "sum": "48e95f03ebb8345b",
        "xargs.1": "8103f0b6edb02aa0",
    },
    2: {
        "alice29.txt": "001c00ba1be2c169",
        "asyoulik.txt": "4a55f7799b6242ab",
        "cp.html": "ec76dfa66ec5fa6e",
        "fields.c": "6dada98e2344999c",
        "grammar.lsp": "f48704cfc575c8b9",
        "kennedy.xls": "34327e7480a5978d",
        "lcet10.txt": "f41d145e9e890edc",
        "plrabn12.txt": "5603f315b8ebfaca",
        "ptt5": "dd6e9c8001d83aaf",
        "sum": "20dde200ff9b4434",
        "xargs.1": "1b1ab9b47cb3e05a",
    },
    3: {
        "alice29.txt": "0fc8e4eaed7789d0",
        "asyoulik.txt": "7c885a5d9e3ee1d3",
        "cp.html": "e19a5463dc271db3",
        "fields.c": "dd70cc2c8fec77b6",
        "grammar.lsp": "e6e88e57aa52cdff",
        "kennedy.xls": "1278bf9df11ed8b8",
        "lcet10.txt": "2417a0ead6a169b5",
        "plrabn12.txt": "86e6cd3587bd80f1",
        "ptt5": "5b3c05a8e4db53eb",
        "sum": "0ae0175f3372f628",
        "xargs.1": "b00f7348df57e812",
    },
    4: {
        "alice29.txt": "585969ba18f03ff2",
        "asyoulik.txt": "b71fd38c738653c0",
        "cp.html": "27bd5ed3e8c80b1d",
        "fields.c": "bc4f589ea7f95cf7",
        "grammar.lsp": "a47e49062a6ae2b3",
        "kennedy.xls": "2e7dd38b614389f5",
        "lcet10.txt": "ec51db5bc5e9eb8a",
        "plrabn12.txt": "f92ea4ac1460ac29",
        "ptt5": "4f7087e42fd95f95",
        "sum": "32af7f87985964d9",
        "xargs.1": "559f3153fb0a793b",
    },
    5: {
        "alice29.txt": "764278186de362d9",
        "asyoulik.txt": "493eb421866af569",
        "cp.html": "5031716d2f909f39",
        "fields.c": "e6b9abdf0d0503a2",
        "grammar.lsp": "dba2dd4eb378ba20",
        "kennedy.xls": "efda1464e91fea9c",
        "lcet10.txt": "be6f2f2aab79e754",
        "plrabn12.txt": "2c15857d6eb24211",
        "ptt5": "dbef796f182b49ab",
        "sum": "fe2bad69f857e353",
        "xargs.1": "92ad9ee62355d5b8",
    },
    6: {
        "alice29.txt": "4338752714f4e911",
        "asyoulik.txt": "67fd9a2720c6c44a",
        "cp.html": "9b93d3a534f5f4dd",
        "fields.c": "ccb19446a63a7182",
        "grammar.lsp": "12dca9bc78f83ba3",
        "kennedy.xls": "398bf41e1d1bc5c8",
        "lcet10.txt": "cc523a952cb20b32",
        "plrabn12.txt": "a70b4765231c4288",
        "ptt5": "61ea30885f65d2bc",
        "sum": "4a2f1e163c271340",
        "xargs.1": "e879ffc56fad3ff9",
    },
    7: {
        "alice29.txt": "dd6c44ee2cb6b970",
        "asyoulik.txt": "b027d5597d74f32b",
        "cp.html": "6397cfbfdc87e053",
        "fields.c": "e400e3b408cd1fbd",
        "grammar.lsp": "b53cd320a6ba1a42",
        "kennedy.xls": "eb39b5ab0c4c1fa7",
        "lcet10.txt": "b4f0dd95f63f982a",
        "plrabn12.txt": "2ebca50a1d10d3da",
        "ptt5": "c45b960702b50038",
        "sum": "560fe31fceec2271",
        "xargs.1": "1601ffa3408a3267",
    },
    8: {
        "alice29.txt": "b24b9fe1b19d73c1",
        "asyoulik.txt": "5eebe9a8d4a8f8af",
        "cp.html": "e8f09e85b3a7f9d1",
        "fields.c": "47a9bafa5783418d",
        "grammar.lsp": "e83f12a0b8edc8e5",
        "kennedy.xls": "fc511393716fd374",
        "lcet10.txt": "221de9cd437c28c3",
        "plrabn12.txt": "77ed75950048788a",
        "ptt5": "25e71ee4b2fd823a",
        "sum": "953a64389c902c4f",
        "xargs.1": "42b072baf8e74a29",
    },
    9: {
        "alice29.txt": "727390a5f6bde3a4",
        "asyoulik.txt": "81c86ac35888460c",
        "cp.html": "04dcb94644701194",
        "fields.c": "898a01c16462eb2c",
        "grammar.lsp": "40c3bd4a2fedd8e5",
        "kennedy.xls": "5b5f772758e8f88d",
        "lcet10.txt": "e0dcb65131cd2368",
        "plrabn12.txt": "8200b96812f3dcf2",
        "ptt5": "5babf739627fc03c",
        "sum": "cba328514f8136e3",
        "xargs.1": "9ddaab1740d07a62",
    },
}


@pytest.mark.skipif(not CANTERBURY.is_dir(), reason="the Canterbury corpus is not here")
@pytest.mark.parametrize("level", [pytest.param(v, marks=pytest.mark.slow) if v >= 7 else v
                                   for v in sorted(STREAMS)])
def test_streams_are_those_of_the_single_class_kernel(level):
    for name, digest in STREAMS[level].items():
        data = (CANTERBURY / name).read_bytes()[:PREFIX]
        packed = seqzip.compress(data, level)
        assert hashlib.sha256(packed).hexdigest()[:16] == digest, (level, name)
        if level in (1, 6):
            assert seqzip.decompress(packed) == data


@pytest.mark.parametrize("level", [pytest.param(v, marks=pytest.mark.slow) if v >= 7 else v
                                   for v in sorted(GENERATED)])
def test_generated_streams_are_those_of_the_single_class_kernel(level):
    for name, digest in GENERATED[level].items():
        data = corpora.generate(name, 3000, seed=0).data
        assert hashlib.sha256(seqzip.compress(data, level)).hexdigest()[:16] == digest, name


def test_a_model_file_of_the_single_class_kernel_loads_and_predicts_the_same():
    old = Predictor.from_bytes((Path(__file__).parent / "cm_state_0cd69a4.sqm").read_bytes())
    config = CMConfig(orders="2,3", match=4, match2=8, word=1, apm=2, sets="node,match",
                      table_bits=10, history_bits=10)
    new = Predictor("cm", alphabet=b"abcdefghijklmnopqrstuvwxyz .\n", config=config)
    new.feed(b"the cat sat on the mat.\n" * 40 + b"the ca")
    assert hashlib.sha256(old.probs().tobytes()).hexdigest()[:16] == "9ba2691f9400ba18"
    assert np.array_equal(old.probs(), new.probs())
    again = Predictor.from_bytes(new.to_bytes())  # the named state round-trips
    for symbol in b"t sat":
        assert np.array_equal(old.probs(), again.probs())
        assert old.update(bytes([symbol])) == again.update(bytes([symbol]))
