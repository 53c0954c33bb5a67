"""mvlib's estimators as scikit-learn estimators.

* ``SpectralGMM`` and ``LatentTreeEmbedding`` take a plain real 2-d X and pass every check of
  ``sklearn.utils.estimator_checks`` (``parametrize_with_checks``, no expected failure).
* ``SpectralTopicModel``, ``SpectralLDA``, ``UnigramMixtureEM`` (non-negative integer counts) and ``SpectralHMM``
  (one column of integer symbols) run the same checks; the checks that feed them data they
  rightly refuse (fractional numbers, several columns) are expected failures, each with its
  reason, in ``EXPECTED_FAILED_CHECKS`` (strict: a listed check that starts passing fails).
* Estimators of lists of views (``MultiViewMixture``, ``KernelSpectral``, ``NonparametricEM``,
  ``HistogramSpectral``, ``ProductMixtureEM``) and of a (d, d, d) tensor
  (``OvercompleteTensorDecomposition``) say so in their tags (``two_d_array=False``), so
  scikit-learn generates no data for them; the checks that need no data run directly
  (``API_CHECKS``) and the data checks are ``NOT_APPLICABLE``.

Every data check that cannot run on an estimator has an equivalent here, on data the
estimator accepts (``EQUIVALENT_TESTS``: check name -> test of this module).
"""
from __future__ import annotations

import copy
import functools
import pickle
import re
from dataclasses import dataclass, field
from typing import Callable

import joblib
import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.pipeline import Pipeline
from sklearn.utils import estimator_checks as skc
from sklearn.utils import get_tags
from sklearn.utils.estimator_checks import estimator_checks_generator, parametrize_with_checks
from sklearn.utils.validation import check_is_fitted

from mvlib import hmm
from mvlib.kernel import HistogramSpectral, NonparametricEM
from mvlib.multiview import ProductMixtureEM
from mvlib.topic import UnigramMixtureEM
from mvlib.kernel import KernelSpectral
from mvlib.tree import LatentTreeEmbedding
from mvlib.multiview import MultiViewMixture
from mvlib.hmm import ObservableOperatorHMM, SpectralHMM
from mvlib.overcomplete import OvercompleteTensorDecomposition
from mvlib.gmm import SpectralGMM
from mvlib.lda import SpectralLDA
from mvlib.topic import SpectralTopicModel
from mvlib.ica import TensorICA
from mvlib.multiview import MultiViewMixtureModel
from mvlib.topic import random_topic_model
from mvlib.overcomplete import random_overcomplete_tensor

# --------------------------------------------------------------------------- the registry
_FRACTIONAL = ("scikit-learn's generated X holds fractional numbers; {name} models non-negative "
               "integer counts and refuses them with a named ValueError")
_SPARSE_FRACTIONAL = ("the generated sparse X holds fractional numbers, which {name} refuses as "
                      "counts (sparse input itself is accepted)")
_COLUMNS = ("scikit-learn's generated X has several columns of real numbers; {name} takes one "
            "column of integer symbols (hmmlearn layout) and refuses it with a named ValueError")
_LENGTHS = ("the second argument of {name}.fit is ``lengths`` (hmmlearn's signature), so the "
            "y that scikit-learn passes is read as sequence lengths")


def _count_failures(name):
    fr, sf = _FRACTIONAL.format(name=name), _SPARSE_FRACTIONAL.format(name=name)
    return {
        "check_fit_score_takes_y": fr,
        "check_estimators_overwrite_params": fr,
        "check_dont_overwrite_parameters": fr,
        "check_estimators_fit_returns_self": fr,
        "check_readonly_memmap_input": fr,
        "check_n_features_in_after_fitting": fr,
        "check_estimators_dtypes": fr,
        "check_dtype_object": fr,
        "check_pipeline_consistency": fr,
        "check_estimators_nan_inf": fr + " (before it reaches the NaN)",
        "check_estimator_sparse_tag": sf,
        "check_estimator_sparse_array": sf,
        "check_estimator_sparse_matrix": sf,
        "check_estimators_pickle": fr,
        "check_f_contiguous_array_estimator": fr,
        "check_methods_sample_order_invariance": fr,
        "check_methods_subset_invariance": fr,
        "check_fit2d_1feature": fr + " (before it sees the single column)",
        "check_dict_unchanged": fr,
        "check_fit_idempotent": fr,
        "check_fit_check_is_fitted": fr,
        "check_n_features_in": fr,
        "check_fit2d_predict1d": fr,
    }


def _sequence_failures(name):
    co = _COLUMNS.format(name=name)
    out = {check: co for check in _count_failures(name)
           if not check.startswith("check_estimator_sparse")}
    out["check_fit2d_1feature"] = (co + "; with one column, " + _LENGTHS.format(name=name)
                                   .replace("the second", "and the second"))
    out["check_positive_only_tag_during_fit"] = co + " (before it looks at the signs)"
    out["check_fit2d_1sample"] = co + " (before it counts the samples)"
    out["check_estimators_nan_inf"] = co + " (before it reaches the NaN)"
    return out


