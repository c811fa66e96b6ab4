"""gpuhash's Python package against NumPy references, on the host backend (and, where a GPU and
CuPy or PyTorch are there, zero-copy on the CUDA backend). Seeds are fixed and printed on failure
through the parametrisation ids."""
import os
import sys

import numpy as np
import pytest

import gpuhash

DESIGNS = ["warpdrive", "cuckoo", "slab", "dycuckoo", "hashgraph"]
SEED = 0x5EED


def unique_keys(rng, n, dtype):
    keys = np.unique(rng.integers(0, np.iinfo(dtype).max - 2, size=2 * n, dtype=np.uint64).astype(dtype))
    rng.shuffle(keys)
    return keys[:n]


@pytest.mark.parametrize("design", DESIGNS)
@pytest.mark.parametrize("key_dtype,value_dtype", [(np.uint32, np.uint32), (np.uint64, np.uint64), (np.uint32, None)])
def test_map_against_numpy(design, key_dtype, value_dtype):
    rng = np.random.default_rng(SEED)
    t = gpuhash.Table(design=design, key_dtype=key_dtype, value_dtype=value_dtype, capacity=8192, backend="host")
    keys = unique_keys(rng, 3000, key_dtype)
    values = None if value_dtype is None else rng.integers(0, 1 << 30, size=keys.size, dtype=np.uint64).astype(value_dtype)
    t.insert(keys, values)
    assert len(t) == keys.size
    t.validate()
    absent = unique_keys(rng, 500, key_dtype)
    absent = absent[~np.isin(absent, keys)]
    got, found = t.find(np.concatenate([keys, absent]), default=7)
    assert found.dtype == bool and found[: keys.size].all() and not found[keys.size:].any()
    if value_dtype is not None:
        assert np.array_equal(got[: keys.size], values) and (got[keys.size:] == 7).all()
    assert t.contains(keys[:10]).all()
    exported_keys, exported_values = t.export()
    order = np.argsort(exported_keys)
    assert np.array_equal(exported_keys[order], np.sort(keys))
    if value_dtype is not None:
        assert np.array_equal(exported_values[order], values[np.argsort(keys)])
    erased = t.erase(keys[:100])
    assert erased.all() and len(t) == keys.size - 100 and not t.contains(keys[:100]).any()
    t.clear()
    assert len(t) == 0


@pytest.mark.parametrize("design", ["cuckoo", "slab", "hashgraph"])
def test_multivalue_count_and_find_all(design):
    rng = np.random.default_rng(SEED + 1)
    t = gpuhash.Table(design=design, variant="multivalue", capacity=4096, backend="host")
    keys = unique_keys(rng, 400, np.uint32)
    repeats = rng.integers(1, 4, size=keys.size)
    all_keys = np.repeat(keys, repeats)
    all_values = rng.integers(0, 1 << 31, size=all_keys.size, dtype=np.uint64).astype(np.uint32)
    t.insert(all_keys, all_values)  # a multi-value table appends by default
    assert len(t) == all_keys.size
    assert np.array_equal(t.count(keys), repeats.astype(np.uint64))
    offsets, values = t.find_all(keys)
    assert offsets.size == keys.size + 1 and offsets[-1] == all_keys.size
    for i in range(0, keys.size, 37):
        want = np.sort(all_values[all_keys == keys[i]])
        assert np.array_equal(np.sort(values[offsets[i]:offsets[i + 1]]), want)


@pytest.mark.parametrize("design", ["cuckoo", "slab", "hashgraph"])
def test_joins_against_numpy(design):
    rng = np.random.default_rng(SEED + 4)
    t = gpuhash.Table(design=design, variant="multivalue", capacity=4096, backend="host")
    right_keys = np.repeat(unique_keys(rng, 300, np.uint32), 2)
    right_values = np.arange(right_keys.size, dtype=np.uint32)
    t.insert(right_keys, right_values)
    left = np.concatenate([right_keys[::7], unique_keys(rng, 50, np.uint32) | np.uint32(1 << 31)])
    want = sorted((i, int(v)) for i, key in enumerate(left) for v in right_values[right_keys == key])
    assert t.join_count(left) == len(want)
    rows, values = t.join(left, method="probe")
    assert sorted(zip(rows.tolist(), values.tolist())) == want
    assert np.all(np.diff(rows.astype(np.int64)) >= 0)  # the probe lists pairs by left row
    if design == "hashgraph":
        rows, values = t.join(left, method="intersect")
        assert sorted(zip(rows.tolist(), values.tolist())) == want
    assert np.array_equal(t.semi_join(left), np.isin(left, right_keys))
    with pytest.raises(ValueError):
        t.join(left, method="nested-loops")


