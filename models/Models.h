// The model zoo: graphs written with the builder API, reachable as
// `ampc model NAME --set key=value`.
#ifndef AMPC_MODELS_MODELS_H
#define AMPC_MODELS_MODELS_H

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

namespace ampc {

/// The parameters of one model build: the defaults overridden by `--set`.
class ModelArgs {
public:
  explicit ModelArgs(std::map<std::string, std::string> values)
      : values_(std::move(values)) {}
  /// A positive integer parameter; throws GraphError on a bad value.
  int64_t getInt(const std::string &key) const;
  /// A positive finite number; throws GraphError on a bad value.
  double getNumber(const std::string &key) const;
  /// 0 or 1; throws GraphError on anything else.
  bool getFlag(const std::string &key) const;
  /// The value as given; throws GraphError if there is none.
  const std::string &get(const std::string &key) const;

private:
  std::map<std::string, std::string> values_;
};

struct ModelParam {
  std::string key, defaultValue, help;
};

struct ModelInfo {
  std::string name, summary;
  std::vector<ModelParam> params;
  std::function<mlir::OwningOpRef<mlir::ModuleOp>(mlir::MLIRContext &, const ModelArgs &)>
      build;
};

const std::vector<ModelInfo> &modelRegistry();

/// Builds a model by name with `key=value` overrides. Throws GraphError on an
/// unknown model, an unknown key or a bad value. The graph records the name
/// and every parameter's value (its `model` attribute), so that the tools can
/// rebuild it in another form (a decode graph) or describe it (a Hugging
/// Face config.json).
mlir::OwningOpRef<mlir::ModuleOp> buildModel(mlir::MLIRContext &ctx, const std::string &name,
                                             const std::map<std::string, std::string> &sets);

/// A zoo model's name and parameters, as a graph records them.
struct ModelRecord {
  std::string name;
  std::map<std::string, std::string> args;
};

/// The record of the zoo model that built the module's graph, if any.
std::optional<ModelRecord> modelRecordOf(mlir::ModuleOp module);

// The builders, one per file.
mlir::OwningOpRef<mlir::ModuleOp> buildSimpleNet(mlir::MLIRContext &, const ModelArgs &);
mlir::OwningOpRef<mlir::ModuleOp> buildMlp(mlir::MLIRContext &, const ModelArgs &);
mlir::OwningOpRef<mlir::ModuleOp> buildMnistCnn(mlir::MLIRContext &, const ModelArgs &);
mlir::OwningOpRef<mlir::ModuleOp> buildResNet(mlir::MLIRContext &, const ModelArgs &);
mlir::OwningOpRef<mlir::ModuleOp> buildBert(mlir::MLIRContext &, const ModelArgs &);
mlir::OwningOpRef<mlir::ModuleOp> buildGpt2(mlir::MLIRContext &, const ModelArgs &);
mlir::OwningOpRef<mlir::ModuleOp> buildLlama(mlir::MLIRContext &, const ModelArgs &);
mlir::OwningOpRef<mlir::ModuleOp> buildAttentionCore(mlir::MLIRContext &, const ModelArgs &);

/// The llama's feed-forward width: `ffn`, or for auto 8/3 of `hidden`
/// rounded up to a multiple of 256.
int64_t llamaFfnWidth(const ModelArgs &a);

} // namespace ampc

#endif
