/* gpuhash._fastcall: the compiled path of Table.find and Table.contains for CuPy arrays written
 * into the caller's arrays (out=), the loop of a Python program that looks keys up batch after
 * batch. ctypes adds about 3 us to a call and the Python checks of three arrays as much again,
 * against a gh_find of 2^20 device keys of about 55 us; here the checks are a few attribute reads
 * and the call is a direct one.
 *
 * The module recognises the one case and declines everything else: each function returns None
 * unless every array is a 1-D contiguous cupy.ndarray of exactly the table's dtype object and the
 * right length, and the package then takes its generic path, which checks, explains and raises.
 * So no rule about arrays is written twice. The module does not link libgpuhash: the package hands
 * it the addresses of gh_find and gh_contains from the library it loaded (bind), so that one copy
 * of the library serves both paths. Built against Python's stable ABI (3.10 and later), one file
 * serves every interpreter; without it the package calls through ctypes alone. */
#define Py_LIMITED_API 0x030A0000
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "gpuhash.h"

typedef gh_status (*find_call)(gh_table *table, const void *keys, uint64_t n, void *values_out,
                               uint8_t *found_out, const void *default_value, gh_stream stream);
typedef gh_status (*contains_call)(gh_table *table, const void *keys, uint64_t n, uint8_t *found_out,
                                   gh_stream stream);

static find_call bound_find;
static contains_call bound_contains;
static PyObject *flags_dtype;          /* numpy.dtype(bool): the found arrays' dtype */
static PyObject *cupy_ndarray;         /* cupy.ndarray, once CuPy has been imported by the caller */
static PyObject *name_dtype, *name_ndim, *name_size, *name_c_contiguous, *name_data, *name_ptr;

/* bind(gh_find address, gh_contains address, numpy.dtype(bool)): the library's entry points. */
static PyObject *fastcall_bind(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
  (void)module;
  if (nargs != 3) {
    PyErr_SetString(PyExc_TypeError, "bind(find_address, contains_address, flags_dtype)");
    return NULL;
  }
  void *find = PyLong_AsVoidPtr(args[0]);
  void *contains = PyLong_AsVoidPtr(args[1]);
  if (PyErr_Occurred()) return NULL;
  if (find == NULL || contains == NULL) {
    PyErr_SetString(PyExc_ValueError, "bind: a NULL entry point");
    return NULL;
  }
  /* Function pointers travel as integers through ctypes: the conversion back is the platform's
   * (POSIX guarantees data and function pointers convert). */
  bound_find = (find_call)(uintptr_t)find;
  bound_contains = (contains_call)(uintptr_t)contains;
  Py_INCREF(args[2]);
  Py_XDECREF(flags_dtype);
  flags_dtype = args[2];
  Py_RETURN_NONE;
}

/* cupy.ndarray when the caller has imported CuPy (a CuPy array can only exist then), else NULL;
 * no import is started from here. */
static PyObject *cupy_type(void) {
  if (cupy_ndarray == NULL) {
    PyObject *cupy = PyDict_GetItemString(PyImport_GetModuleDict(), "cupy"); /* borrowed */
    if (cupy == NULL) return NULL;
    cupy_ndarray = PyObject_GetAttrString(cupy, "ndarray");
    if (cupy_ndarray == NULL) PyErr_Clear();
  }
  return cupy_ndarray;
}

/* Reads an integer attribute (a length, a stride, a pointer); 0 where the read fails. */
static int read_integer(PyObject *obj, PyObject *name, long long *out) {
  PyObject *value = PyObject_GetAttr(obj, name);
  if (value == NULL) return 0;
  *out = PyLong_AsLongLong(value);
  Py_DECREF(value);
  return !PyErr_Occurred();
}

/* Whether obj is a 1-D C-contiguous cupy.ndarray of dtype `dtype` (the very object: NumPy's
 * builtin dtypes are singletons) and, when expected >= 0, of `expected` elements; its pointer and
 * length. Declines (0, no Python error left) on anything else. It reads the array's C-level members
 * (dtype, size, _c_contiguous, data.ptr) and ndim, not shape and strides, which build tuples; a CuPy
 * without one of them is declined throughout, and the generic path serves it. */
