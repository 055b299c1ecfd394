"""ndx's own tests compare with exact shapes and tight tolerances. ndx.test_utils follows MXNet
(operands broadcast, float32 atol 1e-3), which suits code ported from MXNet but would let a
wrong shape or a small error through here."""
import numpy as onp

from ndx import test_utils

_TIGHT = {"float16": (1e-2, 1e-3), "bfloat16": (5e-2, 1e-2), "float32": (1e-4, 1e-5)}


def assert_almost_equal(a, b, rtol=None, atol=None, **kwargs):
    """test_utils.assert_almost_equal with equal shapes required and tight default
    tolerances (float16 1e-2/1e-3, float32 1e-4/1e-5, wider types 1e-7/1e-9)."""
    dtype = str(getattr(a, "dtype", onp.asarray(a).dtype))
    tight = _TIGHT.get(dtype, (1e-7, 1e-9))
    test_utils.assert_almost_equal(a, b, rtol=tight[0] if rtol is None else rtol,
                                   atol=tight[1] if atol is None else atol,
                                   use_broadcast=False, **kwargs)
