import pytest

from randori import errors
from randori.suites import get_suite, suite_names


@pytest.fixture(params=suite_names())
def suite(request):
    return get_suite(request.param)


@pytest.fixture(autouse=True)
def _secrets_of_this_test_only():
    """Keys a test registers (models register theirs) are masked in every later message of the
    process, down to 6-character fragments: one test's fake key ("sk-test-adaptive-0") must not
    garble another test's messages ("the *** attack")."""
    before = set(errors._registered)
    yield
    errors._registered.clear()
    errors._registered.update(before)