def test_policies_and_mixed_batch():
    t = gpuhash.Table(design="slab", capacity=1024, backend="host")
    keys = np.arange(1, 101, dtype=np.uint32)
    t.insert(keys, np.full(100, 5, dtype=np.uint32))
    t.insert(keys, np.full(100, 3, dtype=np.uint32), policy="add")
    values, _ = t.find(keys)
    assert (values == 8).all()
    ops = np.array([1, 2, 3], dtype=np.uint8)  # insert a new key, erase an old one, find one
    out, results = t.mixed(ops, np.array([1000, 1, 2], dtype=np.uint32), np.array([9, 0, 0], dtype=np.uint32))
    assert list(results) == [1, 1, 1] and out[2] == 8
    assert t.contains(np.array([1000], dtype=np.uint32))[0] and not t.contains(np.array([1], dtype=np.uint32))[0]


@pytest.mark.parametrize("design", DESIGNS)
def test_save_load(design, tmp_path):
    rng = np.random.default_rng(SEED + 2)
    t = gpuhash.Table(design=design, capacity=4096, backend="host")
    keys = unique_keys(rng, 1000, np.uint32)
    t.insert(keys, keys ^ np.uint32(0x5A5A))
    path = str(tmp_path / "table.image")
    t.save(path)
    for back in (gpuhash.Table.load(path, backend="host"), gpuhash.Table.from_bytes(t.to_bytes(), backend="host")):
        assert len(back) == len(t) and back.config()["design"] == t.config()["design"]
        values, found = back.find(keys)
        assert found.all() and np.array_equal(values, keys ^ np.uint32(0x5A5A))
        back.validate()
    image = t.to_bytes()
    with pytest.raises(gpuhash.BadImageError):
        gpuhash.Table.from_bytes(image[:-1], backend="host")
    with pytest.raises(gpuhash.BadImageError):
        gpuhash.Table.from_bytes(image[:100] + bytes([image[100] ^ 1]) + image[101:], backend="host")
    with pytest.raises(gpuhash.InvalidArgumentError):
        gpuhash.Table.load(str(tmp_path / "missing.image"), backend="host")


def test_bad_inputs_raise_before_any_work():
    t = gpuhash.Table(design="warpdrive", capacity=64, backend="host")
    with pytest.raises(TypeError):
        t.insert(np.arange(4, dtype=np.int64), np.arange(4, dtype=np.uint32))
    with pytest.raises(ValueError):
        t.insert(np.zeros((2, 2), dtype=np.uint32), np.zeros(4, dtype=np.uint32))
    with pytest.raises(ValueError):
        t.insert(np.arange(8, dtype=np.uint32)[::2], np.arange(4, dtype=np.uint32))
    with pytest.raises(ValueError):
        t.insert(np.arange(4, dtype=np.uint32), np.arange(3, dtype=np.uint32))
    with pytest.raises(ValueError):
        t.insert(np.arange(4, dtype=np.uint32), np.arange(4, dtype=np.uint32), policy="sometimes")
    with pytest.raises(ValueError):
        t.insert(np.arange(4, dtype=np.uint32))  # a map needs values
    assert len(t) == 0
    with pytest.raises(ValueError):
        gpuhash.Table(design="no-such-design")
    with pytest.raises(TypeError):
        gpuhash.Table(design="warpdrive", no_such_option=1, backend="host")
    with pytest.raises(TypeError):  # the widths come from the dtypes only
        gpuhash.Table(design="warpdrive", value_bits=64, backend="host")
    with pytest.raises(ValueError):
        gpuhash.Table(design="warpdrive", backend="tpu")
    with pytest.raises(ValueError):
        t.find(np.arange(4, dtype=np.uint32), default=-1)
    misaligned = np.frombuffer(np.zeros(5, dtype=np.uint32).tobytes(), dtype=np.uint32, offset=4, count=3)
    if not misaligned.flags["ALIGNED"]:
        with pytest.raises(ValueError):
            t.contains(misaligned)
    with pytest.raises(gpuhash.InvalidArgumentError):
        gpuhash.Table(design="warpdrive", group_size=3, backend="host")
    with pytest.raises(gpuhash.UnsupportedError):
        t.count(np.arange(4, dtype=np.uint32))  # a map has no gh_count