#: scikit-learn checks expected to fail, per estimator, with the reason: the one place
EXPECTED_FAILED_CHECKS = {
    "SpectralGMM": {},
    "TensorICA": {},
    "LatentTreeEmbedding": {},
    "SpectralTopicModel": _count_failures("SpectralTopicModel"),
    "SpectralLDA": {**_count_failures("SpectralLDA"), **{
        c: _FRACTIONAL.format(name="SpectralLDA")
        for c in ("check_transformer_data_not_an_array", "check_transformer_general",
                  "check_transformer_preserve_dtypes",
                  "check_fit2d_1sample")}},
    "UnigramMixtureEM": _count_failures("UnigramMixtureEM"),
    "SpectralHMM": _sequence_failures("SpectralHMM"),
    "ObservableOperatorHMM": _sequence_failures("ObservableOperatorHMM"),
}

_VIEWS = ("input is a list of views (tags.input_tags.two_d_array is False), so scikit-learn "
          "generates no data for it; every data check is not applicable")
#: estimators scikit-learn cannot generate data for, with the reason
NOT_APPLICABLE = {
    "MultiViewMixture": _VIEWS,
    "KernelSpectral": _VIEWS,
    "NonparametricEM": _VIEWS,
    "HistogramSpectral": _VIEWS,
    "ProductMixtureEM": _VIEWS,
    "OvercompleteTensorDecomposition": (
        "fit takes a (d, d, d) tensor (tags.input_tags.three_d_array), so scikit-learn generates "
        "no data for it; every data check is not applicable"),
}

#: scikit-learn checks that need no data: run directly on every estimator of NOT_APPLICABLE
API_CHECKS = (
    "check_estimator_cloneable",
    "check_estimator_tags_renamed",
    "check_valid_tag_types",
    "check_estimator_repr",
    "check_no_attributes_set_in_init",
    "check_mixin_order",
    "check_do_not_raise_errors_in_init_or_set_params",
    "check_parameters_default_constructible",
    "check_get_params_invariance",
    "check_set_params",
)

#: every scikit-learn data check -> the test of this module checking the same on accepted data
EQUIVALENT_TESTS = {
    "check_fit_score_takes_y": "test_fit_and_score_take_y",
    "check_estimators_overwrite_params": "test_fit_leaves_params_unchanged",
    "check_dont_overwrite_parameters": "test_fit_sets_only_trailing_underscore_attributes",
    "check_estimators_fit_returns_self": "test_fit_returns_self",
    "check_readonly_memmap_input": "test_read_only_input",
    "check_n_features_in_after_fitting": "test_n_features_in",
    "check_n_features_in": "test_n_features_in",
    "check_estimators_dtypes": "test_dtypes_convert_exactly",
    "check_dtype_object": "test_object_dtype",
    "check_pipeline_consistency": "test_pipeline_consistency",
    "check_estimators_nan_inf": "test_nan_inf_refused",
    "check_estimator_sparse_tag": "test_sparse_input",
    "check_estimator_sparse_array": "test_sparse_input",
    "check_estimator_sparse_matrix": "test_sparse_input",
    "check_estimators_pickle": "test_pickle_round_trip",
    "check_f_contiguous_array_estimator": "test_fortran_order",
    "check_methods_sample_order_invariance": "test_sample_order_invariance",
    "check_methods_subset_invariance": "test_subset_invariance",
    "check_fit2d_1feature": "test_one_feature",
    "check_fit2d_1sample": "test_one_sample",
    "check_dict_unchanged": "test_inference_leaves_dict_unchanged",
    "check_fit_idempotent": "test_fit_idempotent_and_reproducible",
    "check_fit_check_is_fitted": "test_not_fitted_error",
    "check_estimators_unfitted": "test_not_fitted_error",
    "check_fit2d_predict1d": "test_one_dimensional_input",
    "check_fit1d": "test_one_dimensional_input",
    "check_complex_data": "test_complex_and_empty_refused",
    "check_estimators_empty_data_messages": "test_complex_and_empty_refused",
    "check_positive_only_tag_during_fit": "test_sign_of_the_input",
    "check_fit_non_negative": "test_sign_of_the_input",
    # mvlib computes with NumPy only (tags.array_api_support is False); scikit-learn runs this
    # check only with SCIPY_ARRAY_API=1, and on NumPy input there is nothing to dispatch
    "check_array_api_input": None,
    "check_transformers_unfitted": "test_not_fitted_error",
    # runs only for estimators with a max_iter parameter; SpectralLDA has none
    "check_transformer_n_iter": None,
    "check_transformer_general": "test_transformer_on_counts",
    "check_transformer_general(readonly_memmap=True)": "test_transformer_on_counts",
    "check_transformer_data_not_an_array": "test_transformer_on_counts",
    "check_transformer_preserve_dtypes": "test_transformer_on_counts",
    # sample_weight: only LatentTreeEmbedding.fit takes it, and it passes these checks under
    # parametrize_with_checks; estimators of views or tensors have no sample_weight to check
    "check_all_zero_sample_weights_error": None,
    "check_sample_weight_equivalence_on_dense_data": None,
    "check_sample_weights_list": None,
    "check_sample_weights_not_an_array": None,
    "check_sample_weights_not_overwritten": None,
    "check_sample_weights_pandas_series": None,
    "check_sample_weights_shape": None,
}


# --------------------------------------------------------------------------- full checks
def _expected_failures(estimator):
    return EXPECTED_FAILED_CHECKS[type(estimator).__name__]


@parametrize_with_checks(
    [SpectralGMM(n_components=1), TensorICA(n_components=1), TensorICA(n_components=2), LatentTreeEmbedding(ranks=1),
     SpectralTopicModel(n_components=1), SpectralLDA(n_components=1), UnigramMixtureEM(n_components=1, n_init=1, max_iter=20),
     SpectralHMM(n_components=1), ObservableOperatorHMM(n_components=1)],
    expected_failed_checks=_expected_failures, xfail_strict=True)
