import pytest

from tests.bench.executor_support import outcomes, run_all


@pytest.fixture(scope="session")
def reference(tmp_path_factory):
    """Every case of the six suites with scripted/gullible, run in process: what every executor
    must store, case by case."""
    path = tmp_path_factory.mktemp("inprocess")
    run_all(path, "--executor", "inprocess")
    rows = outcomes(path)
    kinds = {row[0] for row in rows.values()}
    assert kinds == {"benign", "injection_only", "attacked"} and len({row[1] for row in rows.values()}) == 6
    return rows