def test_full_table_raises_its_class():
    t = gpuhash.Table(design="warpdrive", capacity=32, backend="host")
    keys = np.arange(1, 200, dtype=np.uint32)
    with pytest.raises(gpuhash.TableFullError) as info:
        t.insert(keys, keys)
    assert info.value.status_name == "GH_ERR_TABLE_FULL" and "GH_ERR_TABLE_FULL" in str(info.value)
    t.validate()


def test_every_status_has_a_class():
    names = [name for name in gpuhash.__all__ if name.endswith("Error") and name != "GpuhashError"]
    assert "BadImageError" in names and "TableFullError" in names and "PeerError" in names
    assert all(issubclass(getattr(gpuhash, name), gpuhash.GpuhashError) for name in names)


@pytest.mark.parametrize("variant,value_dtype", [("map", None), ("multivalue", np.uint64)])
def test_save_load_sets_and_multivalue(variant, value_dtype):
    rng = np.random.default_rng(SEED + 3)
    t = gpuhash.Table(design="slab", variant=variant, value_dtype=value_dtype, capacity=1024, backend="host")
    keys = np.repeat(unique_keys(rng, 200, np.uint32), 2 if variant == "multivalue" else 1)
    t.insert(keys, None if value_dtype is None else np.arange(keys.size, dtype=value_dtype))
    back = gpuhash.Table.from_bytes(t.to_bytes(), backend="host")
    assert len(back) == len(t) and back.value_dtype == t.value_dtype
    a, b = t.export(), back.export()
    assert sorted(zip(a[0].tolist(), (a[1] if a[1] is not None else a[0]).tolist())) == \
        sorted(zip(b[0].tolist(), (b[1] if b[1] is not None else b[0]).tolist()))


def test_records_of_any_size():
    record = np.dtype((np.void, 24))
    t = gpuhash.Table(design="dycuckoo", value_dtype=record, capacity=1024, backend="host")
    keys = np.arange(10, 60, dtype=np.uint32)
    values = np.frombuffer(bytes(range(24)) * keys.size, dtype=record).copy()
    t.insert(keys, values)
    got, found = t.find(keys)
    assert found.all() and got.tobytes() == values.tobytes()
    back = gpuhash.Table.from_bytes(t.to_bytes(), backend="host", value_dtype=record)
    got, found = back.find(keys)
    assert found.all() and got.dtype == record and got.tobytes() == values.tobytes()


@pytest.mark.skipif(not gpuhash.cuda_available(), reason="no GPU here")
@pytest.mark.parametrize("framework", ["cupy", "torch"])
def test_device_arrays_zero_copy(framework):
    lib = pytest.importorskip(framework)
    t = gpuhash.Table(design="warpdrive", capacity=1 << 16, backend="cuda")
    if framework == "cupy":
        keys = lib.arange(1000, dtype=lib.uint32)
        ptr = keys.data.ptr
    else:
        keys = lib.arange(1000, dtype=lib.int64).to(lib.uint32).cuda()
        ptr = keys.data_ptr()
    assert gpuhash._Array(keys, np.dtype(np.uint32), "keys").ptr == ptr  # passed by its pointer, no copy
    t.insert(keys, keys)
    values, found = t.find(keys)
    assert type(values).__module__.split(".")[0] == framework and bool(found.all())


class DLPackOnly:
    """An array known only through DLPack (as JAX's are): no __cuda_array_interface__, not NumPy."""

    def __init__(self, array):
        self._array = array

    def __dlpack__(self, stream=None):
        return self._array.__dlpack__()

    def __dlpack_device__(self):
        return self._array.__dlpack_device__()


def test_dlpack_host_arrays():
    t = gpuhash.Table(design="warpdrive", capacity=1 << 12, backend="host")
    keys = np.arange(1, 101, dtype=np.uint32)
    t.insert(DLPackOnly(keys), DLPackOnly(keys * 3))
    values, found = t.find(DLPackOnly(np.array([5, 500], dtype=np.uint32)))
    assert values.tolist() == [15, 0] and found.tolist() == [True, False]
    with pytest.raises(TypeError):
        t.insert(DLPackOnly(keys.astype(np.uint64)), DLPackOnly(keys))


