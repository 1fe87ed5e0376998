"""`bench.recall` in a tiny configuration: the cases are sound and every arm is measured."""

from __future__ import annotations

from bench import recall
from bench.data.recall_cases import EN, ES, case
from tests.support.postgres import PostgresServer


def test_cases_plant_details_early_and_ask_them_late() -> None:
    """Each detail is said once among the first exchanges, never in the filler, and asked
    in three phrasings after the last exchange; the case is deterministic."""
    for language, details in (("es", ES), ("en", EN)):
        lines = case(language, 60)
        assert lines == case(language, 60)
        said = [x.content for x in lines if not x.probe]
        assert len(said) == 120
        for detail in details:
            holders = [i for i, text in enumerate(said) if detail.answer in text]
            assert holders
            assert max(holders) < 2 * 2 * len(details)
        probes = [x for x in lines if x.probe]
        assert len(probes) == 3 * len(details)
        assert lines[-len(probes) :] == probes


async def test_every_arm_is_measured_in_one_run() -> None:
    """A short run gives each probe a verdict and a token count for every arm."""
    probes, per_turn, resets = await recall.measure(40, "off")
    assert len(probes) == 3 * (len(ES) + len(EN))
    assert resets == 0
    assert per_turn["on"] > 0
    assert per_turn["off"] > 0
    for probe in probes:
        assert set(probe.found) == set(probe.tokens) == set(recall.ARMS)
        assert probe.found["full history"]
        assert probe.tokens["window only"] < probe.tokens["full history"]
    assert sum(p.found["ventana with recall"] for p in probes) > sum(
        p.found["window + summary"] for p in probes
    )


async def test_the_postgres_recall_bench_measures_every_figure(
    postgres_server: PostgresServer,
) -> None:
    """`bench.postgres.recall` in a tiny configuration: both databases filled alike and
    searched in turns, buffers counted through EXPLAIN, the write cost measured, three
    targets returned."""
    import argparse

    from bench.postgres import recall as pg_recall

    args = argparse.Namespace(keys=[20, 24], per_key=20, searches=5)
    urls = (postgres_server.create_database(), postgres_server.create_database())
    targets = await pg_recall.run(urls, args)
    assert [t.bench for t in targets] == ["pg-recall"] * 3
    growth, buffers, _write_cost = (t.value for t in targets)
    assert growth > 0
    assert buffers > 0
