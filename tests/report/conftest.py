import pytest

from tests.report.stores import scripted_run


@pytest.fixture(scope="package")
def scripted_store(tmp_path_factory):
    return scripted_run(tmp_path_factory.mktemp("store"))
