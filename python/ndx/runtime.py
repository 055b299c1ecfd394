"""Which features this ndx was built with (MXNet's ``mx.runtime``): ``Features()`` maps each
feature name to a Feature(name, enabled); ``feature_list()`` lists them.

Names follow MXNet's where ndx has the same thing (CUDA, NCCL, ONEDNN and its old name
MKLDNN, BLAS_OPEN, LAPACK, CPU_AVX2 / CPU_AVX512F, DIST_KVSTORE, INT64_TENSOR_SIZE, DEBUG,
SIGNAL_HANDLER, OPENCV, ...); the ones ndx never has (TENSORRT, TVM_OP, OPENCV, CAFFE,
BLAS_MKL, ...) are present and False, so code testing them runs. CUDNN follows CUDA: a CUDA
build opens libcudnn at first use."""
import collections
import os

from . import __config__, _core

__all__ = ["Feature", "Features", "feature_list"]

Feature = collections.namedtuple("Feature", ["name", "enabled"])


def _dist_library():
    """The bytes of libndx_dist_mpi.so (the MPI and NCCL collectives), or None when this ndx
    was built without it."""
    path = os.path.join(os.path.dirname(os.path.realpath(_core.__file__)), "libndx_dist_mpi.so")
    if not os.path.exists(path):
        return None
    with open(path, "rb") as f:
        return f.read()


def _detect():
    config = __config__.CONFIG.get("build", {}) if isinstance(__config__.CONFIG, dict) else {}
    cuda = str(config.get("CUDA", "")).startswith("built")
    built_targets = str(config.get("SIMD targets built", "")).split()
    running = _core._simd_target()
    avx512 = "AVX3" in built_targets and running.startswith("AVX3")
    avx2 = avx512 or ("AVX2" in built_targets and running in ("AVX2", "AVX3", "AVX3_DL"))
    library = _dist_library()
    dist = library is not None
    nccl = cuda and dist and b"ncclAllReduce" in library  # the 'nccl' kvstore was compiled
    onednn = bool(_core._dnnl_enabled())
    features = {
        "CUDA": cuda, "CUDNN": cuda, "NCCL": nccl, "CUDA_RTC": False,
        "TENSORRT": False, "CUTENSOR": False,
        "CPU_SSE": True, "CPU_SSE2": True, "CPU_SSE3": True, "CPU_SSE4_1": avx2,
        "CPU_SSE4_2": avx2, "CPU_SSE4A": False, "CPU_AVX": avx2, "CPU_AVX2": avx2,
        "CPU_AVX512F": avx512, "F16C": avx2,
        "BLAS_OPEN": "OpenBLAS" in str(config.get("BLAS", "")), "BLAS_ATLAS": False,
        "BLAS_MKL": False, "BLAS_APPLE": False, "LAPACK": True,
        "MKLDNN": onednn, "ONEDNN": onednn, "OPENCV": False, "CAFFE": False,
        "DIST_KVSTORE": dist, "INT64_TENSOR_SIZE": True, "SIGNAL_HANDLER": False,
        "DEBUG": str(config.get("build type", "")).lower() == "debug", "TVM_OP": False,
        "OPENMP": False, "SSE": True, "CXX14": True,
    }
    return features


class Features(collections.OrderedDict):
    """{name: Feature} of this build (a singleton, as MXNet's)."""

    instance = None

    def __new__(cls):
        if cls.instance is None:
            cls.instance = super().__new__(cls)
            super().__init__(cls.instance, [(k, Feature(k, v)) for k, v in _detect().items()])
        return cls.instance

    def __init__(self):  # filled once in __new__
        pass

    def __repr__(self):
        return str(list(self.values()))

    def is_enabled(self, feature_name):
        """Whether feature_name (case-insensitive) is enabled; RuntimeError for a name this
        build does not know, as MXNet's."""
        name = feature_name.upper()
        if name not in self:
            raise RuntimeError(f"[Features.is_enabled] feature {feature_name!r} is unknown; "
                               f"known: {', '.join(self)}")
        return self[name].enabled


def feature_list():
    """[Feature(name, enabled)] of this build."""
    return list(Features().values())
