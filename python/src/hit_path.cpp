// HitPath: the cache-hit path of a tuned function in C: key_fn, one dict lookup, one call.
#include <Python.h>
#include <structmember.h>

#include <nanobind/nanobind.h>

#include <cstddef>
#include <vector>

#include "bindings.hpp"

namespace nb = nanobind;

namespace disttune::python {
namespace {

/// A callable object: called with positional arguments only, it calls key_fn(*args) once,
/// looks the key up in `hits` (key -> (names, values, ...)) once and on a hit calls
/// fn(*args, **entry) through vectorcall, building no dict, and keeps the hit's tuple as
/// `_last_hit` (in place of the reference it drops anyway, so at no cost). A miss or an
/// unhashable key goes to miss(key, seen, *args): the key already computed, and how many
/// keys `hits` held before the lookup (-1: the key is unhashable, so `hits` was not
/// searched). Keyword calls go to `call` with the original arguments. Both clear
/// `_last_hit` first. Attributes it does not have are read from `owner` (the Python
/// AutotunedFunction).
struct HitPath {
  PyObject_HEAD
  vectorcallfunc vectorcall;
  PyObject* fn;
  PyObject* key_fn;
  PyObject* hits;
  PyObject* call;
  PyObject* miss;
  PyObject* owner;
  PyObject* dict;
  PyObject* last_hit;  ///< the hits entry of the last call, if it was a hit here; else null
  PyObject* weak_references;  ///< so that `owner` can refer to it without a cycle
};

constexpr Py_ssize_t kSmallStack = 16;

/// miss(key, seen, *args), taking a reference to neither.
PyObject* call_miss(HitPath* self, PyObject* key, Py_ssize_t seen, PyObject* const* args,
                    Py_ssize_t nargs) {
  PyObject* seen_object = PyLong_FromSsize_t(seen);
  if (seen_object == nullptr) return nullptr;
  PyObject* small[kSmallStack + 2];
  std::vector<PyObject*> large;
  PyObject** stack = small;
  if (nargs > kSmallStack) {
    large.resize(static_cast<std::size_t>(nargs + 2));
    stack = large.data();
  }
  stack[0] = key;
  stack[1] = seen_object;
  for (Py_ssize_t i = 0; i < nargs; ++i) stack[i + 2] = args[i];
  PyObject* result = PyObject_Vectorcall(self->miss, stack, static_cast<std::size_t>(nargs + 2), nullptr);
  Py_DECREF(seen_object);
  return result;
}

PyObject* hit_path_call(PyObject* self_object, PyObject* const* args, size_t nargsf,
                        PyObject* kwnames) {
  auto* self = reinterpret_cast<HitPath*>(self_object);
  if (kwnames != nullptr && PyTuple_GET_SIZE(kwnames) != 0) {
    Py_CLEAR(self->last_hit);
    return PyObject_Vectorcall(self->call, args, nargsf, kwnames);
  }
  const Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
  PyObject* key = PyObject_Vectorcall(self->key_fn, args, nargs, nullptr);
  if (key == nullptr) return nullptr;
  // Read before the lookup: the miss path searches again only if a key was added since.
  Py_ssize_t seen = PyDict_GET_SIZE(self->hits);
  PyObject* entry = PyDict_GetItemWithError(self->hits, key);
  if (entry == nullptr || !PyTuple_CheckExact(entry) || PyTuple_GET_SIZE(entry) < 2) {
    if (PyErr_Occurred()) {
      if (!PyErr_ExceptionMatches(PyExc_TypeError)) {
        Py_DECREF(key);
        return nullptr;
      }
      PyErr_Clear();  // an unhashable key: the Python path finds it by its canonical text
      seen = -1;
    }
    Py_CLEAR(self->last_hit);
    PyObject* result = call_miss(self, key, seen, args, nargs);
    Py_DECREF(key);
    return result;
  }
  Py_DECREF(key);
  Py_INCREF(entry);
  PyObject* names = PyTuple_GET_ITEM(entry, 0);
  PyObject* values = PyTuple_GET_ITEM(entry, 1);
  const Py_ssize_t nkw = PyTuple_GET_SIZE(values);
  PyObject* small[kSmallStack + 1];
  std::vector<PyObject*> large;
  PyObject** stack = small + 1;  // one free slot before the arguments (ARGUMENTS_OFFSET)
  if (nargs + nkw > kSmallStack) {
    large.resize(static_cast<std::size_t>(nargs + nkw + 1));
    stack = large.data() + 1;
  }
  for (Py_ssize_t i = 0; i < nargs; ++i) stack[i] = args[i];
  for (Py_ssize_t i = 0; i < nkw; ++i) stack[nargs + i] = PyTuple_GET_ITEM(values, i);
  PyObject* result = PyObject_Vectorcall(self->fn, stack, nargs | PY_VECTORCALL_ARGUMENTS_OFFSET,
                                         nkw != 0 ? names : nullptr);
  PyObject* previous = self->last_hit;
  self->last_hit = entry;  // takes the reference taken above
  Py_XDECREF(previous);
  return result;
}

PyObject* hit_path_getattro(PyObject* self_object, PyObject* name) {
  PyObject* found = PyObject_GenericGetAttr(self_object, name);
  if (found != nullptr || !PyErr_ExceptionMatches(PyExc_AttributeError)) return found;
  PyErr_Clear();
  return PyObject_GetAttr(reinterpret_cast<HitPath*>(self_object)->owner, name);
}

/// Every reference a HitPath holds: what the garbage collector visits and clears.
constexpr PyObject* HitPath::*kHeldReferences[] = {
    &HitPath::fn,   &HitPath::key_fn, &HitPath::hits, &HitPath::call,
    &HitPath::miss, &HitPath::owner,  &HitPath::dict, &HitPath::last_hit,
};

int hit_path_traverse(PyObject* self_object, visitproc visit, void* arg) {
  auto* self = reinterpret_cast<HitPath*>(self_object);
  Py_VISIT(Py_TYPE(self_object));
  for (PyObject* HitPath::*reference : kHeldReferences) Py_VISIT(self->*reference);
  return 0;
}

int hit_path_clear(PyObject* self_object) {
  auto* self = reinterpret_cast<HitPath*>(self_object);
  for (PyObject* HitPath::*reference : kHeldReferences) Py_CLEAR(self->*reference);
  return 0;
}

void hit_path_dealloc(PyObject* self_object) {
  PyTypeObject* type = Py_TYPE(self_object);
  PyObject_GC_UnTrack(self_object);
  if (reinterpret_cast<HitPath*>(self_object)->weak_references != nullptr) PyObject_ClearWeakRefs(self_object);
  hit_path_clear(self_object);
  type->tp_free(self_object);
  Py_DECREF(type);
}

#if PY_VERSION_HEX >= 0x030C0000
constexpr int kSizeMember = Py_T_PYSSIZET;
constexpr int kObjectMember = Py_T_OBJECT_EX;
constexpr int kReadOnly = Py_READONLY;
#else
constexpr int kSizeMember = T_PYSSIZET;
constexpr int kObjectMember = T_OBJECT_EX;
constexpr int kReadOnly = READONLY;
#endif

PyMemberDef hit_path_members[] = {
    {"__vectorcalloffset__", kSizeMember, offsetof(HitPath, vectorcall), kReadOnly, nullptr},
    {"__dictoffset__", kSizeMember, offsetof(HitPath, dict), kReadOnly, nullptr},
    {"__weaklistoffset__", kSizeMember, offsetof(HitPath, weak_references), kReadOnly, nullptr},
    {"_last_hit", kObjectMember, offsetof(HitPath, last_hit), 0,
     const_cast<char*>("the hits entry of the last call if it was a hit of the C path (else unset)")},
    {nullptr, 0, 0, 0, nullptr},
};

PyType_Slot hit_path_slots[] = {
    {Py_tp_doc, const_cast<char*>("The cache-hit path of a tuned function (see make_hit_path).")},
    {Py_tp_call, reinterpret_cast<void*>(PyVectorcall_Call)},
    {Py_tp_getattro, reinterpret_cast<void*>(hit_path_getattro)},
    {Py_tp_traverse, reinterpret_cast<void*>(hit_path_traverse)},
    {Py_tp_clear, reinterpret_cast<void*>(hit_path_clear)},
    {Py_tp_dealloc, reinterpret_cast<void*>(hit_path_dealloc)},
    {Py_tp_members, hit_path_members},
    {0, nullptr},
};

PyType_Spec hit_path_spec = {
    "disttune._core.HitPath",
    sizeof(HitPath),
    0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    hit_path_slots,
};

PyTypeObject* hit_path_type = nullptr;

nb::object make_hit_path(nb::callable fn, nb::callable key_fn, nb::dict hits, nb::callable call,
                         nb::callable miss, nb::object owner) {
  auto* self = PyObject_GC_New(HitPath, hit_path_type);
  if (self == nullptr) throw nb::python_error();
  self->vectorcall = hit_path_call;
  self->fn = fn.release().ptr();
  self->key_fn = key_fn.release().ptr();
  self->hits = hits.release().ptr();
  self->call = call.release().ptr();
  self->miss = miss.release().ptr();
  self->owner = owner.release().ptr();
  self->dict = nullptr;
  self->last_hit = nullptr;
  self->weak_references = nullptr;
  PyObject_GC_Track(reinterpret_cast<PyObject*>(self));
  return nb::steal(reinterpret_cast<PyObject*>(self));
}

}  // namespace

void bind_hit_path(nb::module_& module) {
  hit_path_type = reinterpret_cast<PyTypeObject*>(PyType_FromSpec(&hit_path_spec));
  if (hit_path_type == nullptr) throw nb::python_error();
  module.attr("HitPath") = nb::handle(reinterpret_cast<PyObject*>(hit_path_type));
  module.def("make_hit_path", &make_hit_path, nb::arg("fn"), nb::arg("key_fn"), nb::arg("hits"),
             nb::arg("call"), nb::arg("miss"), nb::arg("owner"),
             "A callable that on positional-only calls runs key_fn(*args) once and fn(*args, "
             "**entry) for the entry hits[key] = (names, values, ...), kept as _last_hit; on a "
             "miss it calls miss(key, seen, *args) (seen: len(hits) before the lookup, -1 for an "
             "unhashable key); calls with keywords go to call(*args, **kwargs). A miss or a "
             "keyword call unsets _last_hit. Attributes it lacks are read from owner.");
}

}  // namespace disttune::python