class PendingArray:
    """An array computed asynchronously, as JAX's GPU arrays are: __cuda_array_interface__ (over a
    NumPy array's memory here) and block_until_ready, which records that it was waited for and
    only then makes the contents final."""

    def __init__(self, array):
        self._array, self._final, self.waited = array, array.copy(), False
        array[:] = 0  # not computed yet

    def block_until_ready(self):
        self._array[:] = self._final
        self.waited = True
        return self

    @property
    def __cuda_array_interface__(self):
        return {"shape": self._array.shape, "typestr": self._array.dtype.str, "version": 2,
                "data": (self._array.ctypes.data, False), "strides": None}


def test_pending_arrays_are_waited_for_before_their_pointer_is_taken():
    keys = np.arange(1, 101, dtype=np.uint32)
    pending = PendingArray(keys)
    array = gpuhash._Array(pending, np.dtype(np.uint32), "keys")
    assert pending.waited and array.ptr == keys.ctypes.data and (keys == np.arange(1, 101)).all()


@pytest.mark.parametrize("design", ["warpdrive", "slab"])
def test_dist_table_host(design):
    rng = np.random.default_rng(SEED)
    keys = unique_keys(rng, 20000, np.uint32)
    values = rng.integers(0, 1 << 31, size=keys.size, dtype=np.uint64).astype(np.uint32)
    d = gpuhash.DistTable(design=design, capacity=1 << 14, partitions=3, backend="host")
    assert d.partitions == 3
    d.insert(keys, values)
    assert len(d) == keys.size
    d.validate()
    got, found = d.find(np.concatenate([keys, np.array([keys.max() + 1], dtype=np.uint32)]), default=7)
    assert found[:-1].all() and not found[-1] and (got[:-1] == values).all() and got[-1] == 7
    owners = np.array([d.partition_of(k) for k in keys[:3000]])
    assert sum(d.partition_size(p) for p in range(3)) == keys.size and set(owners.tolist()) == {0, 1, 2}
    # Slices: any keys in any slice; erased flags per slice.
    erased = d.erase([keys[:100], keys[100:150], keys[:10]])
    assert erased[0].all() and erased[1].all() and not erased[2].any()
    assert len(d) == keys.size - 150
    exported_keys, exported_values = d.export()
    order = np.argsort(exported_keys)
    remaining = np.argsort(keys[150:])
    assert (exported_keys[order] == keys[150:][remaining]).all()
    assert (exported_values[order] == values[150:][remaining]).all()
    d.validate()
    with pytest.raises(ValueError):
        d.insert([keys[:5]], [values[:5]])  # one slice for three partitions
    with pytest.raises(TypeError):
        d.erase(keys)  # erase takes slices
    d.clear()
    assert len(d) == 0


@pytest.mark.skipif(not gpuhash.cuda_available(), reason="no GPU here")
def test_device_streams_dlpack_and_errors():
    cupy = pytest.importorskip("cupy")
    t = gpuhash.Table(design="slab", capacity=1 << 16, backend="cuda")
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        keys = cupy.arange(1, 50001, dtype=cupy.uint32)
        t.insert(keys, keys * 2, stream=stream)
        values, found = t.find(keys, stream=stream)
    stream.synchronize()
    assert bool(found.all()) and bool((values == keys * 2).all())
    # Through DLPack alone: the pointer is the array's own, and the outputs come back as CuPy.
    wrapped = DLPackOnly(keys)
    assert gpuhash._Array(wrapped, np.dtype(np.uint32), "keys").ptr == keys.data.ptr
    values, found = t.find(wrapped)
    assert bool(found.all()) and bool((cupy.asarray(values) == keys * 2).all())
    with pytest.raises(TypeError):
        t.find(keys.astype(cupy.uint64))
    with pytest.raises(ValueError):
        t.find(keys.reshape(100, 500))
    with pytest.raises(ValueError):
        t.find(keys[::2])


@pytest.mark.skipif(not gpuhash.cuda_available(), reason="no GPU here")
def test_torch_stream():
    torch = pytest.importorskip("torch")
    t = gpuhash.Table(design="warpdrive", capacity=1 << 16, backend="cuda")
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        keys = torch.arange(1, 40001, dtype=torch.int64, device="cuda").to(torch.uint32)
        t.insert(keys, keys, stream=stream)
        values, found = t.find(keys, stream=stream)
    stream.synchronize()
    assert found.dtype == torch.bool and bool(found.all())
    assert bool((values.to(torch.int64) == keys.to(torch.int64)).all())


