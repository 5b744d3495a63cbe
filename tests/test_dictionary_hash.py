"""A stream's dictionary hash names the state it was coded from (issue 23): a Predictor loaded
from a model file and then changed (reset, fed, updated, rescaled, or a copy of it fed) codes
streams under the hash of its current state, so the file it was loaded from refuses them with
a DictionaryError (never a CorruptError or wrong data), and a file of the current state
decodes them; a Predictor whose state did not change (a copy, a pickle, probs, sample, score
without learning) keeps the file's hash, and the file decodes its streams."""
import copy
import pickle

import pytest

import seqzip
from seqzip.errors import DictionaryError
from seqzip.predictor import Predictor, file_hash

DATA = b"the cat sat on the mat, the rat sat on the hat. " * 6
PAYLOAD = b"that cat and that rat sat. " * 3


@pytest.fixture(params=["order2", "cm"])
def model_file(request, tmp_path):
    p = Predictor(request.param, 1, alphabet=bytes(sorted(set(DATA + PAYLOAD))))
    p.feed(DATA)
    path = tmp_path / "m.sqm"
    digest = p.save(path)
    return path, digest


def _changed(q: Predictor, how: str) -> Predictor:
    if how == "reset":
        q.reset()
    elif how == "feed":
        q.feed(b"sat")
    elif how == "update":
        q.update(ord("a"))
    elif how == "score":
        q.score(b"mat")
    elif how == "distributions":
        q.distributions(b"hat")
    elif how == "rescale":
        q.rescale_counts(2)
    elif how == "copy then feed":
        q = q.copy()
        q.feed(b"at")
    elif how == "pickle then feed":
        q = pickle.loads(pickle.dumps(q))
        q.feed(b"at")
    return q


CHANGES = ["reset", "feed", "update", "score", "distributions", "rescale", "copy then feed",
           "pickle then feed"]


@pytest.mark.parametrize("how", CHANGES)
def test_a_changed_state_codes_under_its_own_hash(model_file, how, tmp_path):
    path, digest = model_file
    q = Predictor.load(path)
    if how == "rescale" and q.model_name == "cm":
        pytest.skip("cm has no counts to rescale")
    assert q.file_hash == digest
    q = _changed(q, how)
    assert q.file_hash != digest
    assert q.file_hash == file_hash(q.to_bytes())
    packed = seqzip.compress(PAYLOAD, dictionary=q)
    with pytest.raises(DictionaryError, match="not with the given one"):
        seqzip.decompress(packed, dictionary=str(path))
    now = tmp_path / "now.sqm"
    assert q.save(now) == q.file_hash
    assert seqzip.decompress(packed, dictionary=str(now)) == PAYLOAD


UNCHANGED = ["nothing", "copy", "copy.copy", "deepcopy", "pickle", "probs", "sample",
             "score without learning", "from_bytes"]


@pytest.mark.parametrize("how", UNCHANGED)
def test_an_unchanged_state_keeps_the_file_hash(model_file, how):
    path, digest = model_file
    q = Predictor.load(path)
    if how == "copy":
        q = q.copy()
    elif how == "copy.copy":
        q = copy.copy(q)
    elif how == "deepcopy":
        q = copy.deepcopy(q)
    elif how == "pickle":
        q = pickle.loads(pickle.dumps(q))
    elif how == "probs":
        q.probs()
    elif how == "sample":
        q.sample(5, seed=1)
    elif how == "score without learning":
        q.score(b"cat", learn=False)
    elif how == "from_bytes":
        q = Predictor.from_bytes(path.read_bytes())
    assert q.file_hash == digest
    packed = seqzip.compress(PAYLOAD, dictionary=q)
    assert seqzip.decompress(packed, dictionary=str(path)) == PAYLOAD


def test_a_copy_fed_leaves_the_original_with_the_file_hash(model_file):
    path, digest = model_file
    q = Predictor.load(path)
    r = q.copy()
    r.feed(b"cat")
    assert q.file_hash == digest and r.file_hash != digest
    packed = seqzip.compress(PAYLOAD, dictionary=q)
    assert seqzip.decompress(packed, dictionary=str(path)) == PAYLOAD


def test_a_stream_coded_from_a_path_twice_names_the_file(model_file):
    """The session's own loaded model is taken by the first stream; the second reads the
    file again: both streams carry the file's hash and decode with it."""
    path, digest = model_file
    one = seqzip.compress(PAYLOAD, dictionary=str(path))
    two = seqzip.compress(PAYLOAD[::-1], dictionary=str(path))
    assert seqzip.decompress(one, dictionary=str(path)) == PAYLOAD
    assert seqzip.decompress(two, dictionary=str(path)) == PAYLOAD[::-1]
