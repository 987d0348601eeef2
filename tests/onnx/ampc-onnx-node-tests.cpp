// Runs ONNX's backend node tests (Debian's libonnx-testdata) through the
// importer and the CPU runtime at O0: every case whose ops the importer maps
// is imported, run on its inputs, and its outputs compared with the suite's
// within its tolerance (rtol 1e-3, atol 1e-7; integers exactly). A case the
// importer refuses (an attribute or form it does not support) must be
// refused with an error; a case that imports must match.
//
// Usage: ampc-onnx-node-tests DIR [--expect-pass FILE] [--write-pass FILE] [--verbose]
// FILE pins the cases that pass, one name a line: a listed case that no
// longer passes (refused, or wrong) fails, and so does a case that passes
// unlisted (add it: --write-pass FILE writes the list). Exits 1 on any
// mismatch or pin broken; 77 (a skip) when DIR does not exist.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "compiler/Lowering.h"
#include "compiler/Pipelines.h"
#include "compiler/onnx/OnnxImport.h"
#include "compiler/onnx/OnnxImporter.h"
#include "compiler/onnx/OnnxTensor.h"
#include "mlir/IR/MLIRContext.h"
#include "runtime/core/Convert.h"
#include "runtime/device/Executor.h"

namespace fs = std::filesystem;
using namespace ampc;
using namespace ampc::onnx_import;