@pytest.mark.skipif(not gpuhash.cuda_available(), reason="no GPU here")
def test_dist_table_cuda_slices():
    cupy = pytest.importorskip("cupy")
    d = gpuhash.DistTable(design="warpdrive", capacity=1 << 16, partitions=1, backend="cuda")
    keys = cupy.arange(1, 30001, dtype=cupy.uint32)
    d.insert([keys], [keys + 1])
    values, found = d.find([keys])
    assert bool(found[0].all()) and bool((values[0] == keys + 1).all())
    host_values, host_found = d.find(cupy.asnumpy(keys))  # the host-sided call
    assert host_found.all() and (host_values == cupy.asnumpy(keys) + 1).all()
    d.validate()


def test_dist_insert_progress_line(capsys):
    d = gpuhash.DistTable(design="warpdrive", capacity=1 << 13, partitions=2, backend="host")
    keys = np.arange(1, 5001, dtype=np.uint32)
    d.insert(keys, keys, progress=True)
    err = capsys.readouterr().err
    assert "inserted 5000 of 5000 pairs (100 %)" in err and err.count("\r") == 64
    assert len(d) == 5000
    values, found = d.find(keys)
    assert found.all() and (values == keys).all()


@pytest.mark.skipif(not gpuhash.cuda_available(), reason="no GPU here")
def test_jax_arrays_through_dlpack():
    jax = pytest.importorskip("jax")
    pytest.importorskip("cupy")  # outputs for a DLPack-only framework are made by CuPy
    if not any(device.platform == "gpu" for device in jax.devices()):
        pytest.skip("no GPU here for JAX")
    t = gpuhash.Table(design="warpdrive", capacity=1 << 16, backend="cuda")
    keys = jax.numpy.arange(1, 20001, dtype=jax.numpy.uint32)
    t.insert(keys, keys * 3)
    values, found = t.find(keys)
    assert type(values).__module__.split(".")[0] in ("jax", "jaxlib")
    assert bool(found.all()) and bool((values == keys * 3).all())


def test_torch_cpu_tensors_come_back_as_tensors():
    torch = pytest.importorskip("torch")
    t = gpuhash.Table(design="warpdrive", capacity=1 << 12, backend="host")
    keys = torch.from_numpy(np.arange(1, 1001, dtype=np.uint32))
    t.insert(keys, keys)
    values, found = t.find(keys)
    assert isinstance(values, torch.Tensor) and isinstance(found, torch.Tensor)
    assert found.dtype == torch.bool and bool(found.all()) and bool((values == keys).all())


def test_find_into_callers_arrays():
    t = gpuhash.Table(design="cuckoo", capacity=1 << 12, backend="host")
    keys = np.arange(1, 101, dtype=np.uint32)
    t.insert(keys, keys + 5)
    values, found = np.zeros(100, np.uint32), np.zeros(100, bool)
    got_values, got_found = t.find(keys, out=(values, found))
    assert got_values is values and got_found is found and found.all() and (values == keys + 5).all()
    flags = np.zeros(100, bool)
    assert t.contains(keys, out=flags) is flags and flags.all()
    with pytest.raises(ValueError):
        t.find(keys, out=(np.zeros(99, np.uint32), np.zeros(99, bool)))  # wrong length
    with pytest.raises(TypeError):
        t.find(keys, out=(np.zeros(100, np.uint64), found))  # wrong dtype
    with pytest.raises(TypeError):
        t.find(keys, out=(values,))  # one output short
    s = gpuhash.Table(design="cuckoo", capacity=1 << 12, value_dtype=None, backend="host")
    s.insert(keys)
    assert s.find(keys, out=(None, found))[1].all()
    with pytest.raises(TypeError):
        s.find(keys, out=(values, found))  # a set has no values


def test_out_must_be_writable_in_place():
    t = gpuhash.Table(design="warpdrive", capacity=1 << 10, backend="host")
    keys = np.arange(1, 4, dtype=np.uint32)
    t.insert(keys, keys)
    with pytest.raises(TypeError):
        t.find(keys, out=([0] * 3, [False] * 3))  # lists would be copied, never written
    readonly = np.zeros(3, bool)
    readonly.flags.writeable = False
    with pytest.raises(ValueError):
        t.contains(keys, out=readonly)
    with pytest.raises(TypeError):
        t.contains(keys, out=DLPackOnly(np.zeros(3, bool)))  # DLPack-only arrays may be immutable


