"""Mind2Web records from the Hugging Face hub (``hf:NAME:SPLIT``), through ``datasets``; they
become tasks in ``mind2web.data`` (which imports this module, never the other way)."""

from __future__ import annotations

import os
import socket
from typing import Any

from webagent.errors import UserError, first_line

HUB_TRAIN_ONLY = "osunlp/mind2web"  # the hub copy has no test splits


def hub_split(source: str, name: str, in_source: str, asked: str | None) -> str:
    """The split the user named (in the source or as --split); never a silent default."""
    if in_source and asked and in_source != asked:
        raise UserError(f"{source!r} names split {in_source!r} but --split is {asked!r}: name one")
    chosen = asked or in_source
    if not chosen:
        raise UserError(f"{source!r}: name the split to read, e.g. --split train or '{source}:train'")
    if name.lower() == HUB_TRAIN_ONLY and chosen != "train":
        raise UserError(
            f"the hub's {name} holds only the train split, not {chosen!r}; the test splits (test_task, "
            "test_website, test_domain) are a separate download from the Mind2Web project: unzip it and "
            "pass the folder, e.g. --data DIR --split test_website"
        )
    return chosen


def _hub_reachable(host: str = "huggingface.co", timeout_s: float = 3.0) -> bool:
    try:
        with socket.create_connection((host, 443), timeout=timeout_s):
            return True
    except OSError:
        return False


def load_hf_records(name: str, split: str = "train", **load_kwargs: Any) -> Any:
    """The raw records of ``datasets.load_dataset(name, split=split, **load_kwargs)`` (a
    ``datasets.Dataset``); ``load_dataset("json", data_files=...)`` works too."""
    if "/" in name and not _hub_reachable():
        # Without this, `datasets` retries for ~30 s before failing; offline mode (read when
        # the hub libraries are imported) still loads a dataset already in the local cache.
        os.environ["HF_HUB_OFFLINE"] = "1"
        os.environ["HF_DATASETS_OFFLINE"] = "1"
    try:
        import datasets
    except ImportError as e:  # pragma: no cover - datasets is a dependency
        raise UserError("loading from the hub needs the 'datasets' package (pip install datasets)") from e
    try:
        ds = datasets.load_dataset(name, split=split, **load_kwargs)
    except (ConnectionError, OSError, TimeoutError) as e:
        raise UserError(
            f"could not load dataset {name!r} (split {split!r}) through the Hugging Face hub: "
            f"{type(e).__name__}: {first_line(e, 'no details')}. "
            "Offline? Download the data elsewhere and pass its directory "
            "(DIR/test_task/*.json ...) or a .json/.jsonl file instead."
        ) from e
    except ValueError as e:  # e.g. unknown split
        raise UserError(f"could not load dataset {name!r} split {split!r}: {e}") from e
    return ds