def test_sklearn_check(estimator, check):
    try:
        check(estimator)
    except Exception as exc:
        if _check_name(check) not in _expected_failures(estimator):
            raise
        # an expected failure (marked xfail, strict): re-raised without scikit-learn's frames,
        # whose traceback pytest would spend a quarter of a second formatting for nothing
        raise AssertionError(f"{type(exc).__name__}: {exc}") from None


@pytest.mark.parametrize("name", sorted(NOT_APPLICABLE))
@pytest.mark.parametrize("check", API_CHECKS)
def test_sklearn_api_check_without_data(name, check):
    est = next(c for c in CASES if c.name == name).make()
    getattr(skc, check)(name, est)


def _check_name(check):
    while isinstance(check, functools.partial):
        check = check.func
    return check.__name__


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.SkipTestWarning")
def test_registry_is_complete():
    """Every check scikit-learn yields has an equivalent here or needs no data."""
    yielded = set()
    for est in (SpectralGMM(1), LatentTreeEmbedding(1), SpectralTopicModel(1), SpectralLDA(1), SpectralHMM(1)):
        yielded |= {_check_name(c) for _, c in estimator_checks_generator(est, legacy=True, mark=None)}
    assert len(yielded) >= 40
    assert yielded <= set(EQUIVALENT_TESTS) | set(API_CHECKS), yielded - set(EQUIVALENT_TESTS) - set(API_CHECKS)
    for failures in EXPECTED_FAILED_CHECKS.values():
        assert set(failures) <= yielded and all(EQUIVALENT_TESTS[c] for c in failures)
        assert all(len(reason) > 40 for reason in failures.values())
    for test in filter(None, EQUIVALENT_TESTS.values()):
        assert callable(globals().get(test)), test
    for name, est in ((c.name, c.make()) for c in CASES if c.name in NOT_APPLICABLE):
        assert not get_tags(est).input_tags.two_d_array, name
        # scikit-learn checks only that it can be cloned; API_CHECKS and the equivalents do the rest
        assert [_check_name(c) for _, c in estimator_checks_generator(est, legacy=True, mark=None)] == [
            "check_estimator_cloneable"], name


# --------------------------------------------------------------------------- data per estimator
def _ica():
    r = np.random.default_rng(11)
    S = np.column_stack([r.laplace(size=400), r.uniform(-1.7, 1.7, size=400)])
    return (S @ np.array([[1.0, 0.4], [0.3, 1.0]]).T,)


def _counts():
    X, _ = random_topic_model(2, 8, concentration=0.5, random_state=1).sample(300, 8, random_state=2)
    return (X.toarray().astype(np.int64),)


def _sequences():
    pi = np.array([0.5, 0.5])
    T = np.array([[0.85, 0.2], [0.15, 0.8]])
    O = np.array([[0.6, 0.05], [0.3, 0.15], [0.05, 0.3], [0.05, 0.5]])
    X, lengths, _ = hmm.sample_hmm(pi, T, O, 40, 25, random_state=0)
    return X, lengths


def _gaussian_views(dims=(3, 3, 3), n=300):
    means = [np.array([[-2.0, 2.0]] * d) + np.arange(d)[:, None] for d in dims]
    views, _ = MultiViewMixtureModel([0.4, 0.6], means, kind="gaussian", noise=0.7).sample(n, random_state=0)
    return (views,)


def _scalar_views():
    return _gaussian_views((1, 1, 1), n=90)


def _mixed_views():
    rng = np.random.default_rng(0)
    h = rng.integers(0, 2, 120)
    gauss = rng.normal(np.where(h == 0, -2.0, 2.0)[:, None], 1.0, (120, 2))
    pois = rng.poisson(np.where(h == 0, 1.0, 5.0)[:, None], (120, 2)).astype(float)
    bern = (rng.random((120, 3)) < np.where(h == 0, 0.2, 0.8)[:, None]).astype(float)
    return ([gauss, pois, bern],)


def _tensor():
    return (random_overcomplete_tensor(4, 3, random_state=0)[0],)


def _gmm():
    rng = np.random.default_rng(0)
    h = rng.integers(0, 2, 400)
    means = np.array([[4.0, 0.0, 0.0, 1.0], [0.0, 4.0, 0.0, 1.0]])
    return (means[h] + rng.standard_normal((400, 4)),)


def _chain():
    rng = np.random.default_rng(0)
    h = rng.integers(0, 2, 60)
    return (np.where(h == 0, -1.5, 1.5)[:, None] + 0.6 * rng.standard_normal((60, 3)),)


@dataclass(frozen=True)
class Case:
    name: str
    make: Callable
    data: Callable
    kind: str                       # "counts", "sequences", "views", "tensor", "real"
    attrs: tuple                    # fitted attributes compared bit for bit
    methods: tuple = ()             # inference methods taking the same arguments as fit
    sample_methods: tuple = ()      # those of them with one output per sample (views: per row)
    extra: dict = field(default_factory=dict)


