#include "runtime/driver/Data.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include <sys/stat.h>
#include <zlib.h>

#include "runtime/core/Convert.h"
#include "runtime/core/KernelTraits.h"
#include "runtime/driver/Checkpoint.h"
#include "runtime/numerics/Random.h"

namespace ampc::rt {

IdxArray readIdx(const std::string &path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
    throw RuntimeError(path + ": cannot read the file (not a regular file)");
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f)
    throw RuntimeError(path + ": cannot read the file");
  auto readAll = [&](void *dst, unsigned n) {
    return gzread(f, dst, n) == (int)n;
  };
  unsigned char header[4];
  IdxArray a;
  bool ok = readAll(header, 4) && header[0] == 0 && header[1] == 0 && header[2] == 0x08 &&
            header[3] >= 1 && header[3] <= 4;
  int64_t count = 1;
  for (int d = 0; ok && d < header[3]; ++d) {
    unsigned char dim[4];
    ok = readAll(dim, 4);
    int64_t v = (int64_t(dim[0]) << 24) | (dim[1] << 16) | (dim[2] << 8) | dim[3];
    a.dims.push_back(v);
    count = v > (int64_t(1) << 31) ? v : count * v; // stays below 2^62: checked next
    ok = ok && count <= (int64_t(1) << 31);
  }
  // The data grows a chunk at a time as it is read: a header may claim 2^31
  // bytes that a short file does not hold, and allocating them all up front
  // costs gigabytes (and seconds) before the truncation shows.
  constexpr int64_t kChunk = int64_t(1) << 20;
  while (ok && int64_t(a.data.size()) < count) {
    size_t at = a.data.size();
    unsigned n = unsigned(std::min(kChunk, count - int64_t(at)));
    a.data.resize(at + n);
    ok = readAll(a.data.data() + at, n);
  }
  gzclose(f);
  if (!ok)
    throw RuntimeError(path + ": not an IDX file of unsigned bytes, or truncated");
  return a;
}

Dataset loadFashionMnist(const std::string &dir, bool train) {
  struct stat info;
  if (stat(dir.c_str(), &info) != 0 || !S_ISDIR(info.st_mode))
    throw RuntimeError("fashion-mnist: there is no folder '" + dir +
                       "'; give fashion-mnist:DIR, DIR holding the gzip'd IDX files " +
                       "(train-images-idx3-ubyte.gz, ...), or install dataset-fashion-mnist");
  std::string prefix = dir + "/" + (train ? "train" : "t10k");
  IdxArray images = readIdx(prefix + "-images-idx3-ubyte.gz");
  IdxArray labels = readIdx(prefix + "-labels-idx1-ubyte.gz");
  if (images.dims.size() != 3 || labels.dims.size() != 1 || images.dims[0] != labels.dims[0])
    throw RuntimeError(prefix + "-*: images and labels do not match");
  if (images.dims[0] == 0)
    throw RuntimeError(prefix + "-images-idx3-ubyte.gz: holds no images");
  Dataset d;
  d.count = images.dims[0];
  d.features = images.dims[1] * images.dims[2];
  d.images.resize(images.data.size());
  for (size_t i = 0; i < images.data.size(); ++i)
    d.images[i] = images.data[i] / 255.0f;
  d.labels.assign(labels.data.begin(), labels.data.end());
  return d;
}

