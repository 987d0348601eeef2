// The model zoo: graphs written with the builder API, reachable as
// `ampc model NAME --set key=value`.
#ifndef AMPC_MODELS_MODELS_H
#define AMPC_MODELS_MODELS_H

#include <functional>
#include <map>
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
  const std::string &get(const std::string &key) const { return values_.at(key); }

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
/// unknown model, an unknown key or a bad value.
mlir::OwningOpRef<mlir::ModuleOp> buildModel(mlir::MLIRContext &ctx, const std::string &name,
                                             const std::map<std::string, std::string> &sets);

// The builders, one per file.
mlir::OwningOpRef<mlir::ModuleOp> buildSimpleNet(mlir::MLIRContext &, const ModelArgs &);
mlir::OwningOpRef<mlir::ModuleOp> buildMlp(mlir::MLIRContext &, const ModelArgs &);
mlir::OwningOpRef<mlir::ModuleOp> buildMnistCnn(mlir::MLIRContext &, const ModelArgs &);
mlir::OwningOpRef<mlir::ModuleOp> buildResNet(mlir::MLIRContext &, const ModelArgs &);
mlir::OwningOpRef<mlir::ModuleOp> buildBert(mlir::MLIRContext &, const ModelArgs &);
mlir::OwningOpRef<mlir::ModuleOp> buildGpt2(mlir::MLIRContext &, const ModelArgs &);
mlir::OwningOpRef<mlir::ModuleOp> buildLlama(mlir::MLIRContext &, const ModelArgs &);
mlir::OwningOpRef<mlir::ModuleOp> buildAttentionCore(mlir::MLIRContext &, const ModelArgs &);

} // namespace ampc

#endif
