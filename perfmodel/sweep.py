"""Vectorised sweeps: numeric case parameters as numpy arrays, results as arrays of their shape.

``sweep("gemm", "mi300x", "bf16", m=M[:, None], n=N[None, :], k=4096).bound`` is a 2-D map of
bound classes over M x N, a million shapes in about a second.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from perfmodel.arch import DEFAULT_ARCH, Arch, load_arch
from perfmodel.errors import InputError
from perfmodel.estimate import Estimate, estimate
from perfmodel.prediction import run_model


class Sweep:
    """Arrays from a vectorised sweep, shaped like the broadcast of the inputs."""

    def __init__(self, est: Estimate, shape: tuple):
        self.estimate = est
        self.shape = shape

    def _r(self, x) -> np.ndarray:
        """A batch quantity (flat over the batch, or a scalar) in the sweep's shape."""
        x = np.asarray(x)
        n = int(np.prod(self.shape)) if self.shape else 1
        return np.broadcast_to(x, (n,)).reshape(self.shape) if x.ndim <= 1 else x

    @property
    def time_s(self) -> np.ndarray:
        return self._r(self.estimate.time_s)

    @property
    def bound(self) -> np.ndarray:
        return self._r(self.estimate.bound)

    @property
    def tflops(self) -> np.ndarray:
        return self._r(self.estimate.tflops)

    @property
    def headroom(self) -> np.ndarray:
        return self._r(self.estimate.headroom)

    @property
    def roofline_time_s(self) -> np.ndarray:
        return self._r(self.estimate.roofline_time_s)

    def term(self, name: str) -> np.ndarray:
        return self._r(self.estimate.terms[name])

    @property
    def terms(self) -> list[str]:
        return list(self.estimate.terms)


def _params(model, params: dict[str, Any], shape: tuple, arrays: dict[str, np.ndarray]) -> dict[str, Any]:
    """The model's parameters: arrays flattened over the sweep, the rest converted or defaulted."""
    from perfmodel.models.registry import convert_param

    p: dict[str, Any] = {}
    for name, spec in model.params.items():
        if name in arrays:
            v = np.broadcast_to(arrays[name].astype(float), shape).ravel()
            if np.any(v < spec.minimum) or not np.all(np.isfinite(v)):
                raise InputError(f"expected values >= {spec.minimum:g}", key=name)
            p[name] = v
        elif name in params:
            p[name] = convert_param(spec, params[name], None)
        elif spec.required:
            raise InputError(f"missing required parameter of {model.name}", key=name)
        else:
            p[name] = spec.default
    return p


def sweep(
    kernel: str, arch: str | Arch = DEFAULT_ARCH, dtype: str | None = None, warm: bool = False, **params: Any
) -> Sweep:
    """Vectorised: numeric parameters may be numpy arrays (broadcast together); returns arrays."""
    from perfmodel.models.registry import get_model
    from perfmodel.models.traffic import warm_caches

    model = get_model(kernel)
    a = load_arch(arch)
    model.check_keys(params)
    arrays = {k: np.asarray(v) for k, v in params.items() if model.params[k].kind in (int, float)}
    shape = np.broadcast_shapes(*[v.shape for v in arrays.values()]) if arrays else ()
    p = _params(model, params, shape, arrays)
    with warm_caches(warm):
        work = run_model(model, p, a, dtype or model.default_dtype)
    return Sweep(estimate(work, a), shape)