DataFeed::DataFeed(const Plan &plan, const std::string &spec, bool train, uint64_t seed,
                   const std::vector<std::string> &ignore)
    : plan_(plan), seed_(seed), intRange_(plan.buffers.size(), -1) {
  for (int id : plan.inputs)
    if (std::find(ignore.begin(), ignore.end(), plan.buffers[id].name) == ignore.end())
      inputs_.push_back(id);
  for (int id : inputs_)
    if (!plan.buffers[id].shape.empty())
      batch_ = plan.buffers[id].shape[0];
  if (batch_ < 1)
    throw RuntimeError("the graph's inputs hold batches of 0 samples");
  // Integer inputs range over what all their consumers accept (2 when no
  // kernel bounds them).
  for (const Step &s : plan.steps) {
    const KernelTraits *traits = &traitsOf(s.kernel);
    if (!traits || traits->intRange.input < 0)
      continue;
    const IntRange &r = traits->intRange;
    const std::vector<int> &operands = r.boundIsOutput ? s.outputs : s.inputs;
    if ((size_t)r.input >= s.inputs.size() || (size_t)r.bound >= operands.size())
      continue;
    const std::vector<int64_t> &shape = plan.buffers[operands[r.bound]].shape;
    int64_t dim = r.dim < 0 ? r.dim + (int64_t)shape.size() : r.dim;
    if (dim < 0 || dim >= (int64_t)shape.size())
      continue;
    int64_t &range = intRange_[s.inputs[r.input]];
    range = range < 0 ? shape[dim] : std::min(range, shape[dim]);
  }
  for (int64_t &range : intRange_)
    range = range < 0 ? 2 : range;
  if (spec == "synthetic")
    return;
  if (spec.size() > 12 && spec.compare(spec.size() - 12, 12, ".safetensors") == 0) {
    loadColumns(spec);
    return;
  }
  if (spec.rfind("tokens:", 0) == 0) {
    openTokens(spec.substr(7));
    return;
  }
  std::string dir = kFashionMnistDir;
  if (spec.rfind("fashion-mnist", 0) != 0 ||
      (spec.size() > 13 && spec[13] != ':'))
    throw RuntimeError("data must be synthetic, fashion-mnist[:DIR], FILE.safetensors or "
                       "tokens:SHARDS, got '" + spec + "'");
  if (spec.size() > 14)
    dir = spec.substr(14);
  synthetic_ = false;
  for (int id : inputs_) {
    const Buffer &b = plan.buffers[id];
    int64_t perSample =
        b.shape.empty() || b.shape[0] != batch_ ? 0 : numElements(b.shape) / b.shape[0];
    if (isFloat(b.dtype) && perSample == 784 && images_ < 0)
      images_ = id;
    else if (!isStoredFloat(b.dtype) && b.shape.size() == 1 && b.shape[0] == batch_ &&
             labels_ < 0)
      labels_ = id;
    else
      throw RuntimeError("fashion-mnist feeds a float input of 784 values per sample and "
                         "an integer label input; input '" + b.name + "' is neither");
  }
  if (images_ < 0 || labels_ < 0)
    throw RuntimeError("fashion-mnist needs a float input of 784 values per sample and "
                       "an integer label input");
  data_ = loadFashionMnist(dir, train);
  int64_t perSample = numElements(plan.buffers[images_].shape) / batch_;
  if (data_.features != perSample)
    throw RuntimeError(dir + ": images of " + std::to_string(data_.features) +
                       " values do not fit the graph's input of " + std::to_string(perSample) +
                       " values per sample");
  order_.resize(data_.count);
  std::iota(order_.begin(), order_.end(), 0);
}

std::vector<int64_t> DataFeed::labels() const {
  if (!labelled())
    return {};
  for (const Column &c : columns_)
    if (c.id == labels_) {
      std::vector<int64_t> out(data_.count);
      for (int64_t i = 0; i < data_.count; ++i)
        out[i] = (int64_t)loadElement(c.bytes.data(), plan_.buffers[c.id].dtype, i);
      return out;
    }
  return data_.labels;
}

