"""Errors of a fitted hidden Markov model against the true parameters."""
from __future__ import annotations

import numpy as np

from ..core.metrics import match_columns

__all__ = ["parameter_errors"]


def parameter_errors(true, estimate):
    r"""Largest absolute errors of the emission and transition matrices, under ONE relabelling.

    The hidden states of ``estimate`` are matched to those of ``true`` on the emission rows
    (Hungarian algorithm, :func:`mvlib.core.metrics.match_columns`), and that permutation π is
    applied to both matrices. Used by the benchmark and the experiments of
    :doc:`/chapters/06_hidden_markov`.

    Parameters
    ----------
    true, estimate : objects with ``emissionprob_`` (k, d) and ``transmat_`` (k, k)
        hmmlearn's layout: row i of ``transmat_`` is the law of the next state given state i.
        A fitted :class:`mvlib.SpectralHMM` or an ``hmmlearn.hmm.CategoricalHMM``.

    Returns
    -------
    emission_error : float
        :math:`\max_{i,x}|\hat O_{\pi(i),x}-O_{i,x}|`.
    transition_error : float
        :math:`\max_{i,j}|\hat T_{\pi(i),\pi(j)}-T_{i,j}|`.

    Cost O(k³ + k d).

    Examples
    --------
    >>> import numpy as np
    >>> from types import SimpleNamespace
    >>> from mvlib.hmm import parameter_errors
    >>> true = SimpleNamespace(emissionprob_=np.array([[0.9, 0.1], [0.2, 0.8]]),
    ...                        transmat_=np.array([[0.7, 0.3], [0.4, 0.6]]))
    >>> swapped = SimpleNamespace(emissionprob_=true.emissionprob_[::-1] + 0.01,
    ...                           transmat_=true.transmat_[::-1, ::-1])
    >>> [round(e, 3) for e in parameter_errors(true, swapped)]
    [0.01, 0.0]
    """
    perm, _ = match_columns(np.asarray(true.emissionprob_).T, np.asarray(estimate.emissionprob_).T)
    emission = np.abs(np.asarray(estimate.emissionprob_)[perm] - true.emissionprob_).max()
    transition = np.abs(np.asarray(estimate.transmat_)[np.ix_(perm, perm)] - true.transmat_).max()
    return float(emission), float(transition)
