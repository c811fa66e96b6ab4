/* gpuhash._fastcall: the compiled path of Table.find and Table.contains for CuPy arrays written
 * into the caller's arrays (out=), the loop of a Python program that looks keys up batch after
 * batch. ctypes adds about 3 us to a call and the Python checks of three arrays as much again,
 * against a gh_find of 2^20 device keys of about 55 us; here the checks are a few attribute reads
 * and the call is a direct one.
 *
 * The module recognises the one case and declines everything else: each function returns None
 * unless every array is a 1-D C-contiguous cupy.ndarray of exactly the table's dtype object and
 * the right length, and the package then takes its generic path, which checks, explains and
 * raises. So no rule about arrays is written twice. The module does not link libgpuhash: the
 * package hands it the addresses of gh_find and gh_contains from the library it loaded (bind),
 * so that one copy of the library serves both paths, and loads it only when its version (the
 * gpuhash.h it was compiled with) is the library's. Built against Python's stable ABI (3.10 and
 * later), one file serves every interpreter; without it the package calls through ctypes alone. */
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
static PyObject *flags_dtype;  /* numpy.dtype(bool): the found arrays' dtype */
static PyObject *cupy_module;  /* the cupy module cupy_ndarray was read from */
static PyObject *cupy_ndarray; /* its ndarray */
static PyObject *name_dtype, *name_ndim, *name_size, *name_c_contiguous, *name_data, *name_ptr, *name_cupy;

/* Calls of fewer keys keep the GIL: on a current GPU they take under about 0.1 ms (2^20 keys: 55 us
 * on an H200), 1/50 of the interpreter's own switch interval, and releasing and taking it back
 * costs about a microsecond, 2 % of such a call. Longer calls let other Python threads run. */
#define GIL_HELD_BELOW (1ll << 21)

/* An address argument: an int, or None for NULL; -1 with a Python error otherwise. */
static int address_argument(PyObject *arg, void **out) {
  *out = arg == Py_None ? NULL : PyLong_AsVoidPtr(arg);
  return PyErr_Occurred() ? -1 : 0;
}

/* bind(gh_find address, gh_contains address, numpy.dtype(bool)): the library's entry points. */
static PyObject *fastcall_bind(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
  (void)module;
  if (nargs != 3) {
    PyErr_SetString(PyExc_TypeError, "bind(find_address, contains_address, flags_dtype)");
    return NULL;
  }
  void *find, *contains;
  if (address_argument(args[0], &find) || address_argument(args[1], &contains)) return NULL;
  if (find == NULL || contains == NULL) {
    PyErr_SetString(PyExc_ValueError, "bind: a NULL entry point");
    return NULL;
  }
  /* Function pointers travel as integers through ctypes: the conversion back is the platform's
   * (POSIX guarantees data and function pointers convert). */
  bound_find = (find_call)(uintptr_t)find;
  bound_contains = (contains_call)(uintptr_t)contains;
  PyObject *old = flags_dtype;
  Py_INCREF(args[2]);
  flags_dtype = args[2];
  Py_XDECREF(old);
  Py_RETURN_NONE;
}

/* The exceptions reading a foreign object's attributes may raise that mean "not the case": the
 * object is declined. Others (MemoryError, KeyboardInterrupt) propagate. */
static int declinable_error(void) {
  return PyErr_ExceptionMatches(PyExc_AttributeError) || PyErr_ExceptionMatches(PyExc_TypeError) ||
         PyErr_ExceptionMatches(PyExc_ValueError) || PyErr_ExceptionMatches(PyExc_OverflowError);
}

/* cupy.ndarray of the cupy module in sys.modules now (a CuPy array can only exist once the caller
 * imported it; no import is started from here), read again when that module changes, as the
 * generic path does; NULL when there is none. */
static PyObject *cupy_type(void) {
  PyObject *module = PyDict_GetItemWithError(PyImport_GetModuleDict(), name_cupy); /* borrowed */
  if (module == NULL) {
    PyErr_Clear();
    return NULL;
  }
  if (module != cupy_module) {
    PyObject *type = PyObject_GetAttrString(module, "ndarray");
    if (type == NULL) PyErr_Clear();
    PyObject *old_module = cupy_module, *old_type = cupy_ndarray;
    Py_INCREF(module);
    cupy_module = module, cupy_ndarray = type;
    Py_XDECREF(old_module);
    Py_XDECREF(old_type);
  }
  return cupy_ndarray;
}

/* Reads an integer attribute (a length, a flag); 0 where the read fails. */
static int read_integer(PyObject *obj, PyObject *name, long long *out) {
  PyObject *value = PyObject_GetAttr(obj, name);
  if (value == NULL) return 0;
  *out = PyLong_AsLongLong(value);
  Py_DECREF(value);
  return !PyErr_Occurred();
}