void DataFeed::loadColumns(const std::string &path) {
  Safetensors file = readSafetensors(path, "data file");
  synthetic_ = false;
  data_.count = -1;
  for (int id : inputs_) {
    const Buffer &b = plan_.buffers[id];
    auto it = file.tensors.find(b.name);
    if (it == file.tensors.end())
      throw RuntimeError(path + ": no tensor '" + b.name + "' for the graph's input");
    const Safetensors::Tensor &t = it->second;
    std::vector<int64_t> sample(b.shape.begin() + (b.shape.empty() ? 0 : 1), b.shape.end());
    if (b.shape.empty() || t.shape.empty() || t.shape[0] < 1 ||
        std::vector<int64_t>(t.shape.begin() + 1, t.shape.end()) != sample ||
        isStoredFloat(t.dtype) != isStoredFloat(b.dtype))
      throw RuntimeError(path + ": tensor '" + b.name + "' must hold samples of the input's " +
                         "shape after the batch dimension, and its kind (float or integer)");
    if (data_.count >= 0 && t.shape[0] != data_.count)
      throw RuntimeError(path + ": tensor '" + b.name + "' holds " + std::to_string(t.shape[0]) +
                         " samples, the others " + std::to_string(data_.count));
    data_.count = t.shape[0];
    Column c{id, (int64_t)(numElements(sample) * dtypeSize(b.dtype)), {}};
    int64_t n = numElements(t.shape);
    c.bytes.resize(n * dtypeSize(b.dtype));
    convertElements(file.data.data() + t.offset, t.dtype, c.bytes.data(), b.dtype, n);
    if (!isStoredFloat(b.dtype) && b.shape.size() == 1 && labels_ < 0)
      labels_ = id;
    columns_.push_back(std::move(c));
  }
  if (data_.count < 0)
    throw RuntimeError(path + ": the graph has no inputs to feed");
  order_.resize(data_.count);
  std::iota(order_.begin(), order_.end(), 0);
}

void DataFeed::openTokens(const std::string &pattern) {
  for (int id : inputs_) {
    const Buffer &b = plan_.buffers[id];
    if (isStoredFloat(b.dtype) || b.shape.size() != 2 || b.shape[0] != batch_ ||
        (tokenIds_ >= 0 && b.shape != plan_.buffers[tokenIds_].shape))
      throw RuntimeError("tokens: feeds a graph of two integer [batch, seq] inputs (the tokens, "
                         "then the next-token targets); input '" + b.name + "' is not one");
    (tokenIds_ < 0 ? tokenIds_ : tokenTargets_) = id;
  }
  if (tokenTargets_ < 0 || inputs_.size() != 2)
    throw RuntimeError("tokens: feeds a graph of two integer [batch, seq] inputs (the tokens, "
                       "then the next-token targets); this one has " +
                       std::to_string(inputs_.size()));
  // Both inputs index the vocabulary: the embedding table, the logits.
  int64_t vocab = std::min(intRange_[tokenIds_], intRange_[tokenTargets_]);
  tokens_ = std::make_unique<TokenWindows>(pattern, plan_.buffers[tokenIds_].shape[1], vocab);
  synthetic_ = false;
  data_.count = tokens_->count();
  order_.resize(data_.count);
  std::iota(order_.begin(), order_.end(), 0);
}

void DataFeed::fillTokens(Executor &ex, int64_t index) {
  const Buffer &ids = plan_.buffers[tokenIds_], &next = plan_.buffers[tokenTargets_];
  int64_t seq = tokens_->seq();
  std::vector<std::byte> inputs(ids.bytes), targets(next.bytes);
  for (int64_t i = 0; i < batch_; ++i) {
    TokenSpan w = tokens_->window(order_[(index * batch_ + i) % data_.count]);
    for (int64_t t = 0; t < seq; ++t) {
      storeElement(inputs.data(), ids.dtype, i * seq + t, (double)w[t]);
      storeElement(targets.data(), next.dtype, i * seq + t, (double)w[t + 1]);
    }
  }
  ex.write(tokenIds_, inputs.data(), inputs.size());
  ex.write(tokenTargets_, targets.data(), targets.size());
}

void DataFeed::shard(int rank, int ranks) {
  if (!synthetic_ && data_.count < batch_ * (int64_t)ranks)
    throw RuntimeError("the data set's " + std::to_string(data_.count) +
                       " samples cannot give each of " + std::to_string(ranks) +
                       " ranks a batch of " + std::to_string(batch_));
  rank_ = rank;
  ranks_ = ranks;
}

int64_t DataFeed::batchesPerEpoch() const {
  return synthetic_ ? 0 : data_.count / (batch_ * ranks_);
}

int64_t DataFeed::batchesToCover() const {
  return synthetic_ ? 0 : (data_.count + batch_ - 1) / batch_;
}

int64_t DataFeed::samplesIn(int64_t index) const {
  return synthetic_ ? batch_ : std::clamp<int64_t>(data_.count - index * batch_, 0, batch_);
}

