import pytest

from randori.suites import get_suite, suite_names


@pytest.fixture(params=suite_names())
def suite(request):
    return get_suite(request.param)