CASES = [
    Case("SpectralTopicModel", lambda: SpectralTopicModel(2, random_state=0), _counts, "counts",
         ("topic_word_", "weights_"), ("predict", "predict_proba", "score", "score_samples"),
         ("predict", "predict_proba", "score_samples")),
    Case("SpectralLDA", lambda: SpectralLDA(2, random_state=0), _counts, "counts",
         ("topic_word_", "alpha_"), ("transform", "score", "perplexity"), ("transform",)),
    Case("UnigramMixtureEM", lambda: UnigramMixtureEM(2, n_init=2, max_iter=30, random_state=0), _counts,
         "counts", ("topic_word_", "weights_", "objective_"), ("predict", "predict_proba", "score"),
         ("predict", "predict_proba")),
    Case("SpectralHMM", lambda: SpectralHMM(2, random_state=0), _sequences, "sequences",
         ("emissionprob_", "transmat_", "startprob_"),
         ("score", "predict", "score_samples_per_sequence"), ("predict", "score_samples_per_sequence")),
    Case("ObservableOperatorHMM", lambda: ObservableOperatorHMM(2, random_state=0), _sequences, "sequences",
         ("b1_", "binf_", "operators_"), ("score", "score_samples_per_sequence"),
         ("score_samples_per_sequence",)),
    Case("MultiViewMixture", lambda: MultiViewMixture(2, random_state=0), _gaussian_views, "views",
         ("means_", "weights_")),
    Case("KernelSpectral", lambda: KernelSpectral(2, bandwidth=0.7, random_state=0), _scalar_views, "views",
         ("weights_", "coef_"), ("predict", "predict_proba", "score"), ("predict", "predict_proba")),
    Case("NonparametricEM", lambda: NonparametricEM(2, max_iter=15, random_state=0), _scalar_views, "views",
         ("weights_", "posteriors_"), ("predict", "predict_proba", "score"), ("predict", "predict_proba")),
    Case("HistogramSpectral", lambda: HistogramSpectral(2, random_state=0), _scalar_views, "views",
         ("weights_", "cell_probs_"), ("predict", "predict_proba", "score"), ("predict", "predict_proba")),
    Case("ProductMixtureEM", lambda: ProductMixtureEM(2, max_iter=20, random_state=0), _mixed_views, "views",
         ("means_", "weights_"), ("predict", "predict_proba", "score"), ("predict", "predict_proba")),
    Case("OvercompleteTensorDecomposition",
         lambda: OvercompleteTensorDecomposition(3, n_restarts=8, random_state=0), _tensor, "tensor",
         ("weights_", "factors_")),
    # the two estimators of real 2-d X on data of their model (the scikit-learn checks above
    # use n_components=1 / ranks=1 on scikit-learn's data)
    Case("SpectralGMM", lambda: SpectralGMM(2, random_state=0), _gmm, "real",
         ("means_", "weights_", "covariances_"), ("predict", "predict_proba", "score", "score_samples"),
         ("predict", "predict_proba", "score_samples")),
    Case("TensorICA", lambda: TensorICA(2, random_state=0), _ica, "real",
         ("mixing_", "components_", "kurtosis_"), ("transform",), ("transform",)),
    Case("LatentTreeEmbedding", lambda: LatentTreeEmbedding(2, bandwidth=0.8), _chain, "real",
         ("betas_", "gammas_"), ("density", "score", "score_samples"), ("density", "score_samples")),
]
IDS = [c.name for c in CASES]


def _cases(*kinds, needs=None):
    out = [c for c in CASES if c.kind in kinds] if kinds else list(CASES)
    if needs:
        out = [c for c in out if getattr(c, needs)]
    return pytest.mark.parametrize("case", out, ids=[c.name for c in out])


# --------------------------------------------------------------------------- helpers
def _map(case, args, f):
    """Apply f to the data arrays of the fit arguments (not to HMM lengths)."""
    if case.kind == "views":
        return ([f(X) for X in args[0]],) + tuple(args[1:])
    return (f(args[0]),) + tuple(args[1:])


def _arrays(case, args):
    return list(args[0]) if case.kind == "views" else [a for a in args if a is not None]


def _equal(a, b):
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b))
    if sp.issparse(a):
        return sp.issparse(b) and a.shape == b.shape and (a != b).nnz == 0
    return np.array_equal(np.asarray(a), np.asarray(b))


def _close(a, b, rtol=1e-9, atol=1e-12):
    if isinstance(a, (list, tuple)):
        return all(_close(x, y, rtol, atol) for x, y in zip(a, b))
    return np.allclose(np.asarray(a, float), np.asarray(b, float), rtol=rtol, atol=atol)


def _fitted(case, args=None):
    args = case.data() if args is None else args
    return case.make().fit(*args), args


def _outputs(est, case, args):
    return {m: getattr(est, m)(*args) for m in case.methods}


def _attrs(est, case):
    return {a: getattr(est, a) for a in case.attrs}


def _assert_same(a, b, close=False):
    assert a.keys() == b.keys()
    for key in a:
        assert (_close if close else _equal)(a[key], b[key]), key


# --------------------------------------------------------------------------- equivalents
@_cases()
def test_clone_and_params_round_trip(case):
    est = case.make()
    params = est.get_params()
    twin = clone(est)
    assert twin is not est and joblib.hash(twin.get_params()) == joblib.hash(params)
    assert est.set_params(**params) is est and joblib.hash(est.get_params()) == joblib.hash(params)
    assert repr(est).startswith(case.name + "(")
    with pytest.raises(ValueError, match=f"'no_such_parameter' is not a parameter of {case.name}"):
        est.set_params(no_such_parameter=1)
    fitted, _ = _fitted(case)
    with pytest.raises(NotFittedError):
        check_is_fitted(clone(fitted))


