"""What the scripts of bench/ share: where the repository is, results files
(``results_io``), target lines (``verdict``), and generated inputs (``page_generator``)."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
"""The repository root (this checkout)."""
