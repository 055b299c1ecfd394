"""AMP on graphs (MXNet's convert_symbol / convert_model / convert_hybrid_block): the graph's
JSON is rewritten with amp_cast nodes in front of the ops the lists name, as MXNet's
ReducePrecision pass does. An input gets a cast unless its dtype is known to be right already
(graph inputs of the given dtypes, the outputs of casts and of listed ops); a parameter fed
only through casts to one dtype can instead be stored in that dtype (cast_params_offline)."""
import json

_CAST_OPS = ("_npi_amp_cast", "_npi_amp_multicast")
_FLOATS = ("float16", "bfloat16", "float32", "float64")
_LOW = ("float16", "bfloat16")


def _wanted(kind, dtype, target):
    """The dtype an input of `dtype` (None: unknown) should have under a rule."""
    if dtype is not None and dtype not in _FLOATS:
        return dtype  # integers, bools: amp_cast leaves them, so no cast is needed
    if kind == "float32":
        return "float32" if dtype in _LOW or dtype is None else dtype
    return target if dtype in ("float32", None) or dtype in _LOW else dtype


def _applies(rule, node):
    _, param, values = rule
    if param is None:
        return True
    return str(node.get("attrs", {}).get(param)) in values


_KEEP_FLOAT32 = ("float32", None, ())
# Dtype-neutral ops whose first output has the dtype of their (equal) float inputs, so the
# dtype known for the inputs is known for the output and no cast is put after them.
_NOT_PRESERVING = ("_npi_astype", "_npi_amp_cast", "_npi_amp_multicast", "_npi_all_finite",
                   "_npi_multi_all_finite")
# Ops whose float inputs must all have the data's dtype. One in none of the lists that gets its
# data in the target dtype runs in it, its other float inputs (weights) cast too: MXNet's
# ReducePrecision does this for every op in no list (TryLowPrecision on an op with a
# low-precision input), so a Conv2DTranspose left out of custom lists after a float16
# convolution takes float16 weights rather than failing on float32 ones.
_UNIFORM_INPUTS = ("_npx_fully_connected", "_npx_convolution", "_npx_deconvolution",
                   "_npx_layer_norm", "_npx_leaky_relu", "_np_matmul")


def _same_float(dtypes):
    """The one float dtype of `dtypes` (None entries: unknown), None if unknown or mixed."""
    floats = {d for d in dtypes if d is None or d in _FLOATS}
    if len(floats) == 1 and None not in floats:
        return next(iter(floats))
    return None


def _var_dtype(node, known):
    """The dtype of a graph input: given for it, or a constant's own."""
    attrs = node.get("attrs", {})
    if "__const__" in attrs and "__dtype__" in attrs:
        return str(attrs["__dtype__"])
    return known.get(node.get("name"))


