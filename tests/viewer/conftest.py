import pytest

from tests.report.stores import scripted_run


@pytest.fixture(scope="package")
def scripted_store(tmp_path_factory):
    """scripted/gullible and scripted/oracle on two banking user tasks under one attack: 70 cases."""
    return scripted_run(tmp_path_factory.mktemp("viewer-store"), attacks=("important_instructions",))


@pytest.fixture(scope="package")
def client(scripted_store):
    pytest.importorskip("starlette", reason="the viewer extra is not installed (pip install 'randori[viewer]')")
    from starlette.testclient import TestClient

    from randori.viewer.app import create_app

    with TestClient(create_app(scripted_store), base_url="http://127.0.0.1") as c:
        yield c
