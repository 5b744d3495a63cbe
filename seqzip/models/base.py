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
import json
from typing import Any, TypeVar

import numpy as np

C = TypeVar("C")

MAX_CONFIG_DEPTH = 4  # a config is a flat JSON array: nesting means a corrupt or hostile header


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

    def __init__(self, config: Any, alphabet: bytes, seed: int) -> None:
        if not isinstance(config, self.config_class):
            raise ValueError(f"config must be a {self.config_class.__name__}")
        if not 1 <= len(alphabet) <= 256:
            raise ValueError("the alphabet must hold 1 to 256 byte values")
        self.config = config
        self.alphabet = bytes(alphabet)
        self.seed = seed
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
    # Fields a family gained after its first streams (``ADDED_FIELDS``) are left out while all
    # of them hold their defaults, so that such configs serialise as they always did.
    added = getattr(config, "ADDED_FIELDS", ())
    defaults = type(config)() if added else None
    if added and all(fields[name] == getattr(defaults, name) for name in added):
        for name in added:
            del fields[name]
    return json.dumps([fields[name] for name in sorted(fields)],
                      separators=(",", ":")).encode("ascii")


def config_from_bytes(cls: type[C], data: bytes) -> C:
    """Rebuild a config from :func:`config_to_bytes` output.

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
    added = set(getattr(cls, "ADDED_FIELDS", ()))
    if added and len(values) == len(names) - len(added):  # written without them: defaults
        names = [name for name in names if name not in added]
    if len(values) != len(names):
        raise ValueError(f"model config has {len(values)} values, expected {len(names)}")
    fields = dict(zip(names, values))
    for name, value in fields.items():
        want = type(getattr(cls(), name))
        # JSON has one number type: accept ints where floats are expected, never bools.
        ok = isinstance(value, want) and not (want is not bool and isinstance(value, bool))
        if want is float and isinstance(value, int) and not isinstance(value, bool):
            fields[name] = float(value)
            ok = True
        if not ok:
            raise ValueError(f"model config field {name!r} has type {type(value).__name__}")
    return cls(**fields)


PRESET_LEVELS = range(1, 10)
# Ranges of the CTW's size fields (its own config and the "ctwD@MiB" experts of other models):
# a header is untrusted input, so they stop at what the levels use (depth 2-16, 512 MiB) with
# a margin of 1.5x in depth and 2x in memory.
CTW_MAX_DEPTH = 24
CTW_MAX_MEMORY_MB = 1024


def config_to_header(cls: type[C], config: C) -> bytes:
    """The config as a version-3 header stores it: one byte, the level, when ``config`` is one
    of the family's level presets (``cls.for_level``); otherwise a zero byte followed by
    :func:`config_to_bytes`.  Levels with equal configs store the lowest.

    The presets are therefore part of the file format: ``tests/test_container.py`` pins them,
    and changing one needs a new format version that keeps the old table.  A preset costs one
    byte where its JSON took 85-250 (the context-mixing levels), 0.01-0.5 bits per character
    on files of 150 KB down to 4 KB.

        >>> from seqzip.models.order2 import Order2Config
        >>> config_to_header(Order2Config, Order2Config.for_level(4))
        b'\\x04'
        >>> config_to_header(Order2Config, Order2Config.for_level(6))  # 5 and 6 are alike
        b'\\x05'
        >>> config_to_header(Order2Config, Order2Config(count_limit=100))
        b'\\x00[100,1.0,2]'
    """
    for level in PRESET_LEVELS:
        if cls.for_level(level) == config:
            return bytes([level])
    return b"\x00" + config_to_bytes(config)


def config_from_header(cls: type[C], data: bytes, version: int) -> C:
    """Rebuild a config from a header of format ``version`` (2: the JSON array alone; 3:
    :func:`config_to_header`).

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
        return config_from_bytes(cls, data[1:])
    if len(data) != 1 or data[0] not in PRESET_LEVELS:
        raise ValueError(f"model config names level {data[0]} ({len(data)} bytes)")
    return cls.for_level(data[0])


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
