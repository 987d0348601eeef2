// The part of NCCL that NcclCommunicator.cu calls, on the host (docs/cuda.md,
// "The CUDA emulation"), for ranks that are processes of one machine (as
// mpirun starts them). ncclGetUniqueId makes a directory, which the id
// names and the host communicator hands to every rank. Each allreduce is
// queued on the stream like a kernel (so a CUDA graph replays it): every
// rank writes its operand to the directory as file `CALL.RANK`, waits for
// the other ranks' files of that call, and reduces them in rank order,
// rounding to the element type after each addition (as a ring of f16 or
// bf16 additions rounds), so every rank gets the same bits. A rank deletes
// its file of a call once it has read every rank's file of the next: by
// then every rank has read it. A rank that waits a minute for the others
// (ranks that disagree on their collectives, which hang NCCL itself) is an
// error naming the call.
#include <nccl.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "runtime/core/Errors.h"
#include "runtime/core/Convert.h"
#include "runtime/cuda/emulator/Emulator.h"

namespace fs = std::filesystem;

namespace {

using ampc::rt::DType;

constexpr auto kPatience = std::chrono::seconds(60);

struct Comm {
  fs::path dir;
  int ranks = 1, rank = 0;
  int64_t calls = 0; // collectives this rank has queued, in order
};

fs::path fileOf(const Comm &c, int64_t call, int rank) {
  return c.dir / (std::to_string(call) + "." + std::to_string(rank));
}

/// Writes `bytes` as this rank's file of `call`, whole or not at all.
void publish(const Comm &c, int64_t call, const void *data, size_t bytes) {
  fs::path part = c.dir / (".part." + std::to_string(c.rank));
  {
    std::ofstream out(part, std::ios::binary);
    out.write(static_cast<const char *>(data), (std::streamsize)bytes);
    if (!out)
      throw ampc::rt::RuntimeError("emulated NCCL: cannot write " + part.string());
  }
  fs::rename(part, fileOf(c, call, c.rank));
}

/// Rank `rank`'s operand of `call`, once it is there.
std::vector<char> collect(const Comm &c, int64_t call, int rank, size_t bytes) {
  fs::path file = fileOf(c, call, rank);
  auto deadline = std::chrono::steady_clock::now() + kPatience;
  while (!fs::exists(file)) {
    if (std::chrono::steady_clock::now() > deadline)
      throw ampc::rt::RuntimeError("emulated NCCL: rank " + std::to_string(c.rank) +
                                   " waited a minute for rank " + std::to_string(rank) +
                                   " in collective #" + std::to_string(call) +
                                   " (do the ranks run the same collectives?)");
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  std::vector<char> data(bytes);
  std::ifstream in(file, std::ios::binary);
  in.read(data.data(), (std::streamsize)bytes);
  if (!in)
    throw ampc::rt::RuntimeError("emulated NCCL: rank " + std::to_string(rank) +
                                 " sent a different size in collective #" + std::to_string(call));
  return data;
}

/// Every rank's operand of `call` (this rank's is `mine`), after which the
/// rank's file of the call before is no longer read by anyone.
std::vector<std::vector<char>> exchange(Comm &c, int64_t call, const void *mine, size_t bytes) {
  publish(c, call, mine, bytes);
  std::vector<std::vector<char>> all;
  for (int r = 0; r < c.ranks; ++r)
    all.push_back(collect(c, call, r, bytes));
  if (call > 0)
    fs::remove(fileOf(c, call - 1, c.rank));
  return all;
}

bool dtypeOf(ncclDataType_t type, DType &dtype) {
  switch (type) {
  case ncclFloat32: dtype = DType::F32; return true;
  case ncclFloat16: dtype = DType::F16; return true;
  case ncclBfloat16: dtype = DType::BF16; return true;
  case ncclFloat64: dtype = DType::F64; return true;
  default: return false;
  }
}

/// v as the element type holds it (storeElement rounds to nearest even).
double rounded(double v, DType t) {
  uint64_t bits = 0; // room for any element type
  ampc::rt::storeElement(&bits, t, 0, v);
  return ampc::rt::loadElement(&bits, t, 0);
}

} // namespace

extern "C" {

ncclResult_t ncclGetUniqueId(ncclUniqueId *id) {
  std::string dir = (fs::temp_directory_path() / "ampc-nccl-XXXXXX").string();
  if (dir.size() >= sizeof id->internal || !mkdtemp(dir.data()))
    return ncclSystemError;
  std::memset(id->internal, 0, sizeof id->internal);
  std::memcpy(id->internal, dir.data(), dir.size());
  return ncclSuccess;
}

ncclResult_t ncclCommInitRank(ncclComm_t *comm, int ranks, ncclUniqueId id, int rank) {
  std::string dir(id.internal, strnlen(id.internal, sizeof id.internal));
  if (ranks < 1 || rank < 0 || rank >= ranks || !fs::is_directory(dir))
    return ncclInvalidArgument;
  *comm = reinterpret_cast<ncclComm_t>(new Comm{dir, ranks, rank});
  return ncclSuccess;
}

/// Ends the communicator when every rank has: each marks that it is done,
/// and the rank that finds every mark removes the directory.
ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  Comm *c = reinterpret_cast<Comm *>(comm);
  if (!c)
    return ncclSuccess;
  try {
    char none = 0;
    exchange(*c, c->calls++, &none, 0); // a barrier: every rank's last call is read
    std::ofstream(c->dir / ("done." + std::to_string(c->rank)));
    bool all = true;
    for (int r = 0; r < c->ranks; ++r)
      all = all && fs::exists(c->dir / ("done." + std::to_string(r)));
    std::error_code ignored;
    if (all)
      fs::remove_all(c->dir, ignored);
  } catch (const std::exception &) { // a rank gone: leave the directory
  }
  delete c;
  return ncclSuccess;
}

ncclResult_t ncclAllReduce(const void *send, void *recv, size_t count, ncclDataType_t type,
                           ncclRedOp_t op, ncclComm_t comm, cudaStream_t) {
  Comm *c = reinterpret_cast<Comm *>(comm);
  DType dtype;
  if (!c || !dtypeOf(type, dtype) || (op != ncclSum && op != ncclAvg && op != ncclMax))
    return ncclInvalidArgument;
  size_t bytes = count * ampc::rt::dtypeSize(dtype);
  ampc::emu::submit([=] {
    // Numbered as run, not as queued: a graph's replays are new calls.
    int64_t call = c->calls++;
    std::vector<std::vector<char>> all = exchange(*c, call, send, bytes);
    for (size_t i = 0; i < count; ++i) {
      double v = ampc::rt::loadElement(all[0].data(), dtype, (int64_t)i);
      for (int r = 1; r < c->ranks; ++r) {
        double other = ampc::rt::loadElement(all[r].data(), dtype, (int64_t)i);
        v = rounded(op == ncclMax ? std::max(v, other) : v + other, dtype);
      }
      ampc::rt::storeElement(recv, dtype, (int64_t)i, op == ncclAvg ? v / c->ranks : v);
    }
  });
  return ncclSuccess;
}

ncclResult_t ncclGroupStart() { return ncclSuccess; } // calls run in order here
ncclResult_t ncclGroupEnd() { return ncclSuccess; }

const char *ncclGetErrorString(ncclResult_t result) {
  return result == ncclSuccess ? "no error" : "emulated NCCL: invalid argument or system error";
}

} // extern "C"
