// KeyHash: hashing of key types (numbers, strings, tuples, pairs, vectors, arrays) for
// the in-process cache, where std::hash stops; EqualKeysDescribeAlike: which key types a
// cache may hold by value in place of their canonical text.
#pragma once

#include <array>
#include <cstddef>
#include <functional>
#include <string>
#include <tuple>
#include <type_traits>
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

/// Whether keys that compare equal (==) always have the same canonical text
/// (canonical_json(describe(key))), so that a cache keyed by the key value answers as one
/// keyed by its text (a TunableKernel's cached launch then skips building the text). True
/// for integers, bools, enums, std::string, and pairs, tuples, vectors and arrays of those.
/// False for floating point (0.0 == -0.0, whose texts differ), pointers (an equal address
/// may hold other contents) and other types; a user key type opts in by specializing this
/// as std::true_type, and must then be hashable by KeyHash.
template <class Key>
struct EqualKeysDescribeAlike : std::bool_constant<std::is_integral_v<Key> || std::is_enum_v<Key>> {};

template <>
struct EqualKeysDescribeAlike<std::string> : std::true_type {};

template <class A, class B>
struct EqualKeysDescribeAlike<std::pair<A, B>>
    : std::bool_constant<EqualKeysDescribeAlike<A>::value && EqualKeysDescribeAlike<B>::value> {};

template <class... Ts>
struct EqualKeysDescribeAlike<std::tuple<Ts...>> : std::bool_constant<(EqualKeysDescribeAlike<Ts>::value && ...)> {};

template <class T>
struct EqualKeysDescribeAlike<std::vector<T>> : EqualKeysDescribeAlike<T> {};

template <class T, std::size_t N>
struct EqualKeysDescribeAlike<std::array<T, N>> : EqualKeysDescribeAlike<T> {};

}  // namespace disttune
