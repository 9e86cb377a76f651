// SharedLibrary: a move-only handle to a library opened with dlopen, closed when it dies.
#pragma once

#include <string>

namespace disttune::detail {

/// An open shared library. Empty (loaded() false) when default-constructed or moved from.
class SharedLibrary {
 public:
  SharedLibrary() = default;
  /// Opens `name` (dlopen, RTLD_NOW | RTLD_LOCAL); throws std::runtime_error with
  /// dlerror()'s text if it cannot be opened.
  explicit SharedLibrary(const std::string& name);
  /// Opens `name` only if the process has it loaded already (RTLD_NOLOAD); empty otherwise.
  static SharedLibrary if_loaded(const std::string& name);
  ~SharedLibrary();
  SharedLibrary(SharedLibrary&& other) noexcept;
  SharedLibrary& operator=(SharedLibrary&& other) noexcept;
  SharedLibrary(const SharedLibrary&) = delete;
  SharedLibrary& operator=(const SharedLibrary&) = delete;

  bool loaded() const { return handle_ != nullptr; }
  /// The address of `symbol`, or nullptr if the library does not export it.
  void* symbol(const char* symbol) const;

 private:
  void* handle_ = nullptr;
};

}  // namespace disttune::detail
