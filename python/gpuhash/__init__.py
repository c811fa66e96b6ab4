"""gpuhash for Python: the C library's tables, called through ctypes (no second implementation),
and find / contains of CuPy arrays into the caller's arrays through a small compiled module
(_fastcall.c) where it was built.

    import numpy as np, gpuhash
    t = gpuhash.Table(design="warpdrive", key_dtype=np.uint32, value_dtype=np.uint32, capacity=1 << 20)
    t.insert(np.arange(100, dtype=np.uint32), np.arange(100, dtype=np.uint32) * 2)
    values, found = t.find(np.array([3, 1000], dtype=np.uint32))   # [6, 0], [True, False]

Arrays: NumPy arrays go through the host path (the library copies them to the GPU when the table
lives there). Any array with ``__cuda_array_interface__`` (CuPy, PyTorch, Numba) or only
``__dlpack__`` (JAX) is passed to the C API by its device pointer, no copy, and the results come
back as arrays of the same framework on the same device (CuPy's for Numba and other frameworks
without a from_dlpack the package knows). find and contains also write into the caller's arrays
(``out=``). ``DistTable`` is the distributed table over several GPUs of one process. Arrays must be 1-D, contiguous and of the table's dtypes: anything else raises
TypeError / ValueError before any work. Every status of the C API but GH_OK raises its own
exception class (``gpuhash.TableFullError`` for GH_ERR_TABLE_FULL, ...) with the C message.

The library: the libgpuhash next to this file (``pip install ./python`` builds it with CMake), or
the one named by the environment variable GPUHASH_LIBRARY.
"""
from __future__ import annotations

import ctypes
import importlib
import os
import sys
import time
from typing import Any, Dict, Optional, Tuple

import numpy as np

__all__ = ["Table", "DistTable", "GpuhashError", "version", "cuda_available"]

# ---- The library ------------------------------------------------------------------------------------


_HERE = os.path.dirname(os.path.abspath(__file__))


def _load_library() -> ctypes.CDLL:
    named = os.environ.get("GPUHASH_LIBRARY")
    if named:
        if not os.path.exists(named):
            raise ImportError("gpuhash: GPUHASH_LIBRARY names %s, which does not exist" % named)
        return ctypes.CDLL(named)
    for name in sorted(os.listdir(_HERE)):
        if name.startswith("libgpuhash.so"):
            return ctypes.CDLL(os.path.join(_HERE, name))
    raise ImportError("gpuhash: libgpuhash not found next to the package (install it with `pip install ./python`) "
                      "and GPUHASH_LIBRARY is not set")


