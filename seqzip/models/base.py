"""What every model family shares: the model class over a kernel, and config (de)serialisation.

A model predicts a distribution over the file's alphabet (indices 0..A-1), then learns the
symbol that came.  It is fully determined by ``(config, alphabet, seed)``: the decoder rebuilds
it from the stream header and replays every step.  The arithmetic is in the model's *kernel*
(``seqzip._core.Kernel``); this layer validates settings, draws initial parameters and builds
the kernel.

    >>> from seqzip.models import create
    >>> m = create("order2", None, alphabet_size=4, seed=0)
    >>> p = m.predict(); m.update(2)
    >>> p.dtype.name, p.shape
    ('float64', (4,))
"""
from __future__ import annotations

import dataclasses
import functools
import json
import struct
import typing
from typing import Any, TypeVar

import numpy as np

C = TypeVar("C")

MAX_CONFIG_DEPTH = 4  # a config is a flat JSON array: nesting means a corrupt or hostile header
# The levels every family offers (1 fast ... 9 strong) and the default: written here only.
from ..levels import DEFAULT_LEVEL, LEVELS  # noqa: F401  (DEFAULT_LEVEL: re-exported)


class Model:
    """A model of one family over one alphabet.

    Subclasses set ``config_class`` and implement :meth:`make_kernel`.  ``predict()`` and
    ``update(symbol)`` are the kernel's own methods (no Python layer in between); the coder
    uses ``kernel`` directly through its C interface.

        >>> from seqzip.models import create
        >>> m = create("ctw", None, alphabet=b"xy")
        >>> m.alphabet_size, m.stats()["fallbacks"]
        (2, 0)
    """

    config_class: type = object

    def __init__(self, config: Any, alphabet: bytes, seed: int, size_hint: int = 0) -> None:
        if not isinstance(config, self.config_class):
            raise ValueError(f"config must be a {self.config_class.__name__}")
        if not 1 <= len(alphabet) <= 256:
            raise ValueError("the alphabet must hold 1 to 256 byte values")
        self.config = config
        self.alphabet = bytes(alphabet)
        self.seed = seed
        self.size_hint = size_hint  # symbols to be coded, 0 if not known (cm: its memory; ``fit``)
        self.kernel = self.make_kernel()
        self.predict = self.kernel.predict
        self.update = self.kernel.update

    @property
    def alphabet_size(self) -> int:
        return len(self.alphabet)

    def close(self) -> None:
        """Let go of the kernel (its buffers are freed unless someone else holds it); the
        model cannot predict after this.  Calling it again does nothing."""
        self.kernel = self.predict = self.update = None

    def make_kernel(self):
        raise NotImplementedError

    def stats(self) -> dict:
        """What the model reports about itself (for ``bench --verbose``)."""
        return {"fallbacks": self.kernel.fallbacks}


def config_to_bytes(config: Any) -> bytes:
    """Canonical serialisation of a frozen config dataclass: a compact JSON array of its
    values in the order of the sorted field names.

    Keys are left out: the model id and the format version fix the class and so the names,
    and on the neural models' ~20 fields the keys were most of the header: level 6 configs
    shrink from 278 to 87 bytes (glnn) and 325 to 113 (mlstm), 0.010 bits per character on
    alice29.txt.

        >>> from seqzip.models.order2 import Order2Config
        >>> config_to_bytes(Order2Config())
        b'[255,1.0,2]'
    """
    fields = dataclasses.asdict(config)
    # Fields a family gained after its first streams (``ADDED_FIELDS``, in the order they came,
    # in generations of ``ADDED_GENERATIONS``): the newest generations whose fields all hold
    # their defaults are left out, so such configs serialise as the builds before them did.
    added = tuple(getattr(config, "ADDED_FIELDS", ()))
    generations = list(getattr(config, "ADDED_GENERATIONS", (len(added),)))
    defaults = type(config)() if added else None
    while generations and all(fields[name] == getattr(defaults, name)
                              for name in added[sum(generations[:-1]):sum(generations)]):
        generations.pop()
    for name in added[sum(generations):]:
        del fields[name]
    return json.dumps([fields[name] for name in sorted(fields)],
                      separators=(",", ":")).encode("ascii")


