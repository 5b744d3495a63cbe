"""The cm presets of issue 20 under new preset ids: ids 1-9 keep naming the first presets, so
streams written before the change decode exactly; today's changed levels write ids 10-12."""
import io

import pytest

import seqzip
from seqzip import container
from seqzip.models.base import LEVELS, config_from_header, config_to_header
from seqzip.models.cm import FIRST_PRESETS, CMConfig

DATA = b"An old stream: the level-6 preset as streams before issue 20 name it (id 6).\n" * 3 + \
    bytes(range(40))
# seqzip.compress(DATA, level) by main at 5cd1e52 (before issue 20's presets), format 6
OLD_STREAMS = {
    1: "b753515a0607218f020076054d7bb9a1f5748b28f2dc84fe8b50165b5b216cb94a719aed6045873ad58c163"
       "983427b9c49e7870bcaa83cb9f6bd760d26fc6824b716f52f517dedbfe708351298396f2d08e8a2fad6cb7f"
       "8509013431f7d1b1ef14acc6ca8a6171e3a74153b4f08e76f0830f87ee788462c9da",
    6: "b753515a0607268f020076054d7bb9a1f5748b28f2dc84feef5a164fc9216cb94abd642161882533350b7b4"
       "455c8c714a57b2b536156ed431f6d9a1db8fc4acb5f312ce6c290878f98bcf2bde7674ad0f837e9611641cd"
       "28fff98fe98cf06d48887b2be33ddf9add711ad5067d06bc964e167db349e49a65dd",
    9: "b753515a0607298f020076054d7bb9a1f5748b28f2dc84fe87fe1689de216cb94a2a5b21612f8584134bdc3"
       "75b82e60812c348358d6c1d86861d7d12028dde25f04ed4ec9278a6485dfdfd35d48cec668ee93d0cea52b0"
       "147490e9614a92d411be5b3b06591789fc5ade9bd2567f60aa800a2ce98f00000000",
}


@pytest.mark.parametrize("level", sorted(OLD_STREAMS))
def test_a_stream_of_the_first_presets_still_decodes(level, monkeypatch, checked_streams):
    from seqzip import session
    from tests.test_container import as_version_6

    old = bytes.fromhex(OLD_STREAMS[level])
    assert container.parse_header(old)[0].config == bytes([level])
    assert seqzip.decompress(old) == DATA
    # the first preset, given as a config, codes as it did: over the same alphabet (format 6
    # coded over the values present; format 8 codes cm over 0..top) the same stream
    monkeypatch.setattr(session, "coding_alphabet", lambda model, alphabet: alphabet)
    out = io.BytesIO()
    seqzip.compress_file(io.BytesIO(DATA), out, model="cm", config=CMConfig.for_preset_id(level))
    assert as_version_6(out.getvalue()) == old


def test_the_renumbered_levels_are_those_that_changed():
    changed = {level for level in LEVELS
               if CMConfig.for_level(level) != CMConfig(**FIRST_PRESETS[level])}
    assert changed == set(CMConfig.PRESET_IDS)
    ids = list(CMConfig.PRESET_IDS.values())
    assert len(set(ids)) == len(ids) and all(9 < i <= 150 for i in ids)  # formats 8-26


def test_each_level_writes_its_id_and_reads_back():
    for level in LEVELS:
        header = config_to_header(CMConfig, CMConfig.for_level(level))
        assert header == bytes([CMConfig.PRESET_IDS.get(level, level)])
        assert config_from_header(CMConfig, header, 6) == CMConfig.for_level(level)
        assert config_from_header(CMConfig, bytes([level]), 6) == \
            CMConfig(**FIRST_PRESETS[level])
    for bad in (0x0F, max(CMConfig.PRESETS) + 1):  # 15 was never a preset; the next id, not yet
        with pytest.raises(ValueError, match=f"names preset {bad}, which this build does not "
                           f"know \\(it knows up to {max(CMConfig.PRESETS)}\\): a newer seqzip"):
            config_from_header(CMConfig, bytes([bad]), 6)
    with pytest.raises(ValueError, match="names level 1 \\(2 bytes\\)"):
        config_from_header(CMConfig, b"\x01\x01", 6)