def test_dist_table_argument_checks_and_progress_edges(capsys):
    d = gpuhash.DistTable(design="warpdrive", capacity=1 << 10, partitions=2, backend="host")
    keys = np.arange(1, 11, dtype=np.uint32)
    with pytest.raises(ValueError):
        d.insert([keys, keys], [keys])  # values for one slice of two
    d.insert(np.zeros(0, np.uint32), np.zeros(0, np.uint32), progress=True)  # nothing to insert
    assert len(d) == 0 and "inserted 0 of 0 pairs" in capsys.readouterr().err
    with pytest.raises(ValueError):
        d.find(keys, default=-1)
    with pytest.raises(TypeError):
        gpuhash.DistTable(design="warpdrive", backend="host", rank=1)


def test_dist_table_records_default():
    record = np.dtype((np.void, 12))
    d = gpuhash.DistTable(design="dycuckoo", value_dtype=record, capacity=1 << 10, partitions=2, backend="host")
    keys = np.arange(1, 6, dtype=np.uint32)
    values = np.frombuffer(bytes(range(60)), dtype=record).copy()
    d.insert(keys, values)
    got, found = d.find(np.array([3, 99], dtype=np.uint32), default=b"\x07" * 12)
    assert found.tolist() == [True, False]
    assert bytes(got[0]) == bytes(range(24, 36)) and bytes(got[1]) == b"\x07" * 12


def test_unknown_frameworks_get_numpy_back():
    class Unimportable(DLPackOnly):
        pass
    Unimportable.__module__ = "no_such_framework.arrays"
    t = gpuhash.Table(design="warpdrive", capacity=1 << 10, backend="host")
    keys = np.arange(1, 6, dtype=np.uint32)
    t.insert(keys, keys)
    erased = t.erase(Unimportable(keys))
    assert isinstance(erased, np.ndarray) and erased.all() and len(t) == 0


def test_fastcall_built_where_expected():
    # The suite's ctest case says whether the build made the compiled call path (Python's headers
    # were there); the package must then have found and bound it.
    expected = os.environ.get("GPUHASH_EXPECT_FASTCALL")
    if expected is None:
        pytest.skip("not run by the suite's ctest case: whether _fastcall was built is not known")
    assert (gpuhash._fastcall is not None) == (expected == "1")


class FakeCupyArray:
    """A stand-in for cupy.ndarray over a NumPy array (the members the compiled path and the
    generic path's CuPy branch read), so that the compiled path runs on the host backend, without
    a GPU or CuPy."""

    def __init__(self, array):
        self.base, self.dtype, self.ndim, self.size = array, array.dtype, array.ndim, array.size
        self.shape, self.strides, self._c_contiguous = array.shape, array.strides, array.flags.c_contiguous
        self.data = type("MemoryPointer", (), {"ptr": array.ctypes.data})()


@pytest.fixture
def fake_cupy(monkeypatch):
    fast = gpuhash._fastcall
    if fast is None:
        pytest.skip("gpuhash was built without the compiled call path (no Python headers)")
    module = type(sys)("cupy")
    module.ndarray = FakeCupyArray
    monkeypatch.setitem(sys.modules, "cupy", module)
    return fast


