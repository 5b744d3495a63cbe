"""seqzip: lossless compression with online-trained sequence models and a range coder.

    >>> import seqzip
    >>> data = b"to be or not to be, that is the question. " * 100
    >>> packed = seqzip.compress(data)
    >>> assert seqzip.decompress(packed) == data and len(packed) < len(data) // 4
"""
from .api import (SeqzipCompressor, SeqzipDecompressor, SeqzipFile, compress, compress_file,
                  decompress, decompress_file, open)
from .errors import (CorruptError, NotSeqzipError, SeqzipError, TruncatedError,
                     UnsupportedVersionError)
from .models import DEFAULT_LEVEL, DEFAULT_MODEL, MODELS

__version__ = "0.1.0"

__all__ = ["compress", "decompress", "open", "compress_file", "decompress_file",
           "SeqzipCompressor", "SeqzipDecompressor", "SeqzipFile", "SeqzipError",
           "NotSeqzipError", "UnsupportedVersionError", "CorruptError", "TruncatedError",
           "MODELS", "DEFAULT_MODEL", "DEFAULT_LEVEL", "__version__"]