@_cases()
def test_fit_returns_self(case):
    est = case.make()
    assert est.fit(*case.data()) is est


@_cases()
def test_fit_and_score_take_y(case):
    """``y`` is accepted and ignored (for SpectralHMM the second argument is ``lengths``)."""
    args = case.data()
    ref = _attrs(case.make().fit(*args), case)
    if case.kind == "sequences":
        X, lengths = args
        one = case.make().fit(X)   # lengths=None: one sequence
        assert np.isfinite(one.score(X))
        if "predict" in case.methods:
            assert one.predict(X).shape == (X.shape[0],)
        return
    est = case.make().fit(*args, None)
    _assert_same(_attrs(est, case), ref)
    if "score" in case.methods:
        assert est.score(*args, None) == est.score(*args)


@_cases()
def test_fit_leaves_params_unchanged(case):
    est = case.make()
    before = joblib.hash(est.get_params())
    est.fit(*case.data())
    assert joblib.hash(est.get_params()) == before


@_cases()
def test_fit_sets_only_trailing_underscore_attributes(case):
    est = case.make()
    before = dict(vars(est))
    est.fit(*case.data())
    added = set(vars(est)) - set(before)
    assert added and all(a.endswith("_") or a.startswith("_") for a in added), added
    assert all(vars(est)[k] is v for k, v in before.items())


@_cases()
def test_input_not_modified(case):
    args = case.data()
    saved = copy.deepcopy(args)
    est = case.make().fit(*args)
    _outputs(est, case, args)
    assert _equal(_arrays(case, args), _arrays(case, saved))


@_cases()
def test_read_only_input(case):
    args = case.data()
    ref_est, _ = _fitted(case, args)
    ro = copy.deepcopy(args)
    for A in _arrays(case, ro):
        A.setflags(write=False)
    est = case.make().fit(*ro)
    _assert_same(_attrs(est, case), _attrs(ref_est, case))
    _assert_same(_outputs(est, case, ro), _outputs(ref_est, case, args))


@_cases()
def test_fit_idempotent_and_reproducible(case):
    args = case.data()
    est = case.make().fit(*args)
    first, out = _attrs(est, case), _outputs(est, case, args)
    est.fit(*args)
    _assert_same(_attrs(est, case), first)
    _assert_same(_outputs(est, case, args), out)
    _assert_same(_attrs(case.make().fit(*args), case), first)   # same random_state, new estimator
    if "random_state" in est.get_params():   # a Generator: the same seed gives the same fit
        a = case.make().set_params(random_state=np.random.default_rng(5)).fit(*args)
        b = case.make().set_params(random_state=np.random.default_rng(5)).fit(*args)
        _assert_same(_attrs(a, case), _attrs(b, case))


@_cases()
def test_pickle_round_trip(case):
    est, args = _fitted(case)
    back = pickle.loads(pickle.dumps(est))
    _assert_same(_attrs(back, case), _attrs(est, case))
    _assert_same(_outputs(back, case, args), _outputs(est, case, args))


@_cases()
def test_not_fitted_error(case):
    est = case.make()
    args = case.data()
    with pytest.raises(NotFittedError):
        check_is_fitted(est)
    extra = {"SpectralGMM": ["to_sklearn"], "SpectralHMM": ["to_hmmlearn"]}.get(case.name, [])
    for m in case.methods + tuple(extra):
        call = getattr(est, m)
        with pytest.raises(NotFittedError, match=f"this {case.name} instance is not fitted yet"):
            call(*args) if m in case.methods else call()
    if hasattr(est, "conditional_density"):
        with pytest.raises(NotFittedError, match=case.name):
            est.conditional_density(args[0][0], view=0)
    assert issubclass(NotFittedError, ValueError)
    est.fit(*args)
    check_is_fitted(est)


@_cases()
def test_n_features_in(case):
    est, args = _fitted(case)
    if case.kind == "views":
        assert est.n_features_in_ == [X.shape[1] for X in args[0]]
    elif case.kind == "sequences":
        assert est.n_features_in_ == 1
    elif case.kind == "tensor":
        assert est.n_features_in_ == args[0].shape[0]
    else:
        assert est.n_features_in_ == args[0].shape[1] and isinstance(est.n_features_in_, int)
    if not case.methods:
        return
    if case.kind == "sequences":
        wider, match = (np.hstack([args[0], args[0]]), args[1]), r"X must have shape \(n_samples, 1\)"
    elif case.kind == "views":
        views = list(args[0])
        views[0] = np.hstack([views[0], views[0][:, :1]])
        wider = (views,)
        want = [X.shape[1] for X in args[0]]
        got = [want[0] + 1] + want[1:]
        match = re.escape(f"views has {got} features, but {case.name} is expecting {want} features as input")
    else:
        d = args[0].shape[1]
        wider = (np.hstack([args[0], args[0][:, :1]]),)
        match = f"X has {d + 1} features, but {case.name} is expecting {d} features as input"
    for m in case.methods:
        with pytest.raises(ValueError, match=match):
            getattr(est, m)(*wider)


