// SharedLibrary: dlopen/dlsym/dlclose behind a move-only handle.
#include "cuda_driver/shared_library.hpp"

#include <dlfcn.h>

#include <stdexcept>
#include <utility>

namespace disttune::detail {

SharedLibrary::SharedLibrary(const std::string& name) {
  handle_ = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle_ == nullptr) {
    const char* reason = dlerror();
    throw std::runtime_error("cannot load " + name + ": " + (reason ? reason : "unknown reason"));
  }
}

SharedLibrary SharedLibrary::if_loaded(const std::string& name) {
  SharedLibrary library;
  library.handle_ = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  return library;
}

SharedLibrary::~SharedLibrary() {
  if (handle_ != nullptr) dlclose(handle_);
}

SharedLibrary::SharedLibrary(SharedLibrary&& other) noexcept
    : handle_(std::exchange(other.handle_, nullptr)) {}

SharedLibrary& SharedLibrary::operator=(SharedLibrary&& other) noexcept {
  if (this != &other) {
    if (handle_ != nullptr) dlclose(handle_);
    handle_ = std::exchange(other.handle_, nullptr);
  }
  return *this;
}

void* SharedLibrary::symbol(const char* symbol) const {
  return handle_ == nullptr ? nullptr : dlsym(handle_, symbol);
}

}  // namespace disttune::detail