namespace {

std::string slurp(const fs::path &p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

HostTensor readPb(const fs::path &p) {
  onnx::TensorProto t;
  if (!parseMessage(slurp(p), t))
    throw GraphError(p.string() + ": not a TensorProto");
  if (t.data_type() == onnx::TensorProto::UINT16) // the suite's bfloat16 values, as bits
    t.set_data_type(onnx::TensorProto::BFLOAT16);
  return readTensor(t, p.string());
}

enum class Outcome { NotMapped, Refused, Passed, Failed };

/// Runs one case; `why` says what went wrong.
Outcome runCase(const fs::path &dir, std::string &why) {
  onnx::ModelProto model;
  std::string bytes = slurp(dir / "model.onnx");
  if (!parseMessage(bytes, model))
    return why = "model.onnx does not parse", Outcome::Failed;
  for (const onnx::NodeProto &n : model.graph().node())
    if (!mappings().count(n.op_type()))
      return why = n.op_type(), Outcome::NotMapped;
  fs::path data = dir / "test_data_set_0";
  // The suite passes shapes, axes and bounds as graph inputs; ampc takes
  // them static, as exporters write them: such inputs become initializers
  // holding the case's values.
  std::map<std::string, int> inputIndex;
  std::set<std::string> initializers;
  for (const onnx::TensorProto &t : model.graph().initializer())
    initializers.insert(t.name());
  for (int i = 0, k = 0; i < model.graph().input_size(); ++i)
    if (!initializers.count(model.graph().input(i).name())) // older exporters list them
      inputIndex[model.graph().input(i).name()] = k++;
  std::set<std::string> staticInputs;
  for (const onnx::NodeProto &n : model.graph().node())
    for (int i = 0; i < n.input_size(); ++i) {
      static const std::map<std::string, int> firstStatic = {
          {"Reshape", 1}, {"Slice", 1}, {"Squeeze", 1}, {"Unsqueeze", 1},
          {"ConstantOfShape", 0}, {"Range", 0}, {"Pow", 1}, {"ReduceMean", 1},
          {"ReduceSum", 1}, {"ReduceL2", 1}, {"ReduceSumSquare", 1}, {"Resize", 1},
          {"Upsample", 1}, {"Tile", 1}, {"ReduceMax", 1}, {"ReduceMin", 1}};
      auto it = firstStatic.find(n.op_type());
      if (it != firstStatic.end() && i >= it->second && inputIndex.count(n.input(i)))
        staticInputs.insert(n.input(i));
    }
  for (const std::string &name : staticInputs) {
    onnx::TensorProto t;
    if (!parseMessage(slurp(data / ("input_" + std::to_string(inputIndex[name]) + ".pb")), t))
      return why = "input '" + name + "' does not parse", Outcome::Failed;
    t.set_name(name);
    *model.mutable_graph()->add_initializer() = t;
  }
  if (!staticInputs.empty())
    bytes = model.SerializeAsString();
  mlir::MLIRContext ctx;
  rt::Plan plan;
  try {
    auto module = importOnnx(ctx, bytes, "node_test", {});
    AmpSettings o0;
    o0.level = "O0";
    runAmpPipeline(*module, o0);
    plan = lowerToPlan(*module);
  } catch (const std::exception &e) {
    why = e.what();
    return Outcome::Refused;
  }
  try {
    rt::Executor ex(plan);
    for (const auto &[name, index] : inputIndex) {
      if (staticInputs.count(name))
        continue;
      HostTensor t = readPb(data / ("input_" + std::to_string(index) + ".pb"));
      int id = plan.find(name);
      if (id < 0)
        return why = "no input '" + name + "' in the plan", Outcome::Failed;
      const rt::Buffer &b = plan.buffers[id];
      std::vector<std::byte> raw(b.bytes);
      for (size_t k = 0; k < t.data.size(); ++k)
        rt::storeElement(raw.data(), b.dtype, k, t.data[k]);
      ex.write(id, raw.data(), raw.size());
    }
    ex.run();
    for (int i = 0; i < model.graph().output_size(); ++i) {
      HostTensor want = readPb(data / ("output_" + std::to_string(i) + ".pb"));
      int id = plan.find(model.graph().output(i).name());
      if (id < 0)
        return why = "no output '" + model.graph().output(i).name() + "'", Outcome::Failed;
      const rt::Buffer &b = plan.buffers[id];
      if (b.shape != want.shape)
        return why = "output " + std::to_string(i) + " has another shape", Outcome::Failed;
      std::vector<std::byte> got = ex.readBytes(id);
      for (size_t k = 0; k < want.data.size(); ++k) {
        double g = rt::loadElement(got.data(), b.dtype, k), w = want.data[k];
        // ONNX 1.12's expected bfloat16 values were made by truncating f32;
        // ampc rounds to nearest even: they may differ by one bf16 ulp.
        double rtol = b.dtype == rt::DType::BF16 ? 1.0 / 128 : 1e-3;
        bool same = g == w || (rt::isFloat(b.dtype) &&
                               (std::isnan(w) ? std::isnan(g)
                                              : std::fabs(g - w) <= 1e-7 + rtol * std::fabs(w)));
        if (!same)
          return why = "output " + std::to_string(i) + "[" + std::to_string(k) + "] is " +
                       std::to_string(g) + ", expected " + std::to_string(w),
                 Outcome::Failed;
      }
    }
  } catch (const std::exception &e) {
    why = std::string("run: ") + e.what();
    return Outcome::Failed;
  }
  return Outcome::Passed;
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: ampc-onnx-node-tests DIR [--expect-pass FILE] "
                         "[--write-pass FILE] [--verbose]\n");
    return 2;
  }
  fs::path root = argv[1];
  std::string expectFile, writeFile;
  bool verbose = false;
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--expect-pass" && i + 1 < argc)
      expectFile = argv[++i];
    else if (a == "--write-pass" && i + 1 < argc)
      writeFile = argv[++i];
    else if (a == "--verbose")
      verbose = true;
    else {
      std::fprintf(stderr, "ampc-onnx-node-tests: error: unknown argument '%s'\n", a.c_str());
      return 2;
    }
  }
  std::set<std::string> expected;
  if (!expectFile.empty()) {
    std::ifstream in(expectFile);
    if (!in) {
      std::fprintf(stderr, "ampc-onnx-node-tests: error: %s: cannot read the file\n",
                   expectFile.c_str());
      return 2;
    }
    for (std::string line; std::getline(in, line);)
      if (!line.empty() && line[0] != '#')
        expected.insert(line);
  }
  if (!fs::is_directory(root)) {
    std::printf("skipped: %s does not exist (Debian's libonnx-testdata)\n", root.c_str());
    return 77;
  }
  std::vector<fs::path> cases;
  for (const fs::directory_entry &e : fs::directory_iterator(root))
    if (fs::exists(e.path() / "model.onnx"))
      cases.push_back(e.path());
  std::sort(cases.begin(), cases.end());
  int counts[4] = {0, 0, 0, 0};
  std::map<std::string, int> otherOps;
  std::set<std::string> passed;
  for (const fs::path &c : cases) {
    std::string why;
    Outcome o = runCase(c, why);
    ++counts[int(o)];
    if (o == Outcome::Passed)
      passed.insert(c.filename().string());
    if (o == Outcome::NotMapped)
      ++otherOps[why];
    else if (o != Outcome::Passed || verbose) // every skip is listed with its reason
      std::printf("%-8s %s%s%s\n",
                  o == Outcome::Passed ? "pass" : o == Outcome::Refused ? "skipped" : "FAIL",
                  c.filename().c_str(), why.empty() ? "" : ": ", why.c_str());
  }
  if (!otherOps.empty()) {
    std::string ops;
    for (const auto &[op, n] : otherOps)
      ops += (ops.empty() ? "" : ", ") + op + " (" + std::to_string(n) + ")";
    std::printf("skipped, ops the importer does not map: %s\n", ops.c_str());
  }
  std::printf("%zu cases: %d of mapped ops (%d passed, %d skipped, %d failed), %d of other ops\n",
              cases.size(), counts[1] + counts[2] + counts[3], counts[2], counts[1], counts[3],
              counts[0]);
  if (!writeFile.empty()) {
    std::ofstream out(writeFile);
    out << "# The cases of " << root.filename().string()
        << " that pass (ampc-onnx-node-tests --write-pass)\n";
    for (const std::string &name : passed)
      out << name << "\n";
  }
  int broken = 0;
  if (!expectFile.empty()) {
    for (const std::string &name : expected)
      if (!passed.count(name) && ++broken)
        std::printf("FAIL %s: pinned in %s, no longer passes\n", name.c_str(), expectFile.c_str());
    for (const std::string &name : passed)
      if (!expected.count(name) && ++broken)
        std::printf("FAIL %s: passes, not pinned in %s: add it\n", name.c_str(),
                    expectFile.c_str());
  }
  return counts[int(Outcome::Failed)] || broken ? 1 : 0;
}
