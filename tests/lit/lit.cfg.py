import os
import re
import shutil
import subprocess
import lit.formats

config.name = "ampc"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".test"]
config.excludes = ["Inputs", "lit.cfg.py", "lit.site.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.ampc_obj_root, "tests", "lit")
config.environment["PATH"] = os.pathsep.join(
    [config.ampc_tools_dir, config.llvm_tools_dir, config.environment.get("PATH", os.environ["PATH"])])
config.substitutions.append(("%{ampc_tools}", config.ampc_tools_dir))
config.substitutions.append(("%python", "python3"))
config.substitutions.append(("%models", os.path.join(config.test_source_root, "cli", "Inputs")))
config.substitutions.append(("%{scripts}", os.path.join(os.path.dirname(os.path.dirname(config.test_source_root)), "scripts")))
config.substitutions.append(("%{runtime}", os.path.join(os.path.dirname(os.path.dirname(config.test_source_root)), "runtime")))
config.substitutions.append(("%{bench}", os.path.join(os.path.dirname(os.path.dirname(config.test_source_root)), "bench")))
def probe(name, command, env=None, timeout=60):
    """Whether `command` succeeds here; asked once per build tree, the
    answer kept in tests/lit/<name>.ok."""
    cache = os.path.join(config.ampc_obj_root, "tests", "lit", name + ".ok")
    if os.path.exists(cache):
        return open(cache).read() == "yes"
    try:
        works = subprocess.run(command, env=env, capture_output=True,
                               timeout=timeout).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        works = False
    os.makedirs(os.path.dirname(cache), exist_ok=True)
    with open(cache, "w") as f:
        f.write("yes" if works else "no")
    return works


def mpirun_works():
    """Whether mpirun starts two ranks here (a container may lack what it
    needs)."""
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    return probe("mpirun", ["mpirun", "--oversubscribe", "-np", "2", "true"], env)


if config.ampc_has_mpi and shutil.which("mpirun") and mpirun_works():
    config.available_features.add("mpi")
    # Two ranks on two cores; Open MPI refuses root unless told.
    config.substitutions.append(("%mpirun", "mpirun --oversubscribe -np"))
    for var in ("OMPI_ALLOW_RUN_AS_ROOT", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"):
        config.environment[var] = "1"
def torch_works():
    """Whether Debian's PyTorch and torchvision import (the ONNX export tests)."""
    return probe("torch", ["/usr/bin/python3", "-c", "import torch, torchvision, numpy"],
                 timeout=120)


if torch_works():
    config.available_features.add("torch")
    config.substitutions.append(("%torchpython", "/usr/bin/python3"))
    config.substitutions.append(("%onnxtests", os.path.join(os.path.dirname(config.test_source_root), "onnx")))
# GCC's OpenMP runtime (libgomp), whose wait policy ampc sets; the sanitizer
# build's clang links LLVM's.
if config.ampc_cxx_compiler == "GNU":
    config.available_features.add("libgomp")
# The sanitizer build (scripts/sanitize.sh): runs that only measure how well
# a model learns, minutes under ASan, are left to the plain build.
if getattr(config, "ampc_sanitized", False):
    config.available_features.add("sanitized")
# A CPU with AVX2 and FMA, whose OpenBLAS GEMMs ampc makes AVX2's or
# AVX-512's (runtime/cpu/CpuEnvironment.h).
def cpu_flags():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()
if {"avx2", "fma"} <= cpu_flags():
    config.available_features.add("avx2")
# Where OpenBLAS picks kernels older than the CPU (a model newer than the
# library), ampc's programs set OPENBLAS_CORETYPE; the tests set it for
# everything they run, so that PyTorch's peers (Debian's PyTorch calls the
# same OpenBLAS) sum their GEMMs as ampc does. blas-core.test unsets it.
try:
    version = subprocess.run([os.path.join(config.ampc_tools_dir, "ampc"), "--version"],
                             capture_output=True, text=True, timeout=60).stdout
except (OSError, subprocess.TimeoutExpired):
    version = ""
fitting_core = re.search(r"set OPENBLAS_CORETYPE=(\w+)", version)
if fitting_core and "OPENBLAS_CORETYPE" not in os.environ:
    config.environment["OPENBLAS_CORETYPE"] = fitting_core.group(1)
if os.path.exists("/usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz"):
    config.available_features.add("fashion-mnist")
# The CUDA backend as built, and a GPU as the driver sees it: the tests that
# run on a GPU require both, so that a GPU machine whose build left CUDA out
# fails instead of skipping.
if config.ampc_has_cuda:
    config.available_features.add("cuda-backend")
if config.ampc_has_cuda_emulated:
    config.available_features.add("cuda-emulated")
if shutil.which("nvidia-smi") and probe("gpu", ["nvidia-smi", "-L"]):
    config.available_features.add("gpu")