def _rewrite(doc, target, rules, known, excluded, offline, neutral):
    """(new document, {variable name: dtype} stored low precision) of a graph document.
    Nodes named in `excluded` run in float32."""
    old_nodes = doc["nodes"]
    nodes, new_id, dtypes, casts = [], {}, {}, {}
    consumers = {}  # variable id -> cast dtypes wanted by each use (None: used uncast)

    def add(node):
        nodes.append(node)
        return len(nodes) - 1

    original = {}  # old node id -> the dtype of its outputs before the conversion, if known
    for i, node in enumerate(old_nodes):
        entries = [[new_id[src], idx, 0] for src, idx, *_ in node.get("inputs", [])]
        if node["op"] == "null":
            original[i] = _var_dtype(node, known)
        elif node["op"] not in _NOT_PRESERVING:
            original[i] = _same_float([original.get(src) for src, *_ in node["inputs"]])
        rule = _KEEP_FLOAT32 if node.get("name") in excluded else rules.get(node["op"])
        if rule is not None and not _applies(rule, node):
            rule = None
        if rule is None and node["op"] in _UNIFORM_INPUTS and entries and \
                node.get("name") not in excluded and \
                dtypes.get((entries[0][0], entries[0][1])) == target:
            rule = ("target", None, ())  # (MXNet: an op in no list follows its low data)
        if rule is not None and rule[0] == "target" and any(
                dtypes.get((src, idx)) == "float64" for src, idx, _ in entries):
            rule = None  # float64 asked for on purpose: the op keeps it, as in amp.init
        if rule is not None:
            for k, (src, idx, _) in enumerate(entries):
                have = dtypes.get((src, idx))
                want = _wanted(rule[0], have, target)
                is_var = nodes[src]["op"] == "null"
                if want == have:
                    if is_var:
                        consumers.setdefault(src, []).append(None)
                    continue
                key = (src, idx, want)
                if key not in casts:
                    casts[key] = add({"op": "_npi_amp_cast",
                                      "name": f"{nodes[src]['name']}_amp_cast_{want}",
                                      "attrs": {"dtype": want}, "inputs": [[src, idx, 0]]})
                    dtypes[(casts[key], 0)] = want
                if is_var:
                    consumers.setdefault(src, []).append(want)
                entries[k] = [casts[key], 0, 0]
        else:
            for src, idx, _ in entries:
                if nodes[src]["op"] == "null":
                    consumers.setdefault(src, []).append(None)
        new = dict(node, inputs=entries)
        new_id[i] = add(new)
        if node["op"] == "null":
            if _var_dtype(node, known) is not None:
                dtypes[(new_id[i], 0)] = _var_dtype(node, known)
        elif node["op"] == "_npi_amp_cast":
            dtypes[(new_id[i], 0)] = node["attrs"]["dtype"]
        elif rule is not None:
            dtypes[(new_id[i], 0)] = "float32" if rule[0] == "float32" else target
        elif node["op"] in neutral and node["op"] not in _NOT_PRESERVING:
            have = {dtypes.get((src, idx), "?") for src, idx, _ in entries}
            if len(have) == 1 and next(iter(have)) in _FLOATS:
                dtypes[(new_id[i], 0)] = next(iter(have))
    # The outputs keep their dtypes: one the conversion changed is cast back (MXNet's pass
    # returns each output AsOriginal, so a float32 model still answers in float32).
    heads = []
    for src, idx, *_ in doc["heads"]:
        entry = [new_id[src], idx, 0]
        have, want = dtypes.get((new_id[src], idx)), original.get(src)
        if have in _FLOATS and want in _FLOATS and have != want:
            key = (new_id[src], idx, want)
            if key not in casts:
                casts[key] = add({"op": "_npi_amp_cast",
                                  "name": f"{nodes[new_id[src]]['name']}_amp_cast_{want}",
                                  "attrs": {"dtype": want}, "inputs": [entry]})
            entry = [casts[key], 0, 0]
        heads.append(entry)
    stored = {}
    if offline:
        stored = _store_low(nodes, consumers, offline)
    return _compact(nodes, heads, doc.get("attrs", {})), stored


def _store_low(nodes, consumers, params):
    """Variables (parameters only) whose every use goes through casts to one dtype: the
    casts' users read the variable itself, stored in that dtype."""
    stored = {}
    for var, wants in consumers.items():
        name = nodes[var]["name"]
        if name not in params or None in wants or len(set(wants)) != 1:
            continue
        stored[name] = wants[0]
    for node in nodes:
        entries = node.get("inputs", [])
        for k, (src, idx, _) in enumerate(entries):
            cast = nodes[src]
            if cast["op"] == "_npi_amp_cast" and nodes[cast["inputs"][0][0]]["name"] in stored \
                    and nodes[cast["inputs"][0][0]]["op"] == "null":
                entries[k] = list(cast["inputs"][0])
    return stored


def _compact(nodes, heads, attrs):
    """The document of the nodes reachable from heads, renumbered (inputs first)."""
    keep, stack = set(), [h[0] for h in heads]
    while stack:
        n = stack.pop()
        if n in keep:
            continue
        keep.add(n)
        stack.extend(e[0] for e in nodes[n].get("inputs", []))
    order = sorted(keep)
    renum = {old: new for new, old in enumerate(order)}
    out = []
    for old in order:
        node = dict(nodes[old])
        node["inputs"] = [[renum[s], i, 0] for s, i, *_ in node.get("inputs", [])]
        out.append(node)
    arg_nodes = [i for i, n in enumerate(out)
                 if n["op"] == "null" and "__const__" not in n.get("attrs", {})]
    return {"nodes": out, "arg_nodes": arg_nodes,
            "heads": [[renum[s], i, 0] for s, i, *_ in heads], "attrs": attrs}


