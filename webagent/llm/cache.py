"""Persistent SQLite cache for model replies and derived artefacts (gist memories).

WAL mode plus a busy timeout makes it safe for several processes at once; every write
is an INSERT OR REPLACE inside a transaction, so a crash never leaves a half-written
entry. One connection per Cache, shared by threads under a lock. The async client keeps
SQLite off its event loop: it reads through asyncio.to_thread, and writes with
``put_later``, which hands the entry to one writer thread and returns at once (the
entry is readable from that moment; the thread commits whatever has queued up in one
transaction; ``flush``/``close`` and interpreter exit wait for it).
"""

from __future__ import annotations

import atexit
import hashlib
import json
import os
import queue
import sqlite3
import sys
import threading
import time
import weakref
from pathlib import Path


def webagent_home() -> Path:
    """The one user directory: $WEBAGENT_HOME, else ~/.cache/webagent."""
    home = os.environ.get("WEBAGENT_HOME") or os.path.join(os.path.expanduser("~"), ".cache", "webagent")
    return Path(home)


def content_hash(*parts: object) -> str:
    """A stable hash of JSON-serialisable parts (dict keys sorted)."""
    blob = json.dumps(parts, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


_INSERT = "INSERT OR REPLACE INTO entries (namespace, key, value, created) VALUES (?,?,?,?)"


class Cache:
    """Key/value store in namespaces ("llm", "memory", ...); values are JSON."""

    def __init__(self, path: str | Path | None = None):
        if path is None:
            path = webagent_home() / "cache.sqlite"
        self.path = Path(path)
        if str(path) != ":memory:":
            self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(path), timeout=30.0, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA busy_timeout=30000")
        self._db.execute("PRAGMA synchronous=NORMAL")
        # Deleted entries are overwritten, not left in free pages: `webagent cache clear` really
        # removes what it removes (an old entry may hold a reply that quoted a secret).
        self._db.execute("PRAGMA secure_delete=ON")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS entries ("
            " namespace TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL, created REAL NOT NULL,"
            " PRIMARY KEY (namespace, key))"
        )
        self._pending: dict[tuple[str, str], str] = {}  # handed to the writer, not committed yet
        self._pending_lock = threading.Lock()
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._writer: threading.Thread | None = None
        self.write_errors = 0  # entries the writer thread could not commit

    def get(self, namespace: str, key: str):
        with self._pending_lock:
            blob = self._pending.get((namespace, key))
        if blob is not None:
            return json.loads(blob)
        with self._lock:
            row = self._db.execute("SELECT value FROM entries WHERE namespace=? AND key=?", (namespace, key)).fetchone()
        return None if row is None else json.loads(row[0])

    def put(self, namespace: str, key: str, value) -> None:
        blob = json.dumps(value, ensure_ascii=False)
        with self._lock:
            self._db.execute(_INSERT, (namespace, key, blob, time.time()))

    def put_later(self, namespace: str, key: str, value) -> None:
        """Like ``put``, without waiting for SQLite (see the module docstring)."""
        blob = json.dumps(value, ensure_ascii=False)
        with self._pending_lock:
            self._pending[(namespace, key)] = blob
            if self._writer is None:
                self._writer = threading.Thread(target=self._write_queued, name="cache-writer", daemon=True)
                self._writer.start()
                _open_caches.add(self)
        self._queue.put((namespace, key, blob))

    def _write_queued(self) -> None:
        while True:
            batch = [self._queue.get()]
            while True:
                try:
                    batch.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            entries = [item for item in batch if isinstance(item, tuple)]
            if entries:
                now = time.time()
                try:
                    with self._lock:
                        self._db.execute("BEGIN")
                        try:
                            self._db.executemany(_INSERT, [(ns, k, blob, now) for ns, k, blob in entries])
                            self._db.execute("COMMIT")
                        except BaseException:
                            self._db.execute("ROLLBACK")
                            raise
                except Exception as exc:  # noqa: BLE001 - a cache that cannot be written is a cache miss later
                    self.write_errors += len(entries)
                    if self.write_errors == len(entries):
                        print(f"webagent: could not write the cache {self.path}: {exc}", file=sys.stderr)
                with self._pending_lock:
                    for ns, k, blob in entries:
                        if self._pending.get((ns, k)) is blob:
                            del self._pending[(ns, k)]
            for item in batch:
                if isinstance(item, threading.Event):
                    item.set()  # a flush waiting for everything queued before it
                elif item is None:
                    return

    def flush(self) -> None:
        """Wait until every ``put_later`` so far is committed."""
        if self._writer is not None and self._writer.is_alive():
            done = threading.Event()
            self._queue.put(done)
            done.wait()

    def count(self, namespace: str | None = None) -> int:
        self.flush()
        with self._lock:
            if namespace is None:
                return self._db.execute("SELECT COUNT(*) FROM entries").fetchone()[0]
            return self._db.execute("SELECT COUNT(*) FROM entries WHERE namespace=?", (namespace,)).fetchone()[0]

    def namespaces(self) -> dict[str, int]:
        """Entries per namespace."""
        self.flush()
        with self._lock:
            rows = self._db.execute("SELECT namespace, COUNT(*) FROM entries GROUP BY namespace ORDER BY namespace")
            return dict(rows.fetchall())

    def size_bytes(self) -> int:
        """The database on disk, write-ahead log included."""
        self.flush()
        if str(self.path) == ":memory:":
            return 0
        return sum(p.stat().st_size for p in (self.path, Path(f"{self.path}-wal")) if p.exists())

    def clear(self, namespace: str | None = None) -> int:
        """Delete every entry (of one namespace); returns how many went."""
        self.flush()
        with self._lock:
            if namespace is None:
                gone = self._db.execute("DELETE FROM entries").rowcount
            else:
                gone = self._db.execute("DELETE FROM entries WHERE namespace=?", (namespace,)).rowcount
            self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            if namespace is None:
                self._db.execute("VACUUM")
        return gone

    def close(self) -> None:
        if self._writer is not None and self._writer.is_alive():
            self._queue.put(None)
            self._writer.join()
        _open_caches.discard(self)
        with self._lock:
            self._db.close()


# Caches with a writer thread: their queued entries are committed before the interpreter exits.
_open_caches: weakref.WeakSet[Cache] = weakref.WeakSet()


@atexit.register
def _flush_open_caches() -> None:
    for cache in list(_open_caches):
        try:
            cache.flush()
        except Exception:  # noqa: BLE001 - a closed database: nothing left to write
            pass