@_cases()
def test_nan_inf_refused(case):
    args = case.data()
    name = {"views": "X1", "tensor": "T"}.get(case.kind, "X")

    def poison(value):
        def f(A):
            A = np.array(A, dtype=float)
            A[(0,) * A.ndim] = value
            return A
        if case.kind == "views":
            return ([f(args[0][0])] + list(args[0][1:]),) + tuple(args[1:])
        return (f(args[0]),) + tuple(args[1:])

    for value in (np.nan, np.inf, -np.inf):
        with pytest.raises(ValueError, match=f"{name} contains NaN or infinity"):
            case.make().fit(*poison(value))
    est = case.make().fit(*args)
    for m in case.methods:
        for value in (np.nan, np.inf):
            with pytest.raises(ValueError, match="NaN or infinity"):
                getattr(est, m)(*poison(value))


@_cases()
def test_dtypes_convert_exactly(case):
    """Other dtypes are converted to float64 exactly: the same fit as on the converted data."""
    args = case.data()
    dtypes = {"counts": (np.int32, np.uint16, np.float32), "sequences": (np.int32, np.uint8, np.float64)}.get(
        case.kind, (np.float32,))
    for dt in dtypes:
        cast = _map(case, args, lambda A: np.asarray(A).astype(dt))
        as_float = _map(case, cast, lambda A: A.astype(np.float64))
        a, b = case.make().fit(*cast), case.make().fit(*as_float)
        _assert_same(_attrs(a, case), _attrs(b, case))
        _assert_same(_outputs(a, case, cast), _outputs(b, case, as_float))


@_cases()
def test_object_dtype(case):
    args = case.data()
    ref = _attrs(case.make().fit(*args), case)
    obj = _map(case, args, lambda A: np.asarray(A).astype(object))
    _assert_same(_attrs(case.make().fit(*obj), case), ref)
    bad = copy.deepcopy(obj)
    first = bad[0][0] if case.kind == "views" else bad[0]
    first[(0,) * first.ndim] = {"not": "a number"}
    with pytest.raises(TypeError, match="must hold real numbers, got dtype object"):
        case.make().fit(*bad)


@_cases()
def test_fortran_order(case):
    args = case.data()
    ref = case.make().fit(*args)
    fort = _map(case, args, np.asfortranarray)
    est = case.make().fit(*fort)
    _assert_same(_attrs(est, case), _attrs(ref, case), close=True)
    _assert_same(_outputs(est, case, fort), _outputs(ref, case, args), close=True)


@_cases()
def test_sparse_input(case):
    """Count estimators and MultiViewMixture accept every scipy.sparse format (the sparse tag);
    the others refuse sparse input with a named TypeError."""
    args = case.data()
    formats = (sp.csr_matrix, sp.csc_matrix, sp.coo_matrix, sp.csr_array, sp.coo_array)
    assert get_tags(case.make()).input_tags.sparse == (case.kind == "counts" or case.name == "MultiViewMixture")
    if not get_tags(case.make()).input_tags.sparse:
        flat = (lambda A: sp.csr_matrix(A.reshape(A.shape[0], -1))) if case.kind == "tensor" else sp.csr_matrix
        with pytest.raises(TypeError, match="must be a dense array"):
            case.make().fit(*_map(case, args, flat))
        return
    ref = case.make().fit(*args)
    for fmt in formats:
        sparse_args = _map(case, args, fmt)
        est = case.make().fit(*sparse_args)
        _assert_same(_attrs(est, case), _attrs(ref, case), close=True)
        if case.methods:
            m = "predict_proba" if hasattr(est, "predict_proba") else case.methods[0]
            np.testing.assert_allclose(getattr(est, m)(*sparse_args), getattr(ref, m)(*args), atol=1e-9)


@_cases("counts", "real", "views")
def test_pipeline_consistency(case):
    args = case.data()
    est = case.make().fit(*args)
    pipe = Pipeline([("est", case.make())]).fit(*args)
    _assert_same(_attrs(pipe[-1], case), _attrs(est, case))
    for m in case.methods:
        if hasattr(pipe, m):
            assert _equal(getattr(pipe, m)(*args), getattr(est, m)(*args)), m


def test_pipeline_consistency_sequences():
    """A Pipeline passes y as the second argument of fit, which SpectralHMM reads as
    ``lengths`` (hmmlearn's signature): y=None, one sequence, fits; lengths reach predict."""
    case = next(c for c in CASES if c.kind == "sequences")
    X, lengths = case.data()
    est = case.make().fit(X)
    pipe = Pipeline([("est", case.make())]).fit(X)
    _assert_same(_attrs(pipe[-1], case), _attrs(est, case))
    assert _equal(pipe.predict(X, lengths=lengths), est.predict(X, lengths))
    with pytest.raises(TypeError, match="lengths"):
        Pipeline([("est", case.make())]).fit(X, est__lengths=lengths)


def _split(case, args):
    """Samples of the fit arguments: rows, or whole sequences for SpectralHMM."""
    if case.kind == "sequences":
        X, lengths = args
        return np.split(X, np.cumsum(lengths)[:-1])
    if case.kind == "views":
        return [[X[i:i + 1] for X in args[0]] for i in range(args[0][0].shape[0])]
    return [args[0][i:i + 1] for i in range(args[0].shape[0])]


def _join(case, parts):
    if case.kind == "sequences":
        return np.vstack(parts), np.array([p.shape[0] for p in parts])
    if case.kind == "views":
        return ([np.vstack([p[v] for p in parts]) for v in range(len(parts[0]))],)
    return (np.vstack(parts),)


