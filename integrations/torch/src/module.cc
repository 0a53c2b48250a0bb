// weft_torch._C: the Python face of ProcessGroupWeft. The class derives from PyTorch's own
// Python class for backends (ProcessGroup in 1.x, Backend in 2.x), so torch.distributed uses it
// as any other; weft_torch/__init__.py registers it under the name "weft".
#include <pybind11/chrono.h>
#include <pybind11/pybind11.h>
#include <torch/csrc/utils/pybind.h>

#include "process_group.h"

namespace py = pybind11;

namespace {

// The holder of ProcessGroupWeft objects in Python: a c10::intrusive_ptr whose last release
// happens without the GIL. Releasing the group joins its worker thread, and that thread may be
// waiting for the GIL (a Python communication hook runs on it); PyTorch binds its own backends
// the same way for the same reason. Its only member is the intrusive_ptr, which is what lets
// pybind11 hand it to functions that take c10::intrusive_ptr of a base class.
template <typename T>
class GilFreeRelease {
 public:
  GilFreeRelease() = default;
  explicit GilFreeRelease(T* p) : ptr_(c10::intrusive_ptr<T>::unsafe_steal_from_new(p)) {}
  GilFreeRelease(c10::intrusive_ptr<T> p) : ptr_(std::move(p)) {}  // NOLINT: implicit on purpose
  GilFreeRelease(const GilFreeRelease&) = default;
  GilFreeRelease(GilFreeRelease&&) noexcept = default;
  GilFreeRelease& operator=(const GilFreeRelease&) = default;
  GilFreeRelease& operator=(GilFreeRelease&&) noexcept = default;
  ~GilFreeRelease() {
    if (ptr_ && PyGILState_Check()) {
      py::gil_scoped_release noGil;
      ptr_.reset();
    }
  }
  T* get() const noexcept { return ptr_.get(); }
  T& operator*() const noexcept { return *ptr_; }
  T* operator->() const noexcept { return ptr_.get(); }

 private:
  c10::intrusive_ptr<T> ptr_;
};

}  // namespace

PYBIND11_DECLARE_HOLDER_TYPE(T, GilFreeRelease<T>, true);

PYBIND11_MODULE(_C, m) {
  m.doc() = "weft's c10d backend for torch.distributed (registered as \"weft\" by weft_torch)";
  // The base class's Python type must exist before ours names it.
  py::module_::import("torch.distributed");

  py::class_<weft_torch::ProcessGroupWeft, weft_torch::BackendBase, GilFreeRelease<weft_torch::ProcessGroupWeft>>(
      m, "ProcessGroupWeft",
      "A torch.distributed process group (c10d backend) whose operations run on a weft communicator.")
      .def(py::init([](const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
                       std::chrono::milliseconds timeout) {
             return GilFreeRelease<weft_torch::ProcessGroupWeft>(
                 c10::make_intrusive<weft_torch::ProcessGroupWeft>(store, rank, size, timeout));
           }),
           py::arg("store"), py::arg("rank"), py::arg("size"), py::arg("timeout"),
           py::call_guard<py::gil_scoped_release>(),
           "Joins rank `rank` of a `size`-rank weft communicator; rank 0 shares the unique id through `store`.")
      .def("shutdown", &weft_torch::ProcessGroupWeft::shutdown, py::call_guard<py::gil_scoped_release>(),
           "Runs the queued operations and frees the communicator; later operations fail.");

  m.def("_shutdown_all", &weft_torch::ProcessGroupWeft::shutdownAll, py::call_guard<py::gil_scoped_release>(),
        "shutdown() of every live weft process group (registered with atexit).");
  m.def("weft_version", [] { return std::string(weft_version_string()); }, "The version of the libweft loaded.");
  m.attr("uses_backend_api") = py::bool_(WEFT_TORCH_BACKEND_API != 0);
}
