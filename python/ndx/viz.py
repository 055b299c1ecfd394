"""Pictures of graphs: plot_network draws a Symbol (or graph JSON) with graphviz;
print_summary prints its layers as a table."""
import json

__all__ = ["plot_network", "print_summary", "node_output_shapes"]


def _with_inferred_inputs(doc, shape):
    """`shape` (name -> shape) plus the input shapes the graph's inference works out from it
    (a layer's weights from its data, as MXNet's plot_network infers them); as given when
    the shapes are inconsistent."""
    from . import sym
    given = {k: tuple(v) for k, v in (shape or {}).items()}
    try:
        s = sym.load_json(json.dumps(doc))
        names = set(s.list_inputs())
        known = s._infer_partial({k: v for k, v in given.items() if k in names}, {})[0]
    except (ValueError, TypeError, IndexError, NotImplementedError):
        return given
    return dict({k: v for k, v in known.items() if v is not None}, **given)


def node_output_shapes(doc, shape):
    """{node index: output shape} of the op nodes whose inputs' shapes `shape` (a dict name
    -> shape) gives or lets the graph's inference work out, each inferred on the graph cut
    at that node."""
    from . import sym
    known = _with_inferred_inputs(doc, shape)
    out = {}
    for i, n in enumerate(doc["nodes"]):
        if n["op"] == "null":
            continue
        cut = dict(doc, nodes=doc["nodes"][:i + 1], heads=[[i, 0, 0]],
                   arg_nodes=[a for a in doc.get("arg_nodes", []) if a <= i])
        cut.pop("node_row_ptr", None)
        part = sym.load_json(json.dumps(cut))
        names = part.list_inputs()
        if not all(name in known for name in names):
            continue
        try:
            out[i] = part.infer_shape(**{name: known[name] for name in names})[1][0]
        except (ValueError, TypeError):
            continue  # a shape the graph rejects: the picture just omits it
    return out


def plot_network(symbol, title="plot", shape=None, hide_weights=True, save_format="png"):
    """A graphviz Digraph of the graph: one box per op (with its main params), ellipses for
    inputs; weights (inputs other than `data*`) are hidden unless hide_weights=False.
    `shape` (name -> shape) adds each op's output shape and parameter count (the elements
    of its hidden weight inputs) where the shapes given, and those the graph's inference
    works out from them (a layer's weights from its data's), tell them, as MXNet's. Render
    with .render(path) or .pipe(); needs the graphviz package and its `dot` program."""
    try:
        import graphviz
    except ImportError as e:
        raise ImportError("plot_network needs the 'graphviz' Python package "
                          "(pip install graphviz) and Graphviz's dot program") from e
    doc = json.loads(symbol.tojson() if hasattr(symbol, "tojson") else symbol)
    nodes = doc["nodes"]
    shapes = node_output_shapes(doc, shape) if shape else {}
    shape = _with_inferred_inputs(doc, shape) if shape else shape
    dot = graphviz.Digraph(name=title, format=save_format)
    dot.attr(rankdir="BT")
    hidden = set()
    for i, n in enumerate(nodes):
        if n["op"] == "null":
            is_const = "__const__" in n.get("attrs", {})
            if is_const or (hide_weights and not n["name"].startswith("data")):
                hidden.add(i)
                continue
            label = n["name"]
            if shape and n["name"] in shape:
                label += f"\n{tuple(shape[n['name']])}"
            dot.node(str(i), label, shape="oval", style="filled", fillcolor="#8dd3c7")
            continue
        op = n["op"]
        for prefix in ("_npx_", "_npi_", "_np_"):
            if op.startswith(prefix):
                op = op[len(prefix):]
                break
        attrs = n.get("attrs", {})
        shown = [f"{k}={v}" for k, v in attrs.items()
                 if k in ("num_hidden", "num_filter", "kernel", "stride", "act_type", "axis",
                          "pool_type", "p") and v not in ("None", "()")]
        if i in shapes:
            shown.append("x".join(str(d) for d in shapes[i]) or "scalar")
        count = _param_count(nodes, n, hidden, shape)
        if count:
            shown.append(f"{count:,} params")
        label = op + ("\n" + "\n".join(shown) if shown else "")
        dot.node(str(i), label, shape="box", style="filled,rounded", fillcolor="#fdb462")
        for src, _, _ in n["inputs"]:
            if src not in hidden:
                dot.edge(str(src), str(i))
    return dot


def _param_count(nodes, node, hidden, shape):
    """Elements of the node's hidden weight inputs whose shapes are given."""
    total = 0
    for src, _, _ in node["inputs"]:
        name = nodes[src]["name"]
        if src in hidden and nodes[src]["op"] == "null" and shape and name in shape:
            count = 1
            for d in shape[name]:
                count *= int(d)
            total += count
    return total


def print_summary(symbol, shape=None, line_length=120, positions=(.44, .64, .74, 1.)):
    """Prints the graph's layers as MXNet's print_summary does: each op with its output shape
    (without the batch axis), its parameter count (the elements of its inputs other than
    the data's, with shapes given in `shape` or inferred from them) and the layers it reads,
    then the total. Inputs named in `shape` are listed first."""
    if shape is not None and not isinstance(shape, dict):
        raise TypeError(f"[print_summary] shape must be a dict name -> shape, got "
                        f"{type(shape).__name__}")
    doc = json.loads(symbol.tojson() if hasattr(symbol, "tojson") else symbol)
    nodes = doc["nodes"]
    known = _with_inferred_inputs(doc, shape) if shape else {}
    out_shapes = node_output_shapes(doc, shape) if shape else {}
    given = set(shape or {})
    stops = [int(line_length * p) for p in positions]

    def row(fields):
        line = ""
        for field, stop in zip(fields, stops):
            line = (line + str(field))[:stop - 1].ljust(stop)
        print(line.rstrip())

    print("_" * line_length)
    row(["Layer (type)", "Output Shape", "Param #", "Previous Layer"])
    print("=" * line_length)
    total = 0
    for i, n in enumerate(nodes):
        if n["op"] == "null":
            if n["name"] in given:
                dims = known.get(n["name"], ())
                row([f"{n['name']}(null)", "x".join(str(d) for d in dims[1:]), 0, ""])
                print("_" * line_length)
            continue
        params = 0
        previous = []
        for src, _, _ in n["inputs"]:
            s_node = nodes[src]
            if s_node["op"] == "null" and s_node["name"] not in given:
                if "__const__" not in s_node.get("attrs", {}) and s_node["name"] in known:
                    count = 1
                    for d in known[s_node["name"]]:
                        count *= int(d)
                    params += count
            else:
                previous.append(s_node["name"])
        total += params
        out = out_shapes.get(i)
        row([f"{n['name']}({n['op']})", "" if out is None else "x".join(str(d) for d in out[1:]),
             params, ", ".join(previous)])
        print("_" * line_length)
    print(f"Total params: {total}")
    print("_" * line_length)
