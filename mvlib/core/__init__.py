"""The core every model family of mvlib stands on.

Its modules are public, each with one concern:

- :mod:`mvlib.core.validation` — argument checks with messages that name the argument,
  :class:`~mvlib.core.validation.IllConditionedWarning`, and the power-of-two rescaling that
  keeps data at extreme scales finite;
- :mod:`mvlib.core.progress` — progress bars for long passes over data;
- :mod:`mvlib.core.symbolic` — sympy helpers for the derivations of the chapters;
- :mod:`mvlib.core.metrics` — matched errors between estimated and true components, coherence;
- :mod:`mvlib.core.tensors` — tensor algebra on tensorly (multilinear maps, CP tensors);
- :mod:`mvlib.core.moments` — empirical and whitened moments of views and of counts;
- :mod:`mvlib.core.scale` — data sources (memory, Dask arrays, streams of chunks) and the
  one-pass sketched moments;
- :mod:`mvlib.core.whitening` — whitening and dewhitening;
- :mod:`mvlib.core.power` — the robust tensor power method;
- :mod:`mvlib.core.observable` — observable operators (Algorithms A and B);
- :mod:`mvlib.core.jennrich` — Jennrich's simultaneous diagonalisation;
- :mod:`mvlib.core.cubature` — data sets whose empirical moments are exact population moments;
- :mod:`mvlib.core.base` — the estimator base classes and the helpers estimators share.
"""
from . import (
               base,
               cubature,
               jennrich,
               metrics,
               moments,
               observable,
               power,
               progress,
               scale,
               symbolic,
               tensors,
               validation,
               whitening,
)

__all__ = ["base", "cubature", "jennrich", "metrics", "moments", "observable", "power", "progress", "scale",
           "symbolic", "tensors", "validation", "whitening"]