def test_fastcall_takes_its_case_and_declines_the_rest(fake_cupy):
    t = gpuhash.Table(design="warpdrive", capacity=1 << 10, backend="host")
    keys = np.arange(1, 11, dtype=np.uint32)
    t.insert(keys[:6], keys[:6] * 3)
    values, found, flags = np.zeros(10, np.uint32), np.zeros(10, bool), np.zeros(10, bool)
    K, V, F, C = (FakeCupyArray(a) for a in (keys, values, found, flags))
    # Its case: the compiled call does the work (status 0), and Table.find / contains return out.
    _, seven = t._default_pointer(7)
    assert fake_cupy.find_cupy(t._handle.value, K, V, F, t.key_dtype, t.value_dtype, seven, None) == 0
    assert (values == np.r_[keys[:6] * 3, [7] * 4]).all() and found.tolist() == [True] * 6 + [False] * 4
    values[:], found[:] = 0, False
    out = (V, F)
    assert t.find(K, default=7, out=out) is out
    assert (values == np.r_[keys[:6] * 3, [7] * 4]).all() and found.tolist() == [True] * 6 + [False] * 4
    assert t.contains(K, out=C) is C and (flags == found).all()
    empty = FakeCupyArray(np.zeros(0, np.uint32))
    assert fake_cupy.find_cupy(t._handle.value, empty, None, FakeCupyArray(np.zeros(0, bool)), t.key_dtype,
                               t.value_dtype, None, None) is None  # a map's out needs its values array ...
    with pytest.raises(TypeError):
        t.find(empty, out=(None, FakeCupyArray(np.zeros(0, bool))))  # (the generic path says so)
    assert fake_cupy.find_cupy(t._handle.value, empty, FakeCupyArray(np.zeros(0, np.uint32)),
                               FakeCupyArray(np.zeros(0, bool)), t.key_dtype, t.value_dtype, None, None) == 0
    # Declined, nothing written: NumPy arrays, lists, wrong dtypes, lengths, shapes, strides.
    values[:], found[:] = 0, False
    declined = [(keys, V, F), (list(keys), V, F), (FakeCupyArray(keys.astype(np.uint64)), V, F),
                (K, FakeCupyArray(values[:9]), F), (K, V, FakeCupyArray(found.view(np.uint8))),
                (FakeCupyArray(np.arange(1, 21, dtype=np.uint32)[::2]), V, F),
                (FakeCupyArray(np.arange(1, 21, dtype=np.uint32).reshape(2, 10)), V, F)]
    for k, v, f in declined:
        assert fake_cupy.find_cupy(t._handle.value, k, v, f, t.key_dtype, t.value_dtype, None, None) is None
    assert fake_cupy.contains_cupy(t._handle.value, keys, C, t.key_dtype, None) is None
    assert not values.any() and not found.any()
    # A set: no values array, and a values array refused.
    s = gpuhash.Table(design="warpdrive", capacity=1 << 10, value_dtype=None, backend="host")
    s.insert(keys[:4])
    assert fake_cupy.find_cupy(s._handle.value, K, None, F, s.key_dtype, None, None, None) == 0
    assert found.tolist() == [True] * 4 + [False] * 6
    assert fake_cupy.find_cupy(s._handle.value, K, V, F, s.key_dtype, None, None, None) is None
    # A destroyed table, a CuPy replaced in sys.modules: declined, and the generic path explains.
    gone = gpuhash.Table(design="warpdrive", capacity=1 << 10, backend="host")
    gone.__del__()
    assert fake_cupy.find_cupy(gone._handle.value, K, V, F, gone.key_dtype, gone.value_dtype, None, None) is None
    sys.modules["cupy"] = type(sys)("cupy")
    assert fake_cupy.find_cupy(t._handle.value, K, V, F, t.key_dtype, t.value_dtype, None, None) is None
    with pytest.raises(TypeError):
        fake_cupy.find_cupy(t._handle.value, K)  # its own arguments are checked


def test_fastcall_attribute_errors_decline_or_propagate(fake_cupy):
    t = gpuhash.Table(design="warpdrive", capacity=1 << 10, backend="host")
    keys = np.arange(1, 4, dtype=np.uint32)
    V, F = FakeCupyArray(np.zeros(3, np.uint32)), FakeCupyArray(np.zeros(3, bool))

    class Raising(FakeCupyArray):
        error = AttributeError

        def __init__(self, array):
            self.base, self.dtype, self.ndim = array, array.dtype, array.ndim

        @property
        def size(self):
            raise self.error("size")

    sys.modules["cupy"].ndarray = Raising
    bad = Raising(keys)
    assert gpuhash._fastcall.find_cupy(t._handle.value, bad, V, F, t.key_dtype, t.value_dtype, None, None) is None
    Raising.error = MemoryError  # not "not the case": it reaches the caller
    with pytest.raises(MemoryError):
        gpuhash._fastcall.find_cupy(t._handle.value, bad, V, F, t.key_dtype, t.value_dtype, None, None)