def remove_amp_casts(text):
    """A graph's JSON without its amp_cast / amp_multicast nodes (each use reads the cast's
    input), as MXNet's export(remove_amp_cast=True) writes graphs."""
    doc = json.loads(text)
    nodes = doc["nodes"]
    source = {}  # (cast node, output) -> the entry it casts

    def resolve(entry):
        src, idx = entry[0], entry[1]
        while (src, idx) in source:
            src, idx = source[(src, idx)]
        return [src, idx, 0]

    for i, node in enumerate(nodes):
        node["inputs"] = [resolve(e) for e in node.get("inputs", [])]
        if node["op"] in _CAST_OPS:
            for k, e in enumerate(node["inputs"]):
                source[(i, k)] = (e[0], e[1])
    heads = [resolve(h) for h in doc["heads"]]
    if not source:
        return text
    return json.dumps(_compact(nodes, heads, doc.get("attrs", {})), indent=2)


def _rules_by_op(target, target_ops, fp32_ops, conditional_fp32_ops):
    from . import _rules
    return {op: (kind, param, values)
            for op, kind, param, values in _rules(target, target_ops, fp32_ops,
                                                  conditional_fp32_ops)}


def _dtype_str(d):
    import numpy as onp
    if isinstance(d, str):
        return d
    name = getattr(d, "name", None)
    if isinstance(name, str):
        return name
    try:
        return onp.dtype(d).name
    except TypeError:
        return getattr(d, "__name__", str(d))


def _convert_json(text, input_dtypes, param_dtypes, target_dtype, target_dtype_ops, fp32_ops,
                  conditional_fp32_ops, excluded_sym_names, cast_params_offline):
    from . import _dtype_name
    target = _dtype_name(target_dtype)
    for what, lst in (("target_dtype_ops", target_dtype_ops), ("fp32_ops", fp32_ops),
                      ("conditional_fp32_ops", conditional_fp32_ops),
                      ("excluded_sym_names", excluded_sym_names)):
        if lst is not None and not isinstance(lst, (list, tuple)):
            raise TypeError(f"[amp.convert_symbol] {what} must be a list, got "
                            f"{type(lst).__name__}")
    rules = _rules_by_op(target, target_dtype_ops, fp32_ops, conditional_fp32_ops)
    known = {n: _dtype_str(d) for n, d in {**dict(input_dtypes), **dict(param_dtypes)}.items()}
    doc = json.loads(remove_amp_casts(text))
    names = {n.get("name") for n in doc["nodes"]}
    excluded = set(excluded_sym_names or ())
    missing = sorted(excluded - names)
    if missing:
        import logging
        logging.warning("excluded_sym_names are not present in the network: %s", missing)
    offline = set(param_dtypes) if cast_params_offline else set()
    from . import list_lp16_fp32_ops
    neutral = set(list_lp16_fp32_ops(target))
    new, stored = _rewrite(doc, target, rules, known, excluded, offline, neutral)
    return json.dumps(new, indent=2), stored


def convert_symbol(sym, input_dtypes, param_dtypes, target_dtype="float16",
                   target_dtype_ops=None, fp32_ops=None, conditional_fp32_ops=None,
                   excluded_sym_names=None, cast_params_offline=False):
    """A float32 symbol with amp_cast nodes added by the op lists (MXNet's
    amp.convert_symbol): input_dtypes / param_dtypes map input names to dtypes; nodes named
    in excluded_sym_names keep their inputs' dtypes. With cast_params_offline the casts of
    parameters that feed only low-precision ops are dropped, and those parameters must be
    given in that dtype (convert_model does it). The outputs keep their original dtypes: one a
    low-precision op computes is cast back at the end, as MXNet's pass does."""
    from ..sym import Symbol, load_json
    if not isinstance(sym, Symbol):
        raise TypeError(f"[amp.convert_symbol] sym must be a Symbol, got {type(sym).__name__}")
    text, _ = _convert_json(sym.tojson(), input_dtypes, param_dtypes, target_dtype,
                            target_dtype_ops, fp32_ops, conditional_fp32_ops,
                            excluded_sym_names, cast_params_offline)
    return load_json(text)