def _load_fastcall(library_version: int) -> Any:
    """gpuhash._fastcall, the compiled call path of find / contains with CuPy arrays (_fastcall.c):
    the module next to the library this package loaded (the wheel's, or a build's when
    GPUHASH_LIBRARY names it), compiled with that library's version. None where there is none
    (built without Python's headers), where this interpreter cannot load a module of the stable
    ABI (older than 3.10, free-threaded, not CPython), or where it will not load (a warning
    says why): every call then goes through ctypes."""
    import importlib.machinery
    import importlib.util
    import sysconfig
    import warnings
    folder = os.path.dirname(os.path.abspath(os.environ["GPUHASH_LIBRARY"])) if os.environ.get(
        "GPUHASH_LIBRARY") else _HERE
    path = os.path.join(folder, "_fastcall.abi3.so")
    if (sys.version_info < (3, 10) or ".abi3.so" not in importlib.machinery.EXTENSION_SUFFIXES
            or sysconfig.get_config_var("Py_GIL_DISABLED") or not os.path.exists(path)):
        return None
    try:
        spec = importlib.util.spec_from_file_location(__name__ + "._fastcall", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    except (ImportError, OSError) as failure:
        warnings.warn("gpuhash: %s does not load (%s); calls go through ctypes" % (path, failure))
        return None
    if getattr(module, "GH_VERSION_NUMBER", None) != library_version:
        warnings.warn("gpuhash: %s was built for gpuhash %s, the library is %d; calls go through ctypes"
                      % (path, getattr(module, "GH_VERSION_NUMBER", "(unknown)"), library_version))
        return None
    return module


_lib = _load_library()

_P = ctypes.c_void_p
_U64 = ctypes.c_uint64


class _Allocator(ctypes.Structure):
    _fields_ = [("alloc", _P), ("free", _P), ("ctx", _P)]


class _Config(ctypes.Structure):
    """gh_config, field for field (include/gpuhash.h); the library reads struct_size bytes of it."""
    _fields_ = [("struct_size", ctypes.c_size_t), ("version", ctypes.c_uint), ("design", ctypes.c_int),
                ("backend", ctypes.c_int), ("device", ctypes.c_int), ("key_bits", ctypes.c_uint),
                ("value_bits", ctypes.c_uint), ("capacity", _U64), ("group_size", ctypes.c_uint),
                ("max_probe_windows", _U64), ("seed", _U64), ("variant", ctypes.c_int),
                ("hash_functions", ctypes.c_uint), ("hash_family", ctypes.c_int), ("table_factor", ctypes.c_double),
                ("host_threads", ctypes.c_uint), ("allocator", _Allocator), ("slab_load", ctypes.c_double),
                ("slab_light", ctypes.c_int), ("fill_min", ctypes.c_double), ("fill_max", ctypes.c_double),
                ("load_factor", ctypes.c_double), ("bin_vertices", ctypes.c_uint), ("bulk_min_keys", _U64),
                ("bucket_slots", ctypes.c_uint), ("compact_scratch_bytes", _U64)]


class _Stats(ctypes.Structure):
    """gh_stats, field for field."""
    _fields_ = [("size", _U64), ("distinct_keys", _U64), ("slots", _U64), ("restarts", _U64), ("grows", _U64),
                ("eviction_limit", _U64), ("stash_keys", _U64), ("subtables", _U64),
                ("subtable_buckets", _U64 * 8), ("upsizes", _U64), ("downsizes", _U64), ("evictions", _U64),
                ("longest_search", _U64), ("insert_failures", _U64), ("resize_seconds", ctypes.c_double),
                ("subtable_keys", _U64 * 8), ("tombstones", _U64)]


def _declare(name: str, restype: Any, *argtypes: Any) -> Any:
    f = getattr(_lib, name)
    f.restype, f.argtypes = restype, list(argtypes)
    return f


_int = ctypes.c_int
_status_name = _declare("gh_status_name", ctypes.c_char_p, _int)
_version_number = _declare("gh_version_number", ctypes.c_uint)
_cuda_available = _declare("gh_cuda_available", _int)
_cuda_device_count = _declare("gh_cuda_device_count", _int)
_config_init = _declare("gh_config_init", _int, ctypes.POINTER(_Config), ctypes.c_size_t, ctypes.c_uint, _int)
_design_by_name = _declare("gh_design_by_name", _int, ctypes.c_char_p, ctypes.POINTER(_int))
_create = _declare("gh_create", _int, ctypes.POINTER(_Config), ctypes.POINTER(_P))
_destroy = _declare("gh_destroy", None, _P)
_last_error = _declare("gh_last_error", ctypes.c_char_p, _P)
_last_create_error = _declare("gh_last_create_error", ctypes.c_char_p)
_insert = _declare("gh_insert", _int, _P, _P, _P, _U64, _int, _P, _P)
_find = _declare("gh_find", _int, _P, _P, _U64, _P, _P, _P, _P)
_contains = _declare("gh_contains", _int, _P, _P, _U64, _P, _P)
_erase = _declare("gh_erase", _int, _P, _P, _U64, _P, _P, _P)
_count = _declare("gh_count", _int, _P, _P, _U64, _P, ctypes.POINTER(_U64), _P)
_find_all = _declare("gh_find_all", _int, _P, _P, _U64, _P, _P, _U64, _P)
_export = _declare("gh_export", _int, _P, _P, _P, _U64, ctypes.POINTER(_U64), _P)
_mixed = _declare("gh_mixed", _int, _P, _P, _P, _P, _U64, _int, _P, _P, _P)
_join_count = _declare("gh_join_count", _int, _P, _P, _U64, _int, ctypes.POINTER(_U64), _P)
_join = _declare("gh_join", _int, _P, _P, _U64, _int, _P, _P, _U64, ctypes.POINTER(_U64), _P)
_semi_join = _declare("gh_semi_join", _int, _P, _P, _U64, _int, _P, _P)
_clear = _declare("gh_clear", _int, _P, _P)
_size = _declare("gh_size", _int, _P, ctypes.POINTER(_U64))
_validate = _declare("gh_validate", _int, _P)
_get_config = _declare("gh_get_config_sized", _int, _P, ctypes.POINTER(_Config), ctypes.c_size_t)
_get_stats = _declare("gh_get_stats_sized", _int, _P, ctypes.POINTER(_Stats), ctypes.c_size_t)
_save = _declare("gh_save", _int, _P, ctypes.c_char_p, _P)
_save_to_memory = _declare("gh_save_to_memory", _int, _P, _P, ctypes.c_size_t, ctypes.POINTER(ctypes.c_size_t), _P)
_load = _declare("gh_load", _int, ctypes.c_char_p, ctypes.POINTER(_Config), ctypes.POINTER(_P))
_load_from_memory = _declare("gh_load_from_memory", _int, _P, ctypes.c_size_t, ctypes.POINTER(_Config),
                             ctypes.POINTER(_P))

_VERSION = _version_number()
_fastcall = _load_fastcall(_VERSION)
if _fastcall is not None:
    _fastcall.bind(ctypes.cast(_find, _P).value, ctypes.cast(_contains, _P).value, np.dtype(bool))


def version() -> str:
    """The linked library's version, "major.minor.patch"."""
    return "%d.%d.%d" % (_VERSION // 10000, _VERSION // 100 % 100, _VERSION % 100)


def cuda_available() -> bool:
    """Whether the library was built with CUDA and a device is usable."""
    return bool(_cuda_available())


# ---- Errors: one class per status -------------------------------------------------------------------


class GpuhashError(RuntimeError):
    """A call of the C API returned a status other than GH_OK; .status is the code, .status_name its name."""

    status = -1
    status_name = "GH_UNKNOWN_STATUS"


_ERRORS: Dict[int, type] = {}
for _code in range(1, 64):
    _name = _status_name(_code).decode()
    if _name == "GH_UNKNOWN_STATUS":
        break
    # GH_ERR_TABLE_FULL -> TableFullError
    _cls_name = "".join(w.capitalize() for w in _name[len("GH_ERR_"):].split("_")) + "Error"
    _cls = type(_cls_name, (GpuhashError,), {"status": _code, "status_name": _name,
                                              "__doc__": "Raised for %s." % _name})
    _ERRORS[_code] = _cls
    globals()[_cls_name] = _cls
    __all__.append(_cls_name)


def _raise(status: int, message: str) -> None:
    cls = _ERRORS.get(status, GpuhashError)
    err = cls("%s: %s" % (_status_name(status).decode(), message))
    raise err


# ---- Arrays -------------------------------------------------------------------------------------------


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    """DLPack's DLTensor (dlpack.h), the first member of the DLManagedTensor a capsule holds."""
    _fields_ = [("data", _P), ("device", _DLDevice), ("ndim", ctypes.c_int32), ("dtype", _DLDataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


_DL_CPU, _DL_CUDA, _DL_CUDA_MANAGED = 1, 2, 13
_DL_TYPE_CODES = {"u": 1, "i": 0, "f": 2, "b": 6, "V": None}
_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype, _capsule_pointer.argtypes = _P, [ctypes.py_object, ctypes.c_char_p]


def _dlpack_tensor(obj: Any, dtype: np.dtype, name: str, stream: Optional[int]) -> Tuple[Any, int, int]:
    """(capsule, pointer, length) of a 1-D contiguous CUDA tensor exported through __dlpack__, for
    work on `stream` (None: the legacy default stream, DLPack's 1), which the producer orders
    after its own work on the array. The capsule is borrowed, not consumed: while it lives the
    producer keeps the memory, and when it is collected its destructor releases it."""
    try:
        capsule = obj.__dlpack__(stream=stream if stream else 1)
    except TypeError:  # a producer of the first DLPack protocol, without the stream argument
        capsule = obj.__dlpack__()
    tensor = _DLTensor.from_address(_capsule_pointer(capsule, b"dltensor"))
    if tensor.ndim != 1:
        raise ValueError("%s: a 1-D array is needed, this one has %d dimensions" % (name, tensor.ndim))
    code, bits = _DL_TYPE_CODES.get(dtype.kind), dtype.itemsize * 8
    if (tensor.dtype.code, tensor.dtype.bits, tensor.dtype.lanes) != (code, bits, 1):
        raise TypeError("%s: DLPack dtype (code %d, %d bits), the table takes %s" % (name, tensor.dtype.code,
                                                                                 tensor.dtype.bits, dtype))
    n = tensor.shape[0]
    if tensor.strides and n > 1 and tensor.strides[0] != 1:
        raise ValueError("%s: not contiguous (stride %d elements)" % (name, tensor.strides[0]))
    return capsule, (tensor.data or 0) + tensor.byte_offset, n


class _Array:
    """An input's pointer and where it lives; `empty` makes outputs of the same kind and device."""

    def __init__(self, obj: Any, dtype: np.dtype, name: str, length: Optional[int] = None,
                 stream: Optional[int] = None, writable: bool = False):
        self.host_framework = None
        if type(obj) is _cupy_ndarray_type():
            # CuPy's own attributes: the same facts as its __cuda_array_interface__, without making
            # that dictionary (a find of 2^20 keys takes tens of microseconds: its call should add
            # as little as it can).
            self.framework = "cupy"
            shape = obj.shape
            if len(shape) != 1:
                raise ValueError("%s: a 1-D array is needed, this one has shape %s" % (name, shape))
            if obj.dtype != dtype:
                raise TypeError("%s: dtype %s, the table takes %s" % (name, obj.dtype, dtype))
            if shape[0] > 1 and obj.strides[0] != dtype.itemsize:
                raise ValueError("%s: not contiguous (stride %d bytes)" % (name, obj.strides[0]))
            self.obj, self.ptr, self.n, self.device = obj, obj.data.ptr, shape[0], True
            if length is not None and self.n != length:
                raise ValueError("%s: %d elements, %d expected" % (name, self.n, length))
            return
        self.framework = type(obj).__module__.partition(".")[0]
        # JAX dispatches asynchronously: its array may not be computed yet when the pointer is taken,
        # through DLPack or through __cuda_array_interface__ (which JAX's GPU arrays have too, so
        # they take that branch below). Waiting for it makes the contents final whatever the
        # producer does with streams: a find after an insert of JAX keys and values returned other
        # values than those inserted while other tests loaded the GPU (H100, 2026-11-27, and again
        # 2026-12-07 while this wait sat on the DLPack branch only; with it here the case passed).
        ready = getattr(obj, "block_until_ready", None)
        if callable(ready):
            ready()
        cai = getattr(obj, "__cuda_array_interface__", None)
        device_type = None
        if cai is None and not isinstance(obj, np.ndarray) and hasattr(obj, "__dlpack_device__"):
            device_type = obj.__dlpack_device__()[0]
        if writable and cai is None and not isinstance(obj, np.ndarray):
            raise TypeError("%s: an array to write into is a NumPy, CuPy or PyTorch array (or has "
                            "__cuda_array_interface__), not %s" % (name, type(obj).__name__))
        if device_type in (_DL_CUDA, _DL_CUDA_MANAGED):
            # A CUDA array known through DLPack only (JAX, ...): its pointer, and the capsule kept.
            self.capsule, self.ptr, self.n = _dlpack_tensor(obj, dtype, name, stream)
            self.obj, self.device, self.device_id = obj, True, obj.__dlpack_device__()[1]
        elif cai is not None:
            shape, typestr = tuple(cai["shape"]), cai["typestr"]
            if len(shape) != 1:
                raise ValueError("%s: a 1-D array is needed, this one has shape %s" % (name, shape))
            if np.dtype(typestr) != dtype:
                raise TypeError("%s: dtype %s, the table takes %s" % (name, np.dtype(typestr), dtype))
            strides = cai.get("strides")
            if strides is not None and shape[0] > 1 and strides[0] != dtype.itemsize:
                raise ValueError("%s: not contiguous (stride %d bytes)" % (name, strides[0]))
            if writable and cai["data"][1]:
                raise ValueError("%s: read-only" % name)
            self.obj, self.ptr, self.n, self.device = obj, cai["data"][0], shape[0], True
        else:
            # NumPy, a host DLPack array (taken as NumPy without a copy), or anything np.asarray takes.
            arr = obj if isinstance(obj, np.ndarray) else (
                np.from_dlpack(obj) if device_type is not None else np.asarray(obj, dtype=dtype))
            # A host array of another framework (a CPU torch tensor): outputs go back to it.
            self.host_framework = self.framework if device_type is not None else None
            if arr.ndim != 1:
                raise ValueError("%s: a 1-D array is needed, this one has shape %s" % (name, arr.shape))
            if arr.dtype != dtype:
                raise TypeError("%s: dtype %s, the table takes %s" % (name, arr.dtype, dtype))
            if not arr.flags["C_CONTIGUOUS"]:
                raise ValueError("%s: not contiguous" % name)
            if not arr.flags["ALIGNED"]:
                raise ValueError("%s: not aligned for its dtype" % name)
            if writable and not arr.flags["WRITEABLE"]:
                raise ValueError("%s: read-only" % name)
            self.obj, self.ptr, self.n, self.device = arr, arr.ctypes.data, arr.shape[0], False
        if length is not None and self.n != length:
            raise ValueError("%s: %d elements, %d expected" % (name, self.n, length))

    def empty(self, n: int, dtype: np.dtype) -> Tuple[Any, int]:
        """An uninitialised 1-D array of n elements of the same framework and device, and its pointer.
        Flags are made bool at once (one byte, 0 or 1, as the C API writes them): no conversion after."""
        if not self.device:
            out = np.empty(n, dtype=dtype)
            return out, out.ctypes.data
        module = self.framework
        if module == "cupy":
            return _cupy_empty(n, dtype, self.obj.device.id)
        if module == "torch":
            import torch
            out = torch.empty(n, dtype=_TORCH_DTYPES[np.dtype(dtype)](torch), device=self.obj.device)
            return out, out.data_ptr()
        # A DLPack-only framework: the output is made by CuPy, written, then handed over (give).
        device_id = getattr(self, "device_id", None)
        if device_id is None:  # (an array of __cuda_array_interface__ that names no device: the current one)
            device_id = getattr(getattr(self.obj, "device", None), "id", None)
        try:
            return _cupy_empty(n, dtype, device_id)
        except ImportError:
            raise TypeError("outputs for device arrays of %s need CuPy (or pass CuPy or PyTorch arrays)" % module)

    def give(self, out: Any) -> Any:
        """An output of `empty`, once written, as the caller's framework has it: the arrays of a
        framework known through DLPack alone (JAX's, a CPU torch tensor) are made from it by the
        framework's from_dlpack only now, as that may copy."""
        if self.device and self.framework in ("cupy", "torch"):
            return out  # made by the framework itself (empty)
        framework = self.framework if self.device else self.host_framework
        if out is None or framework not in _FRAMEWORK_FROM_DLPACK:
            return out
        return _from_dlpack(framework, out)


# The frameworks whose arrays outputs are handed over to (the module an array's type lives in ->
# the module with its from_dlpack). Others get the arrays they are given (CuPy's, NumPy's).
_FRAMEWORK_FROM_DLPACK = {"torch": "torch", "jax": "jax.dlpack", "jaxlib": "jax.dlpack"}


def _from_dlpack(framework: str, array: Any) -> Any:
    """array as an array of `framework` (a key of _FRAMEWORK_FROM_DLPACK), through its from_dlpack.
    Called after the table's work: a framework that cannot be had returns the array as it is
    rather than lose the results."""
    try:
        return importlib.import_module(_FRAMEWORK_FROM_DLPACK[framework]).from_dlpack(array)
    except (ImportError, AttributeError):
        return array


def _cupy_ndarray_type() -> Any:
    """cupy.ndarray once CuPy has been imported (by the caller: an array of it exists), else None."""
    cupy = sys.modules.get("cupy")
    return cupy.ndarray if cupy is not None else None


def _cupy_empty(n: int, dtype: np.dtype, device_id: Optional[int]) -> Tuple[Any, int]:
    """A CuPy array on device_id (None: the current device), and its pointer."""
    import cupy
    if device_id is None or cupy.cuda.runtime.getDevice() == device_id:  # no device switch
        out = cupy.empty(n, dtype=dtype)
    else:
        with cupy.cuda.Device(device_id):
            out = cupy.empty(n, dtype=dtype)
    return out, out.data.ptr


_TORCH_DTYPES = {np.dtype(np.uint8): lambda torch: torch.uint8, np.dtype(bool): lambda torch: torch.bool,
                 np.dtype(np.uint32): lambda torch: torch.uint32, np.dtype(np.uint64): lambda torch: torch.uint64,
                 np.dtype(np.int64): lambda torch: torch.int64}
_FLAGS = np.dtype(bool)


def _choice(name: str, value: str, choices: Dict[str, int]) -> int:
    if value not in choices:
        raise ValueError("%s %r is not one of %s" % (name, value, sorted(choices)))
    return choices[value]


def _stream_handle(stream: Any) -> Optional[int]:
    """A raw cudaStream_t from None, an int, or a framework's stream object."""
    if stream is None or isinstance(stream, int):
        return stream
    for attribute in ("cuda_stream", "ptr", "handle"):  # torch, cupy, numba
        if hasattr(stream, attribute):
            handle = getattr(stream, attribute)
            return int(handle.value or 0) if isinstance(handle, ctypes.c_void_p) else int(handle)
    raise TypeError("stream: None, a raw handle (int) or a CuPy / PyTorch / Numba stream, not %r" % (stream,))


_POLICIES = {"keep_first": 0, "overwrite": 1, "add": 2, "min": 3, "max": 4, "append": 5}
_BACKENDS = {"auto": 0, "host": 1, "cuda": 2}
_VARIANTS = {"map": 0, "compacting": 1, "multivalue": 2}
_JOIN_METHODS = {"auto": 0, "probe": 1, "intersect": 2}


def _value_bits(dtype: Any) -> Tuple[int, Optional[np.dtype]]:
    if dtype is None:
        return 0, None
    d = np.dtype(dtype)
    return d.itemsize * 8, d


def _new_config(struct: Any, init: Any, design: str) -> Any:
    """gh_config or gh_dist_config with the defaults of `design` (its init function's)."""
    design_code = _int()
    if _design_by_name(design.encode(), ctypes.byref(design_code)) != 0:
        raise ValueError("design %r: not one of gpuhash's" % design)
    config = struct()
    status = init(ctypes.byref(config), ctypes.sizeof(struct), _VERSION, design_code.value)
    if status != 0:
        _raise(status, "config init")
    return config


def _set_table_fields(owner: Any, config: _Config, key_dtype: Any, value_dtype: Any, capacity: int,
                      backend: str) -> None:
    """The widths from the dtypes (kept on owner), the capacity and the backend."""
    owner.key_dtype = np.dtype(key_dtype)
    config.key_bits = owner.key_dtype.itemsize * 8
    config.value_bits, owner.value_dtype = _value_bits(value_dtype)
    config.capacity = capacity
    config.backend = _choice("backend", backend, _BACKENDS)


def _default_value(value_dtype: Optional[np.dtype], default: Any) -> Tuple[Optional[np.ndarray], Optional[int]]:
    """A one-value buffer holding a find's default, and its address ((None, None) for a set or no
    default): an integer that fits the value type, or for record values the record's bytes (0:
    zeros); anything else raises ValueError before any work."""
    if value_dtype is None or default is None:
        return None, None
    buffer = np.zeros(1, dtype=value_dtype)
    if buffer.dtype.kind in "ui":
        if not isinstance(default, (int, np.integer)) or not 0 <= int(default) <= np.iinfo(buffer.dtype).max:
            raise ValueError("find: default %r does not fit %s" % (default, buffer.dtype))
        buffer[0] = default
    else:
        record = bytes(default) if not (isinstance(default, int) and default == 0) else bytes(value_dtype.itemsize)
        if len(record) > value_dtype.itemsize:
            raise ValueError("find: a default of %d bytes for %d-byte values" % (len(record), value_dtype.itemsize))
        buffer = np.frombuffer(record.ljust(value_dtype.itemsize, b"\0"), dtype=value_dtype).copy()
    return buffer, buffer.ctypes.data


def _stats_dict(s: _Stats) -> Dict[str, Any]:
    return {name: (list(getattr(s, name)) if name.startswith("subtable_") else getattr(s, name))
            for name, _ in _Stats._fields_}


# ---- The table ----------------------------------------------------------------------------------------


class _Handle:
    """A C object the Python object owns: destroyed with it; a failed call raises with its message."""
    _handle: Any

    def __del__(self) -> None:
        handle = getattr(self, "_handle", None)
        if handle:
            self._destroy_call(handle)
            self._handle = _P()

    def _check(self, status: int) -> None:
        if status != 0:
            _raise(status, self._last_error_call(self._handle).decode())


class Table(_Handle):
    """A gpuhash table (gh_create): one design, one backend, fixed key and value types.

    design: "warpdrive", "cuckoo", "slab", "dycuckoo" or "hashgraph".
    key_dtype: uint32 or uint64. value_dtype: uint32, uint64, None for a set, or (dycuckoo) any
    fixed-size record dtype, e.g. np.dtype((np.void, 24)).
    backend: "auto" (the GPU when there is one), "cuda" or "host". variant: "map", "multivalue"
    (any number of values per key) or "compacting" (cuckoo: keys get dense ids).
    **options: any other gh_config field (group_size, seed, hash_functions, table_factor, slab_load,
    fill_min, fill_max, load_factor, host_threads, ...), as in include/gpuhash.h.
    """
    _destroy_call, _last_error_call = staticmethod(_destroy), staticmethod(_last_error)

    def __init__(self, design: str = "warpdrive", key_dtype: Any = np.uint32, value_dtype: Any = np.uint32,
                 capacity: int = 1 << 20, backend: str = "auto", variant: str = "map", **options: Any):
        self._handle = _P()
        config = _new_config(_Config, _config_init, design)
        _set_table_fields(self, config, key_dtype, value_dtype, capacity, backend)
        config.variant = _choice("variant", variant, _VARIANTS)
        # The widths come from the dtypes and the rest from the named arguments, never from options.
        fixed = ("struct_size", "version", "allocator", "design", "key_bits", "value_bits", "capacity", "backend",
                 "variant")
        for name, value in options.items():
            if name not in dict(_Config._fields_) or name in fixed:
                raise TypeError("Table: unknown option %r (the key / value widths come from the dtypes)" % name)
            setattr(config, name, value)
        status = _create(ctypes.byref(config), ctypes.byref(self._handle))
        if status != 0:
            _raise(status, _last_create_error().decode())
        self._multivalue = variant == "multivalue"
        self._defaults: Dict[int, Tuple[np.ndarray, int]] = {}

    @classmethod
    def _adopt(cls, handle: _P, value_dtype: Any = None) -> "Table":
        t = cls.__new__(cls)
        t._handle = handle
        config = t.config()
        t.key_dtype = np.dtype(np.uint32 if config["key_bits"] == 32 else np.uint64)
        bits = config["value_bits"]
        t.value_dtype = None if bits == 0 else np.dtype({32: np.uint32, 64: np.uint64}.get(bits, (np.void, bits // 8)))
        if value_dtype is not None:
            if bits == 0 or np.dtype(value_dtype).itemsize * 8 != bits:
                t.__del__()
                raise ValueError("value_dtype %s: the image's values are %d bits" % (np.dtype(value_dtype), bits))
            t.value_dtype = np.dtype(value_dtype)
        t._multivalue = config["variant"] == _VARIANTS["multivalue"]
        t._defaults = {}
        return t

    def _keys(self, keys: Any, stream: Any) -> _Array:
        return _Array(keys, self.key_dtype, "keys", stream=_stream_handle(stream))

    # -- bulk operations

    def insert(self, keys: Any, values: Any = None, policy: Optional[str] = None, stream: Any = None) -> None:
        """Inserts keys (and values; None for sets) with the duplicate policy "keep_first" (the
        default of maps), "overwrite", "add", "min", "max" or "append" (multi-value tables, their
        default). gh_insert."""
        k = self._keys(keys, stream)
        v = None
        if self.value_dtype is not None:
            if values is None and not self._multivalue:
                raise ValueError("insert: this table stores values; values is None")
            if values is not None:
                v = _Array(values, self.value_dtype, "values", k.n, stream=_stream_handle(stream))
        elif values is not None:
            raise ValueError("insert: a set takes no values")
        policy = policy or ("append" if self._multivalue else "keep_first")
        self._check(_insert(self._handle, k.ptr, v.ptr if v else None, k.n, _choice("policy", policy, _POLICIES), None,
                            _stream_handle(stream)))

    def _default_pointer(self, default: Any) -> Tuple[Optional[np.ndarray], Optional[int]]:
        """(buffer, address) of a one-value buffer holding `default` ((None, None) for sets and for
        0, gh_find's NULL: 0, all bytes zero for a record). Buffers of integer defaults are kept,
        so that a find in a loop makes none; the caller holds the buffer until its call returns
        (another thread's find may run meanwhile: the GIL is released during the call)."""
        if type(default) is int and default == 0:
            return None, None
        kept = self._defaults.get(default) if isinstance(default, int) else None
        if kept is not None:
            return kept
        buffer, pointer = _default_value(self.value_dtype, default)
        if isinstance(default, int) and len(self._defaults) < 16:
            self._defaults[default] = (buffer, pointer)
        return buffer, pointer

    def _outputs(self, k: _Array, out: Any, dtypes: Tuple[Optional[np.dtype], ...]) -> list:
        """(array, pointer) per output: new arrays like the keys, or the caller's `out` (a tuple of
        arrays of the keys' framework and device, one per output, of the dtypes and length; None
        for an output the table has not, as a set's values). An array written into must be one
        the table can write in place: writable NumPy, or a device array with
        __cuda_array_interface__ (CuPy, PyTorch), not a list or an immutable DLPack-only one."""
        if out is None:
            return [(None, None) if dtype is None else k.empty(k.n, dtype) for dtype in dtypes]
        if not isinstance(out, tuple) or len(out) != len(dtypes):
            raise TypeError("out: a tuple of %d arrays" % len(dtypes))
        outputs = []
        for i, (array, dtype) in enumerate(zip(out, dtypes)):
            if dtype is None or array is None:
                if (dtype is None) != (array is None):
                    raise TypeError("out[%d]: %s" % (i, "None (the table has no such output)" if dtype is None
                                                     else "an array is needed"))
                outputs.append((None, None))
                continue
            a = _Array(array, dtype, "out[%d]" % i, k.n, writable=True)
            if a.device != k.device:
                raise TypeError("out[%d]: in %s memory, the keys in %s memory" % (
                    i, "device" if a.device else "host", "device" if k.device else "host"))
            outputs.append((array, a.ptr))
        return outputs

    def find(self, keys: Any, default: Any = 0, stream: Any = None, out: Any = None) -> Tuple[Any, Any]:
        """(values, found): each key's value (default where absent) and whether it is there. gh_find.
        out: (values, found) arrays to write instead of new ones (values None for a set); a find
        in a loop then makes no array (bool found, the table's value dtype)."""
        if (_fastcall is not None and type(out) is tuple and len(out) == 2 and type(default) is int
                and (default == 0 or default in self._defaults)):
            # CuPy arrays throughout, a default already checked: the compiled call; None for
            # anything else, which the generic path below checks and explains in its order.
            status = _fastcall.find_cupy(self._handle.value, keys, out[0], out[1], self.key_dtype, self.value_dtype,
                                         None if default == 0 else self._defaults[default][1], _stream_handle(stream))
            if status is not None:
                self._check(status)
                return out
        k = self._keys(keys, stream)
        (values, values_ptr), (found, found_ptr) = self._outputs(k, out, (self.value_dtype, _FLAGS))
        default_buffer, default_ptr = self._default_pointer(default)  # (the buffer lives until the call returns)
        self._check(_find(self._handle, k.ptr, k.n, values_ptr, found_ptr, default_ptr, _stream_handle(stream)))
        return k.give(values), k.give(found)

    def contains(self, keys: Any, stream: Any = None, out: Any = None) -> Any:
        """Whether each key is present (a bool array; out: one to write instead). gh_contains."""
        if _fastcall is not None and out is not None:
            status = _fastcall.contains_cupy(self._handle.value, keys, out, self.key_dtype, _stream_handle(stream))
            if status is not None:
                self._check(status)
                return out
        k = self._keys(keys, stream)
        ((found, found_ptr),) = self._outputs(k, None if out is None else (out,), (_FLAGS,))
        self._check(_contains(self._handle, k.ptr, k.n, found_ptr, _stream_handle(stream)))
        return k.give(found)

    def erase(self, keys: Any, stream: Any = None) -> Any:
        """Erases the keys (multi-value tables: every value); a bool array of those erased. gh_erase."""
        k = self._keys(keys, stream)
        erased, erased_ptr = k.empty(k.n, _FLAGS)
        self._check(_erase(self._handle, k.ptr, k.n, erased_ptr, None, _stream_handle(stream)))
        return k.give(erased)

    def count(self, keys: Any, stream: Any = None) -> Any:
        """Each key's number of values (multi-value tables), as uint64. gh_count."""
        k = self._keys(keys, stream)
        counts, counts_ptr = k.empty(k.n, np.dtype(np.uint64))
        total = _U64()
        self._check(_count(self._handle, k.ptr, k.n, counts_ptr, ctypes.byref(total), _stream_handle(stream)))
        return k.give(counts)

    def find_all(self, keys: Any, stream: Any = None) -> Tuple[Any, Any]:
        """(offsets, values): key i's values are values[offsets[i]:offsets[i + 1]] (offsets has n + 1
        entries). gh_count, then gh_find_all."""
        k = self._keys(keys, stream)
        total = _U64()
        counts, counts_ptr = k.empty(k.n, np.dtype(np.uint64))
        self._check(_count(self._handle, k.ptr, k.n, counts_ptr, ctypes.byref(total), _stream_handle(stream)))
        offsets, offsets_ptr = k.empty(k.n + 1, np.dtype(np.uint64))
        values, values_ptr = k.empty(max(total.value, 1), self.value_dtype)
        self._check(_find_all(self._handle, k.ptr, k.n, offsets_ptr, values_ptr, total.value, _stream_handle(stream)))
        return k.give(offsets), k.give(values[: total.value])

    def export(self, stream: Any = None) -> Tuple[np.ndarray, Optional[np.ndarray]]:
        """Every (key, value) as NumPy arrays, in no particular order. gh_export."""
        n = len(self)
        keys = np.empty(max(n, 1), dtype=self.key_dtype)
        values = None if self.value_dtype is None else np.empty(max(n, 1), dtype=self.value_dtype)
        count = _U64()
        self._check(_export(self._handle, keys.ctypes.data, values.ctypes.data if values is not None else None, n,
                            ctypes.byref(count), _stream_handle(stream)))
        return keys[: count.value], (values[: count.value] if values is not None else None)

    def mixed(self, ops: Any, keys: Any, values: Any = None, policy: str = "keep_first",
              stream: Any = None) -> Tuple[Any, Any]:
        """One concurrent batch of inserts (1), erases (2) and finds (3), as gh_mixed: (values found,
        per-operation results)."""
        k = self._keys(keys, stream)
        o = _Array(ops, np.dtype(np.uint8), "ops", k.n, stream=_stream_handle(stream))
        v = None if values is None or self.value_dtype is None else _Array(values, self.value_dtype, "values", k.n,
                                                                           stream=_stream_handle(stream))
        results, results_ptr = k.empty(k.n, np.dtype(np.uint8))
        out, out_ptr = (None, None) if self.value_dtype is None else k.empty(k.n, self.value_dtype)
        code = _choice("policy", policy, _POLICIES)
        self._check(_mixed(self._handle, o.ptr, k.ptr, v.ptr if v else None, k.n, code, out_ptr, results_ptr,
                           _stream_handle(stream)))
        return k.give(out), k.give(results)

    # -- joins (multi-value tables; semi_join on any table)

    def join_count(self, keys: Any, method: str = "auto", stream: Any = None) -> int:
        """The number of pairs of the inner join of keys (the left rows) with the table. gh_join_count."""
        k = self._keys(keys, stream)
        pairs = _U64()
        self._check(_join_count(self._handle, k.ptr, k.n, _choice("method", method, _JOIN_METHODS),
                                ctypes.byref(pairs), _stream_handle(stream)))
        return pairs.value

    def join(self, keys: Any, method: str = "auto", stream: Any = None) -> Tuple[Any, Any]:
        """The inner join's pairs (left, right): left[j] is the row of keys (uint64), right[j] the
        entry's value (None for a set). "probe" lists them by left row. gh_join_count, then gh_join."""
        k = self._keys(keys, stream)
        code = _choice("method", method, _JOIN_METHODS)
        pairs = _U64()
        self._check(_join_count(self._handle, k.ptr, k.n, code, ctypes.byref(pairs), _stream_handle(stream)))
        left, left_ptr = k.empty(max(pairs.value, 1), np.dtype(np.uint64))
        right, right_ptr = (None, None) if self.value_dtype is None else k.empty(max(pairs.value, 1), self.value_dtype)
        capacity = pairs.value
        self._check(_join(self._handle, k.ptr, k.n, code, left_ptr, right_ptr, capacity, ctypes.byref(pairs),
                          _stream_handle(stream)))
        return k.give(left[: pairs.value]), (k.give(right[: pairs.value]) if right is not None else None)

    def semi_join(self, keys: Any, method: str = "auto", stream: Any = None) -> Any:
        """Whether each key has a match in the table (a bool array). gh_semi_join."""
        k = self._keys(keys, stream)
        match, match_ptr = k.empty(k.n, _FLAGS)
        self._check(_semi_join(self._handle, k.ptr, k.n, _choice("method", method, _JOIN_METHODS), match_ptr,
                               _stream_handle(stream)))
        return k.give(match)

    # -- the table as a whole

    def __len__(self) -> int:
        """The entries stored (multi-value tables: every pair). gh_size."""
        size = _U64()
        self._check(_size(self._handle, ctypes.byref(size)))
        return size.value

    def clear(self, stream: Any = None) -> None:
        """Removes every key. gh_clear."""
        self._check(_clear(self._handle, _stream_handle(stream)))

    def validate(self) -> None:
        """Checks every invariant of the table; raises CorruptError if one is broken. gh_validate."""
        self._check(_validate(self._handle))

    def config(self) -> Dict[str, Any]:
        """The effective configuration, as a dict of gh_config's fields. gh_get_config."""
        c = _Config()
        self._check(_get_config(self._handle, ctypes.byref(c), ctypes.sizeof(_Config)))
        return {name: getattr(c, name) for name, _ in _Config._fields_ if name not in ("allocator",)}

    def stats(self) -> Dict[str, Any]:
        """Counters of the table's life, as a dict of gh_stats's fields. gh_get_stats."""
        s = _Stats()
        self._check(_get_stats(self._handle, ctypes.byref(s), ctypes.sizeof(_Stats)))
        return _stats_dict(s)

    # -- saving and loading

    def save(self, path: str, stream: Any = None) -> None:
        """Writes the table's image to a file. gh_save."""
        self._check(_save(self._handle, os.fsencode(path), _stream_handle(stream)))

    def to_bytes(self, stream: Any = None) -> bytes:
        """The table's image. gh_save_to_memory."""
        size = ctypes.c_size_t()
        self._check(_save_to_memory(self._handle, None, 0, ctypes.byref(size), _stream_handle(stream)))
        buffer = ctypes.create_string_buffer(max(size.value, 1))
        self._check(_save_to_memory(self._handle, buffer, size.value, ctypes.byref(size), _stream_handle(stream)))
        return buffer.raw[: size.value]

    @staticmethod
    def _runtime(backend: str) -> _Config:
        c = _Config()
        _config_init(ctypes.byref(c), ctypes.sizeof(_Config), _VERSION, 1)
        c.backend = _choice("backend", backend, _BACKENDS)
        return c

    @classmethod
    def load(cls, path: str, backend: str = "auto", value_dtype: Any = None) -> "Table":
        """A table made from an image file, on the backend asked for. value_dtype: the record
        dtype of the values, when they are records (the image knows only their size). gh_load."""
        handle, runtime = _P(), cls._runtime(backend)
        status = _load(os.fsencode(path), ctypes.byref(runtime), ctypes.byref(handle))
        if status != 0:
            _raise(status, _last_create_error().decode())
        return cls._adopt(handle, value_dtype)

    @classmethod
    def from_bytes(cls, image: bytes, backend: str = "auto", value_dtype: Any = None) -> "Table":
        """A table made from an image (of to_bytes); value_dtype as for load. gh_load_from_memory."""
        handle, runtime = _P(), cls._runtime(backend)
        buffer = ctypes.create_string_buffer(bytes(image), len(image))
        status = _load_from_memory(buffer, len(image), ctypes.byref(runtime), ctypes.byref(handle))
        if status != 0:
            _raise(status, _last_create_error().decode())
        return cls._adopt(handle, value_dtype)


# ---- The distributed table (one process, several GPUs) ---------------------------------------------


class _DistConfig(ctypes.Structure):
    """gh_dist_config, field for field (include/gpuhash_dist.h)."""
    _fields_ = [("struct_size", ctypes.c_size_t), ("version", ctypes.c_uint), ("table", _Config),
                ("partitions", ctypes.c_uint), ("partition_seed", _U64), ("devices", ctypes.POINTER(_int)),
                ("id", _P), ("rank", ctypes.c_uint), ("timeout_seconds", ctypes.c_double),
                ("staging_bytes", _U64), ("exchange_overlap", _int)]


_PP = ctypes.POINTER(_P)
_dist_config_init = _declare("gh_dist_config_init", _int, ctypes.POINTER(_DistConfig), ctypes.c_size_t,
                             ctypes.c_uint, _int)
_dist_create = _declare("gh_dist_create", _int, ctypes.POINTER(_DistConfig), ctypes.POINTER(_P))
_dist_last_create_error = _declare("gh_dist_last_create_error", ctypes.c_char_p)
_dist_destroy = _declare("gh_dist_destroy", None, _P)
_dist_last_error = _declare("gh_dist_last_error", ctypes.c_char_p, _P)
_dist_partitions = _declare("gh_dist_partitions", ctypes.c_uint, _P)
_dist_local_partitions = _declare("gh_dist_local_partitions", ctypes.c_uint, _P)
_dist_partition_of = _declare("gh_dist_partition_of", ctypes.c_uint, _P, _U64)
_dist_insert = _declare("gh_dist_insert", _int, _P, _PP, _PP, ctypes.POINTER(_U64), _int, _PP, ctypes.POINTER(_U64))
_dist_find = _declare("gh_dist_find", _int, _P, _PP, ctypes.POINTER(_U64), _PP, _PP, _P)
_dist_erase = _declare("gh_dist_erase", _int, _P, _PP, ctypes.POINTER(_U64), _PP, ctypes.POINTER(_U64))
_dist_insert_host = _declare("gh_dist_insert_host", _int, _P, _P, _P, _U64, _int, _P, ctypes.POINTER(_U64))
_dist_find_host = _declare("gh_dist_find_host", _int, _P, _P, _U64, _P, _P, _P)
_dist_size = _declare("gh_dist_size", _int, _P, ctypes.POINTER(_U64))
_dist_partition_size = _declare("gh_dist_partition_size", _int, _P, ctypes.c_uint, ctypes.POINTER(_U64))
_dist_get_stats = _declare("gh_dist_get_stats", _int, _P, ctypes.POINTER(_Stats))
_dist_clear = _declare("gh_dist_clear", _int, _P)
_dist_validate = _declare("gh_dist_validate", _int, _P)
_dist_export = _declare("gh_dist_export", _int, _P, _P, _P, _U64, ctypes.POINTER(_U64))


class DistTable(_Handle):
    """A table split over several GPUs of this process (gh_dist_create): partition p(k) of every key
    on its own GPU, each partition a gpuhash table of one design.

    design, key_dtype, value_dtype, backend and **options as for Table; capacity is each
    partition's. partitions: how many (default: one per GPU, on the host backend 1). devices: the
    GPU ordinal of each partition (default 0 .. partitions - 1). staging_bytes, partition_seed,
    timeout_seconds, exchange_overlap: as gh_dist_config.

    Two ways in: one array of keys in host memory (NumPy: the host-sided calls, cut into batches
    that stream to the GPUs, larger than their memory if need be), or a list of slices, one per
    partition, each an array on that partition's GPU (CuPy / PyTorch: the slice calls; every slice
    may hold any keys, which travel to their partitions). Results come back in the same shape.
    """
    _destroy_call, _last_error_call = staticmethod(_dist_destroy), staticmethod(_dist_last_error)

    def __init__(self, design: str = "warpdrive", key_dtype: Any = np.uint32, value_dtype: Any = np.uint32,
                 capacity: int = 1 << 20, partitions: Optional[int] = None, devices: Optional[Any] = None,
                 backend: str = "auto", **options: Any):
        self._handle = _P()
        config = _new_config(_DistConfig, _dist_config_init, design)
        _set_table_fields(self, config.table, key_dtype, value_dtype, capacity, backend)
        if partitions is None:
            partitions = len(devices) if devices is not None else (
                max(_cuda_device_count(), 1) if config.table.backend != _BACKENDS["host"] else 1)
        config.partitions = partitions
        self._devices = None
        if devices is not None:
            if len(devices) != partitions:
                raise ValueError("devices: %d entries for %d partitions" % (len(devices), partitions))
            self._devices = (_int * partitions)(*devices)
            config.devices = self._devices
        dist_fields = dict(_DistConfig._fields_)
        for name, value in options.items():
            if name in ("staging_bytes", "partition_seed", "timeout_seconds", "exchange_overlap"):
                setattr(config, name, value)
            elif name in dict(_Config._fields_) and name not in ("struct_size", "version", "allocator", "design",
                                                                 "key_bits", "value_bits", "capacity", "backend"):
                setattr(config.table, name, value)
            else:
                raise TypeError("DistTable: unknown option %r%s" % (name, " (one process for all GPUs here: no rank or "
                                                                   "id; partitions and devices are arguments)"
                                                                   if name in dist_fields else ""))
        status = _dist_create(ctypes.byref(config), ctypes.byref(self._handle))
        if status != 0:
            _raise(status, _dist_last_create_error().decode())

    @property
    def partitions(self) -> int:
        """The partitions of the table (gh_dist_partitions)."""
        return _dist_partitions(self._handle)

    def partition_of(self, key: int) -> int:
        """The partition that holds `key` (gh_dist_partition_of)."""
        return _dist_partition_of(self._handle, int(key))

    def _slices(self, keys: Any) -> Optional[list]:
        """The slices of a list input (one per partition), or None for one host array."""
        if not isinstance(keys, (list, tuple)):
            return None
        local = _dist_local_partitions(self._handle)
        if len(keys) != local:
            raise ValueError("keys: %d slices, the table takes %d (one per partition)" % (len(keys), local))
        return [_Array(k, self.key_dtype, "keys[%d]" % i) for i, k in enumerate(keys)]

    def _host(self, keys: Any, name: str = "keys") -> _Array:
        k = _Array(keys, self.key_dtype, name)
        if k.device:
            raise TypeError("%s: one array goes through host memory (NumPy); device arrays go as a list of "
                            "slices, one per partition" % name)
        return k

    @staticmethod
    def _pointers(arrays: list) -> Any:
        return (_P * len(arrays))(*[a.ptr if a is not None else None for a in arrays])

    def insert(self, keys: Any, values: Any = None, policy: str = "keep_first", progress: bool = False) -> None:
        """Inserts (key, value) pairs: one NumPy array each (gh_dist_insert_host), or lists of slices
        (gh_dist_insert). Raises TableFullError etc. as the C call returns. progress (host arrays):
        the insert goes in 64 parts with a line on stderr after each (pairs done, rate, time left),
        for inserts long enough to wonder about."""
        code = _choice("policy", policy, _POLICIES)
        slices = self._slices(keys)
        if (values is None) != (self.value_dtype is None):
            raise ValueError("insert: %s" % ("values is None" if values is None else "a set takes no values"))
        if slices is None:
            k = self._host(keys)
            v = None if values is None else _Array(values, self.value_dtype, "values", k.n)
            if v is not None and v.device:
                raise TypeError("values: NumPy with NumPy keys")
            parts = 64 if progress and k.n >= 64 else 1
            start = time.perf_counter()
            # Every part runs, as the one call would run every batch; the first failure is raised
            # once all have (its message kept: a later part's call clears the table's).
            first_failure = None
            for part in range(parts):
                lo, hi = k.n * part // parts, k.n * (part + 1) // parts
                status = _dist_insert_host(self._handle, k.ptr + lo * self.key_dtype.itemsize,
                                           v.ptr + lo * self.value_dtype.itemsize if v else None, hi - lo, code,
                                           None, None)
                if status != 0 and first_failure is None:
                    first_failure = (status, _dist_last_error(self._handle).decode())
                if progress:
                    elapsed = time.perf_counter() - start
                    rate = hi / elapsed if elapsed > 0 else 0.0
                    sys.stderr.write("\rgpuhash: inserted %d of %d pairs (%3.0f %%), %.3g M pairs/s, %.0f s left  "
                                     % (hi, k.n, 100.0 * hi / max(k.n, 1), rate / 1e6,
                                        (k.n - hi) / rate if rate else 0.0))
                    sys.stderr.flush()
            if progress:
                sys.stderr.write("\n")
            if first_failure is not None:
                _raise(*first_failure)
            return
        if not isinstance(values, (list, tuple)) and values is not None:
            raise TypeError("values: a list of slices like keys")
        if values is not None and len(values) != len(slices):
            raise ValueError("values: %d slices for %d slices of keys" % (len(values), len(slices)))
        v = [None] * len(slices) if values is None else [
            _Array(x, self.value_dtype, "values[%d]" % i, slices[i].n) for i, x in enumerate(values)]
        n = (_U64 * len(slices))(*[k.n for k in slices])
        self._check(_dist_insert(self._handle, self._pointers(slices), self._pointers(v), n, code, None, None))

    def find(self, keys: Any, default: int = 0) -> Tuple[Any, Any]:
        """(values, found) for one NumPy array (gh_dist_find_host) or per slice (gh_dist_find: lists)."""
        default_buffer, default_ptr = _default_value(self.value_dtype, default)
        slices = self._slices(keys)
        if slices is None:
            k = self._host(keys)
            found = np.empty(k.n, dtype=_FLAGS)
            values = None if self.value_dtype is None else np.empty(k.n, dtype=self.value_dtype)
            self._check(_dist_find_host(self._handle, k.ptr, k.n, values.ctypes.data if values is not None else None,
                                        found.ctypes.data, default_ptr))
            return values, found
        found = [k.empty(k.n, _FLAGS) for k in slices]
        values = None if self.value_dtype is None else [k.empty(k.n, self.value_dtype) for k in slices]
        n = (_U64 * len(slices))(*[k.n for k in slices])
        values_ptrs = None if values is None else (_P * len(slices))(*[ptr for _, ptr in values])
        self._check(_dist_find(self._handle, self._pointers(slices), n, values_ptrs,
                               (_P * len(slices))(*[ptr for _, ptr in found]), default_ptr))
        return ((None if values is None else [slices[i].give(v) for i, (v, _) in enumerate(values)]),
                [slices[i].give(f) for i, (f, _) in enumerate(found)])

    def erase(self, keys: list) -> list:
        """Erases the keys of a list of slices (gh_dist_erase); per slice, a bool array of those erased."""
        slices = self._slices(keys)
        if slices is None:
            raise TypeError("erase: a list of slices, one per partition (on the host backend NumPy arrays)")
        erased = [k.empty(k.n, _FLAGS) for k in slices]
        n = (_U64 * len(slices))(*[k.n for k in slices])
        self._check(_dist_erase(self._handle, self._pointers(slices), n,
                                (_P * len(slices))(*[ptr for _, ptr in erased]), None))
        return [slices[i].give(e) for i, (e, _) in enumerate(erased)]

    def __len__(self) -> int:
        """The keys stored, over all partitions (gh_dist_size)."""
        size = _U64()
        self._check(_dist_size(self._handle, ctypes.byref(size)))
        return size.value

    def partition_size(self, p: int) -> int:
        """The keys partition p holds (gh_dist_partition_size)."""
        size = _U64()
        self._check(_dist_partition_size(self._handle, p, ctypes.byref(size)))
        return size.value

    def clear(self) -> None:
        """Empties every partition (gh_dist_clear)."""
        self._check(_dist_clear(self._handle))

    def validate(self) -> None:
        """Every partition's table validated, and every key in the partition p(k) names (gh_dist_validate)."""
        self._check(_dist_validate(self._handle))

    def stats(self) -> Dict[str, Any]:
        """The partitions' gh_stats summed (gh_dist_get_stats)."""
        s = _Stats()
        self._check(_dist_get_stats(self._handle, ctypes.byref(s)))
        return _stats_dict(s)

    def export(self) -> Tuple[np.ndarray, Optional[np.ndarray]]:
        """Every (key, value) as NumPy arrays, partition by partition (gh_dist_export)."""
        n = len(self)
        keys = np.empty(max(n, 1), dtype=self.key_dtype)
        values = None if self.value_dtype is None else np.empty(max(n, 1), dtype=self.value_dtype)
        count = _U64()
        self._check(_dist_export(self._handle, keys.ctypes.data, values.ctypes.data if values is not None else None,
                                 n, ctypes.byref(count)))
        return keys[: count.value], (values[: count.value] if values is not None else None)


