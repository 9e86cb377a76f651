// Collective contexts, the callback communicator and the default collective deadline.
#include "disttune/communicator.hpp"

#include <string>

#include "disttune/settings.hpp"

namespace disttune {

std::string CollectiveContext::describe() const {
  std::string text = "phase '" + phase + "'";
  if (!function.empty()) text += " of function '" + function + "'";
  if (!key.empty()) text += ", key " + key;
  if (candidate) text += ", candidate " + std::to_string(*candidate);
  return text;
}

namespace {

class CallbackCommunicator final : public Communicator {
 public:
  explicit CallbackCommunicator(CommunicatorCallbacks callbacks) : callbacks_(std::move(callbacks)) {}
  int rank() const override { return callbacks_.rank; }
  int size() const override { return callbacks_.size; }
  int local_rank() const override { return callbacks_.local_rank; }
  void barrier(const CollectiveContext& context) override { callbacks_.barrier(context); }
  void all_reduce_max(std::span<double> values, const CollectiveContext& context) override {
    callbacks_.all_reduce_max(values, context);
  }
  std::vector<std::string> all_gather(const std::string& bytes,
                                      const CollectiveContext& context) override {
    std::vector<std::string> gathered = callbacks_.all_gather(bytes, context);
    if (gathered.size() != static_cast<std::size_t>(callbacks_.size)) {
      throw std::runtime_error("disttune: all_gather callback returned " +
                               std::to_string(gathered.size()) + " parts for " +
                               std::to_string(callbacks_.size) + " ranks");
    }
    return gathered;
  }

 private:
  CommunicatorCallbacks callbacks_;
};

}  // namespace

std::unique_ptr<Communicator> make_callback_communicator(CommunicatorCallbacks callbacks) {
  if (callbacks.size < 1) {
    throw std::invalid_argument("disttune: communicator size must be >= 1, got " +
                                std::to_string(callbacks.size));
  }
  if (callbacks.rank < 0 || callbacks.rank >= callbacks.size) {
    throw std::invalid_argument("disttune: rank " + std::to_string(callbacks.rank) +
                                " is outside [0, " + std::to_string(callbacks.size) + ")");
  }
  if (callbacks.local_rank < 0) {
    throw std::invalid_argument("disttune: local rank must be >= 0");
  }
  const char* missing = !callbacks.barrier          ? "barrier"
                        : !callbacks.all_reduce_max ? "all_reduce_max"
                        : !callbacks.all_gather     ? "all_gather"
                                                    : nullptr;
  if (missing != nullptr) {
    throw std::invalid_argument(std::string("disttune: communicator callback '") + missing +
                                "' is missing");
  }
  return std::make_unique<CallbackCommunicator>(std::move(callbacks));
}

std::chrono::milliseconds default_collective_timeout() { return collective_timeout_setting(); }

}  // namespace disttune