/* Whether obj is a 1-D C-contiguous cupy.ndarray of dtype `dtype` (the very object: NumPy's
 * builtin dtypes are singletons) and, when expected >= 0, of `expected` elements: 1 with its
 * pointer (and length, when asked), 0 to decline, -1 with a Python error to propagate. It reads
 * the array's C-level members (dtype, size, _c_contiguous, data.ptr) and ndim, not shape and
 * strides, which build tuples; a CuPy without one of them is declined throughout, and the
 * generic path serves it. */
static int cupy_vector(PyObject *type, PyObject *obj, PyObject *dtype, long long expected, void **pointer,
                       long long *length) {
  if (type == NULL || (PyObject *)Py_TYPE(obj) != type) return 0;
  PyObject *array_dtype = PyObject_GetAttr(obj, name_dtype);
  long long ndim = 0, n = 0, contiguous = 0;
  int ok = array_dtype == dtype && read_integer(obj, name_ndim, &ndim) && ndim == 1 &&
           read_integer(obj, name_size, &n) && (expected < 0 || n == expected) &&
           read_integer(obj, name_c_contiguous, &contiguous) && contiguous;
  Py_XDECREF(array_dtype);
  PyObject *data = ok ? PyObject_GetAttr(obj, name_data) : NULL;
  PyObject *address = data ? PyObject_GetAttr(data, name_ptr) : NULL;
  *pointer = address ? PyLong_AsVoidPtr(address) : NULL;
  Py_XDECREF(address);
  Py_XDECREF(data);
  if (PyErr_Occurred()) {
    if (!declinable_error()) return -1;
    PyErr_Clear();
    return 0;
  }
  if (!ok || address == NULL) return 0;
  if (length) *length = n;
  return 1;
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
  long long n = 0;
  if (address_argument(args[0], &table) || address_argument(args[6], &default_value) ||
      address_argument(args[7], &stream))
    return NULL;
  if (bound_find == NULL || table == NULL) Py_RETURN_NONE;
  PyObject *type = cupy_type();
  int ok = cupy_vector(type, args[1], args[4], -1, &keys, &n);
  if (ok > 0) ok = cupy_vector(type, args[3], flags_dtype, n, &found, NULL);
  if (ok > 0) ok = args[5] == Py_None ? (args[2] == Py_None) : cupy_vector(type, args[2], args[5], n, &values, NULL);
  if (ok < 0) return NULL;
  if (ok == 0) Py_RETURN_NONE;
  PyThreadState *released = n >= GIL_HELD_BELOW ? PyEval_SaveThread() : NULL;
  const gh_status status = bound_find((gh_table *)table, keys, (uint64_t)n, values, (uint8_t *)found, default_value,
                                      (gh_stream)stream);
  if (released) PyEval_RestoreThread(released);
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
  long long n = 0;
  if (address_argument(args[0], &table) || address_argument(args[4], &stream)) return NULL;
  if (bound_contains == NULL || table == NULL) Py_RETURN_NONE;
  PyObject *type = cupy_type();
  int ok = cupy_vector(type, args[1], args[3], -1, &keys, &n);
  if (ok > 0) ok = cupy_vector(type, args[2], flags_dtype, n, &found, NULL);
  if (ok < 0) return NULL;
  if (ok == 0) Py_RETURN_NONE;
  PyThreadState *released = n >= GIL_HELD_BELOW ? PyEval_SaveThread() : NULL;
  const gh_status status = bound_contains((gh_table *)table, keys, (uint64_t)n, (uint8_t *)found, (gh_stream)stream);
  if (released) PyEval_RestoreThread(released);
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

/* The attribute names, interned once; 0 (with a Python error) when one cannot be made. */
static int intern_names(void) {
  PyObject **names[] = {&name_dtype, &name_ndim, &name_size, &name_c_contiguous, &name_data, &name_ptr, &name_cupy};
  const char *texts[] = {"dtype", "ndim", "size", "_c_contiguous", "data", "ptr", "cupy"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i)
    if (*names[i] == NULL && (*names[i] = PyUnicode_InternFromString(texts[i])) == NULL) return 0;
  return 1;
}

PyMODINIT_FUNC PyInit__fastcall(void) {
  if (!intern_names()) return NULL;
  PyObject *module = PyModule_Create(&fastcall_module);
  /* The gpuhash.h this module was compiled with: the package binds it only to that library. */
  if (module != NULL && PyModule_AddIntConstant(module, "GH_VERSION_NUMBER", GH_VERSION_NUMBER) != 0) {
    Py_DECREF(module);
    return NULL;
  }
  return module;
}