def _per_sample(case, out, args):
    """Split a per-sample output into one block per sample (sequences for SpectralHMM)."""
    if case.kind == "sequences" and out.shape[0] == args[0].shape[0]:
        return np.split(out, np.cumsum(args[1])[:-1])
    return list(out)


@_cases(needs="sample_methods")
def test_sample_order_invariance(case):
    est, args = _fitted(case)
    parts = _split(case, args)
    perm = np.random.default_rng(0).permutation(len(parts))
    shuffled = _join(case, [parts[i] for i in perm])
    for m in case.sample_methods:
        full = _per_sample(case, getattr(est, m)(*args), args)
        got = _per_sample(case, getattr(est, m)(*shuffled), shuffled)
        assert _close([full[i] for i in perm], got, rtol=1e-12, atol=1e-12), m


@_cases(needs="sample_methods")
def test_subset_invariance(case):
    est, args = _fitted(case)
    parts = _split(case, args)[:25]
    for m in case.sample_methods:
        full = _per_sample(case, getattr(est, m)(*_join(case, parts)), _join(case, parts))
        one_by_one = [getattr(est, m)(*_join(case, [p]))[0] if case.kind != "sequences"
                      else getattr(est, m)(*_join(case, [p])) for p in parts]
        if case.kind == "sequences" and m == "score_samples_per_sequence":
            one_by_one = [o[0] for o in one_by_one]
        assert _close(full, one_by_one, rtol=1e-12, atol=1e-12), m


@_cases(needs="methods")
def test_inference_leaves_dict_unchanged(case):
    est, args = _fitted(case)
    before = dict(vars(est))
    _outputs(est, case, args)
    assert vars(est).keys() == before.keys() and all(vars(est)[k] is v for k, v in before.items())


@_cases("counts", "sequences", "real")
def test_one_dimensional_input(case):
    args = case.data()
    flat = (args[0][:, 0],) + tuple(args[1:])
    with pytest.raises(ValueError, match="X must be 2-dimensional.*Reshape your data"):
        case.make().fit(*flat)
    est = case.make().fit(*args)
    for m in case.methods:
        one = (args[0][0],) if case.kind != "sequences" else (args[0][:, 0], args[1])
        with pytest.raises(ValueError, match="Reshape your data"):
            getattr(est, m)(*one)


@_cases()
def test_complex_and_empty_refused(case):
    args = case.data()
    with pytest.raises(ValueError, match="Complex data not supported"):
        case.make().fit(*_map(case, args, lambda A: np.asarray(A) + 1j))
    if case.kind == "tensor":
        with pytest.raises(ValueError, match="T"):
            case.make().fit(np.empty((0, 0, 0)))
        return
    no_rows = _map(case, args, lambda A: np.asarray(A)[:0])
    if case.kind == "sequences":
        no_rows = (no_rows[0], None)
    with pytest.raises(ValueError, match="0 rows"):
        case.make().fit(*no_rows)
    if case.kind != "sequences":
        no_cols = _map(case, args, lambda A: np.asarray(A)[:, :0])
        with pytest.raises(ValueError, match=r"0 feature\(s\)|no columns"):
            case.make().fit(*no_cols)


@_cases("counts", "sequences", "views", "real")
def test_one_sample(case):
    args = case.data()
    one = _map(case, args, lambda A: np.asarray(A)[:1])
    if case.kind == "sequences":
        one = (one[0], None)
    with pytest.raises(ValueError, match=r"n_samples=1|1 sample|at least 3"):
        case.make().fit(*one)


@_cases("counts", "sequences", "views", "real")
def test_one_feature(case):
    """One column: a fit with finite results, or a ValueError naming the argument at fault."""
    args = case.data()
    if case.kind == "sequences":
        one = (np.zeros_like(args[0]), args[1])      # an alphabet of one symbol
    else:
        one = _map(case, args, lambda A: np.asarray(A)[:, :1])
    try:
        est = case.make().fit(*one)
    except ValueError as exc:
        assert any(w in str(exc) for w in ("n_components", "n_states", "n_features", "ranks", "X", "document")), exc
    else:
        for a in _attrs(est, case).values():
            assert np.all(np.isfinite(np.concatenate([np.ravel(x) for x in np.atleast_1d(a)])
                                      if isinstance(a, list) else a))


@_cases()
@pytest.mark.filterwarnings("ignore::UserWarning", "ignore::RuntimeWarning")  # shifted data: worse conditioning
def test_sign_of_the_input(case):
    """positive_only is set exactly for counts and symbols, which refuse negative values;
    the other estimators fit data shifted below zero."""
    est = case.make()
    positive = get_tags(est).input_tags.positive_only
    assert positive == (case.kind in ("counts", "sequences"))
    args = case.data()
    if positive:
        neg = _map(case, args, lambda A: np.asarray(A) - 1)
        with pytest.raises(ValueError, match="Negative values in data" if case.kind == "counts" else "non-negative"):
            est.fit(*neg)
    elif case.name == "ProductMixtureEM":   # Poisson and Bernoulli views are non-negative by kind
        with pytest.raises(ValueError, match="X2 must hold non-negative integer counts"):
            est.fit([args[0][0], -args[0][1], args[0][2]])
        est.fit([args[0][0] - 100.0] + list(args[0][1:]))
    elif case.kind != "tensor":
        est.fit(*_map(case, args, lambda A: np.asarray(A) - 100.0))
        assert all(np.all(np.isfinite(np.asarray(a, float))) for a in _attrs(est, case).values()
                   if not isinstance(a, list))


