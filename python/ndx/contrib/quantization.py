"""MXNet 2.0's ``mx.contrib.quantization``: post-training INT8 quantization of a float32
network, with or without calibration.

``quantize_net`` (Gluon) and ``quantize_model`` / ``quantize_graph`` + ``calib_graph``
(symbols) rewrite the network's graph JSON:

1. an inference BatchNorm right after a convolution / fully_connected (its only consumer) is
   folded into that op's weight and bias;
2. convolution and fully_connected become ``_contrib_quantized_conv`` /
   ``_contrib_quantized_fully_connected`` with int8 weights quantized offline (one range per
   tensor, or per output channel) and a float32 bias; a relu that is their only consumer is
   fused into them (``with_relu``);
3. max / avg pooling, relu and flatten on int8 data, and additions of two int8 arrays of one
   shape (residual connections; the shapes come from a run on the example or calibration
   data, so quantize_graph and an uncalibrated quantize_model leave additions float), run
   as their quantized ops ('full' mode: whenever their data is int8; 'smart': only where
   every consumer is quantized too);
4. a float value entering a quantized op gets a ``_contrib_quantize_v2``, an int8 value
   entering a float op (or leaving the graph) a ``_contrib_dequantize``.

Without calibration the quantized conv / fully_connected / addition answer in int32 and a
``_contrib_requantize`` (range found at run time) feeds their quantized consumers. With
calibration ('naive': min / max over the calibration data; 'entropy': the threshold of least
KL divergence; 'custom': a CalibrationCollector) the layers whose output goes on to a
quantized op answer in int8 / uint8 directly, in the calibrated range, and the
quantize_v2 nodes get calibrated ranges too.

Layer names (the keys of the calibration tables and the names exclude_layers takes): a node's
own name when the graph has no other node of that name and it is not just the op's name
(symbols built with name='conv1'); else, for a node with a parameter, the parameter's
structured name without its last part (the Gluon block's path, '0' for '0.weight',
'features.4.0.body.0' ...); else the node's name followed by its index among the nodes of
that name ('_npx_pooling0', '_npx_relu1'). exclude_layers also takes a node's own name,
which matches every node of that name ('_npx_convolution': every convolution, as the node
names of a traced graph are their ops')."""
import abc
import json
import math
import numbers
import warnings

import numpy as _onp

from ..device import Device, cpu
from ..util import wrap_ctx_to_device_func

__all__ = ["CalibrationCollector", "quantize_net", "quantize_model", "quantize_model_onednn",
           "quantize_model_mkldnn", "quantize_graph", "calib_graph", "combine_histogram"]

_CONV = "_npx_convolution"
_FC = "_npx_fully_connected"
_BN = "_npx_batch_norm"
_POOL = "_npx_pooling"
_RELU = "_npx_relu"
_ACT = "_npx_activation"
_RESHAPE = "_npx_reshape"
_ADD = "_np_add"
_CONCAT = "_npi_concatenate"


_Q_CONV = "_contrib_quantized_conv"
_Q_FC = "_contrib_quantized_fully_connected"
_Q_POOL = "_contrib_quantized_pooling"
_Q_ACT = "_contrib_quantized_act"
_Q_FLATTEN = "_contrib_quantized_flatten"
_Q_ADD = "_contrib_quantized_elemwise_add"
_Q_CONCAT = "_contrib_quantized_concat"
_Q_BN = "_contrib_quantized_batch_norm"


_QUANTIZE = "_contrib_quantize_v2"
_DEQUANTIZE = "_contrib_dequantize"
_REQUANTIZE = "_contrib_requantize"

_DTYPES = ("auto", "int8", "uint8")
_MODES = ("full", "smart")
_GRANULARITIES = ("tensor-wise", "channel-wise")
_CALIB_MODES = ("none", "naive", "entropy", "custom")
_LAYOUTS = (None, "None", "NCW", "NCHW", "NCDHW")

# exclude_operators / excluded_op_names: MXNet's op names (and oneDNN's fused ones), npx's,
# for the kinds of node this pass quantizes or folds; ndx's op names are taken as they are.
_OP_KINDS = {
    "Convolution": "conv", "convolution": "conv", "sg_onednn_conv": "conv",
    "sg_mkldnn_conv": "conv", "_sg_onednn_conv": "conv", "_sg_mkldnn_conv": "conv",
    "FullyConnected": "fc", "fully_connected": "fc", "sg_onednn_fully_connected": "fc",
    "sg_mkldnn_fully_connected": "fc", "_sg_onednn_fully_connected": "fc",
    "_sg_mkldnn_fully_connected": "fc",
    "Pooling": "pool", "pooling": "pool",
    "Activation": "relu", "activation": "relu", "relu": "relu",
    "Flatten": "flatten", "flatten": "flatten", "batch_flatten": "flatten",
    "BatchNorm": "bn", "batch_norm": "bn",
    "elemwise_add": "add", "_plus": "add", "broadcast_add": "add", "add": "add",
    "_contrib_quantized_elemwise_add": "add",
    "Concat": "concat", "concat": "concat", "concatenate": "concat",
    "_contrib_quantized_concat": "concat",
}

_NUM_BINS = 8001
_NUM_QUANTIZED_BINS = 255
_SMOOTH_EPS = 1e-4
_MAX_HIST_BINS = 1 << 20  # a growing histogram is re-binned rather than made longer


# ----------------------------------------------------------------------------- argument checks
def _check_choice(where, name, value, choices):
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"[{where}] {name} must be one of {', '.join(map(repr, choices))}, "
                         f"got {value!r}")
    return value


def _calib_mode(where, calib_mode):
    return _check_choice(where, "calib_mode", "none" if calib_mode is None else calib_mode,
                         _CALIB_MODES)


def _name_list(where, name, value):
    if value is None:
        return []
    if isinstance(value, str) or not isinstance(value, (list, tuple, set)):
        raise TypeError(f"[{where}] {name} must be a list of str, got {type(value).__name__}")
    for v in value:
        if not isinstance(v, str):
            raise TypeError(f"[{where}] {name} must be a list of str, got an element "
                            f"{v!r} ({type(v).__name__})")
    return list(value)


def _check_batches(where, num_calib_batches):
    if num_calib_batches is None:
        return None
    if isinstance(num_calib_batches, bool) or not isinstance(num_calib_batches,
                                                             numbers.Integral):
        raise TypeError(f"[{where}] num_calib_batches must be a positive int or None, got "
                        f"{type(num_calib_batches).__name__}")
    if num_calib_batches < 1:
        raise ValueError(f"[{where}] num_calib_batches must be a positive int or None, got "
                         f"{num_calib_batches}")
    return int(num_calib_batches)


def _check_device(where, device):
    if device is None:
        return cpu()
    try:
        dev = Device(device)
    except (TypeError, ValueError):
        raise ValueError(f"[{where}] device must be a Device, got {device!r}") from None
    if dev.device_type != "cpu":
        raise ValueError(f"[{where}] the quantized ops run on the CPU only: device must be "
                         f"cpu(), got {device}")
    return dev


def _check_collector(where, collector):
    if collector is None:
        raise ValueError(f"[{where}] calib_mode='custom' needs LayerOutputCollector, an "
                         "instance of CalibrationCollector; got None")
    if not isinstance(collector, CalibrationCollector):
        raise TypeError(f"[{where}] LayerOutputCollector must be an instance of "
                        f"CalibrationCollector, got {type(collector).__name__}")


def _make_collector(where, calib_mode, quantized_dtype, calib_layers, collector, logger):
    """The collector of a calibration mode (None for 'none'); a custom one gets the layer
    names in include_layers unless it chose some itself."""
    if calib_mode == "none":
        return None
    if calib_mode == "entropy":
        return _LayerHistogramCollector(quantized_dtype, include_layers=calib_layers,
                                        logger=logger)
    if calib_mode == "naive":
        return _LayerOutputMinMaxCollector(quantized_dtype, include_layers=calib_layers,
                                           logger=logger)
    _check_collector(where, collector)
    if getattr(collector, "include_layers", None) is None:
        collector.include_layers = list(calib_layers)
    elif logger:
        logger.info("The custom collector chose its include_layers itself: the layers "
                    "needing calibration are not given to it")
    return collector


# ------------------------------------------------------------------------- calibration tables
class CalibrationCollector(abc.ABC):
    """The base of calibration collectors (MXNet 2.0's): ``collect(name, op_name, arr)`` is
    called with every layer output the calibration needs (``include_layers`` names them;
    quantize_net / quantize_graph fill it in when it is None), over every calibration batch;
    ``post_collect()`` then returns {layer name: (min, max)}, by default
    ``self.min_max_dict``."""

    def __init__(self):
        self.include_layers = None
        self.min_max_dict = {}

    @abc.abstractmethod
    def collect(self, name, op_name, arr):
        """Takes one array (an ndx ndarray) that layer `name` (of op `op_name`) output."""

    def post_collect(self):
        """{layer name: (min, max)}: the thresholds to quantize each layer's output with."""
        return self.min_max_dict


def _as_numpy(arr):
    if hasattr(arr, "asnumpy"):
        return arr.asnumpy()
    return _onp.asarray(arr)


class _LayerOutputMinMaxCollector(CalibrationCollector):
    """'naive' calibration: each layer's minimum and maximum over all the batches."""

    def __init__(self, quantized_dtype="int8", include_layers=None, logger=None):
        super().__init__()
        self.quantized_dtype = quantized_dtype
        self.include_layers = include_layers
        self.logger = logger

    def collect(self, name, op_name, arr):
        if self.include_layers is not None and name not in self.include_layers:
            return
        a = _as_numpy(arr)
        if a.size == 0:
            return
        lo, hi = float(a.min()), float(a.max())
        if name in self.min_max_dict:
            old = self.min_max_dict[name]
            lo, hi = min(old[0], lo), max(old[1], hi)
        self.min_max_dict[name] = (lo, hi)
        if self.logger:
            self.logger.debug("Collecting layer %s min_range=%f, max_range=%f", name, lo, hi)