def test_a_new_level_stream_is_a_one_byte_preset_and_round_trips():
    text = DATA.replace(b"\x00", b"")
    packed = seqzip.compress(text, 6)
    assert container.parse_header(packed)[0].config == bytes([CMConfig.PRESET_IDS[6]])
    assert seqzip.decompress(packed) == text


@pytest.mark.parametrize("level", [6, 9, 1])
def test_binary_data_takes_the_level_variant_with_the_image_expert(level):
    """Data holding a zero byte is coded by the level's variant for binary data, under the
    variant's own preset id: at levels 6 and 9 with the 1-bit image expert and the sample
    expert, at level 1 with record contexts; the decoder follows the header, and
    ``seqzip -l`` still reports the level."""
    from seqzip.streaminfo import level_of

    own = CMConfig.PRESET_IDS[level]
    variant = CMConfig.DATA_VARIANTS[own]["binary"]
    # the preset it varies is the level's, or an earlier preset of the level that names it too
    # (round eight's level 6 keeps round seven's binary variants)
    base_id = CMConfig.VARIANT_IDS[variant][0]
    assert base_id == own or CMConfig.DATA_VARIANTS[base_id]["binary"] == variant
    assert CMConfig.for_preset_id(variant).samples == (level != 1)
    assert CMConfig.for_preset_id(variant).record == 2 != CMConfig.for_level(1).record
    packed = seqzip.compress(DATA, level)
    header = container.parse_header(packed)[0]
    assert header.config == bytes([variant]) and seqzip.decompress(packed) == DATA
    assert level_of(header) == level
    config = config_from_header(CMConfig, bytes([variant]), 8)
    assert config.image == (level != 1)
    assert config_to_header(CMConfig, config) == bytes([variant])
    assert config == CMConfig.for_level(level).for_data(bytes(sorted(set(DATA))))


def test_the_image_expert_predicts_a_bitmap_from_the_rows_above(monkeypatch):
    """On a 1-bit image (64-byte rows of shapes that continue from row to row) the image
    expert's pixel contexts pay: level 6's variant codes it smaller than level 6 itself
    (kept from turning into its variant here), and both round-trip."""
    import numpy as np

    from seqzip import session
    from seqzip.api import compress_file

    monkeypatch.setattr(session, "coding_config", lambda config, *data: config)

    rng = np.random.default_rng(3)
    rows, width = 400, 512
    image = np.zeros((rows, width), dtype=np.uint8)
    for _ in range(60):  # rectangles and slanted bars
        r, c = rng.integers(0, rows - 40), rng.integers(0, width - 80)
        h, w, slant = rng.integers(5, 40), rng.integers(5, 80), rng.integers(-1, 2)
        for k in range(h):
            image[r + k, max(0, c + slant * k):c + slant * k + w] ^= 1
    data = np.packbits(image, axis=1).tobytes()
    sizes = {}
    for name, config in (("plain", CMConfig.for_level(6)),
                         ("image", CMConfig.for_preset_id(
                             CMConfig.DATA_VARIANTS[CMConfig.PRESET_IDS[6]]["binary"]))):
        out = io.BytesIO()
        compress_file(io.BytesIO(data), out, model="cm", config=config)
        assert seqzip.decompress(out.getvalue()) == data
        sizes[name] = len(out.getvalue())
    assert sizes["image"] < 0.95 * sizes["plain"], sizes


def test_a_process_that_only_unpickled_a_config_has_its_class_tables():
    """A Dask worker's first task unpickles the config before anything imports cm_presets,
    which fills CMConfig's tables: for_data on binary data and folded() reach them through
    the registry (before, for_data raised AttributeError there)."""
    import pickle
    import subprocess
    import sys
    code = ("import pickle, sys\n"
            "c = pickle.loads(sys.stdin.buffer.read())\n"
            "print(c.for_data(bytes([0, 97])).image, c.folded().fold_case)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, check=True,
                          input=pickle.dumps(CMConfig.for_level(6)))
    assert done.stdout.split() == [b"1", b"1"]
