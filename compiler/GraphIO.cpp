#include "compiler/GraphIO.h"

#include "compiler/Diagnostics.h"
#include "compiler/GraphBuilder.h"
#include "compiler/GraphJson.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_os_ostream.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "ops/GraphNames.h"
#include "ops/GraphOps.h"
#include "runtime/core/Files.h"
#include "runtime/core/JsonText.h"

using namespace mlir;

namespace ampc {
namespace {

enum class Format { Json, Mlir };

Format formatOf(const std::string &path) {
  StringRef ext = llvm::sys::path::extension(path);
  if (ext == ".json")
    return Format::Json;
  if (ext == ".mlir")
    return Format::Mlir;
  if (ext == ".onnx") // ONNX is read and written by its own commands
    throw GraphError("an .onnx file is ONNX: `ampc import` reads it, `ampc export` writes it; "
                     "graphs are .json or .mlir");
  throw GraphError("unknown graph file extension '" + ext.str() +
                   "'; use .json or .mlir");
}

/// MLIR's parser recurses once per nesting level of an attribute or type, and
/// overflows the stack some thousands deep: refuse more than kMaxJsonDepth
/// open brackets outside strings and comments before parsing.
void checkMlirNesting(const std::string &text) {
  int depth = 0, line = 1;
  bool inString = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char ch = text[i];
    if (ch == '\n')
      ++line;
    if (inString) {
      if (ch == '\\')
        ++i;
      else if (ch == '"')
        inString = false;
      continue;
    }
    if (ch == '"')
      inString = true;
    else if (ch == '/' && i + 1 < text.size() && text[i + 1] == '/')
      i = std::min(text.find('\n', i), text.size()) - 1;
    else if (ch == '(' || ch == '[' || ch == '{' || ch == '<')
      ++depth;
    else if ((ch == ')' || ch == ']' || ch == '}' || (ch == '>' && (i == 0 || text[i - 1] != '-'))) &&
             depth > 0)
      --depth;
    if (depth > rt::kMaxJsonDepth)
      throw GraphError("line " + std::to_string(line) + ": nested deeper than " +
                       std::to_string(rt::kMaxJsonDepth) + " levels");
  }
}

/// Every tensor's size fits: fewer than 2^56 elements, so that byte counts
/// (8 bytes at most per element) and their sums cannot overflow.
void checkSizes(ModuleOp module) {
  module.walk([](Operation *op) {
    for (Value v : op->getResults()) {
      auto type = dyn_cast<RankedTensorType>(v.getType());
      if (!type)
        continue;
      __int128 elements = 1;
      for (int64_t d : type.getShape())
        elements = std::min<__int128>(elements * std::max<int64_t>(d, 0), __int128(1) << 60);
      if (elements < (__int128(1) << 56))
        continue;
      std::string shape;
      for (int64_t d : type.getShape())
        shape += (shape.empty() ? "" : ",") + std::to_string(d);
      throw GraphError("value '" + graph::valueName(v).str() + "': shape [" + shape +
                       "] has too many elements");
    }
  });
}

} // namespace

Operation *theGraph(ModuleOp module) {
  auto graphs = module.getOps<graph::GraphOp>();
  if (std::distance(graphs.begin(), graphs.end()) != 1)
    throw GraphError("the file must hold exactly one graph.graph");
  return *graphs.begin();
}

OwningOpRef<ModuleOp> loadGraph(MLIRContext &ctx, const std::string &path) {
  formatOf(path);
  std::string error;
  std::optional<std::string> text = rt::readFile(path, error);
  if (!text)
    throw GraphError("cannot read the file: " + error);
  return parseGraph(ctx, *text, path);
}

OwningOpRef<ModuleOp> parseGraph(MLIRContext &ctx, const std::string &text,
                                 const std::string &name) {
  loadDialects(ctx);
  if (formatOf(name) == Format::Json) {
    OwningOpRef<ModuleOp> module = importGraphJson(ctx, text);
    checkSizes(*module);
    return module;
  }
  checkMlirNesting(text);
  llvm::SourceMgr sources;
  // `text` outlives the parse, which keeps no reference to it: no copy.
  sources.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBuffer(text, name), llvm::SMLoc());
  ErrorCollector errors(&ctx);
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sources, &ctx);
  if (!module)
    errors.raise("cannot parse the MLIR file");
  theGraph(*module);
  checkSizes(*module);
  return module;
}

std::string printGraph(ModuleOp module, const std::string &path) {
  if (formatOf(path) == Format::Json)
    return exportGraphJson(module);
  std::string text;
  llvm::raw_string_ostream os(text);
  module.print(os);
  return text;
}

void writeFileAtomically(const std::string &path, const std::string &text) {
  if (std::string why = rt::writeFileAtomically(path, text); !why.empty())
    throw GraphError("cannot write the file: " + why);
}

void saveGraph(ModuleOp module, const std::string &path) {
  if (formatOf(path) == Format::Json)
    return writeFileAtomically(path, exportGraphJson(module));
  // Printed straight to the file: an imported model's weights are hundreds
  // of MB of hex, which a string would copy as it grows.
  std::string why = rt::writeFileAtomically(path, [&](std::ostream &out) {
    llvm::raw_os_ostream os(out);
    module.print(os);
    return true;
  });
  if (!why.empty())
    throw GraphError("cannot write the file: " + why);
}

} // namespace ampc