def test_fastcall_declines_all_but_cupy():
    fast = gpuhash._fastcall
    if fast is None:
        pytest.skip("gpuhash was built without the compiled call path (no Python headers)")
    t = gpuhash.Table(design="warpdrive", capacity=1 << 10, backend="host")
    keys = np.arange(1, 11, dtype=np.uint32)
    t.insert(keys, keys)
    values, found = np.zeros(10, np.uint32), np.zeros(10, bool)
    # NumPy arrays (and lists, and None) are not its case: None, and nothing written.
    assert fast.find_cupy(t._handle.value, keys, values, found, t.key_dtype, t.value_dtype, None, None) is None
    assert fast.contains_cupy(t._handle.value, list(keys), found, t.key_dtype, None) is None
    assert not found.any()
    # The generic path then does the call.
    assert t.find(keys, out=(values, found))[1].all() and (values == keys).all()
    with pytest.raises(TypeError):
        fast.find_cupy(t._handle.value, keys)  # its own arguments are checked


@pytest.mark.skipif(not gpuhash.cuda_available(), reason="no GPU here")
def test_fastcall_cupy_matches_the_generic_path(monkeypatch):
    cupy = pytest.importorskip("cupy")
    fast = gpuhash._fastcall
    if fast is None:
        pytest.skip("gpuhash was built without the compiled call path (no Python headers)")
    rng = np.random.default_rng(SEED)
    t = gpuhash.Table(design="warpdrive", capacity=1 << 16, backend="cuda")
    keys = cupy.asarray(unique_keys(rng, 20000, np.uint32))
    t.insert(keys[:10000], keys[:10000] + 7)
    values, found = cupy.zeros(20000, cupy.uint32), cupy.zeros(20000, cupy.bool_)
    # The compiled call takes CuPy arrays throughout (status 0) ...
    _, default = t._default_pointer(3)
    assert fast.find_cupy(t._handle.value, keys, values, found, t.key_dtype, t.value_dtype, default, None) == 0
    flags = cupy.zeros(20000, cupy.bool_)
    assert fast.contains_cupy(t._handle.value, keys, flags, t.key_dtype, None) == 0
    expect_values = cupy.concatenate([keys[:10000] + 7, cupy.full(10000, 3, cupy.uint32)])
    assert bool((values == expect_values).all()) and bool(found[:10000].all()) and not bool(found[10000:].any())
    assert bool((flags == found).all())
    # ... on the caller's stream, as Table.find(out=) and contains(out=) do; the generic path
    # gives the same.
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:  # (on the null stream, the fills could land after the find: a non-blocking stream does not wait)
        values.fill(0), found.fill(False), flags.fill(False)
    got = t.find(keys, default=3, stream=stream, out=(values, found))
    assert t.contains(keys, stream=stream, out=flags) is flags
    stream.synchronize()
    assert got[0] is values and bool((values == expect_values).all()) and bool((flags == found).all())
    monkeypatch.setattr(gpuhash, "_fastcall", None)
    generic_values, generic_found = t.find(keys, default=3)
    monkeypatch.undo()
    assert bool((generic_values == values).all()) and bool((generic_found == found).all())
    # Anything but its case is declined, and Table.find explains it as before.
    for bad_keys, bad_out, error in [(keys.astype(cupy.uint64), (values, found), TypeError),
                                     (keys[::2], (values[:10000], found[:10000]), ValueError),
                                     (keys.reshape(100, 200), (values, found), ValueError),
                                     (keys, (values[:19999], found[:19999]), ValueError),
                                     (keys, (values.astype(cupy.uint64), found), TypeError),
                                     (keys, (values, found.astype(cupy.uint8)), TypeError)]:
        assert fast.find_cupy(t._handle.value, bad_keys, bad_out[0], bad_out[1], t.key_dtype, t.value_dtype,
                              None, None) is None
        with pytest.raises(error):
            t.find(bad_keys, out=bad_out)
    # A set: no values array.
    s = gpuhash.Table(design="warpdrive", capacity=1 << 16, value_dtype=None, backend="cuda")
    s.insert(keys[:5000])
    assert fast.find_cupy(s._handle.value, keys, None, found, s.key_dtype, None, None, None) == 0
    assert bool(found[:5000].all()) and not bool(found[5000:].any())


def test_fastcall_of_another_version_is_not_loaded():
    if gpuhash._fastcall is None:
        pytest.skip("gpuhash was built without the compiled call path (no Python headers)")
    with pytest.warns(UserWarning, match="built for gpuhash"):
        assert gpuhash._load_fastcall(gpuhash._VERSION + 1) is None
    assert gpuhash._load_fastcall(gpuhash._VERSION) is not None
