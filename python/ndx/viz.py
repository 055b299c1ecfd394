"""Pictures of graphs: plot_network draws a Symbol (or graph JSON) with graphviz."""
import json

__all__ = ["plot_network"]


def plot_network(symbol, title="plot", shape=None, hide_weights=True, save_format="png"):
    """A graphviz Digraph of the graph: one box per op (with its main params), ellipses for
    inputs; weights (inputs other than `data*`) are hidden unless hide_weights=False.
    Render with .render(path) or .pipe(); needs the graphviz package and its `dot` program."""
    try:
        import graphviz
    except ImportError as e:
        raise ImportError("plot_network needs the 'graphviz' Python package "
                          "(pip install graphviz) and Graphviz's dot program") from e
    doc = json.loads(symbol.tojson() if hasattr(symbol, "tojson") else symbol)
    nodes = doc["nodes"]
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
        label = op + ("\n" + "\n".join(shown) if shown else "")
        dot.node(str(i), label, shape="box", style="filled,rounded", fillcolor="#fdb462")
        for src, _, _ in n["inputs"]:
            if src not in hidden:
                dot.edge(str(src), str(i))
    return dot
