// Binds the Communicator seam: a communicator over Python callbacks (e.g. a torch ProcessGroup).
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "disttune/communicator.hpp"
#include "python_callable.hpp"

namespace nb = nanobind;

namespace disttune::python {
namespace {

/// Seconds until the collective's deadline; +inf when it has none.
double seconds_left(const CollectiveContext& context) { return seconds_until(context.deadline); }

std::string bytes_of(const nb::handle& value, const char* callback) {
  if (!nb::isinstance<nb::bytes>(value)) {
    throw nb::type_error((std::string("disttune: communicator callback '") + callback +
                          "' must return bytes")
                             .c_str());
  }
  nb::bytes bytes = nb::borrow<nb::bytes>(value);
  return std::string(bytes.c_str(), bytes.size());
}

/// The engine's callback communicator over Python callables.
std::shared_ptr<Communicator> make_python_communicator(int rank, int size, int local_rank,
                                                       nb::object barrier, nb::object all_reduce_max,
                                                       nb::object all_gather) {
  CommunicatorCallbacks callbacks;
  callbacks.rank = rank;
  callbacks.size = size;
  callbacks.local_rank = local_rank;
  if (!barrier.is_none()) {
    callbacks.barrier = [call = PythonCallable(barrier)](const CollectiveContext& context) {
      call(context);
    };
  }
  if (!all_reduce_max.is_none()) {
    callbacks.all_reduce_max = [call = PythonCallable(all_reduce_max)](
                                   std::span<double> values, const CollectiveContext& context) {
      std::vector<double> reduced;
      {
        nb::gil_scoped_acquire gil;
        nb::list input;
        for (double value : values) input.append(value);
        nb::object result = call(input, context);
        for (nb::handle item : result) reduced.push_back(nb::cast<double>(item));
      }
      if (reduced.size() != values.size()) {
        throw std::runtime_error("disttune: communicator callback 'all_reduce_max' returned " +
                                 std::to_string(reduced.size()) + " values for " +
                                 std::to_string(values.size()));
      }
      std::copy(reduced.begin(), reduced.end(), values.begin());
    };
  }
  if (!all_gather.is_none()) {
    callbacks.all_gather = [call = PythonCallable(all_gather)](const std::string& bytes,
                                                               const CollectiveContext& context) {
      nb::gil_scoped_acquire gil;
      nb::object result = call(nb::bytes(bytes.data(), bytes.size()), context);
      std::vector<std::string> gathered;
      for (nb::handle item : result) gathered.push_back(bytes_of(item, "all_gather"));
      return gathered;
    };
  }
  return make_callback_communicator(std::move(callbacks));
}

}  // namespace

void bind_communicator(nb::module_& module) {

  nb::class_<CollectiveContext>(module, "CollectiveContext",
                                "Where a collective is in a tuning, and its deadline.")
      .def_ro("phase", &CollectiveContext::phase)
      .def_ro("function", &CollectiveContext::function)
      .def_ro("key", &CollectiveContext::key)
      .def_ro("candidate", &CollectiveContext::candidate)
      .def_prop_ro("seconds_left", &seconds_left,
                   "Seconds until the deadline (negative once it has passed; inf when there is none).")
      .def("describe", &CollectiveContext::describe)
      .def("__repr__", &CollectiveContext::describe);

  nb::class_<Communicator>(module, "Communicator", "Collectives over a fixed group of ranks.")
      .def_prop_ro("rank", &Communicator::rank)
      .def_prop_ro("size", &Communicator::size)
      .def_prop_ro("local_rank", &Communicator::local_rank);

  module.def("make_callback_communicator", &make_python_communicator, nb::arg("rank"),
             nb::arg("size"), nb::arg("local_rank"), nb::arg("barrier").none(),
             nb::arg("all_reduce_max").none(), nb::arg("all_gather").none(),
             "A Communicator whose collectives call barrier(context), "
             "all_reduce_max(values: list[float], context) -> list[float] (element-wise "
             "maximum) and all_gather(data: bytes, context) -> list[bytes] (indexed by rank). "
             "Each must finish before "
             "context.seconds_left runs out, else raise CollectiveTimeout. A missing callback "
             "is a ValueError.");
}

}  // namespace disttune::python
