"""What the embedded server needs to know about a GGUF file before loading it: the model's
name (for messages), its KV-cache size per token (to bound parallel slots by memory), and
a content hash (for cache keys), memoised by path + size + mtime.

Only the header's scalar metadata is read (arrays such as the vocabulary are skipped), so
this costs milliseconds; a file that does not parse yields empty metadata and the server
itself reports the problem.
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
from dataclasses import dataclass, field
from pathlib import Path

_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
_STRING, _ARRAY = 8, 9


@dataclass
class GGUFInfo:
    path: Path
    metadata: dict = field(default_factory=dict)  # scalar keys only

    @property
    def name(self) -> str:
        """E.g. "SmolLM2-135M" from general.basename + general.size_label, else the file name."""
        base = self.metadata.get("general.basename")
        size = self.metadata.get("general.size_label")
        if base and size:
            short = f"{base}-{size}"
            # The header is often lower-case ("smollm2"); the file name keeps the casing.
            return self.path.name[: len(short)] if self.path.name.lower().startswith(short.lower()) else short
        return self.metadata.get("general.name") or self.path.stem

    def kv_bytes_per_token(self) -> int | None:
        """f16 K and V for every layer, or None when the header lacks the numbers."""
        arch = self.metadata.get("general.architecture")
        m = self.metadata
        try:
            layers = int(m[f"{arch}.block_count"])
            heads = int(m[f"{arch}.attention.head_count"])
            kv_heads = int(m.get(f"{arch}.attention.head_count_kv", heads))
            head_dim = int(m.get(f"{arch}.attention.key_length") or m[f"{arch}.embedding_length"] // heads)
        except (KeyError, TypeError, ValueError, ZeroDivisionError):
            return None
        return 2 * layers * kv_heads * head_dim * 2


def _read_string(f) -> str:
    (n,) = struct.unpack("<Q", f.read(8))
    return f.read(n).decode("utf-8", errors="replace")


def _skip_or_read(f, vtype: int):
    if vtype in _SCALARS:
        fmt = _SCALARS[vtype]
        return struct.unpack(fmt, f.read(struct.calcsize(fmt)))[0]
    if vtype == _STRING:
        return _read_string(f)
    if vtype == _ARRAY:
        item_type, count = struct.unpack("<IQ", f.read(12))
        if item_type in _SCALARS:
            f.seek(count * struct.calcsize(_SCALARS[item_type]), 1)
        else:
            for _ in range(count):
                _skip_or_read(f, item_type)
        return None
    raise ValueError(f"unknown GGUF value type {vtype}")


def read_gguf_info(path: str | Path) -> GGUFInfo:
    info = GGUFInfo(Path(path))
    try:
        with open(path, "rb") as f:
            if f.read(4) != b"GGUF":
                return info
            (version,) = struct.unpack("<I", f.read(4))
            if version < 2:
                return info
            _tensors, kv_count = struct.unpack("<QQ", f.read(16))
            for _ in range(min(kv_count, 100_000)):
                key = _read_string(f)
                (vtype,) = struct.unpack("<I", f.read(4))
                value = _skip_or_read(f, vtype)
                if value is not None:
                    info.metadata[key] = value
    except (OSError, struct.error, ValueError, MemoryError, OverflowError):
        pass  # keep what was read; the server reports a broken file in its own words
    return info


def _hash_memo(path: str | Path) -> tuple[Path, str, dict[str, str]]:
    """$WEBAGENT_HOME/gguf-hashes.json, the file's key in it (path, size, mtime), what it holds."""
    from webagent.llm.cache import webagent_home

    p = Path(path).resolve()
    st = p.stat()
    store = webagent_home() / "gguf-hashes.json"
    try:
        known = json.loads(store.read_text())
    except (OSError, ValueError):
        known = {}
    return store, f"{p}|{st.st_size}|{st.st_mtime_ns}", known


def _save_memo(store: Path, known: dict[str, str]) -> None:
    try:
        store.parent.mkdir(parents=True, exist_ok=True)
        tmp = store.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(known))
        os.replace(tmp, store)  # atomic: concurrent starts never read half a file
    except OSError:
        pass


def remember_hash(path: str | Path, sha256: str) -> None:
    """Seed the memo with a hash just checked (a pulled model), so the first start does not re-read it."""
    store, key, known = _hash_memo(path)
    known[key] = sha256
    _save_memo(store, known)


def file_hash(path: str | Path) -> str:
    """sha256 of the file's bytes, computed once per (path, size, mtime) and remembered
    in $WEBAGENT_HOME/gguf-hashes.json, so a command does not re-read 100 MB each start."""
    store, key, known = _hash_memo(path)
    if key in known:
        return known[key]
    with open(path, "rb") as f:
        known[key] = hashlib.file_digest(f, "sha256").hexdigest()
    _save_memo(store, known)
    return known[key]