@functools.lru_cache(maxsize=256)
def config_from_bytes(cls: type[C], data: bytes) -> C:
    """Rebuild a config from :func:`config_to_bytes` output.

    Configs are frozen, so equal inputs share one instance (cm's gate reads its network's
    config from a string field each time it needs it).

    Raises:
        ValueError: not JSON, not a flat array of the right length, wrong types, or values the
            config rejects.  The container layer turns this into a ``CorruptError``.

        >>> from seqzip.models.order2 import Order2Config
        >>> config_from_bytes(Order2Config, b'[100,1.0,2]').count_limit
        100
    """
    if data.count(b"[") > MAX_CONFIG_DEPTH or data.count(b"{") > 0:
        raise ValueError("model config is not a flat JSON array")
    try:
        values = json.loads(data.decode("ascii"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise ValueError(f"model config is not valid JSON: {exc}") from None
    names = sorted(f.name for f in dataclasses.fields(cls))
    if not isinstance(values, list):
        raise ValueError("model config is not a JSON array")
    # written before some fields were added (``ADDED_FIELDS``, in the order they came, in
    # generations of ``ADDED_GENERATIONS`` fields; one generation unless a family says): those
    # of the later generations are missing and take their defaults
    added = tuple(getattr(cls, "ADDED_FIELDS", ()))
    generations = getattr(cls, "ADDED_GENERATIONS", (len(added),))
    for k in range(len(generations)):
        missing = set(added[sum(generations[:k]):])
        if missing and len(values) == len(names) - len(missing):
            names = [name for name in names if name not in missing]
            break
    if len(values) != len(names):
        raise ValueError(f"model config has {len(values)} values, expected {len(names)}")
    fields = dict(zip(names, values))
    types = field_types(cls)
    for name, value in fields.items():
        want = types[name]
        # JSON has one number type: accept ints where floats are expected, never bools.
        ok = isinstance(value, want) and not (want is not bool and isinstance(value, bool))
        if want is float and isinstance(value, int) and not isinstance(value, bool):
            fields[name] = float(value)
            ok = True
        if not ok:
            raise ValueError(f"model config field {name!r} has type {type(value).__name__}")
    return cls(**fields)


# Ranges of the CTW's size fields (its own config and the "ctwD@MiB" experts of other models):
# a header is untrusted input, so they stop at what the levels use (depth 2-16, 512 MiB) with
# a margin of 1.5x in depth and 2x in memory.
CTW_MAX_DEPTH = 24
CTW_MAX_MEMORY_MB = 1024
TYPED_VERSION = 6  # the first stream format whose configs are typed, named fields


@functools.lru_cache(maxsize=None)
def field_types(cls: type) -> dict[str, type]:
    """Each field of config class ``cls`` and its type (from the annotations: no instance is
    built to learn it).

        >>> from seqzip.models.order2 import Order2Config
        >>> field_types(Order2Config)
        {'count_limit': <class 'int'>, 'escape_weight': <class 'float'>, 'order': <class 'int'>}
    """
    hints = typing.get_type_hints(cls)
    types = {f.name: hints[f.name] for f in dataclasses.fields(cls)}
    for name, kind in types.items():
        if kind not in (int, float, str, bool):
            raise TypeError(f"{cls.__name__}.{name} has type {kind}, not int, float, str or bool")
    return dict(sorted(types.items()))


@functools.lru_cache(maxsize=None)
def preset(cls: type[C], level: int) -> C:
    """``cls.for_level(level)``, built once per family and level (configs are frozen).

        >>> from seqzip.models.order2 import Order2Config
        >>> preset(Order2Config, 3) is preset(Order2Config, 3)
        True
    """
    return cls.for_level(level)


@functools.lru_cache(maxsize=None)
def preset_by_id(cls: type[C], preset_id: int) -> C:
    """The config a header's one-byte preset id names: the level of that number unless the
    family renumbered its changed presets (``for_preset_id``: then ids 1-9 keep naming the
    presets old streams were written with).

        >>> from seqzip.models.order2 import Order2Config
        >>> preset_by_id(Order2Config, 3) == preset(Order2Config, 3)
        True
    """
    by_id = getattr(cls, "for_preset_id", None)
    return by_id(preset_id) if by_id is not None else cls.for_level(preset_id)


def preset_ids(cls: type) -> frozenset[int]:
    """The one-byte preset ids a header of family ``cls`` may hold: the levels, and the ids of
    presets changed since their first streams (``PRESET_IDS``: level -> id; ``PRESETS``: every
    id; at most 45 so that the terse header's flags hold it, ``seqzip.header.terse_version``).

        >>> from seqzip.models.order2 import Order2Config
        >>> sorted(preset_ids(Order2Config))
        [1, 2, 3, 4, 5, 6, 7, 8, 9]
    """
    return frozenset(LEVELS) | frozenset(getattr(cls, "PRESET_IDS", {}).values()) | \
        frozenset(getattr(cls, "VARIANT_IDS", {})) | frozenset(getattr(cls, "PRESETS", {}))


def levels_of_config(cls: type[C], config: C) -> list[int]:
    """Every level whose preset is ``config``, or whose variant for some data it is
    (``VARIANT_IDS``, ``DATA_VARIANTS``) (often one; none for a custom config).

        >>> from seqzip.models.order2 import Order2Config
        >>> levels_of_config(Order2Config, Order2Config.for_level(6))
        [5, 6]
    """
    ids = getattr(cls, "PRESET_IDS", {})
    varied = {base for preset_id, (base, _) in getattr(cls, "VARIANT_IDS", {}).items()
              if preset_by_id(cls, preset_id) == config} | \
        {base for base, kinds in getattr(cls, "DATA_VARIANTS", {}).items()
         if any(preset_by_id(cls, i) == config for i in kinds.values())}
    return [level for level in LEVELS
            if ids.get(level, level) in varied or preset(cls, level) == config]


# -- varints: 7 bits a byte, low first, the top bit set on every byte but the last ----------

MAX_VARINT_BYTES = 10  # enough for any value below 2^64


def pack_varint(value: int) -> bytes:
    """An unsigned integer below 2^64 as a varint.

        >>> pack_varint(5), pack_varint(300)
        (b'\\x05', b'\\xac\\x02')
    """
    if not 0 <= value < 1 << 64:
        raise ValueError(f"varint out of range: {value}")
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


class ShortVarint(ValueError):
    """The buffer ends inside a varint (a caller reading a stream waits for more data).

        >>> try:
        ...     read_varint(b"\\x80", 0)
        ... except ShortVarint:
        ...     print("wait for more")
        wait for more
    """


def read_varint(buf: bytes | bytearray, at: int, limit: int = (1 << 64) - 1) -> tuple[int, int]:
    """The varint at ``buf[at:]`` and the offset past it.

    Raises:
        ShortVarint: ``buf`` ends inside it.
        ValueError: over 10 bytes, not minimal (a trailing zero byte), or above ``limit``.

        >>> read_varint(b"\\xac\\x02", 0)
        (300, 2)
        >>> read_varint(b"\\x80\\x00", 0)
        Traceback (most recent call last):
        ...
        ValueError: varint is not minimal
    """
    value = shift = 0
    for i in range(MAX_VARINT_BYTES):
        if at + i >= len(buf):
            raise ShortVarint("buffer ends inside a varint")
        byte = buf[at + i]
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            if byte == 0 and i:
                raise ValueError("varint is not minimal")
            if value > limit:
                raise ValueError(f"varint {value} is above {limit}")
            return value, at + i + 1
    raise ValueError("varint longer than 10 bytes")


# -- typed, named config fields (format 6) --------------------------------------------------

_FALSE, _TRUE, _INT, _FLOAT, _STR = range(5)  # a field's type tag
_FLOAT64 = struct.Struct("<d")
MAX_NAME = 64
MAX_FIELDS = 128


def config_to_fields(config: Any) -> bytes:
    """A config as format 6 stores it: the number of fields, then per field (sorted by name)
    its name (length byte, ASCII), a type tag and the value: 0 false, 1 true; 2 an int
    (zigzag varint, |v| < 2^63); 3 a float (its float64 bits, little-endian, so it
    round-trips exactly); 4 a string (varint length, UTF-8).  A field is found by its name
    and checked against its declared type, so adding, removing or reordering fields never
    shifts another's value.

        >>> from seqzip.models.order2 import Order2Config
        >>> config_to_fields(Order2Config(count_limit=100))[:16]  # 3 fields; an int of 100
        b'\\x03\\x0bcount_limit\\x02\\xc8\\x01'
    """
    types = field_types(type(config))
    out = bytearray(pack_varint(len(types)))
    for name, kind in types.items():
        value = getattr(config, name)
        out += bytes([len(name)]) + name.encode("ascii")
        if kind is bool:
            out.append(_TRUE if value else _FALSE)
        elif kind is int:
            if not -(1 << 63) <= value < 1 << 63:
                raise ValueError(f"config field {name!r} is out of the 64-bit range")
            out.append(_INT)
            out += pack_varint(value << 1 if value >= 0 else (-value << 1) - 1)
        elif kind is float:
            out.append(_FLOAT)
            out += _FLOAT64.pack(value)
        else:
            data = value.encode("utf-8")
            out.append(_STR)
            out += pack_varint(len(data)) + data
    return bytes(out)


def config_from_fields(cls: type[C], data: bytes) -> C:
    """Rebuild a config from :func:`config_to_fields` output.  A field the data does not name
    takes its default (a field added to a family later must default to the behaviour of the
    streams written before it).

    Raises:
        ValueError: truncated or trailing bytes, an unknown, repeated or unsorted name, a type
            tag that is not the field's type, or values the config rejects.

        >>> from seqzip.models.order2 import Order2Config
        >>> data = config_to_fields(Order2Config(order=1))
        >>> config_from_fields(Order2Config, data) == Order2Config(order=1)
        True
        >>> config_from_fields(Order2Config, data[:-1])
        Traceback (most recent call last):
        ...
        ValueError: model config ends inside a field
    """
    types = field_types(cls)
    try:
        count, at = read_varint(data, 0, MAX_FIELDS)
        values, last = {}, ""
        for _ in range(count):
            size = data[at]
            name = data[at + 1:at + 1 + size].decode("ascii")
            at += 1 + size
            if not 1 <= size <= MAX_NAME or len(name) != size or name not in types or \
                    name <= last:
                raise ValueError(f"model config has an unknown, repeated or unsorted field "
                                 f"{name!r}")
            last, kind, tag = name, types[name], data[at]
            at += 1
            if kind is bool and tag in (_FALSE, _TRUE):
                values[name] = tag == _TRUE
            elif kind is int and tag == _INT:
                raw, at = read_varint(data, at)
                values[name] = raw >> 1 if not raw & 1 else -((raw + 1) >> 1)
            elif kind is float and tag == _FLOAT:
                if at + 8 > len(data):
                    raise IndexError
                (values[name],) = _FLOAT64.unpack_from(data, at)
                at += 8
            elif kind is str and tag == _STR:
                size, at = read_varint(data, at, len(data))
                if at + size > len(data):
                    raise IndexError
                values[name] = data[at:at + size].decode("utf-8")
                at += size
            else:
                raise ValueError(f"model config field {name!r} has type tag {tag}, not "
                                 f"{kind.__name__}")
    except (IndexError, ShortVarint):
        raise ValueError("model config ends inside a field") from None
    except UnicodeDecodeError:
        raise ValueError("model config holds a name or string that does not decode") from None
    if at != len(data):
        raise ValueError(f"model config has {len(data) - at} bytes after its fields")
    return cls(**values)


def config_to_header(cls: type[C], config: C, version: int = TYPED_VERSION) -> bytes:
    """The config as a header of format ``version`` (3 or later) stores it: one byte, the
    level, when ``config`` is one of the family's level presets (``cls.for_level``);
    otherwise a zero byte followed by :func:`config_to_fields` (versions 3-5:
    :func:`config_to_bytes`).  Levels with equal configs store the lowest.

    The presets are therefore part of the file format: ``tests/test_container.py`` pins them,
    and changing one needs a new id (``PRESET_IDS``, the old id keeping the old preset) or a
    new format version that keeps the old table.  A preset costs one
    byte where its JSON took 85-250 (the context-mixing levels), 0.01-0.5 bits per character
    on files of 150 KB down to 4 KB.

        >>> from seqzip.models.order2 import Order2Config
        >>> config_to_header(Order2Config, Order2Config.for_level(4))
        b'\\x04'
        >>> config_to_header(Order2Config, Order2Config.for_level(6))  # 5 and 6 are alike
        b'\\x05'
        >>> config_to_header(Order2Config, Order2Config(count_limit=100), 4)
        b'\\x00[100,1.0,2]'
    """
    renumbered = getattr(cls, "PRESET_IDS", {})
    for level in LEVELS:  # the first match: the presets above it need not be built
        if preset(cls, level) == config:
            return bytes([renumbered.get(level, level)])
    for preset_id in sorted(preset_ids(cls)):  # an old preset, or a variant for some data
        if preset_by_id(cls, preset_id) == config:
            return bytes([preset_id])
    return b"\x00" + (config_to_fields(config) if version >= TYPED_VERSION
                       else config_to_bytes(config))


def config_from_header(cls: type[C], data: bytes, version: int) -> C:
    """Rebuild a config from a header of format ``version`` (2: the JSON array alone; 3-5:
    :func:`config_to_header` with a JSON array; 6: with typed fields).

    Raises:
        ValueError: a config that does not parse or that the family rejects.

        >>> from seqzip.models.order2 import Order2Config
        >>> config_from_header(Order2Config, b"\\x02", 3) == Order2Config.for_level(2)
        True
    """
    if version == 2:
        return config_from_bytes(cls, data)
    if not data:
        raise ValueError("model config is empty")
    if data[0] == 0:
        if version >= TYPED_VERSION:
            return config_from_fields(cls, data[1:])
        return config_from_bytes(cls, data[1:])
    if len(data) != 1:
        raise ValueError(f"model config names level {data[0]} ({len(data)} bytes)")
    known = preset_ids(cls)
    if data[0] not in known:  # a header under its check: a newer build's preset
        raise ValueError(f"model config names preset {data[0]}, which this build does not know "
                         f"(it knows up to {max(known)}): a newer seqzip wrote it, or it is "
                         "damaged")
    return preset_by_id(cls, data[0])


def check_output_layer(config: Any) -> None:
    """Range checks of the fields every online network shares (its output layer's QDH writing
    step and the experts' gates: ``seqzip._kernels.online``).

        >>> from types import SimpleNamespace
        >>> check_output_layer(SimpleNamespace(writing_memory=0, writing_eps=1.0,
        ...                    writing_prior=1.0, rate_beta=1.0, beta_eps=1.0))
        Traceback (most recent call last):
        ...
        ValueError: writing_memory must be in [1, 16777216], got 0
    """
    check_range("writing_memory", config.writing_memory, 1, 1 << 24)
    check_range("writing_eps", config.writing_eps, 1e-12, 1e6)
    check_range("writing_prior", config.writing_prior, 0.0, 1e9)
    check_range("rate_beta", config.rate_beta, 0.0, 1e3)
    check_range("beta_eps", config.beta_eps, 1e-12, 1e6)


def check_range(name: str, value: float, low: float, high: float) -> None:
    """Raise ``ValueError`` unless ``low <= value <= high``.

        >>> check_range("rate", 2.0, 0.0, 1.0)
        Traceback (most recent call last):
        ...
        ValueError: rate must be in [0.0, 1.0], got 2.0
    """
    if not (low <= value <= high):
        raise ValueError(f"{name} must be in [{low}, {high}], got {value!r}")


def as_array(values) -> np.ndarray:
    """float64, C-contiguous copy (initial parameters handed to a kernel).

        >>> as_array([1, 2]).dtype.name
        'float64'
    """
    return np.array(values, dtype=np.float64, order="C")
