#include "runtime/Data.h"

#include <algorithm>
#include <numeric>
#include <random>

#include <zlib.h>

#include "runtime/Half.h"

namespace ampc::rt {

IdxArray readIdx(const std::string &path) {
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
    count *= v;
  }
  if (ok && count > (int64_t(1) << 31))
    ok = false;
  if (ok) {
    a.data.resize(count);
    ok = readAll(a.data.data(), count);
  }
  gzclose(f);
  if (!ok)
    throw RuntimeError(path + ": not an IDX file of unsigned bytes, or truncated");
  return a;
}

Dataset loadFashionMnist(const std::string &dir, bool train) {
  std::string prefix = dir + "/" + (train ? "train" : "t10k");
  IdxArray images = readIdx(prefix + "-images-idx3-ubyte.gz");
  IdxArray labels = readIdx(prefix + "-labels-idx1-ubyte.gz");
  if (images.dims.size() != 3 || labels.dims.size() != 1 || images.dims[0] != labels.dims[0])
    throw RuntimeError(prefix + "-*: images and labels do not match");
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
    : plan_(plan), seed_(seed), intRange_(plan.buffers.size(), 2) {
  for (int id : plan.inputs)
    if (std::find(ignore.begin(), ignore.end(), plan.buffers[id].name) == ignore.end())
      inputs_.push_back(id);
  for (int id : inputs_)
    if (!plan.buffers[id].shape.empty())
      batch_ = plan.buffers[id].shape[0];
  // Integer inputs range over what their consumers accept.
  for (const Step &s : plan.steps) {
    if (s.kernel == "embedding")
      intRange_[s.inputs[0]] = plan.buffers[s.inputs[1]].shape[0];
    if (s.kernel == "softmax_cross_entropy")
      intRange_[s.inputs[1]] = plan.buffers[s.inputs[0]].shape.back();
  }
  if (spec == "synthetic")
    return;
  std::string dir = kFashionMnistDir;
  if (spec.rfind("fashion-mnist", 0) != 0 ||
      (spec.size() > 13 && spec[13] != ':'))
    throw RuntimeError("data must be synthetic or fashion-mnist[:DIR], got '" + spec + "'");
  if (spec.size() > 14)
    dir = spec.substr(14);
  synthetic_ = false;
  for (int id : inputs_) {
    const Buffer &b = plan.buffers[id];
    int64_t perSample = b.shape.empty() ? 0 : numElements(b.shape) / b.shape[0];
    if (isFloat(b.dtype) && perSample == 784 && images_ < 0)
      images_ = id;
    else if (!isFloat(b.dtype) && b.shape.size() == 1 && labels_ < 0)
      labels_ = id;
    else
      throw RuntimeError("fashion-mnist feeds a float input of 784 values per sample and "
                         "an integer label input; input '" + b.name + "' is neither");
  }
  if (images_ < 0 || labels_ < 0)
    throw RuntimeError("fashion-mnist needs a float input of 784 values per sample and "
                       "an integer label input");
  data_ = loadFashionMnist(dir, train);
  order_.resize(data_.count);
  std::iota(order_.begin(), order_.end(), 0);
}

int64_t DataFeed::batchesPerEpoch() const { return synthetic_ ? 0 : data_.count / batch_; }

void DataFeed::shuffle(uint64_t seed) {
  std::iota(order_.begin(), order_.end(), 0); // the same order for a seed, always
  std::mt19937_64 rng(seed);
  std::shuffle(order_.begin(), order_.end(), rng);
}

void DataFeed::fill(Executor &ex, int64_t index) {
  if (synthetic_) {
    std::mt19937_64 rng(seed_ * 1000003ull + (uint64_t)index);
    for (int id : inputs_) {
      TensorRef t = ex.tensor(id);
      int64_t n = t.size();
      if (isFloat(t.dtype)) {
        std::normal_distribution<float> dist(0.0f, 1.0f);
        std::vector<float> v(n);
        for (float &x : v)
          x = dist(rng);
        fromF32(v.data(), t.data, t.dtype, n);
      } else {
        std::uniform_int_distribution<int64_t> dist(0, std::max<int64_t>(intRange_[id], 1) - 1);
        for (int64_t i = 0; i < n; ++i) {
          int64_t v = dist(rng);
          if (t.dtype == DType::I64) t.as<int64_t>()[i] = v;
          else if (t.dtype == DType::I32) t.as<int32_t>()[i] = (int32_t)v;
          else t.as<uint8_t>()[i] = v != 0;
        }
      }
    }
    return;
  }
  TensorRef images = ex.tensor(images_), labels = ex.tensor(labels_);
  std::vector<float> v(batch_ * data_.features);
  for (int64_t i = 0; i < batch_; ++i) {
    int64_t sample = order_[(index * batch_ + i) % data_.count];
    std::copy_n(data_.images.begin() + sample * data_.features, data_.features,
                v.begin() + i * data_.features);
    if (labels.dtype == DType::I64)
      labels.as<int64_t>()[i] = data_.labels[sample];
    else
      labels.as<int32_t>()[i] = (int32_t)data_.labels[sample];
  }
  fromF32(v.data(), images.data, images.dtype, v.size());
}

} // namespace ampc::rt