static int cupy_vector(PyObject *obj, PyObject *dtype, long long expected, void **pointer, long long *length) {
  PyObject *type = cupy_type();
  if (type == NULL || (PyObject *)Py_TYPE(obj) != type) return 0;
  PyObject *array_dtype = PyObject_GetAttr(obj, name_dtype);
  long long ndim = 0, n = 0, contiguous = 0, address = 0;
  int ok = array_dtype == dtype && read_integer(obj, name_ndim, &ndim) && ndim == 1 &&
           read_integer(obj, name_size, &n) && (expected < 0 || n == expected) &&
           read_integer(obj, name_c_contiguous, &contiguous) && contiguous;
  Py_XDECREF(array_dtype);
  PyObject *data = ok ? PyObject_GetAttr(obj, name_data) : NULL;
  ok = data != NULL && read_integer(data, name_ptr, &address);
  Py_XDECREF(data);
  PyErr_Clear();
  if (ok) *pointer = (void *)(uintptr_t)address, *length = n;
  return ok;
}

/* An address argument: an int, or None for NULL; -1 with a Python error otherwise. */
static int address_argument(PyObject *arg, void **out) {
  *out = arg == Py_None ? NULL : PyLong_AsVoidPtr(arg);
  return PyErr_Occurred() ? -1 : 0;
}

/* find_cupy(table, keys, values_out, found_out, key_dtype, value_dtype, default, stream): the
 * status of gh_find, or None to decline. table, default and stream are addresses (default and
 * stream may be None); values_out and value_dtype are None for a set. */
static PyObject *fastcall_find_cupy(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
  (void)module;
  if (nargs != 8) {
    PyErr_SetString(PyExc_TypeError, "find_cupy takes 8 arguments");
    return NULL;
  }
  void *table, *default_value, *stream, *keys, *values = NULL, *found;
  long long n, length;
  if (address_argument(args[0], &table) || address_argument(args[6], &default_value) ||
      address_argument(args[7], &stream))
    return NULL;
  if (bound_find == NULL || table == NULL || !cupy_vector(args[1], args[4], -1, &keys, &n) ||
      !cupy_vector(args[3], flags_dtype, n, &found, &length))
    Py_RETURN_NONE;
  if (args[5] == Py_None ? args[2] != Py_None : !cupy_vector(args[2], args[5], n, &values, &length))
    Py_RETURN_NONE;
  gh_status status;
  Py_BEGIN_ALLOW_THREADS
  status = bound_find((gh_table *)table, keys, (uint64_t)n, values, (uint8_t *)found, default_value,
                      (gh_stream)stream);
  Py_END_ALLOW_THREADS
  return PyLong_FromLong((long)status);
}

/* contains_cupy(table, keys, found_out, key_dtype, stream): the status of gh_contains, or None. */
static PyObject *fastcall_contains_cupy(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
  (void)module;
  if (nargs != 5) {
    PyErr_SetString(PyExc_TypeError, "contains_cupy takes 5 arguments");
    return NULL;
  }
  void *table, *stream, *keys, *found;
  long long n, length;
  if (address_argument(args[0], &table) || address_argument(args[4], &stream)) return NULL;
  if (bound_contains == NULL || table == NULL || !cupy_vector(args[1], args[3], -1, &keys, &n) ||
      !cupy_vector(args[2], flags_dtype, n, &found, &length))
    Py_RETURN_NONE;
  gh_status status;
  Py_BEGIN_ALLOW_THREADS
  status = bound_contains((gh_table *)table, keys, (uint64_t)n, (uint8_t *)found, (gh_stream)stream);
  Py_END_ALLOW_THREADS
  return PyLong_FromLong((long)status);
}

static PyMethodDef fastcall_methods[] = {
    {"bind", (PyCFunction)(void (*)(void))fastcall_bind, METH_FASTCALL,
     "bind(find_address, contains_address, flags_dtype): the library's gh_find and gh_contains."},
    {"find_cupy", (PyCFunction)(void (*)(void))fastcall_find_cupy, METH_FASTCALL,
     "find_cupy(table, keys, values_out, found_out, key_dtype, value_dtype, default, stream) -> status or None."},
    {"contains_cupy", (PyCFunction)(void (*)(void))fastcall_contains_cupy, METH_FASTCALL,
     "contains_cupy(table, keys, found_out, key_dtype, stream) -> status or None."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef fastcall_module = {PyModuleDef_HEAD_INIT, "_fastcall",
                                             "gpuhash's compiled call path for CuPy arrays (see _fastcall.c).", -1,
                                             fastcall_methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__fastcall(void) {
  name_dtype = PyUnicode_InternFromString("dtype");
  name_ndim = PyUnicode_InternFromString("ndim");
  name_size = PyUnicode_InternFromString("size");
  name_c_contiguous = PyUnicode_InternFromString("_c_contiguous");
  name_data = PyUnicode_InternFromString("data");
  name_ptr = PyUnicode_InternFromString("ptr");
  if (!name_dtype || !name_ndim || !name_size || !name_c_contiguous || !name_data || !name_ptr) return NULL;
  return PyModule_Create(&fastcall_module);
}
