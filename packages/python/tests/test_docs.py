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