def test_tags_say_what_each_estimator_accepts():
    tags = {c.name: get_tags(c.make()) for c in CASES}
    for name, t in tags.items():
        assert t.target_tags.required is False, name           # unsupervised
        assert t.input_tags.allow_nan is False, name
    views = [n for n, r in NOT_APPLICABLE.items() if r == _VIEWS]
    assert all(not tags[n].input_tags.two_d_array for n in views)
    assert tags["OvercompleteTensorDecomposition"].input_tags.three_d_array
    assert tags["SpectralHMM"].input_tags.categorical and tags["ObservableOperatorHMM"].input_tags.categorical
    density = {"SpectralGMM", "LatentTreeEmbedding", "SpectralHMM", "ObservableOperatorHMM", "UnigramMixtureEM",
               "SpectralTopicModel",
               "KernelSpectral",
               "NonparametricEM", "HistogramSpectral", "ProductMixtureEM"}
    transformers = {"SpectralLDA", "TensorICA"}   # as scikit-learn's LatentDirichletAllocation, FastICA
    for name, t in tags.items():
        assert (t.estimator_type == "density_estimator") == (name in density), name
        assert (t.transformer_tags is not None) == (name in transformers), name
        assert (name in density | {"SpectralLDA"}) == hasattr(next(c for c in CASES if c.name == name).make(), "score")


def test_transformer_on_counts():
    """The transformer checks, on counts (SpectralLDA): fit_transform equals fit then transform,
    one row per document on the simplex, float64 out, lists and read-only arrays accepted."""
    (X,) = _counts()
    est = SpectralLDA(2, random_state=0)
    Z = est.fit_transform(X)
    np.testing.assert_allclose(Z, SpectralLDA(2, random_state=0).fit(X).transform(X), rtol=0, atol=1e-12)
    assert Z.shape == (X.shape[0], 2) and Z.dtype == np.float64
    np.testing.assert_allclose(Z.sum(axis=1), 1.0, atol=1e-12)
    assert np.all(Z >= 0)
    np.testing.assert_allclose(est.transform(X.tolist()), Z, atol=1e-12)
    ro = np.array(X, copy=True)
    ro.setflags(write=False)
    np.testing.assert_allclose(SpectralLDA(2, random_state=0).fit(ro).transform(ro), Z, atol=1e-12)


# --------------------------------------------------------------------------- a fit is all or nothing
class _Interrupted(RuntimeError):
    """Raised by the instrumented estimators below in the middle of a fit."""


def _interrupting(cls, at):
    """A subclass of ``cls`` whose fit raises when it sets its ``at``-th fitted attribute
    (a public name ending in ``_``), or never (``at=None``: it counts them in ``.count``)."""

    class Interrupting(cls):
        def __setattr__(self, name, value):
            if name.endswith("_") and not name.startswith("_") and getattr(self, "_armed", False):
                type(self).count += 1
                if type(self).count == at:
                    raise _Interrupted(f"interrupted at fitted attribute number {at} ({name})")
            object.__setattr__(self, name, value)

    Interrupting.count = 0
    Interrupting.__name__ = cls.__name__
    return Interrupting


def _instrumented(case, at):
    est = case.make()
    params = est.get_params(deep=False)
    inst = _interrupting(type(est), at)(**params)
    object.__setattr__(inst, "_armed", True)
    return inst


def _state(est):
    return {k: copy.deepcopy(v) for k, v in vars(est).items() if k != "_armed"}


def _same_state(a, b):
    assert a.keys() == b.keys(), set(a) ^ set(b)
    for key in a:
        if isinstance(a[key], (np.ndarray, list, tuple)) or sp.issparse(a[key]):
            assert _equal(a[key], b[key]), key
        elif hasattr(a[key], "__dict__") and not isinstance(a[key], type):
            assert type(a[key]) is type(b[key]), key
        else:
            assert a[key] == b[key] or (a[key] != a[key] and b[key] != b[key]), key


def _failure_points(case):
    """Where to interrupt a fit: at the first, a middle and the last of its fitted attributes."""
    counter = _instrumented(case, None)
    counter.fit(*case.data())
    n = type(counter).count
    assert n >= 1, f"{case.name}.fit set no fitted attribute"
    return sorted({1, (n + 1) // 2, n})


@_cases()
def test_fit_is_all_or_nothing(case):
    """A fit that raises part-way leaves a fresh estimator unfitted and a fitted one exactly as it was
    (the issue's hostile-input finding: SpectralGMM, MultiViewMixture, LatentTreeEmbedding and
    TensorICA used to keep the attributes set before the error)."""
    args = case.data()
    for at in _failure_points(case):
        fresh = _instrumented(case, at)
        before = _state(fresh)
        with pytest.raises(_Interrupted):
            fresh.fit(*args)
        _same_state(_state(fresh), before)
        with pytest.raises(NotFittedError):
            check_is_fitted(fresh)
        for m in case.methods:
            with pytest.raises(NotFittedError):
                getattr(fresh, m)(*args)

        fitted = _instrumented(case, None)
        fitted.fit(*args)
        outputs, state = _outputs(fitted, case, args), _state(fitted)
        fitted.__class__ = _interrupting(type(fitted).__mro__[1], at)   # the refit raises at ``at``
        with pytest.raises(_Interrupted):
            fitted.fit(*args)
        _same_state(_state(fitted), state)
        _assert_same(_outputs(fitted, case, args), outputs)