def combine_histogram(old_hist, arr, new_min, new_max, new_th):
    """The histogram `old_hist` = (counts, edges, min, max, th) over [-th, th] with the values
    of `arr` added (its min, max and max(|min|, |max|) given): when new_th is past th, the
    range grows by whole bins on both sides (the bin width kept, so the old counts keep their
    bins), as MXNet's collector does; the result has the same 5 fields."""
    counts, edges, old_min, old_max, old_th = old_hist
    counts = _onp.asarray(counts)
    a = _onp.asarray(arr, dtype=_onp.float64).ravel()
    lo, hi = min(old_min, new_min), max(old_max, new_max)
    n = len(counts)
    if old_th <= 0:  # every value so far was 0: it lands in the middle bin of the new range
        th = max(float(new_th), 0.0)
        if th == 0:
            out = counts.copy()
            out[n // 2] += a.size
            return out, edges, lo, hi, old_th
        new, new_edges = _onp.histogram(a, bins=n, range=(-th, th))
        new[n // 2] += counts.sum()
        return new, new_edges, lo, hi, th
    if new_th <= old_th:
        add, _ = _onp.histogram(a, bins=n, range=(-old_th, old_th))
        return counts + add, edges, lo, hi, old_th
    width = 2.0 * old_th / n
    grow = int((new_th - old_th) // width) + 1  # bins added on each side
    if n + 2 * grow > _MAX_HIST_BINS:
        # (a range that grew by orders of magnitude: re-bin onto n bins of the new range,
        # each old bin's count going to the new bin holding its centre)
        th = float(new_th)
        new, new_edges = _onp.histogram(a, bins=n, range=(-th, th))
        centres = (_onp.asarray(edges[:-1]) + _onp.asarray(edges[1:])) / 2
        where = _onp.clip(((centres + th) / (2 * th) * n).astype(_onp.int64), 0, n - 1)
        _onp.add.at(new, where, counts)
        return new, new_edges, lo, hi, th
    th = old_th + grow * width
    new, new_edges = _onp.histogram(a, bins=n + 2 * grow, range=(-th, th))
    new[grow:grow + n] += counts
    return new, new_edges, lo, hi, th


def _smoothed_kl(hist, num_quantized_bins, eps=_SMOOTH_EPS, chunk=1024):
    """(upper bin index, KL divergence) of every candidate threshold of an odd-length
    histogram centred on 0. Candidate i keeps the 2i + 1 middle bins (i from
    num_quantized_bins // 2 to the last): P is those bins with the counts outside them added
    to the two end bins; Q is the kept bins (without the outside counts) merged into
    num_quantized_bins groups of len // num_quantized_bins bins (the last group takes the
    rest), each group's total spread evenly over its nonzero bins (a zero bin stays zero).
    Both are normalized, then smoothed: zero entries become eps and the distribution is
    divided by 1 + eps * (number of zeros). The divergence is sum(P log(P / Q)).

    The sums are taken in closed form from cumulative sums (counts, nonzero counts and
    c log c), so a candidate costs O(num_quantized_bins) rather than O(len(hist))."""
    h = _onp.asarray(hist, dtype=_onp.float64)
    n = len(h)
    zero = n // 2
    nq = int(num_quantized_bins)
    first = nq // 2
    if first > zero:
        return _onp.array([n], dtype=_onp.int64), _onp.array([0.0])
    c_sum = _onp.concatenate([[0.0], _onp.cumsum(h)])
    c_nz = _onp.concatenate([[0], _onp.cumsum(h > 0)])
    hlogh = _onp.zeros_like(h)
    pos = h > 0
    hlogh[pos] = h[pos] * _onp.log(h[pos])
    c_hl = _onp.concatenate([[0.0], _onp.cumsum(hlogh)])
    total = c_sum[-1]
    all_i = _onp.arange(first, zero + 1)
    stops, divs = [], []
    for at in range(0, len(all_i), chunk):
        i = all_i[at:at + chunk]
        lo, hi = zero - i, zero + i + 1
        length = hi - lo
        m = length // nq
        j = _onp.arange(nq + 1)
        bounds = lo[:, None] + j[None, :] * m[:, None]
        bounds[:, -1] = hi
        gs = c_sum[bounds[:, 1:]] - c_sum[bounds[:, :-1]]       # counts per group
        gnz = c_nz[bounds[:, 1:]] - c_nz[bounds[:, :-1]]        # nonzero bins per group
        ref = c_sum[hi] - c_sum[lo]                              # counts kept
        left, right = c_sum[lo], total - c_sum[hi]               # counts outside
        h_lo, h_hi = h[lo], h[hi - 1]
        p_lo, p_hi = h_lo + left, h_hi + right                   # the end bins of P
        nnz = c_nz[hi] - c_nz[lo]
        zq = length - nnz                                        # zeros of Q: zero bins
        b_lo = (h_lo == 0) & (left > 0)                          # P > 0 where Q = 0
        b_hi = (h_hi == 0) & (right > 0)
        zp = zq - b_lo - b_hi
        ap, aq = 1 + eps * zp, 1 + eps * zq
        with _onp.errstate(divide="ignore", invalid="ignore"):
            # sum of P log P over the bins where the kept counts are nonzero
            inner = (c_hl[hi - 1] - c_hl[lo + 1]) / total \
                - _onp.log(total) * (c_sum[hi - 1] - c_sum[lo + 1]) / total
            ends = _onp.zeros_like(inner)
            for pe, he in ((p_lo, h_lo), (p_hi, h_hi)):
                pe_n = pe / total
                ends += _onp.where(he > 0, pe_n * _onp.log(_onp.where(he > 0, pe_n, 1)), 0)
            plogp = inner + ends
            # P's mass per group (over its nonzero bins) and sum of P log Q
            pa = gs.copy()
            pa[:, 0] += _onp.where(h_lo > 0, left, 0)
            pa[:, -1] += _onp.where(h_hi > 0, right, 0)
            pa /= total
            q_level = _onp.where(gnz > 0, gs / _onp.maximum(gnz, 1) / ref[:, None], 1.0)
            plogq = _onp.where(pa > 0, pa * _onp.log(q_level), 0).sum(axis=1)
            pa_total = pa.sum(axis=1)
            div = (plogp - plogq) / ap + pa_total / ap * _onp.log(aq / ap)
            for bad, out in ((b_lo, left), (b_hi, right)):
                pe = out / total / ap
                div += _onp.where(bad, pe * _onp.log(_onp.where(bad, pe, 1) / (eps / aq)), 0)
            div += zp * (eps / ap) * _onp.log(aq / ap)
        div = _onp.where(ref > 0, div, _onp.inf)
        stops.append(hi)
        divs.append(div)
    return _onp.concatenate(stops), _onp.concatenate(divs)


def _get_optimal_threshold(hist_data, quantized_dtype="int8",
                           num_quantized_bins=_NUM_QUANTIZED_BINS):
    """(min, max, threshold, divergence) of a histogram (counts, edges, min, max[, th]) over a
    range symmetric about 0 with an odd number of bins: the threshold whose quantization
    (num_quantized_bins levels over [-threshold, threshold]) keeps the distribution closest
    in KL divergence (see _smoothed_kl; the idea of NVIDIA's TensorRT INT8 calibration).
    Data with no negative values quantized to uint8 ('auto' or 'uint8') has its levels on the
    positive side only, so the symmetric histogram gets 2 * num_quantized_bins + 1 levels."""
    counts, edges, min_val, max_val = hist_data[:4]
    counts = _onp.asarray(counts)
    edges = _onp.asarray(edges, dtype=_onp.float64)
    if len(counts) % 2 != 1:
        raise ValueError(f"[_get_optimal_threshold] the histogram needs an odd number of "
                         f"bins (one centred on 0), got {len(counts)}")
    if min_val >= 0 and quantized_dtype in ("auto", "uint8"):
        num_quantized_bins = num_quantized_bins * 2 + 1
    if counts.sum() == 0 or edges[-1] <= 0:
        return min_val, max_val, float(max(abs(min_val), abs(max_val))), 0.0
    stops, divs = _smoothed_kl(counts, num_quantized_bins)
    best = int(_onp.argmin(divs))
    return min_val, max_val, float(edges[stops[best]]), float(divs[best])


def _get_optimal_thresholds(hist_dict, quantized_dtype="int8",
                            num_quantized_bins=_NUM_QUANTIZED_BINS, logger=None):
    """{name: (min, max)} thresholds of {name: histogram}: (-t, t) with t the optimal
    threshold, or (0, t) for non-negative data quantized to uint8 ('auto' / 'uint8')."""
    if logger:
        logger.info("Calculating optimal thresholds for quantization using KL divergence with "
                    "num_quantized_bins=%d", num_quantized_bins)
    out = {}
    for name, hist in hist_dict.items():
        lo, hi, th, div = _get_optimal_threshold(hist, quantized_dtype, num_quantized_bins)
        out[name] = (0.0, th) if lo >= 0 and quantized_dtype in ("auto", "uint8") else (-th, th)
        if logger:
            logger.debug("layer=%s, min_val=%f, max_val=%f, th=%f, divergence=%f", name, lo,
                         hi, th, div)
    return out


class _LayerHistogramCollector(CalibrationCollector):
    """'entropy' calibration: a histogram of each layer's values (num_bins bins over
    [-max |x|, max |x|], grown as later batches reach further: combine_histogram), whose
    KL-optimal thresholds post_collect returns."""

    def __init__(self, quantized_dtype="int8", num_bins=_NUM_BINS, include_layers=None,
                 logger=None):
        super().__init__()
        if num_bins % 2 != 1:
            raise ValueError(f"[_LayerHistogramCollector] num_bins must be odd (a bin centred "
                             f"on 0), got {num_bins}")
        self.hist_dict = {}
        self.num_bins = num_bins
        self.quantized_dtype = quantized_dtype
        self.include_layers = include_layers
        self.logger = logger

    combine_histogram = staticmethod(combine_histogram)
    get_optimal_threshold = staticmethod(_get_optimal_threshold)
    get_optimal_thresholds = staticmethod(_get_optimal_thresholds)

    def collect(self, name, op_name, arr):
        if self.include_layers is not None and name not in self.include_layers:
            return
        a = _as_numpy(arr).astype(_onp.float64, copy=False).ravel()
        if a.size == 0:
            return
        lo, hi = float(a.min()), float(a.max())
        th = max(abs(lo), abs(hi))
        if self.logger:
            self.logger.debug("Collecting layer %s histogram of shape %s", name, a.shape)
        if name in self.hist_dict:
            self.hist_dict[name] = combine_histogram(self.hist_dict[name], a, lo, hi, th)
        elif th == 0:
            counts = _onp.zeros(self.num_bins, dtype=_onp.int64)
            counts[self.num_bins // 2] = a.size
            self.hist_dict[name] = (counts, _onp.zeros(self.num_bins + 1), lo, hi, 0.0)
        else:
            counts, edges = _onp.histogram(a, bins=self.num_bins, range=(-th, th))
            self.hist_dict[name] = (counts, edges, lo, hi, th)

    def post_collect(self):
        self.min_max_dict = _get_optimal_thresholds(self.hist_dict, self.quantized_dtype,
                                                    logger=self.logger)
        return self.min_max_dict


# ------------------------------------------------------------------------------ graph helpers
def _attr(node, key, default=None):
    v = node.get("attrs", {}).get(key)
    return default if v is None else v


def _literal(text):
    import ast
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def _is_true(text):
    return str(text).strip().lower() in ("true", "1")


def _kind(node):
    """What the pass can do with a node: 'conv', 'fc', 'bn', 'pool', 'relu', 'flatten',
    'add', 'concat' or None."""
    op = node["op"]
    if op == _CONV:
        return "conv" if _attr(node, "layout") in _LAYOUTS else None
    if op == _FC:
        return "fc"
    if op == _BN:
        return "bn"
    if op == _POOL:
        if _attr(node, "pool_type", "max") in ("max", "avg") and \
                _attr(node, "layout") in _LAYOUTS:
            return "pool"
        return None
    if op == _RELU or (op == _ACT and _attr(node, "act_type") == "relu"):
        return "relu"
    if op == _RESHAPE and _literal(_attr(node, "newshape", "")) == (-2, -1) and \
            not _is_true(_attr(node, "reverse", "False")):
        return "flatten"
    if op == _ADD and len(node.get("inputs", [])) == 2:
        return "add"
    if op == _CONCAT and node.get("inputs"):
        return "concat"
    return None


def _data_positions(node):
    """The inputs of a quantizable node that carry its data (the others: weights)."""
    kind = _kind(node)
    if kind == "concat":
        return tuple(range(len(node["inputs"])))
    return (0, 1) if kind == "add" else (0,)


def _consumers(nodes, heads):
    """{(node, output): [(consumer node, input position) ...]}, graph heads as ('head', k)."""
    users = {}
    for i, node in enumerate(nodes):
        for pos, e in enumerate(node.get("inputs", [])):
            users.setdefault((e[0], e[1]), []).append((i, pos))
    for k, e in enumerate(heads):
        users.setdefault((e[0], e[1]), []).append(("head", k))
    return users


def _toposort(nodes, heads, attrs, private=False):
    """The document of the nodes reachable from heads, in an order where inputs come first
    (nodes may refer to nodes listed after them), renumbered; the private keys of the nodes
    (those starting with '_') dropped unless `private`."""
    order, state = [], {}
    for h in heads:
        stack = [(h[0], False)]
        while stack:
            n, done = stack.pop()
            if done:
                if state.get(n) != 2:
                    state[n] = 2
                    order.append(n)
                continue
            if state.get(n):
                continue
            state[n] = 1
            stack.append((n, True))
            for e in reversed(nodes[n].get("inputs", [])):
                if not state.get(e[0]):
                    stack.append((e[0], False))
    renum = {old: new for new, old in enumerate(order)}
    out = []
    for old in order:
        node = {k: v for k, v in nodes[old].items() if private or not k.startswith("_")}
        node["inputs"] = [[renum[e[0]], e[1], 0] for e in nodes[old].get("inputs", [])]
        out.append(node)
    arg_nodes = [i for i, n in enumerate(out)
                 if n["op"] == "null" and "__const__" not in n.get("attrs", {})]
    return {"nodes": out, "arg_nodes": arg_nodes,
            "heads": [[renum[h[0]], h[1], 0] for h in heads], "attrs": dict(attrs or {})}


def _layer_names(nodes, params):
    """The layer name of every node (see the module's docstring)."""
    from collections import Counter
    count = Counter(n["name"] for n in nodes)
    used = {n["name"] for n in nodes if n["op"] == "null"}
    seen = Counter()
    names = []
    for node in nodes:
        name = node["name"]
        if node["op"] == "null":
            names.append(name)
            continue
        index = seen[name]
        seen[name] += 1
        if count[name] == 1 and name != node["op"] and name not in used:
            cand = name
        else:
            cand = None
            for e in node.get("inputs", []):
                src = nodes[e[0]]
                if src["op"] == "null" and src["name"] in params and "." in src["name"]:
                    cand = src["name"].rsplit(".", 1)[0]
                    break
            if cand is None:
                cand = f"{name}{index}"
        unique, k = cand, 1
        while unique in used:
            unique, k = f"{cand}_{k}", k + 1
        used.add(unique)
        names.append(unique)
    return names


def _entry_name(nodes, e):
    """The calibration name of output e = (node, index): the node's layer name, with
    '_output<k>' for an output other than the first."""
    node = nodes[e[0]]
    base = node["_layer"] if node["op"] != "null" else node["name"]
    return base if e[1] == 0 else f"{base}_output{e[1]}"


def _fmt(value):
    return repr(float(value))


# ------------------------------------------------------------------------ the graph analysis
class _Plan:
    """A float graph prepared for quantization: BatchNorms folded, the quantized nodes and
    relu fusions chosen, and the values whose ranges calibration needs."""

    def __init__(self, doc, values, data_names, excluded, excluded_match, excluded_ops,
                 quantize_mode, where, logger=None, example=None):
        self.where = where
        self.data_names = list(data_names)
        self.attrs = doc.get("attrs", {})
        nodes = [dict(n, inputs=[list(e[:2]) for e in n.get("inputs", [])])
                 for n in doc["nodes"]]
        heads = [list(h[:2]) for h in doc["heads"]]
        self.values = {k: _onp.asarray(v) for k, v in values.items()}
        layers = _layer_names(nodes, self.values)
        for node, layer in zip(nodes, layers):
            node["_layer"] = layer
        self._mark_excluded(nodes, excluded, excluded_match, excluded_ops, logger)
        nodes, heads = self._fold_batch_norms(nodes, heads)
        doc1 = _toposort(nodes, heads, self.attrs, private=True)
        self.nodes, self.heads = doc1["nodes"], doc1["heads"]
        self.shapes = self._add_shapes(example)
        self._choose(quantize_mode)
        self._calibration_entries()

    # -- exclusions
    def _mark_excluded(self, nodes, excluded, excluded_match, excluded_ops, logger):
        names = set(excluded)
        found, matched, ops_found = set(), set(), set()
        for node in nodes:
            if node["op"] == "null":
                continue
            hit = node["_layer"] in names or node["name"] in names
            found.update({node["_layer"], node["name"]} & names)
            hits = {m for m in excluded_match if m in node["_layer"] or m in node["name"]}
            matched |= hits
            hit = hit or bool(hits)
            ops_hit = {op for op in excluded_ops if node["op"] == op or
                       (op in _OP_KINDS and _kind(node) == _OP_KINDS[op])}
            ops_found |= ops_hit
            node["_excluded"] = hit or bool(ops_hit)
        missing = sorted(names - found)
        if missing:
            warnings.warn(f"[{self.where}] excluded layers not in the network: {missing}",
                          stacklevel=4)
        unmatched = sorted(set(excluded_match) - matched)
        if unmatched:
            warnings.warn(f"[{self.where}] exclude_layers_match patterns that match no layer: "
                          f"{unmatched}", stacklevel=4)
        no_op = sorted(set(excluded_ops) - ops_found)
        if no_op:
            warnings.warn(f"[{self.where}] excluded operators that match no node the pass "
                          f"quantizes or folds: {no_op} (it takes MXNet's op names such as "
                          f"'Convolution', 'FullyConnected', 'Pooling', 'Activation', "
                          f"'Flatten', 'BatchNorm', or ndx's)", stacklevel=4)
        self.excluded_layers = [n["_layer"] for n in nodes
                                if n["op"] != "null" and n["_excluded"]]
        if logger and self.excluded_layers:
            logger.info("These layers have been excluded %s", self.excluded_layers)

    # -- BatchNorm folding
    def _param(self, nodes, e):
        """The name of the parameter at entry e, None when it is not a float parameter."""
        src = nodes[e[0]]
        if src["op"] != "null" or e[1] != 0 or src["name"] not in self.values or \
                src["name"] in self.data_names:
            return None
        if self.values[src["name"]].dtype.kind != "f":
            return None
        return src["name"]

    def _unique(self, name):
        taken = self._taken
        unique, k = name, 1
        while unique in taken:
            unique, k = f"{name}_{k}", k + 1
        taken.add(unique)
        return unique

    def _fold_batch_norms(self, nodes, heads):
        self._taken = {n["name"] for n in nodes if n["op"] == "null"} | set(self.values)
        users = _consumers(nodes, heads)
        redirect = {}
        for b, bn in enumerate(nodes):
            if bn["op"] != _BN or bn["_excluded"] or len(bn["inputs"]) != 5:
                continue
            src, idx = bn["inputs"][0]
            op = nodes[src]
            kind = _kind(op)
            if idx != 0 or kind not in ("conv", "fc") or op["_excluded"]:
                continue
            if users.get((src, 0)) != [(b, 0)] or users.get((b, 1)) or users.get((b, 2)):
                continue
            w = self._param(nodes, op["inputs"][1]) if len(op["inputs"]) > 1 else None
            no_bias = _is_true(_attr(op, "no_bias", "False")) or len(op["inputs"]) < 3
            bias = None if no_bias else self._param(nodes, op["inputs"][2])
            stats = [self._param(nodes, e) for e in bn["inputs"][1:5]]
            if w is None or (not no_bias and bias is None) or None in stats:
                continue
            axis = int(_literal(_attr(bn, "axis", "1")))
            if kind == "conv" and axis != 1:
                continue
            if kind == "fc" and not (axis == -1 or
                                     (axis == 1 and _is_true(_attr(op, "flatten", "True")))):
                continue
            gamma, beta, mean, var = (self.values[s].astype(_onp.float64) for s in stats)
            if _is_true(_attr(bn, "fix_gamma", "False")):
                gamma = _onp.ones_like(gamma)
            eps = float(_literal(_attr(bn, "eps", "1e-5")))
            weight = self.values[w]
            scale = gamma / _onp.sqrt(var + eps)
            shape = (-1,) + (1,) * (weight.ndim - 1)
            new_w = (weight.astype(_onp.float64) * scale.reshape(shape)).astype(weight.dtype)
            b0 = self.values[bias].astype(_onp.float64) if bias else _onp.zeros_like(mean)
            new_b = ((b0 - mean) * scale + beta).astype(weight.dtype)
            prefix = w[:-len("weight")] if w.endswith("weight") else f"{w}_"
            w_name = self._unique(f"{prefix}weight_folded")
            b_name = self._unique(f"{prefix}bias_folded")
            self.values[w_name], self.values[b_name] = new_w, new_b
            nodes.append({"op": "null", "name": w_name, "inputs": []})
            nodes.append({"op": "null", "name": b_name, "inputs": []})
            op["inputs"] = [op["inputs"][0], [len(nodes) - 2, 0], [len(nodes) - 1, 0]]
            op["attrs"] = dict(op.get("attrs", {}), no_bias="False")
            op["_folded"] = bn["_layer"]
            redirect[(b, 0)] = [src, 0]
        for node in nodes:
            node["inputs"] = [redirect.get(tuple(e), e) for e in node["inputs"]]
        heads = [redirect.get(tuple(h), h) for h in heads]
        return nodes, heads

    def _add_shapes(self, example):
        """{entry: shape} of the inputs of the graph's additions (quantized_elemwise_add
        takes two arrays of one shape), from a run of the float graph on the example inputs;
        {} without them (the additions then stay float)."""
        entries = [tuple(e) for n in self.nodes if n["op"] != "null" and _kind(n) == "add"
                   and not n["_excluded"] for e in n["inputs"]]
        if not entries or example is None:
            return {}
        from .. import _core
        from .. import numpy as np
        from ..gluon.block import SymbolBlock
        heads = list(dict.fromkeys(e for e in entries if self.nodes[e[0]]["op"] != "null"))
        shapes = {e: tuple(example[self.data_names.index(self.nodes[e[0]]["name"])].shape)
                  for e in entries if self.nodes[e[0]]["op"] == "null" and
                  self.nodes[e[0]]["name"] in self.data_names}
        if heads:
            doc = _toposort(self.nodes, [list(h) for h in heads], self.attrs)
            used = {n["name"] for n in doc["nodes"] if n["op"] == "null"}
            values = {k: np.array(v, dtype=v.dtype) for k, v in self.values.items()
                      if k in used and k not in self.data_names}
            feed = [k for k, d in enumerate(self.data_names) if d in used]
            block = SymbolBlock(_core._graph_load(json.dumps(doc)),
                                [self.data_names[k] for k in feed], values)
            outs = block(*[example[k] for k in feed])
            outs = outs if isinstance(outs, (list, tuple)) else [outs]
            shapes.update({e: tuple(o.shape) for e, o in zip(heads, outs)})
        return shapes

    # -- what gets quantized
    def _choose(self, mode):
        nodes, heads = self.nodes, self.heads
        users = _consumers(nodes, heads)
        self.users = users
        for i, node in enumerate(nodes):
            node["_q"] = False
            kind = _kind(node) if node["op"] != "null" else None
            if kind in ("conv", "fc") and not node["_excluded"]:
                w_ok = len(node["inputs"]) > 1 and self._param(nodes, node["inputs"][1])
                no_bias = _is_true(_attr(node, "no_bias", "False"))
                b_ok = no_bias or (len(node["inputs"]) > 2 and
                                   self._param(nodes, node["inputs"][2]))
                node["_q"] = bool(w_ok and b_ok)
        # relu fusion: a relu that is a quantized conv / fc's only consumer
        for i, node in enumerate(nodes):
            if not node["_q"]:
                continue
            use = users.get((i, 0), [])
            if len(use) == 1 and use[0][0] != "head":
                r = nodes[use[0][0]]
                if _kind(r) == "relu" and not r["_excluded"]:
                    node["_relu"] = use[0][0]
                    r["_fused"] = i
        # pooling / relu / flatten / concat on int8 data, additions of two int8 arrays of
        # one shape, and the BatchNorms no convolution took (pre-activation networks)
        cands = [i for i, n in enumerate(nodes)
                 if n["op"] != "null" and _kind(n) in ("pool", "relu", "flatten", "add",
                                                       "concat", "bn")
                 and not n["_excluded"] and "_fused" not in n and
                 (_kind(n) != "bn" or self._bn_quantizable(i))]

        def producer_q(e):
            src = nodes[e[0]]
            if "_fused" in src:
                return e[1] == 0
            return src["_q"] and e[1] == 0

        def inputs_q(node):
            ins = [node["inputs"][k] for k in _data_positions(node)]
            if not all(producer_q(e) for e in ins):
                return False
            if _kind(node) == "add":
                shapes = [self.shapes.get(tuple(e)) for e in ins]
                return shapes[0] is not None and shapes[0] == shapes[1]
            return True

        for i in cands:  # (nodes are in topological order)
            nodes[i]["_q"] = inputs_q(nodes[i])
        if mode == "smart":
            changed = True
            while changed:
                changed = False
                for i in cands:
                    node = nodes[i]
                    if not node["_q"]:
                        continue
                    ok = inputs_q(node) and all(self._is_q_consumer(u, pos)
                                                for u, pos in users.get((i, 0), []))
                    if not ok:
                        node["_q"] = False
                        changed = True

    def _bn_quantizable(self, i):
        """Whether BatchNorm node i can run as quantized_batch_norm: still in the graph (not
        folded), its statistics known parameters, only its output read."""
        node, users = self.nodes[i], self.users
        if not users.get((i, 0)) or users.get((i, 1)) or users.get((i, 2)):
            return False
        return len(node["inputs"]) == 5 and all(
            self._param(self.nodes, e) is not None for e in node["inputs"][1:5])

    def _out_entry(self, i):
        """The entry of the float graph a quantized node's (fused) output stands for."""
        node = self.nodes[i]
        return (node["_relu"], 0) if "_relu" in node else (i, 0)

    def _is_q_consumer(self, u, pos):
        """Whether input `pos` of node u reads int8 data."""
        return u != "head" and self.nodes[u]["_q"] and pos in _data_positions(self.nodes[u])

    def _calibration_entries(self):
        """{name: entry} of the values calibration needs: the float values entering quantized
        ops (their quantize_v2 gets a calibrated range), and the outputs of the quantized
        conv / fc / add that feed a quantized op (they answer in int8 in the calibrated
        range)."""
        nodes, users = self.nodes, self.users
        wanted = {}
        for i, node in enumerate(nodes):
            if not node["_q"] or "_fused" in node:
                continue
            for k in _data_positions(node):
                e = node["inputs"][k]
                src = nodes[e[0]]
                if not (src["_q"] or "_fused" in src) or e[1] != 0:
                    wanted.setdefault(_entry_name(nodes, e), tuple(e[:2]))
            if _kind(node) in ("conv", "fc", "add", "bn"):
                out = self._out_entry(i)
                if any(self._is_q_consumer(u, pos) for u, pos in users.get(out, [])):
                    wanted.setdefault(node["_layer"], out)
        self.wanted = wanted
        self.calib_layers = list(wanted)

    # -- the quantized graph
    def build(self, quantized_dtype, granularity):
        """(uncalibrated quantized graph document, {parameter name: value})."""
        nodes = self.nodes
        out, rep, cache = [], {}, {}
        new_id = {}
        qvalues = {}
        self._taken = {n["name"] for n in nodes if n["op"] == "null"} | set(self.values)

        def add(node):
            out.append(node)
            return len(out) - 1

        def var(name, value):
            """A new parameter (its name made unique), or the one made for `name` before."""
            if ("var", name) not in cache:
                unique = self._unique(name)
                cache[("var", name)] = add({"op": "null", "name": unique, "inputs": []})
                qvalues[unique] = value
            return [cache[("var", name)], 0]

        def existing(name):
            """The entry of the graph's own parameter `name`."""
            return [new_id[var_index[name]], 0]

        def lookup(e):
            e = tuple(e[:2])
            if e in rep:
                return rep[e]
            return ("f", [new_id[e[0]], e[1]])

        def as_float(e):
            r = lookup(e)
            if r[0] == "f":
                return r[1]
            key = ("deq", r[1][0][0], r[1][0][1])
            if key not in cache:
                cache[key] = add({"op": _DEQUANTIZE, "name": f"{r[2]}_dequantize",
                                  "attrs": {"out_type": "float32"}, "inputs": list(r[1])})
            return [cache[key], 0]

        def as_int8(e):
            r = lookup(e)
            if r[0] == "q":
                return r[1]
            if r[0] == "i32":
                key = ("req", r[1][0][0])
                if key not in cache:
                    out_type = "uint8" if r[3] else "int8"
                    cache[key] = add({"op": _REQUANTIZE, "name": f"{r[2]}_requantize",
                                      "attrs": {"out_type": out_type}, "inputs": list(r[1])})
                return [[cache[key], k] for k in range(3)]
            key = ("quant", r[1][0], r[1][1])
            if key not in cache:
                name = _entry_name(nodes, e)
                out_type = "uint8" if quantized_dtype == "uint8" else "int8"
                cache[key] = add({"op": _QUANTIZE, "name": f"{name}_quantize",
                                  "attrs": {"out_type": out_type}, "inputs": [r[1]]})
            return [[cache[key], k] for k in range(3)]

        var_index = {n["name"]: i for i, n in enumerate(nodes) if n["op"] == "null"}
        for i, node in enumerate(nodes):
            if node["op"] == "null":
                new_id[i] = add({k: v for k, v in node.items() if not k.startswith("_")}
                                | {"inputs": []})
                if node["name"] in self.values and node["name"] not in self.data_names:
                    qvalues[node["name"]] = self.values[node["name"]]
                continue
            if "_fused" in node:
                continue
            if node["_q"] and _kind(node) in ("conv", "fc"):
                data = as_int8(node["inputs"][0])
                qnode = self._quantized_weighted(node, data, var, existing, granularity)
                j = add(qnode)
                entry = self._out_entry(i)
                rep[entry] = ("i32", [[j, 0], [j, 1], [j, 2]], node["_layer"],
                              "_relu" in node)
                continue
            if node["_q"] and _kind(node) == "bn":
                data = as_int8(node["inputs"][0])
                stats = [existing(self._param(nodes, e)) for e in node["inputs"][1:5]]
                attrs = {"eps": _attr(node, "eps", "1e-5"),
                         "fix_gamma": _attr(node, "fix_gamma", "False"),
                         "axis": _attr(node, "axis", "1")}
                j = add({"op": _Q_BN, "name": f"quantized_{node['_layer']}", "attrs": attrs,
                         "inputs": [data[0]] + stats + [data[1], data[2]]})
                rep[(i, 0)] = ("i32", [[j, 0], [j, 1], [j, 2]], node["_layer"], False)
                continue
            if node["_q"] and _kind(node) == "concat":
                parts = [as_int8(e) for e in node["inputs"]]
                attrs = node.get("attrs", {})
                j = add({"op": _Q_CONCAT, "name": f"quantized_{node['_layer']}",
                         "attrs": {"num_args": str(len(parts)),
                                   "dim": str(attrs.get("axis", attrs.get("dim", "1")))},
                         "inputs": [q[0] for q in parts] +
                                   [r for q in parts for r in (q[1], q[2])]})
                rep[(i, 0)] = ("q", [[j, 0], [j, 1], [j, 2]], node["_layer"])
                continue
            if node["_q"] and _kind(node) == "add":
                lhs, rhs = as_int8(node["inputs"][0]), as_int8(node["inputs"][1])
                j = add({"op": _Q_ADD, "name": f"quantized_{node['_layer']}", "attrs": {},
                         "inputs": [lhs[0], rhs[0], lhs[1], lhs[2], rhs[1], rhs[2]]})
                rep[(i, 0)] = ("i32", [[j, 0], [j, 1], [j, 2]], node["_layer"], False)
                continue
            if node["_q"]:
                data = as_int8(node["inputs"][0])
                kind = _kind(node)
                if kind == "pool":
                    keys = ("kernel", "pool_type", "stride", "pad", "global_pool",
                            "pooling_convention", "count_include_pad")
                    attrs = {k: v for k, v in node.get("attrs", {}).items()
                             if k in keys and v not in ("()", "None")}
                    op = _Q_POOL
                elif kind == "relu":
                    attrs, op = {"act_type": "relu"}, _Q_ACT
                else:
                    attrs, op = {}, _Q_FLATTEN
                j = add({"op": op, "name": f"quantized_{node['_layer']}", "attrs": attrs,
                         "inputs": list(data)})
                rep[(i, 0)] = ("q", [[j, 0], [j, 1], [j, 2]], node["_layer"])
                continue
            copy = {k: v for k, v in node.items() if not k.startswith("_")}
            copy["inputs"] = [as_float(e) for e in node["inputs"]]
            new_id[i] = add(copy)
        heads = [as_float(h) for h in self.heads]
        doc = _toposort(out, heads, self.attrs)
        used = {n["name"] for n in doc["nodes"] if n["op"] == "null"}
        return doc, {k: v for k, v in qvalues.items() if k in used}

    def _quantized_weighted(self, node, data, var, existing, granularity):
        """The quantized conv / fc node of `node` reading int8 `data` (3 entries)."""
        nodes = self.nodes
        kind = _kind(node)
        w_name = self._param(nodes, node["inputs"][1])
        no_bias = _is_true(_attr(node, "no_bias", "False"))
        b_name = None if no_bias else self._param(nodes, node["inputs"][2])
        qw, w_min, w_max = _quantize_weight(self.values[w_name], granularity)
        w = var(f"{w_name}_quantize", qw)
        wmin = var(f"{w_name}_quantize_min", w_min)
        wmax = var(f"{w_name}_quantize_max", w_max)
        inputs = [data[0], w]
        extra = [data[1], data[2], wmin, wmax]
        if b_name is not None:
            b = self.values[b_name].astype(_onp.float32)
            r = _onp.float32(_onp.abs(b).max()) if b.size else _onp.float32(0)
            # (a float32 bias is read as it is; another float dtype through a float32 copy)
            inputs.append(existing(b_name) if self.values[b_name].dtype == _onp.float32
                          else var(f"{b_name}_float32", b))
            extra += [var(f"{b_name}_min", _onp.array([-r], _onp.float32)),
                      var(f"{b_name}_max", _onp.array([r], _onp.float32))]
        attrs = node.get("attrs", {})
        if kind == "conv":
            keys = ("kernel", "stride", "dilate", "pad", "num_filter", "num_group", "layout")
            qattrs = {k: v for k, v in attrs.items() if k in keys and v not in ("()", "None")}
            if "num_filter" not in qattrs:
                qattrs["num_filter"] = str(self.values[w_name].shape[0])
            if "kernel" not in qattrs:
                qattrs["kernel"] = str(tuple(self.values[w_name].shape[2:]))
            op = _Q_CONV
        else:
            qattrs = {"num_hidden": attrs.get("num_hidden",
                                              str(self.values[w_name].shape[0])),
                      "flatten": attrs.get("flatten", "True")}
            op = _Q_FC
        qattrs["no_bias"] = "True" if b_name is None else "False"
        qattrs["with_relu"] = "True" if "_relu" in node else "False"
        return {"op": op, "name": f"quantized_{node['_layer']}", "attrs": qattrs,
                "inputs": inputs + extra}

    def float_doc(self):
        """(the float graph with the BatchNorms folded, {parameter: value} it reads)."""
        doc = _toposort(self.nodes, self.heads, self.attrs)
        used = {n["name"] for n in doc["nodes"] if n["op"] == "null"}
        return doc, {k: v for k, v in self.values.items()
                     if k in used and k not in self.data_names}

    # -- calibration
    def calibration_doc(self):
        """The float graph (BatchNorms folded) with the values calibration needs as its
        outputs (the graph inputs among them are read from the batches)."""
        entries = [e for e in self.wanted.values() if self.nodes[e[0]]["op"] != "null"]
        heads = list(dict.fromkeys(entries))
        return _toposort(self.nodes, [list(h) for h in heads], self.attrs), heads


def _quantize_weight(w, granularity):
    """(int8 weight, min range, max range): symmetric, 127 levels a side, one range for the
    tensor or one per output channel (axis 0)."""
    w = _onp.asarray(w, dtype=_onp.float64)
    if granularity == "channel-wise":
        r = _onp.abs(w.reshape(w.shape[0], -1)).max(axis=1) if w.size else \
            _onp.zeros(w.shape[0])
        rb = r.reshape((-1,) + (1,) * (w.ndim - 1))
    else:
        r = _onp.array([_onp.abs(w).max() if w.size else 0.0])
        rb = r[0]
    r32 = r.astype(_onp.float32)
    with _onp.errstate(divide="ignore", invalid="ignore"):
        scale = _onp.where(rb > 0, 127.0 / _onp.where(rb > 0, rb, 1.0), 0.0)
    q = _onp.clip(_onp.rint(w * scale), -127, 127).astype(_onp.int8)
    return q, -r32, r32


# --------------------------------------------------------------------------- calibration apply
def _threshold(thresholds, key, where):
    """The (min, max) that post_collect() gave layer `key`, as floats, checked."""
    value = thresholds[key]
    try:
        lo, hi = value
        lo, hi = float(lo), float(hi)
    except (TypeError, ValueError):
        raise TypeError(f"[{where}] the collector's post_collect() must map each layer to a "
                        f"(min, max) pair of numbers; layer '{key}' has {value!r}") from None
    if not (math.isfinite(lo) and math.isfinite(hi)) or lo > hi:
        raise ValueError(f"[{where}] the collector's post_collect() gave layer '{key}' the "
                         f"range ({lo:g}, {hi:g}); a range must be finite with min <= max")
    return lo, hi


def _calibrate_doc(doc, thresholds, quantized_dtype, where):
    """The quantized graph with calibrated ranges: each quantize_v2 whose input has a
    threshold gets it (and its out_type: int8, or uint8 for 'uint8' and for 'auto' on
    non-negative data); each requantize after a quantized conv / fc whose layer has one is
    removed, the layer answering in int8 / uint8 in that range itself."""
    if not isinstance(thresholds, dict):
        raise TypeError(f"[{where}] the collector's post_collect() must return a dict "
                        f"{{layer name: (min, max)}}, got {type(thresholds).__name__}")
    nodes = [dict(n, attrs=dict(n.get("attrs", {})),
                  inputs=[list(e[:2]) for e in n.get("inputs", [])]) for n in doc["nodes"]]
    redirect = {}
    for i, node in enumerate(nodes):
        if node["op"] == _QUANTIZE and node["name"].endswith("_quantize"):
            key = node["name"][:-len("_quantize")]
            if key not in thresholds:
                continue
            lo, hi = _threshold(thresholds, key, where)
            if quantized_dtype == "uint8":
                if lo < 0:
                    raise ValueError(
                        f"[{where}] quantized_dtype='uint8' needs non-negative data at every "
                        f"quantized input, but the calibrated range of '{key}' is "
                        f"[{lo:g}, {hi:g}]; use 'int8' or 'auto'")
                out_type = "uint8"
            elif quantized_dtype == "auto":
                out_type = "uint8" if lo >= 0 else "int8"
            else:
                out_type = "int8"
            node["attrs"].update(out_type=out_type, min_calib_range=_fmt(lo),
                                 max_calib_range=_fmt(hi))
        elif node["op"] == _REQUANTIZE:
            src = nodes[node["inputs"][0][0]]
            if src["op"] not in (_Q_CONV, _Q_FC, _Q_ADD, _Q_BN) or \
                    not src["name"].startswith("quantized_"):
                continue
            key = src["name"][len("quantized_"):]
            if key not in thresholds:
                continue
            lo, hi = _threshold(thresholds, key, where)
            src["attrs"].update(min_calib_range=_fmt(lo), max_calib_range=_fmt(hi))
            for k in range(3):
                redirect[(i, k)] = [node["inputs"][0][0], k]
    for node in nodes:
        node["inputs"] = [redirect.get(tuple(e), e) for e in node["inputs"]]
    heads = [redirect.get(tuple(h[:2]), list(h[:2])) for h in doc["heads"]]
    return _toposort(nodes, heads, doc.get("attrs", {}))


# ------------------------------------------------------------------------- calibration data
def _batch_list(batch):
    """The arrays of a batch as a list (NumPy arrays as ndx ones), nested lists kept: a block
    may take a list as one input (an RNN's [h, c] states)."""
    from .. import numpy as np
    if hasattr(batch, "data") and isinstance(getattr(batch, "data"), (list, tuple)):
        items = list(batch.data)  # (an io.DataBatch)
    elif isinstance(batch, (list, tuple)):
        items = list(batch)
    else:
        items = [batch]
    out = []
    for x in items:
        if isinstance(x, _onp.ndarray):
            x = np.array(x, dtype=x.dtype)
        elif isinstance(x, (list, tuple)):
            x = _batch_list(list(x))
        out.append(x)
    return out


def _flat(items):
    """The arrays of a (nested) list of inputs in order, as a graph takes them."""
    out = []
    for x in items:
        if isinstance(x, (list, tuple)):
            out.extend(_flat(x))
        else:
            out.append(x)
    return out


def _iter_batches(calib_data, where):
    from ..gluon.data import DataLoader, Dataset
    from ..nd.ndarray import NDArray
    from ..numpy import ndarray
    if isinstance(calib_data, (ndarray, NDArray, _onp.ndarray)):
        raise TypeError(f"[{where}] calib_data must be a gluon DataLoader, an io.DataIter or a "
                        f"list of batches, got one array of shape {tuple(calib_data.shape)}: "
                        f"pass [array] for one batch, or a DataLoader over it")
    if isinstance(calib_data, Dataset) and not isinstance(calib_data, DataLoader):
        raise TypeError(f"[{where}] calib_data must be a gluon DataLoader, an io.DataIter or a "
                        f"list of batches, got the dataset {type(calib_data).__name__}, whose "
                        f"items are single samples: wrap it in gluon.data.DataLoader(dataset, "
                        f"batch_size)")
    if isinstance(calib_data, (str, bytes, dict)):
        raise TypeError(f"[{where}] calib_data must be a gluon DataLoader, an io.DataIter or a "
                        f"list of batches, got {type(calib_data).__name__}")
    if hasattr(calib_data, "reset") and hasattr(calib_data, "provide_data"):
        calib_data.reset()  # (an io.DataIter)
    try:
        source = iter(calib_data)
    except TypeError:
        raise TypeError(f"[{where}] calib_data must be a gluon DataLoader, an io.DataIter or "
                        f"a list of batches, got {type(calib_data).__name__}") from None
    for batch in source:
        yield _batch_list(batch)


def _run_collection(plan, batches, collector, num_calib_batches, logger, device):
    """Runs the float graph over the batches, handing each value calibration needs to the
    collector; the number of batches used."""
    from .. import _core
    from .. import numpy as np
    from ..gluon.block import SymbolBlock
    doc, heads = plan.calibration_doc()
    names = {tuple(e): n for n, e in plan.wanted.items()}
    head_names = [names[tuple(h)] for h in heads]
    head_ops = []
    for h in heads:
        node = plan.nodes[h[0]]
        owner = plan.nodes[node["_fused"]] if "_fused" in node else node
        head_ops.append(owner["op"])
    inputs = {}  # name -> position in the batch, for graph inputs calibration needs
    for n, e in plan.wanted.items():
        node = plan.nodes[e[0]]
        if node["op"] == "null" and node["name"] in plan.data_names:
            inputs[n] = plan.data_names.index(node["name"])
    block, feed = None, []
    if heads:
        used = {n["name"] for n in doc["nodes"] if n["op"] == "null"}
        values = {k: np.array(v, dtype=v.dtype) for k, v in plan.values.items()
                  if k in used and k not in plan.data_names}
        feed = [k for k, d in enumerate(plan.data_names) if d in used]
        block = SymbolBlock(_core._graph_load(json.dumps(doc)),
                            [plan.data_names[k] for k in feed], values, device=device)
    count = 0
    n_in = len(plan.data_names)
    for batch in batches:
        if num_calib_batches is not None and count >= num_calib_batches:
            break
        batch = _flat(batch)
        if len(batch) < n_in:
            raise ValueError(f"[{plan.where}] a calibration batch has {len(batch)} arrays; the "
                             f"network takes {n_in} inputs ({plan.data_names})")
        data = batch[:n_in]
        for n, k in inputs.items():
            collector.collect(n, "null", data[k])
        if block is not None:
            outs = block(*[data[k] for k in feed])
            if not isinstance(outs, (list, tuple)):
                outs = [outs]
            for n, op, arr in zip(head_names, head_ops, outs):
                collector.collect(n, op, arr)
        count += 1
    if count == 0:
        raise ValueError(f"[{plan.where}] calib_data gave no batches")
    if logger:
        logger.info("Collected statistics from %d batches", count)
    return count


# ---------------------------------------------------------------------------------- the core
def _params_numpy(where, what, params):
    if params is None:
        return {}
    if not isinstance(params, dict):
        raise TypeError(f"[{where}] {what} must be a dict of name to array, got "
                        f"{type(params).__name__}")
    out = {}
    for k, v in params.items():
        if hasattr(v, "asnumpy"):
            out[k] = v.asnumpy()
        elif isinstance(v, _onp.ndarray):
            out[k] = v
        else:
            raise TypeError(f"[{where}] {what}['{k}'] must be an array, got "
                            f"{type(v).__name__}")
    return out


def _quantize_core(where, doc, values, data_names, excluded, excluded_match, excluded_ops,
                   calib_mode, calib_data, num_calib_batches, quantized_dtype, quantize_mode,
                   quantize_granularity, collector, logger, device, example=None):
    """(quantized document, {parameter: numpy value}, plan, collector). example: input
    arrays (else the first calibration batch, if any) to learn the shapes of the additions'
    inputs."""
    if logger:
        logger.info("Quantizing graph")
    source = None
    if calib_mode != "none":
        source = calib_data if isinstance(calib_data, _Peeked) else _peek(calib_data, where)
        if example is None:
            example = _flat(source.first)
    plan = _Plan(doc, values, data_names, excluded, excluded_match, excluded_ops,
                 quantize_mode, where, logger, example)
    collector = _make_collector(where, calib_mode, quantized_dtype, plan.calib_layers,
                                collector, logger)
    qdoc, qvalues = plan.build(quantized_dtype, quantize_granularity)
    if source is not None:
        _run_collection(plan, source.all(), collector, num_calib_batches, logger, device)
        if logger:
            logger.info("Calibrating the quantized graph (%s)", calib_mode)
        thresholds = collector.post_collect()
        qdoc = _calibrate_doc(qdoc, thresholds or {}, quantized_dtype, where)
    if logger:
        logger.info("Quantizing parameters")
    return qdoc, qvalues, plan, collector


def _peek(calib_data, where):
    gen = _iter_batches(calib_data, where)
    try:
        first = next(gen)
    except StopIteration:
        raise ValueError(f"[{where}] calib_data gave no batches") from None
    return _Peeked(first, gen)


class _Peeked:
    """A batch source whose first batch was taken already (to learn the input shapes)."""

    def __init__(self, first, rest):
        self.first, self.rest = first, rest

    def all(self):
        import itertools
        return itertools.chain([self.first], self.rest)


def _to_ndx(values):
    from .. import numpy as np
    return {k: np.array(v, dtype=v.dtype) for k, v in values.items()}


def _to_nd(values):
    from ..nd.ndarray import _wrap
    return {k: _wrap(v) for k, v in _to_ndx(values).items()}


def _symbol_doc(where, sym):
    from ..sym import Symbol
    if not isinstance(sym, Symbol):
        raise TypeError(f"[{where}] sym must be a Symbol, got {type(sym).__name__}")
    return json.loads(sym.tojson())


def _split_params(qsym, qvalues):
    aux = set(qsym.list_auxiliary_states())
    args = {k: v for k, v in qvalues.items() if k not in aux}
    auxs = {k: v for k, v in qvalues.items() if k in aux}
    return _to_nd(args), _to_nd(auxs)


# MXNet's loss heads: their second input is a label, which inference does not read
_LOSS_HEADS = ("SoftmaxOutput", "LinearRegressionOutput", "LogisticRegressionOutput",
               "MAERegressionOutput", "SVMOutput")


def _label_inputs(doc):
    """The graph inputs read only as the label of a loss head ('softmax_label' of a Module
    checkpoint's SoftmaxOutput): they stay inputs of the quantized graph, as in MXNet."""
    nodes = doc["nodes"]
    uses = {}
    for node in nodes:
        for pos, e in enumerate(node.get("inputs", [])):
            uses.setdefault(e[0], []).append((node["op"], pos))
    return {n["name"] for i, n in enumerate(nodes) if n["op"] == "null" and uses.get(i) and
            all(op in _LOSS_HEADS and pos == 1 for op, pos in uses[i])}


def _graph_values(where, doc, arg_params, aux_params, data_names):
    values = {**_params_numpy(where, "arg_params", arg_params),
              **_params_numpy(where, "aux_params", aux_params)}
    inputs = [n["name"] for n in doc["nodes"]
              if n["op"] == "null" and "__const__" not in n.get("attrs", {})]
    labels = _label_inputs(doc)
    missing = [n for n in inputs if n not in values and n not in data_names and
               n not in labels]
    if missing:
        raise ValueError(f"[{where}] the symbol's inputs {missing[:5]} are neither in "
                         f"data_names {list(data_names)} nor in arg_params / aux_params")
    absent = [d for d in data_names if d not in inputs]
    if absent:
        raise ValueError(f"[{where}] data_names {absent} are not inputs of the symbol; its "
                         f"inputs are {inputs[:10]}")
    return values


@wrap_ctx_to_device_func
def quantize_model(sym, arg_params, aux_params, data_names=("data",), device=cpu(),
                   excluded_sym_names=None, excluded_op_names=None, calib_mode="entropy",
                   calib_data=None, num_calib_batches=None, quantized_dtype="int8",
                   quantize_mode="smart", quantize_granularity="tensor-wise", logger=None):
    """(quantized symbol, its arg_params, its aux_params) of a float32 symbol and its
    parameters (MXNet's quantize_model). calib_mode: 'none' (ranges found at run time),
    'naive' (min / max of the layer outputs over calib_data) or 'entropy' (KL-optimal
    thresholds); calib_data: a gluon DataLoader, an io.DataIter or a list of batches (arrays,
    or lists of arrays whose first len(data_names) are the inputs); num_calib_batches: at
    most that many batches. excluded_sym_names: layer names to keep in float32 (see the
    module's docstring); excluded_op_names: ops to keep in float32 ('Convolution',
    'FullyConnected', 'Pooling', 'Activation', 'Flatten', 'BatchNorm' or ndx's op names).
    quantized_dtype: of the data entering quantized ops ('int8', 'uint8', or 'auto': uint8
    for calibrated non-negative data). The returned aux_params are those the quantized graph
    still reads (a BatchNorm folded into its convolution no longer needs its statistics)."""
    where = "quantize_model"
    qsym, qargs, qauxs, _, _ = _quantize_symbolic(
        where, sym, arg_params, aux_params, data_names, device, excluded_sym_names,
        excluded_op_names, calib_mode, calib_data, num_calib_batches, quantized_dtype,
        quantize_mode, quantize_granularity, None, logger, collect=True)
    return qsym, qargs, qauxs


def _quantize_symbolic(where, sym, arg_params, aux_params, data_names, device,
                       excluded_sym_names, excluded_op_names, calib_mode, calib_data,
                       num_calib_batches, quantized_dtype, quantize_mode,
                       quantize_granularity, collector, logger, collect):
    from ..sym import load_json
    doc = _symbol_doc(where, sym)
    if isinstance(data_names, str):
        data_names = [data_names]
    data_names = list(data_names)
    device = _check_device(where, device)
    _check_choice(where, "quantized_dtype", quantized_dtype, _DTYPES)
    _check_choice(where, "quantize_mode", quantize_mode, _MODES)
    _check_choice(where, "quantize_granularity", quantize_granularity, _GRANULARITIES)
    calib_mode = _calib_mode(where, calib_mode)
    excluded = _name_list(where, "excluded_sym_names", excluded_sym_names)
    excluded_ops = _name_list(where, "excluded_op_names", excluded_op_names)
    num_calib_batches = _check_batches(where, num_calib_batches)
    if collect and calib_mode != "none" and calib_data is None:
        raise ValueError(f"[{where}] calib_mode='{calib_mode}' needs calib_data, got None")
    if calib_mode == "custom" and collector is None and collect:
        raise ValueError(f"[{where}] calib_mode='custom' needs a CalibrationCollector: use "
                         "quantize_graph(..., LayerOutputCollector=...) or quantize_net")
    values = _graph_values(where, doc, arg_params, aux_params, data_names)
    if collect:
        from .. import autograd
        with autograd.pause(train_mode=False):  # (inference passes, as in quantize_net)
            qdoc, qvalues, plan, collector = _quantize_core(
                where, doc, values, data_names, excluded, [], excluded_ops, calib_mode,
                calib_data, num_calib_batches, quantized_dtype, quantize_mode,
                quantize_granularity, collector, logger, device)
    else:
        if logger:
            logger.info("Quantizing graph")
        plan = _Plan(doc, values, data_names, excluded, [], excluded_ops, quantize_mode,
                     where, logger)
        collector = _make_collector(where, calib_mode, quantized_dtype, plan.calib_layers,
                                    collector, logger)
        qdoc, qvalues = plan.build(quantized_dtype, quantize_granularity)
        if logger:
            logger.info("Quantizing parameters")
    qsym = load_json(json.dumps(qdoc))
    qargs, qauxs = _split_params(qsym, qvalues)
    return qsym, qargs, qauxs, collector, plan.calib_layers


@wrap_ctx_to_device_func
def quantize_model_onednn(sym, arg_params, aux_params, data_names=("data",), device=cpu(),
                          excluded_sym_names=None, excluded_op_names=None,
                          calib_mode="entropy", calib_data=None, num_calib_batches=None,
                          quantized_dtype="int8", quantize_mode="smart",
                          quantize_granularity="tensor-wise", logger=None):
    """MXNet's quantize_model_onednn: quantize_model (whose graph pass already folds
    BatchNorm and fuses relu, as MXNet's oneDNN subgraph pass does)."""
    where = "quantize_model_onednn"
    qsym, qargs, qauxs, _, _ = _quantize_symbolic(
        where, sym, arg_params, aux_params, data_names, device, excluded_sym_names,
        excluded_op_names, calib_mode, calib_data, num_calib_batches, quantized_dtype,
        quantize_mode, quantize_granularity, None, logger, collect=True)
    return qsym, qargs, qauxs


quantize_model_mkldnn = quantize_model_onednn


@wrap_ctx_to_device_func
def quantize_graph(sym, arg_params, aux_params, device=cpu(), excluded_sym_names=None,
                   excluded_op_names=None, calib_mode="entropy", quantized_dtype="int8",
                   quantize_mode="full", quantize_granularity="tensor-wise",
                   LayerOutputCollector=None, logger=None):  # noqa: N803 (MXNet's name)
    """(quantized symbol, its arg_params, its aux_params, collector, calib_layers), MXNet
    2.0's quantize_graph: the symbol quantized without calibration (ranges found at run time)
    and, for calib_mode 'naive' / 'entropy' / 'custom', the collector that calib_graph then
    reads (fill it by calling collector.collect(name, op_name, array) with the float model's
    value of every layer in calib_layers: a layer's output after its folded BatchNorm and
    fused relu, or a graph input by its name). The graph's inputs other than its parameters
    are its data."""
    where = "quantize_graph"
    doc = _symbol_doc(where, sym)
    params = {**dict(arg_params or {}), **dict(aux_params or {})}
    data_names = [n["name"] for n in doc["nodes"] if n["op"] == "null" and
                  n["name"] not in params and "__const__" not in n.get("attrs", {})]
    return _quantize_symbolic(where, sym, arg_params, aux_params, data_names, device,
                              excluded_sym_names, excluded_op_names, calib_mode, None, None,
                              quantized_dtype, quantize_mode, quantize_granularity,
                              LayerOutputCollector, logger, collect=False)


def calib_graph(qsym, arg_params, aux_params, collector, calib_mode="entropy", logger=None,
                quantized_dtype=None):
    """(calibrated symbol, arg_params, aux_params) from quantize_graph's symbol and
    parameters and its filled collector (MXNet 2.0's calib_graph, whose sixth argument is
    the logger): the thresholds collector.post_collect() returns go into the graph.
    quantized_dtype (ndx's, MXNet 1.x's) defaults to the collector's (else 'int8')."""
    from ..sym import Symbol, load_json
    where = "calib_graph"
    if not isinstance(qsym, Symbol):
        raise TypeError(f"[{where}] qsym must be a Symbol, got {type(qsym).__name__}")
    calib_mode = _calib_mode(where, calib_mode)
    if calib_mode == "none":
        raise ValueError(f"[{where}] calib_mode must be 'naive', 'entropy' or 'custom' (with "
                         f"a CalibrationCollector), got 'none'")
    if not isinstance(collector, CalibrationCollector):
        raise TypeError(f"[{where}] collector must be a CalibrationCollector (as "
                        f"quantize_graph returns it), got {type(collector).__name__}")
    if isinstance(logger, str) and quantized_dtype is None:
        logger, quantized_dtype = None, logger  # (MXNet 1.x's order: quantized_dtype sixth)
    if quantized_dtype is None:
        quantized_dtype = getattr(collector, "quantized_dtype", "int8")
    _check_choice(where, "quantized_dtype", quantized_dtype, _DTYPES)
    thresholds = collector.post_collect() or {}
    doc = _calibrate_doc(json.loads(qsym.tojson()), thresholds, quantized_dtype, where)
    if logger:
        logger.info("Calibrating the quantized graph with %d thresholds", len(thresholds))
    out = load_json(json.dumps(doc))
    params = {**_params_numpy(where, "arg_params", arg_params),
              **_params_numpy(where, "aux_params", aux_params)}
    names = set(out.list_inputs())
    missing = [n for n in names if n not in params and
               any(n.endswith(s) for s in ("_quantize", "_quantize_min", "_quantize_max"))]
    if missing:
        raise ValueError(f"[{where}] arg_params lacks the quantized weights {missing[:4]}: "
                         "pass the arg_params quantize_graph returned")
    qargs, qauxs = _split_params(out, {k: v for k, v in params.items() if k in names})
    if logger:
        logger.info("Quantizing parameters")
    return out, qargs, qauxs


# ------------------------------------------------------------------------------ quantize_net
def _example_inputs(where, data_shapes):
    from .. import numpy as np
    from ..io import DataDesc
    if isinstance(data_shapes, (DataDesc, tuple)) and not (
            isinstance(data_shapes, tuple) and data_shapes and
            all(isinstance(s, (tuple, list, DataDesc)) for s in data_shapes)):
        data_shapes = [data_shapes]
    if not isinstance(data_shapes, (list, tuple)) or not data_shapes:
        raise TypeError(f"[{where}] data_shapes must be a list of DataDesc or of shapes, got "
                        f"{data_shapes!r}")
    out = []
    for d in data_shapes:
        if isinstance(d, DataDesc):
            out.append(np.zeros(tuple(d.shape), dtype=d.dtype or "float32"))
        elif isinstance(d, (tuple, list)) and all(isinstance(s, numbers.Integral) for s in d):
            out.append(np.zeros(tuple(int(s) for s in d), dtype="float32"))
        elif isinstance(d, list) and d and \
                all(isinstance(s, (tuple, list, DataDesc)) for s in d):
            out.append(_example_inputs(where, d))  # (one input that is a list: RNN states)
        else:
            raise TypeError(f"[{where}] data_shapes must be a list of DataDesc or of shapes "
                            f"(tuples of int), got an element {d!r}")
    return out


def _capture(where, network, example, logger):
    """(graph document, data names, {parameter: numpy value}) of a HybridBlock run on the
    example inputs (trailing ones dropped while the block refuses them, as MXNet does). An
    input may be a list of arrays (an RNN's states): the graph takes its arrays one by one."""
    from .. import _core
    from ..gluon.block import SymbolBlock, _data_names
    if isinstance(network, SymbolBlock):
        data_names = list(network._input_names)
        example = _flat(example)
        if len(example) < len(data_names):
            raise ValueError(f"[{where}] the network takes {len(data_names)} inputs "
                             f"({data_names}); the data has {len(example)}")
        network(*example[:len(data_names)])
        graph = network._graph
        names = _core._graph_inputs(graph)
    else:
        if not getattr(network, "_active", False):
            network.hybridize()
        n = len(example)
        while True:
            try:
                network(*example[:n])
                break
            except (TypeError, ValueError) as err:
                if n <= 1:
                    raise
                if logger:
                    logger.warning("%s", err)
                    logger.warning("The block refused %d inputs: trying again with one less", n)
                n -= 1
        graph, names, _ = network._last_graph
        data_names = _data_names(len(_flat(example[:n])))
    params = network.collect_params()
    values = {k: params[k].data().asnumpy() for k in names if k in params}
    return json.loads(_core._graph_json(graph)), data_names, values


@wrap_ctx_to_device_func
def quantize_net(network, quantized_dtype="auto", quantize_mode="full",
                 quantize_granularity="tensor-wise", exclude_layers=None,
                 exclude_layers_match=None, exclude_operators=None, calib_data=None,
                 data_shapes=None, calib_mode="none", num_calib_batches=None, device=cpu(),
                 LayerOutputCollector=None, logger=None):  # noqa: N803 (MXNet's name)
    """A SymbolBlock running `network` (a float32 HybridBlock) quantized to INT8, MXNet 2.0's
    quantize_net. The network is hybridized and run once on the first calibration batch (or
    on zeros of data_shapes: a list of DataDesc or shapes) to capture its graph, which is
    quantized as the module's docstring says.

    quantized_dtype: 'auto' (uint8 for calibrated non-negative data, else int8), 'int8' or
    'uint8' (refused when calibration finds negative data); quantize_mode: 'full' (pooling,
    relu and flatten on int8 data run quantized) or 'smart' (only where every consumer is
    quantized too); quantize_granularity: 'tensor-wise' or 'channel-wise' weight ranges;
    exclude_layers (layer names), exclude_layers_match (substrings of layer names),
    exclude_operators (op names: 'Convolution', 'FullyConnected', 'Pooling', 'Activation',
    'Flatten', 'BatchNorm' or ndx's): kept in float32; calib_mode: 'none', 'naive',
    'entropy' or 'custom' (LayerOutputCollector, a CalibrationCollector); calib_data: a gluon
    DataLoader, an io.DataIter or a list of batches (an array, or a list such as
    [data, label] whose leading arrays are the inputs); num_calib_batches: at most that many
    batches; logger: a logging.Logger for progress (default: silent)."""
    from ..gluon.block import HybridBlock, SymbolBlock
    where = "quantize_net"
    if not isinstance(network, HybridBlock):
        raise TypeError(f"[{where}] network must be a HybridBlock, got "
                        f"{type(network).__name__}")
    _check_choice(where, "quantized_dtype", quantized_dtype, _DTYPES)
    _check_choice(where, "quantize_mode", quantize_mode, _MODES)
    _check_choice(where, "quantize_granularity", quantize_granularity, _GRANULARITIES)
    calib_mode = _calib_mode(where, calib_mode)
    device = _check_device(where, device)
    excluded = _name_list(where, "exclude_layers", exclude_layers)
    excluded_match = _name_list(where, "exclude_layers_match", exclude_layers_match)
    excluded_ops = _name_list(where, "exclude_operators", exclude_operators)
    num_calib_batches = _check_batches(where, num_calib_batches)
    if calib_mode != "none" and calib_data is None:
        raise ValueError(f"[{where}] calib_mode='{calib_mode}' needs calib_data, got None")
    if calib_mode == "custom":
        _check_collector(where, LayerOutputCollector)
    if calib_data is None and data_shapes is None:
        raise ValueError(f"[{where}] give calib_data or data_shapes (to learn the input "
                         "shapes), got neither")
    source = None
    if data_shapes is not None:
        example = _example_inputs(where, data_shapes)
    if calib_data is not None:
        source = _peek(calib_data, where)
        if data_shapes is None:
            example = source.first
    from .. import autograd
    # (inference passes: under autograd.record() or train_mode() the float network would run
    # in training mode, updating its BatchNorm statistics and calibrating on batch ones)
    with autograd.pause(train_mode=False):
        doc, data_names, values = _capture(where, network, example, logger)
        qdoc, qvalues, _, _ = _quantize_core(
            where, doc, values, data_names, excluded, excluded_match, excluded_ops, calib_mode,
            source, num_calib_batches, quantized_dtype, quantize_mode, quantize_granularity,
            LayerOutputCollector, logger, device, _flat(example))
    from .. import _core
    net = SymbolBlock(_core._graph_load(json.dumps(qdoc)), data_names, _to_ndx(qvalues),
                      device=device)
    for p in net.collect_params().values():
        p.grad_req = "null"
    return net

