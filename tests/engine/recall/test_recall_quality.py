"""Offline recall quality on the labelled queries over the sample projects."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.engine.recall.evaluation import load_queries

DATA = Path(__file__).resolve().parents[2] / "data"


@pytest.fixture(scope="module")
def engines(tmp_path_factory: pytest.TempPathFactory):
    from workbench.engine.recall.evaluation import engines_for_samples

    return engines_for_samples(["healthy", "warnings"], tmp_path_factory.mktemp("samples"))


def test_query_set_is_big_enough_and_points_at_real_files(engines):
    queries = load_queries(DATA / "recall_queries.yaml")
    assert len([q for q in queries if q.expect]) >= 30
    for item in queries:
        folder = Path(engines[item.sample].locations.memory_dir)
        for rel in (*item.expect, *item.also):
            assert (folder / rel).is_file(), f"{item.query!r} names missing {rel}"


def test_recall_at_5_is_at_least_0_9(engines):
    from workbench.engine.recall.evaluation import evaluate

    report = evaluate(load_queries(DATA / "recall_queries.yaml"), engines)
    misses = [(o.item.query, o.selected) for o in report.misses]
    assert report.recall_at_5 >= 0.9, misses
    # Precision is reported by benchmarks/bench_recall.py; here it only must not collapse.
    assert report.precision_at_5 >= 0.5
    print(f"recall@5={report.recall_at_5:.3f} precision@5={report.precision_at_5:.3f}")
