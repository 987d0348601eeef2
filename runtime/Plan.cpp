#include "runtime/Plan.h"

#include <fstream>
#include <sstream>

namespace ampc::rt {

const char *kindName(BufferKind k) {
  switch (k) {
  case BufferKind::Input: return "input";
  case BufferKind::Param: return "param";
  case BufferKind::Const: return "const";
  case BufferKind::Temp: return "temp";
  }
  return "?";
}

int Plan::find(const std::string &name) const {
  for (const Buffer &b : buffers)
    if (b.name == name)
      return b.id;
  return -1;
}

std::string planToJson(const Plan &plan) {
  std::string out = "{\n  \"format\": \"ampc.plan\",\n  \"version\": 1,\n";
  out += "  \"name\": " + Json(plan.name).dump() + ",\n";
  out += "  \"arena_bytes\": " + std::to_string(plan.arenaBytes) + ",\n";
  out += "  \"persistent_bytes\": " + std::to_string(plan.persistentBytes) + ",\n";
  out += "  \"unshared_bytes\": " + std::to_string(plan.unsharedBytes) + ",\n";
  out += "  \"peak_bytes\": " + std::to_string(plan.peakBytes()) + ",\n";
  out += "  \"buffers\": [";
  for (size_t i = 0; i < plan.buffers.size(); ++i) {
    const Buffer &b = plan.buffers[i];
    Json j = {{"id", b.id}, {"name", b.name}, {"kind", kindName(b.kind)},
              {"dtype", dtypeName(b.dtype)}, {"shape", b.shape},
              {"offset", b.offset}, {"bytes", b.bytes}};
    if (b.kind == BufferKind::Param) {
      j["init"] = b.init;
      if (!b.trainable)
        j["trainable"] = false;
      if (!b.masterDtype.empty())
        j["master_dtype"] = b.masterDtype;
    }
    if (b.kind == BufferKind::Const)
      j["data"] = b.data;
    out += (i ? ",\n    " : "\n    ") + j.dump();
  }
  out += "\n  ],\n  \"steps\": [";
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const Step &s = plan.steps[i];
    Json j = {{"name", s.name}, {"kernel", s.kernel}, {"inputs", s.inputs},
              {"outputs", s.outputs}, {"attrs", s.attrs}};
    out += (i ? ",\n    " : "\n    ") + j.dump();
  }
  out += "\n  ],\n  \"inputs\": " + Json(plan.inputs).dump() +
         ",\n  \"outputs\": " + Json(plan.outputs).dump() +
         ",\n  \"loss\": " + std::to_string(plan.loss) + "\n}\n";
  return out;
}

namespace {

template <typename T> T get(const Json &j, const char *key, const std::string &where) {
  if (!j.is_object() || !j.contains(key))
    throw PlanError(where + ": missing \"" + key + "\"");
  try {
    return j.at(key).get<T>();
  } catch (const Json::exception &) {
    throw PlanError(where + ": \"" + key + "\" has the wrong type");
  }
}

void checkIds(const std::vector<int> &ids, size_t count, const std::string &where) {
  for (int id : ids)
    if (id < 0 || (size_t)id >= count)
      throw PlanError(where + ": buffer id " + std::to_string(id) + " does not exist");
}

} // namespace

Plan planFromJson(const std::string &text) {
  Json root;
  try {
    root = Json::parse(text);
  } catch (const Json::parse_error &e) {
    std::string what = e.what();
    throw PlanError("malformed JSON: " + what.substr(what.find("] ") + 2));
  }
  if (!root.is_object() || root.value("format", "") != "ampc.plan")
    throw PlanError("not an ampc plan: \"format\" must be \"ampc.plan\"");
  if (root.value("version", 0) != 1)
    throw PlanError("unsupported plan version; this ampc reads version 1");
  Plan plan;
  plan.name = get<std::string>(root, "name", "plan");
  plan.arenaBytes = get<int64_t>(root, "arena_bytes", "plan");
  plan.persistentBytes = get<int64_t>(root, "persistent_bytes", "plan");
  plan.unsharedBytes = get<int64_t>(root, "unshared_bytes", "plan");
  for (const Json &jb : get<Json>(root, "buffers", "plan")) {
    Buffer b;
    b.id = get<int>(jb, "id", "buffer");
    std::string where = "buffer " + std::to_string(b.id);
    if (b.id != (int)plan.buffers.size())
      throw PlanError(where + ": ids must count up from 0");
    b.name = get<std::string>(jb, "name", where);
    std::string kind = get<std::string>(jb, "kind", where);
    bool known = false;
    for (BufferKind k : {BufferKind::Input, BufferKind::Param, BufferKind::Const, BufferKind::Temp})
      if (kind == kindName(k)) {
        b.kind = k;
        known = true;
      }
    if (!known)
      throw PlanError(where + ": unknown kind '" + kind + "'");
    auto dtype = parseDType(get<std::string>(jb, "dtype", where));
    if (!dtype)
      throw PlanError(where + ": unknown dtype");
    b.dtype = *dtype;
    b.shape = get<std::vector<int64_t>>(jb, "shape", where);
    for (int64_t d : b.shape)
      if (d < 0)
        throw PlanError(where + ": negative dimension");
    b.offset = get<int64_t>(jb, "offset", where);
    b.bytes = get<int64_t>(jb, "bytes", where);
    if (b.bytes != numElements(b.shape) * (int64_t)dtypeSize(b.dtype))
      throw PlanError(where + " ('" + b.name + "'): bytes do not match dtype and shape");
    int64_t region = b.isPersistent() ? plan.persistentBytes : plan.arenaBytes;
    if (b.offset < 0 || b.offset % kAlignment || b.offset + b.bytes > region)
      throw PlanError(where + " ('" + b.name + "'): offset out of its region");
    if (b.kind == BufferKind::Param) {
      b.init = jb.value("init", Json::object());
      b.trainable = jb.value("trainable", true);
      b.masterDtype = jb.value("master_dtype", "");
    }
    if (b.kind == BufferKind::Const) {
      b.data = get<std::vector<double>>(jb, "data", where);
      if ((int64_t)b.data.size() != numElements(b.shape))
        throw PlanError(where + ": const data does not fill the shape");
    }
    plan.buffers.push_back(std::move(b));
  }
  for (const Json &js : get<Json>(root, "steps", "plan")) {
    Step s;
    s.name = get<std::string>(js, "name", "step");
    std::string where = "step '" + s.name + "'";
    s.kernel = get<std::string>(js, "kernel", where);
    s.inputs = get<std::vector<int>>(js, "inputs", where);
    s.outputs = get<std::vector<int>>(js, "outputs", where);
    s.attrs = js.value("attrs", Json::object());
    checkIds(s.inputs, plan.buffers.size(), where);
    checkIds(s.outputs, plan.buffers.size(), where);
    plan.steps.push_back(std::move(s));
  }
  plan.inputs = get<std::vector<int>>(root, "inputs", "plan");
  plan.outputs = get<std::vector<int>>(root, "outputs", "plan");
  plan.loss = get<int>(root, "loss", "plan");
  checkIds(plan.inputs, plan.buffers.size(), "inputs");
  checkIds(plan.outputs, plan.buffers.size(), "outputs");
  if (plan.loss >= (int)plan.buffers.size())
    throw PlanError("loss: buffer id does not exist");
  return plan;
}

Plan loadPlan(const std::string &path) {
  std::ifstream in(path);
  if (!in)
    throw PlanError("cannot read the file");
  std::stringstream text;
  text << in.rdbuf();
  return planFromJson(text.str());
}

} // namespace ampc::rt
