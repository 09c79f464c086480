"""One line per target, the same in every benchmark of `make bench`:

    [PASS] <target> | figure: <what this run measured> | against: <the rival or floor it races>

then a closing line, ``PASS: all N targets met`` or ``FAIL: K of N targets missed``; the
benchmark exits 1 when any target is missed."""

from __future__ import annotations


class Targets:
    def __init__(self, bench: str):
        self.bench = bench
        self.rows: list[tuple[str, str, str, bool]] = []

    def check(self, target: str, figure: str, against: str, ok: bool) -> bool:
        self.rows.append((target, figure, against, bool(ok)))
        return bool(ok)

    def report(self) -> int:
        """Print every target and the verdict; the exit status (0 all met, 1 any missed)."""
        print(f"\ntargets ({self.bench})")
        for target, figure, against, ok in self.rows:
            print(f"  [{'PASS' if ok else 'FAIL'}] {target} | figure: {figure} | against: {against}")
        missed = sum(not ok for *_, ok in self.rows)
        print(
            f"{'FAIL' if missed else 'PASS'}: "
            + (f"{missed} of {len(self.rows)} targets missed" if missed else f"all {len(self.rows)} targets met")
        )
        return 1 if missed else 0
