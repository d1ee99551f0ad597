"""Draws bench/results/latest.png from latest.json (written by zoolock-bench):
rates per contestant for scenarios A, B(2/4/8) and C, one panel per
forceSync setting, on a log scale so that kazoo and the 64-lock figures fit.

    .venv/bin/python bench/chart.py [latest.json] [latest.png]
"""

import json
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # no display needed
import matplotlib.pyplot as plt  # noqa: E402

HERE = Path(__file__).resolve().parent
SCENARIOS = ["A", "B2", "B4", "B8", "C"]
LABELS = {"A": "A: 1 client", "B2": "B: 2 procs", "B4": "B: 4 procs", "B8": "B: 8 procs", "C": "C: 64 locks"}


def main():
    source = Path(sys.argv[1]) if len(sys.argv) > 1 else HERE / "results/latest.json"
    target = Path(sys.argv[2]) if len(sys.argv) > 2 else source.with_suffix(".png")
    rows = json.loads(source.read_text())
    contestants = list(dict.fromkeys(r["contestant"] for r in rows))
    syncs = [s for s in (True, False) if any(r["force_sync"] == s for r in rows)]
    fig, axes = plt.subplots(len(syncs), 1, figsize=(12, 4.5 * len(syncs)), squeeze=False)
    width = 0.8 / len(contestants)
    for ax, sync in zip(axes[:, 0], syncs):
        for i, name in enumerate(contestants):
            rates = []
            for scenario in SCENARIOS:
                row = next((r for r in rows if r["force_sync"] == sync and r["contestant"] == name
                            and r["scenario"] == scenario), None)
                rates.append(row["rate"] if row and row["rate"] else 0)
            xs = [x + (i - (len(contestants) - 1) / 2) * width for x in range(len(SCENARIOS))]
            ax.bar(xs, rates, width, label=name)
        ax.set_yscale("log")
        ax.set_xticks(range(len(SCENARIOS)), [LABELS[s] for s in SCENARIOS])
        ax.set_ylabel("acquisitions per second")
        ax.set_title(f"forceSync={'yes' if sync else 'no'}")
        ax.grid(axis="y", which="both", alpha=0.3)
    axes[0, 0].legend(ncol=4, fontsize="small", loc="upper left")
    fig.tight_layout()
    fig.savefig(target, dpi=110)
    print(target)


if __name__ == "__main__":
    main()
