// KeyHash: hashing of key types (numbers, strings, tuples, pairs, vectors, arrays) for
// the in-process cache, where std::hash stops.
#pragma once

#include <array>
#include <cstddef>
#include <functional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace disttune {

template <class T>
struct KeyHash {
  std::size_t operator()(const T& value) const { return std::hash<T>{}(value); }
};

namespace detail {
inline std::size_t combine_hash(std::size_t seed, std::size_t value) {
  return seed ^ (value + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2));
}
}  // namespace detail

template <class... Ts>
struct KeyHash<std::tuple<Ts...>> {
  std::size_t operator()(const std::tuple<Ts...>& tuple) const {
    std::size_t seed = 0;
    std::apply(
        [&](const auto&... item) {
          ((seed = detail::combine_hash(seed, KeyHash<std::decay_t<decltype(item)>>{}(item))),
           ...);
        },
        tuple);
    return seed;
  }
};

template <class A, class B>
struct KeyHash<std::pair<A, B>> {
  std::size_t operator()(const std::pair<A, B>& pair) const {
    return detail::combine_hash(KeyHash<A>{}(pair.first), KeyHash<B>{}(pair.second));
  }
};

template <class T>
struct KeyHash<std::vector<T>> {
  std::size_t operator()(const std::vector<T>& items) const {
    std::size_t seed = items.size();
    for (const auto& item : items) seed = detail::combine_hash(seed, KeyHash<T>{}(item));
    return seed;
  }
};

template <class T, std::size_t N>
struct KeyHash<std::array<T, N>> {
  std::size_t operator()(const std::array<T, N>& items) const {
    std::size_t seed = N;
    for (const auto& item : items) seed = detail::combine_hash(seed, KeyHash<T>{}(item));
    return seed;
  }
};

}  // namespace disttune