void DataFeed::shuffle(uint64_t seed) {
  std::iota(order_.begin(), order_.end(), 0); // the same order for a seed, always
  std::mt19937_64 rng(seed);
  std::shuffle(order_.begin(), order_.end(), rng);
}

/// Synthetic input `id` of one batch, each element from its own counter in
/// `stream` (num::mix), so the threads fill it in any order with the same
/// values: floats standard normal (Box-Muller over pairs of elements, in
/// f32), integers uniform below their range: one sequential generator took
/// 20 times a ResNet-50 GPU step (docs/benchmarks/2026-11-30-cpu.md).
void DataFeed::fillSynthetic(Executor &ex, int id, uint64_t stream) {
  const Buffer &b = plan_.buffers[id];
  int64_t n = numElements(b.shape);
  if (isStoredFloat(b.dtype)) {
    std::vector<float> v(n);
#pragma omp parallel for if (n > 65536)
    for (int64_t pair = 0; pair < (n + 1) / 2; ++pair) {
      // u1 in (0, 1]: its log is finite.
      float u1 = float((num::mix(stream + 2 * pair) >> 40) + 1) * 0x1.0p-24f;
      float u2 = float(num::mix(stream + 2 * pair + 1) >> 40) * 0x1.0p-24f;
      float r = std::sqrt(-2.0f * std::log(u1)), theta = 6.2831853f * u2;
      v[2 * pair] = r * std::cos(theta);
      if (2 * pair + 1 < n)
        v[2 * pair + 1] = r * std::sin(theta);
    }
    ex.writeF32(id, v);
    return;
  }
  auto range = (unsigned __int128)std::max<int64_t>(intRange_[id], 1);
  std::vector<std::byte> bytes(b.bytes);
#pragma omp parallel for if (n > 65536)
  for (int64_t i = 0; i < n; ++i)
    storeElement(bytes.data(), b.dtype, i,
                 (double)(uint64_t)((num::mix(stream + (uint64_t)i) * range) >> 64));
  ex.write(id, bytes.data(), bytes.size());
}

void DataFeed::fill(Executor &ex, int64_t index) {
  index = index * ranks_ + rank_; // this rank's batch of the global one
  if (synthetic_) {
    for (int id : inputs_)
      fillSynthetic(ex, id, num::mix(num::mix(seed_ * 1000003ull + (uint64_t)index) ^ (uint64_t)id));
    return;
  }
  if (tokens_) {
    fillTokens(ex, index);
    return;
  }
  if (!columns_.empty()) {
    for (const Column &c : columns_) {
      std::vector<std::byte> bytes(c.rowBytes * batch_);
      for (int64_t i = 0; i < batch_; ++i) {
        int64_t sample = order_[(index * batch_ + i) % data_.count];
        std::copy_n(c.bytes.begin() + sample * c.rowBytes, c.rowBytes,
                    bytes.begin() + i * c.rowBytes);
      }
      ex.write(c.id, bytes.data(), bytes.size());
      if (c.id == labels_) {
        batchLabels_.resize(batch_);
        for (int64_t i = 0; i < batch_; ++i)
          batchLabels_[i] = (int64_t)loadElement(bytes.data(), plan_.buffers[c.id].dtype, i);
      }
    }
    return;
  }
  const Buffer &labels = plan_.buffers[labels_];
  std::vector<float> v(batch_ * data_.features);
  std::vector<std::byte> labelBytes(labels.bytes);
  batchLabels_.resize(batch_);
  for (int64_t i = 0; i < batch_; ++i) {
    int64_t sample = order_[(index * batch_ + i) % data_.count];
    std::copy_n(data_.images.begin() + sample * data_.features, data_.features,
                v.begin() + i * data_.features);
    batchLabels_[i] = data_.labels[sample];
    storeElement(labelBytes.data(), labels.dtype, i, (double)batchLabels_[i]);
  }
  ex.writeF32(images_, v);
  ex.write(labels_, labelBytes.data(), labelBytes.size());
}

} // namespace ampc::rt
