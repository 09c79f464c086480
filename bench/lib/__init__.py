"""What the scripts of bench/ share: where the repository is and where a new run's results go
(``results_folder``), results files (``results_io``), target lines (``verdict``), and generated
inputs (``page_generator``)."""

from pathlib import Path

from bench.lib.results_io import folder_name

ROOT = Path(__file__).resolve().parents[2]
"""The repository root (this checkout)."""


def results_folder(topic: str, label: str) -> Path:
    """A new run's folder, ``bench/results/TOPIC/DATE-COMMIT-LABEL`` (today, HEAD): runs of one
    script on one day at one commit share it (bench/results/README.md)."""
    return ROOT / "bench" / "results" / topic / folder_name(label)
