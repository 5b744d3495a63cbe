"""Model families and their registry.

Each family has a name (used by ``--model``), a one-byte id stored in the stream header, a
frozen config dataclass with ``for_level(level)``, and a model class built from
``(config, alphabet, seed)`` around its kernel.  The id and the config's serialisation are part
of the file format: never reuse or renumber an id.  A family's module is imported only when the
family is used (``seqzip --version`` imports none).  Adding a family is one module plus one
``register`` line here.

    >>> spec = MODELS["order2"]
    >>> spec.model_id, spec.config_class.for_level(6).order
    (1, 2)
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

from ..levels import DEFAULT_MODEL
from .base import (DEFAULT_LEVEL, LEVELS, Model, config_from_bytes, config_from_header,
                   config_to_bytes, config_to_header, levels_of_config, preset)


@dataclass(frozen=True)
class ModelSpec:
    """See the module docstring.

        >>> MODELS["cm"].model_id, MODELS["cm"].config_class.__name__
        (7, 'CMConfig')
    """
    name: str
    model_id: int  # stored in the header; part of the format
    module: str  # the family's module inside seqzip.models
    config_name: str
    model_name: str
    summary: str

    def _module(self):
        return importlib.import_module(f"{__name__}.{self.module}")

    @property
    def config_class(self) -> type:
        return getattr(self._module(), self.config_name)

    @property
    def model_class(self) -> type:
        return getattr(self._module(), self.model_name)


MODELS: dict[str, ModelSpec] = {}


def register(spec: ModelSpec) -> None:
    """See the module docstring.

        >>> register(MODELS["order2"])
        Traceback (most recent call last):
        ...
        RuntimeError: model 'order2' or id 1 registered twice
    """
    if spec.name in MODELS or any(s.model_id == spec.model_id for s in MODELS.values()):
        raise RuntimeError(f"model {spec.name!r} or id {spec.model_id} registered twice")
    MODELS[spec.name] = spec


register(ModelSpec("order2", 1, "order2", "Order2Config", "Order2Model",
                   "adaptive order-2 context model blended to orders 1 and 0"))
register(ModelSpec("ctw", 2, "ctw", "CTWConfig", "CTWModel",
                   "context-tree weighting over bytes, binary decomposition, KT estimators"))
register(ModelSpec("glnn", 3, "glnn", "GLNNConfig", "GLNNModel",
                   "gated leaky neural network trained online with Ollivier's metrics"))
register(ModelSpec("lstm", 4, "lstm", "LSTMConfig", "LSTMModel",
                   "LSTM trained online while coding (Adam or a Riemannian step)"))
register(ModelSpec("mlstm", 5, "lstm", "MLSTMConfig", "MLSTMModel",
                   "Krause's multiplicative LSTM trained online while coding"))
register(ModelSpec("mrnn", 6, "lstm", "MRNNConfig", "MRNNModel",
                   "factorised multiplicative RNN trained online while coding"))
register(ModelSpec("cm", 7, "cm", "CMConfig", "CMModel",
                   "context mixing: a bank of experts mixed per bit, gated by an online "
                   "network (GLNN, mLSTM at the strongest levels), with secondary estimation"))
register(ModelSpec("relu-rnn", 8, "relu_rnn", "ReLURNNConfig", "ReLURNNModel",
                   "ReLU RNN trained online while coding by path-SGD (or plain SGD)"))


def spec_by_name(name: str) -> ModelSpec:
    """Raises ``ValueError`` naming the known models when ``name`` is unknown.

        >>> spec_by_name("ctw").model_id
        2
    """
    try:
        return MODELS[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown model {name!r}; choose from {', '.join(sorted(MODELS))}") from None


def spec_by_id(model_id: int) -> ModelSpec | None:
    """See the module docstring.

        >>> spec_by_id(3).name, spec_by_id(200)
        ('glnn', None)
    """
    for spec in MODELS.values():
        if spec.model_id == model_id:
            return spec
    return None


def check_level(level: int) -> int:
    """See the module docstring.

        >>> check_level(10)
        Traceback (most recent call last):
        ...
        ValueError: level must be an integer from 1 to 9, got 10
    """
    if isinstance(level, bool) or not isinstance(level, int) or level not in LEVELS:
        raise ValueError(f"level must be an integer from {LEVELS[0]} to {LEVELS[-1]}, "
                         f"got {level!r}")
    return level


def make_config(name: str, level: int = DEFAULT_LEVEL) -> Any:
    """The config of model ``name`` at ``level`` (1 fast ... 9 strong).

        >>> make_config("ctw", 1) == MODELS["ctw"].config_class.for_level(1)
        True
    """
    return preset(spec_by_name(name).config_class, check_level(level))


def create(name: str, config: Any | None = None, *, alphabet: bytes | None = None,
           alphabet_size: int | None = None, seed: int = 0, size_hint: int = 0) -> Model:
    """Build model ``name`` (its level-6 config when ``config`` is None) over ``alphabet``
    (the byte values it codes, sorted) or, for models that only need its size, over
    ``alphabet_size`` symbols.  ``size_hint``: the symbols it will code, when known (0: not
    known); it changes how memory is taken and, for a cm config with ``fit``, the size of its
    hashed table (so encoder and decoder must give the same: the stream's length).

        >>> create("order2", make_config("order2", 1), alphabet=b"ab").predict().tolist()
        [0.5, 0.5]
    """
    spec = spec_by_name(name)
    if config is None:
        config = preset(spec.config_class, DEFAULT_LEVEL)
    if alphabet is None:
        if alphabet_size is None:
            raise ValueError("give the alphabet or its size")
        alphabet = bytes(range(alphabet_size))
    return spec.model_class(config, alphabet, seed, size_hint)


__all__ = ["MODELS", "ModelSpec", "Model", "DEFAULT_MODEL", "DEFAULT_LEVEL", "LEVELS",
           "spec_by_name", "spec_by_id", "make_config", "create", "check_level",
           "config_to_bytes", "config_from_bytes", "config_to_header", "config_from_header",
           "preset", "levels_of_config"]