def convert_model(sym, arg_params, aux_params, input_dtypes, target_dtype="float16",
                  target_dtype_ops=None, fp32_ops=None, conditional_fp32_ops=None,
                  excluded_sym_names=None, cast_params_offline=False):
    """(converted symbol, arg_params, aux_params) for mixed-precision inference (MXNet's
    amp.convert_model); with cast_params_offline the parameters that feed only
    low-precision ops are returned in that dtype."""
    from ..sym import Symbol, load_json
    if not isinstance(sym, Symbol):
        raise TypeError(f"[amp.convert_model] sym must be a Symbol, got {type(sym).__name__}")
    for what, d in (("arg_params", arg_params), ("aux_params", aux_params)):
        if not isinstance(d, dict):
            raise TypeError(f"[amp.convert_model] {what} must be a dict of name to array, got "
                            f"{type(d).__name__}")
    arg_params, aux_params = dict(arg_params), dict(aux_params)
    param_dtypes = {n: str(a.dtype) for n, a in {**arg_params, **aux_params}.items()}
    text, stored = _convert_json(sym.tojson(), input_dtypes, param_dtypes, target_dtype,
                                 target_dtype_ops, fp32_ops, conditional_fp32_ops,
                                 excluded_sym_names, cast_params_offline)
    for params in (arg_params, aux_params):
        for name, dtype in stored.items():
            if name in params and str(params[name].dtype) != dtype:
                params[name] = params[name].astype(dtype)
    return load_json(text), arg_params, aux_params


def _ctx_as_device(func):
    """MXNet's convert_hybrid_block takes ctx= for device= (util.wrap_ctx_to_device_func)."""
    from ..util import wrap_ctx_to_device_func
    return wrap_ctx_to_device_func(func)


@_ctx_as_device
def convert_hybrid_block(block, data_example, target_dtype="float16", target_dtype_ops=None,
                         fp32_ops=None, conditional_fp32_ops=None, excluded_sym_names=None,
                         device=None, cast_params_offline=False):
    """A SymbolBlock running `block` in mixed precision for inference (MXNet's
    amp.convert_hybrid_block): the block is hybridized and run once on data_example (an
    array or a list of them) to capture its graph, which convert_model rewrites; a SymbolBlock
    (an imported model) is converted from its graph. The block answers in the dtypes the
    original does (float32 for a float32 model)."""
    from .. import _core
    from ..gluon.block import HybridBlock, SymbolBlock, _data_names
    from ..numpy import ndarray
    from . import _dtype_name
    _dtype_name(target_dtype)  # a bad dtype fails before the block runs
    if not isinstance(block, HybridBlock):
        raise TypeError(f"[amp.convert_hybrid_block] block must be a HybridBlock, got "
                        f"{type(block).__name__}")
    if not isinstance(data_example, (list, tuple)):
        data_example = [data_example]
    for x in data_example:
        if not isinstance(x, ndarray):
            raise TypeError(f"[amp.convert_hybrid_block] data_example must hold ndarrays, got "
                            f"{type(x).__name__}")
    if isinstance(block, SymbolBlock):  # (an imported model: its graph as it is)
        graph, data_names = block._graph, list(block._input_names)
        if len(data_names) != len(data_example):
            raise ValueError(f"[amp.convert_hybrid_block] the block takes {len(data_names)} "
                             f"inputs ({data_names}), data_example has {len(data_example)}")
        block(*data_example)  # (settles deferred parameter shapes)
        names = _core._graph_inputs(graph)
    else:
        if not getattr(block, "_active", False):
            block.hybridize()
        block(*data_example)
        graph, names, _ = block._last_graph
        data_names = _data_names(len(data_example))
    params = block.collect_params()
    values = {n: params[n].data() for n in names if n in params}
    input_dtypes = {n: str(x.dtype) for n, x in zip(data_names, data_example)}
    param_dtypes = {n: str(v.dtype) for n, v in values.items()}
    text, stored = _convert_json(_core._graph_json(graph), input_dtypes, param_dtypes,
                                 target_dtype, target_dtype_ops, fp32_ops, conditional_fp32_ops,
                                 excluded_sym_names, cast_params_offline)
    for name, dtype in stored.items():
        values[name] = values[name].astype(dtype)
    return SymbolBlock(_core._graph_load(text), data_names, values, device=device)
