// Graph JSON, in MXNet's layout. nlohmann/json is confined to this file.
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "ndx/executor.h"

namespace ndx {

using json = nlohmann::json;

namespace {
constexpr const char* kConst = "__const__";

json constant_json(const NDArray& v) {
  json attrs;
  attrs[kConst] = "1";
  attrs["__dtype__"] = std::string(dtype_name(v.dtype()));
  attrs["__shape__"] = v.shape().str();
  attrs["__data__"] = v.to_vector<double>();
  return attrs;
}

NDArray constant_from_json(const json& attrs, const std::string& name) {
  try {
    DType t = dtype_from_name(attrs.at("__dtype__").get<std::string>());
    Shape shape =
        FieldTraits<Shape>::from_string(attrs.at("__shape__").get<std::string>(), {"graph", name});
    auto data = attrs.at("__data__").get<std::vector<double>>();
    if (static_cast<int64_t>(data.size()) != shape.size())
      value_error("[graph_from_json] constant '", name, "' has ", data.size(), " values for shape ",
                  shape.str());
    return NDArray::from_vector(data, shape).astype(t);
  } catch (const json::exception& e) {
    value_error("[graph_from_json] constant '", name, "' is malformed: ", e.what());
  }
}
}  // namespace

std::string graph_to_json(const Graph& g) {
  auto order = g.topo_order();
  std::unordered_map<const Node*, int> id;
  json nodes = json::array(), arg_nodes = json::array(), heads = json::array();
  for (const auto& n : order) {
    int i = static_cast<int>(nodes.size());
    id[n.get()] = i;
    json node;
    node["name"] = n->attrs.name;
    if (n->is_variable()) {
      node["op"] = "null";
      if (!n->values.empty())
        node["attrs"] = constant_json(n->values[0]);
      else
        arg_nodes.push_back(i);
    } else {
      node["op"] = n->op()->name;
      std::map<std::string, std::string> dict = n->op()->params && n->attrs.parsed.has_value()
                                                    ? n->op()->params->to_dict(n->attrs.parsed)
                                                    : n->attrs.dict;
      node["attrs"] = dict;
    }
    json inputs = json::array();
    for (const auto& e : n->inputs) inputs.push_back({id.at(e.node.get()), e.index, 0});
    node["inputs"] = inputs;
    nodes.push_back(node);
  }
  for (const auto& o : g.outputs) heads.push_back({id.at(o.node.get()), o.index, 0});
  json doc;
  doc["nodes"] = nodes;
  doc["arg_nodes"] = arg_nodes;
  doc["heads"] = heads;
  doc["attrs"] = {{"ndx_version", "0.1.0"}};
  return doc.dump(2);
}

Graph graph_from_json(const std::string& text) {
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::exception& e) {
    value_error("[graph_from_json] not valid JSON: ", e.what());
  }
  if (!doc.is_object() || !doc.contains("nodes") || !doc.contains("heads"))
    value_error("[graph_from_json] expected an object with 'nodes' and 'heads'");
  std::vector<NodePtr> nodes;
  try {
    for (const auto& jn : doc.at("nodes")) {
      std::string op = jn.at("op").get<std::string>();
      std::string name = jn.value("name", "");
      json attrs = jn.value("attrs", json::object());
      NodePtr n;
      if (op == "null") {
        n = make_variable(name);
        if (attrs.contains(kConst)) n->values = {constant_from_json(attrs, name)};
      } else {
        std::map<std::string, std::string> dict;
        for (auto it = attrs.begin(); it != attrs.end(); ++it) {
          if (!it.value().is_string())
            value_error("[graph_from_json] node '", name, "': attribute '", it.key(),
                        "' must be a string");
          dict[it.key()] = it.value().get<std::string>();
        }
        n = std::make_shared<Node>();
        n->attrs = Op::get(op)->make_attrs(dict);
        n->attrs.name = name;
      }
      for (const auto& in : jn.value("inputs", json::array())) {
        int64_t src = in.at(0).get<int64_t>(), index = in.at(1).get<int64_t>();
        if (src < 0 || src >= static_cast<int64_t>(nodes.size()))
          value_error("[graph_from_json] node '", name, "' refers to node ", src,
                      ", which is not defined before it");
        if (index < 0 || index >= nodes[src]->num_outputs())
          value_error("[graph_from_json] node '", name, "' uses output ", index, " of a node with ",
                      nodes[src]->num_outputs(), " outputs");
        n->inputs.push_back(NodeEntry{nodes[src], static_cast<uint32_t>(index), 0});
      }
      if (!n->is_variable() && n->inputs.size() != n->op()->inputs_for(n->attrs))
        value_error("[graph_from_json] node '", name, "' (", op, ") has ", n->inputs.size(),
                    " inputs, expected ", n->op()->inputs_for(n->attrs));
      nodes.push_back(n);
    }
    Graph g;
    for (const auto& h : doc.at("heads")) {
      int64_t src = h.at(0).get<int64_t>(), index = h.at(1).get<int64_t>();
      if (src < 0 || src >= static_cast<int64_t>(nodes.size()) || index < 0 ||
          index >= nodes[src]->num_outputs())
        value_error("[graph_from_json] head [", src, ", ", index, "] does not name a node output");
      g.outputs.push_back(NodeEntry{nodes[src], static_cast<uint32_t>(index), 0});
    }
    return g;
  } catch (const json::exception& e) {
    value_error("[graph_from_json] malformed graph: ", e.what());
  }
}

}  // namespace ndx
