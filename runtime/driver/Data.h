// Input data for the runtime: IDX files (Fashion-MNIST, gzip'd or not) and
// a feed that fills a plan's inputs batch by batch.
#ifndef AMPC_RUNTIME_DRIVER_DATA_H
#define AMPC_RUNTIME_DRIVER_DATA_H

#include <memory>
#include <string>
#include <vector>

#include "runtime/device/Executor.h"
#include "runtime/driver/TokenData.h"

namespace ampc::rt {

/// An IDX array of unsigned bytes (the only element type Fashion-MNIST uses).
struct IdxArray {
  std::vector<int64_t> dims;
  std::vector<uint8_t> data;
};

/// Reads an IDX file (plain or gzip'd). Throws RuntimeError naming the file.
IdxArray readIdx(const std::string &path);

struct Dataset {
  int64_t count = 0, features = 0;
  std::vector<float> images; // count x features, scaled to [0, 1]
  std::vector<int64_t> labels;
};

/// `{train,t10k}-{images-idx3,labels-idx1}-ubyte.gz` from `dir`.
Dataset loadFashionMnist(const std::string &dir, bool train);

constexpr const char *kFashionMnistDir = "/usr/share/datasets/fashion-mnist";

/// Fills a plan's inputs. `spec` is `synthetic` (seeded normal floats,
/// integers uniform over the range their consumer accepts) or
/// `fashion-mnist[:DIR]` (a float input with 784 values per sample and an
/// integer label input), or `FILE.safetensors` (a tensor per input, named
/// like it, whose first dimension counts the samples; each is rounded to its
/// input's dtype), or `tokens:SHARDS` (llm.c's token shards, a file or a
/// glob, for a graph of two integer [batch, seq] inputs: the tokens and the
/// next-token targets; a sample is a window of seq + 1 tokens).
class DataFeed {
public:
  /// Inputs named in `ignore` (such as the learning rate) are left alone.
  DataFeed(const Plan &plan, const std::string &spec, bool train, uint64_t seed,
           const std::vector<std::string> &ignore = {});
  /// Makes this feed rank `rank`'s shard of `ranks` (data-parallel
  /// training): batch i is the rank's part of global batch i, which holds
  /// `ranks` batches. Throws RuntimeError when the data set cannot give
  /// every rank a batch.
  void shard(int rank, int ranks);
  int64_t batchSize() const { return batch_; }
  /// Whole batches in one pass over the data set (training drops the last,
  /// partial one); 0 for synthetic data.
  int64_t batchesPerEpoch() const;
  /// Batches that cover every sample once, the last one perhaps partial
  /// (evaluation); 0 for synthetic data.
  int64_t batchesToCover() const;
  /// How many of batch `index`'s rows are real samples, not wrapped around
  /// to the start: the batch size but for the last batch of a pass.
  int64_t samplesIn(int64_t index) const;
  /// Has one class label per sample (accuracy can be scored).
  bool labelled() const { return labels_ >= 0; }
  int labelBuffer() const { return labels_; }
  /// The labels of the batch last filled (real data).
  const std::vector<int64_t> &batchLabels() const { return batchLabels_; }
  /// Every sample's label, in the data set's order (labelled data).
  std::vector<int64_t> labels() const;
  /// Writes batch `index` (of the current order) into the executor's inputs.
  void fill(Executor &ex, int64_t index);
  /// Shuffles the sample order with a seed (real data).
  void shuffle(uint64_t seed);

private:
  void fillSynthetic(Executor &ex, int id, uint64_t stream);

  const Plan &plan_;
  std::vector<int> inputs_; // the inputs this feed fills
  bool synthetic_ = true;
  uint64_t seed_;
  int64_t batch_ = 1;
  int images_ = -1, labels_ = -1;
  Dataset data_;
  std::vector<int64_t> order_;
  std::vector<int64_t> intRange_; // per buffer id, for synthetic integers
  std::vector<int64_t> batchLabels_;
  /// FILE.safetensors: per input, every sample's bytes in the input's dtype.
  struct Column {
    int id;
    int64_t rowBytes;
    std::vector<std::byte> bytes;
  };
  std::vector<Column> columns_;
  void loadColumns(const std::string &path);
  /// tokens:SHARDS: the windows, and the token and target inputs.
  std::unique_ptr<TokenWindows> tokens_;
  int tokenIds_ = -1, tokenTargets_ = -1;
  void openTokens(const std::string &pattern);
  void fillTokens(Executor &ex, int64_t index);
  int rank_ = 0, ranks_ = 1;
};

} // namespace ampc::rt

#endif
