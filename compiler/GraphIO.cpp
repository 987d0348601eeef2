#include "compiler/GraphIO.h"

#include "compiler/Diagnostics.h"
#include "compiler/GraphBuilder.h"
#include "compiler/GraphJson.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "ops/GraphOps.h"

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
  throw GraphError("unknown graph file extension '" + ext.str() +
                   "'; use .json or .mlir");
}

} // namespace

Operation *theGraph(ModuleOp module) {
  auto graphs = module.getOps<graph::GraphOp>();
  if (std::distance(graphs.begin(), graphs.end()) != 1)
    throw GraphError("the file must hold exactly one graph.graph");
  return *graphs.begin();
}

OwningOpRef<ModuleOp> loadGraph(MLIRContext &ctx, const std::string &path) {
  loadDialects(ctx);
  Format format = formatOf(path);
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer)
    throw GraphError("cannot read the file: " + buffer.getError().message());
  if (format == Format::Json)
    return importGraphJson(ctx, (*buffer)->getBuffer());

  llvm::SourceMgr sources;
  sources.AddNewSourceBuffer(std::move(*buffer), llvm::SMLoc());
  ErrorCollector errors(&ctx);
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sources, &ctx);
  if (!module)
    errors.raise("cannot parse the MLIR file");
  theGraph(*module);
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
  llvm::Error err = llvm::writeToOutput(path, [&](llvm::raw_ostream &os) {
    os << text;
    return llvm::Error::success();
  });
  if (err)
    throw GraphError("cannot write the file: " + llvm::toString(std::move(err)));
}

void saveGraph(ModuleOp module, const std::string &path) {
  writeFileAtomically(path, printGraph(module, path));
}

} // namespace ampc
