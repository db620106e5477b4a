"""The examples in the package's docstrings run as written."""

import doctest

import pytest

import moonbox
import moonbox.capabilities
import moonbox.limits
import moonbox.sandbox


@pytest.mark.parametrize("module", [moonbox, moonbox.capabilities, moonbox.limits, moonbox.sandbox])
def test_docstring_examples(module):
    failed, attempted = doctest.testmod(module)
    assert attempted > 0
    assert failed == 0


def test_every_public_name_resolves_from_its_module():
    # The package imports its modules on first use; the table that says
    # where each name lives must cover __all__ exactly.
    assert sorted(moonbox.__all__) == sorted(moonbox._MODULES)
    for name in moonbox.__all__:
        assert getattr(moonbox, name) is not None
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        moonbox.Nope  # noqa: B018 - the lookup is the test
