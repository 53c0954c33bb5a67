"""Every public estimator's docstring shows its use: an ``Examples`` section that runs (its
doctests pass) and a ``See Also`` section (numpydoc style, rendered by napoleon on the API page).

The estimators are the classes of ``mvlib.__all__`` that are scikit-learn estimators. Each
example is run on its own, with nothing imported for it (a user copies it as it stands), with
``NORMALIZE_WHITESPACE`` and ``ELLIPSIS``; a ``UserWarning`` or ``RuntimeWarning`` raised by an
example fails it too (an example must run cleanly). The examples are small (each well under
a second on one core), so they run with one BLAS thread: on a loaded machine more threads only
contend (a 300 × 300 ``eigh`` then takes most of a second instead of milliseconds).
"""
import doctest
import inspect
import re
import warnings

import pytest
from sklearn.base import BaseEstimator
from threadpoolctl import threadpool_limits

import mvlib

ESTIMATORS = [name for name in mvlib.__all__
              if inspect.isclass(getattr(mvlib, name)) and issubclass(getattr(mvlib, name), BaseEstimator)]

OPTIONS = doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS


def has_section(doc, title):
    """A numpydoc section header: the title on its own line, underlined by dashes."""
    return re.search(rf"^{re.escape(title)}\n-{{{len(title)}}}\s*$", doc, re.MULTILINE) is not None


def test_the_estimators_are_collected():
    # a guard against an empty parametrisation (e.g. if mvlib.__all__ changed shape)
    assert len(ESTIMATORS) >= 14, ESTIMATORS
    assert {"SpectralGMM", "SpectralHMM", "LatentTreeEmbedding"} <= set(ESTIMATORS)


@pytest.mark.parametrize("name", ESTIMATORS)
def test_docstring_has_examples_and_see_also(name):
    doc = inspect.getdoc(getattr(mvlib, name)) or ""
    missing = [title for title in ("See Also", "Examples") if not has_section(doc, title)]
    assert not missing, f"mvlib.{name}'s docstring has no {' and no '.join(missing)} section"


@pytest.mark.parametrize("name", ESTIMATORS)
def test_docstring_examples_run(name):
    cls = getattr(mvlib, name)
    finder = doctest.DocTestFinder(recurse=False)
    tests = [t for t in finder.find(cls, f"mvlib.{name}", globs={}) if t.examples]
    assert tests, f"mvlib.{name}'s docstring has no doctest (>>> lines)"
    runner = doctest.DocTestRunner(optionflags=OPTIONS, verbose=False)
    report = []
    with warnings.catch_warnings(record=True) as caught, threadpool_limits(1, user_api="blas"):
        warnings.simplefilter("always")
        for test in tests:
            runner.run(test, out=report.append)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"mvlib.{name}: {result.failed} of {result.attempted} examples failed\n" + "".join(report)
    noisy = [f"{w.category.__name__}: {w.message}" for w in caught
             if issubclass(w.category, (UserWarning, RuntimeWarning))]
    assert not noisy, f"mvlib.{name}'s examples warn:\n" + "\n".join(noisy)
