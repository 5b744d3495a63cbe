"""seqzip: lossless compression with online-trained sequence models and a range coder.

    >>> import seqzip
    >>> data = b"to be or not to be, that is the question. " * 100
    >>> packed = seqzip.compress(data)
    >>> assert seqzip.decompress(packed) == data and len(packed) < len(data) // 4

The names below are imported on first use, so that ``import seqzip`` (and ``seqzip --version``)
loads neither numpy nor any model.
"""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_LAZY = {
    "compress": "api", "decompress": "api", "open": "api", "compress_file": "api",
    "decompress_file": "api", "SeqzipCompressor": "api", "SeqzipDecompressor": "api",
    "SeqzipFile": "api", "Limits": "api",
    "SeqzipError": "errors", "NotSeqzipError": "errors", "UnsupportedVersionError": "errors",
    "CorruptError": "errors", "TruncatedError": "errors", "LimitError": "errors",
    "DictionaryError": "errors", "Predictor": "predictor",
    "MODELS": "models", "DEFAULT_MODEL": "models", "DEFAULT_LEVEL": "models",
}

__all__ = [*_LAZY, "__version__"]

if TYPE_CHECKING:
    from .api import (Limits, SeqzipCompressor, SeqzipDecompressor, SeqzipFile, compress,
                      compress_file, decompress, decompress_file, open)
    from .errors import (CorruptError, DictionaryError, LimitError, NotSeqzipError, SeqzipError,
                         TruncatedError, UnsupportedVersionError)
    from .models import DEFAULT_LEVEL, DEFAULT_MODEL, MODELS
    from .predictor import Predictor


def __getattr__(name: str) -> Any:
    module_name = _LAZY.get(name)
    if module_name is None:
        raise AttributeError(f"module 'seqzip' has no attribute {name!r}")
    try:
        module = importlib.import_module(f".{module_name}", __name__)
    except ImportError as exc:
        if "seqzip._" not in str(exc):
            raise
        # The usual cause: Python found this source tree (the current directory) before the
        # installed package, and the tree has no compiled kernels.
        raise ImportError(f"{exc}: seqzip's compiled kernels are missing from {__path__[0]}; "
                          "build them in place (python3 -m pip install -e . or python3 "
                          "setup.py build_ext --inplace) or run from another directory"
                          ) from exc
    value = getattr(module, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY])
