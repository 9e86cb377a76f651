// Config and key values, their canonical JSON text and stable SHA-256 digests.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace disttune {

/// A config or key value: null, bool, integer, float, string, and nested lists and maps.
/// Maps are ordered by key, so the order in which entries were added never matters.
using Value = nlohmann::json;

/// How deeply a config or key value may nest (a list or map is one level). Deeper values
/// are refused: walking and printing them would need a stack without bound.
inline constexpr std::size_t kMaxValueDepth = 100;

/// The canonical text of a value: compact JSON, map keys sorted, floats in shortest
/// round-trip form. Equal values give equal text in every process on every machine.
/// Throws std::invalid_argument for a non-finite float (it has no JSON form) or a value
/// nested deeper than kMaxValueDepth.
std::string canonical_json(const Value& value);

/// Lower-case hex SHA-256 of bytes (64 characters).
std::string sha256_hex(std::string_view bytes);

/// SHA-256 of a value's canonical text.
std::string digest(const Value& value);

/// SHA-256 of several texts, each length-prefixed so that ("ab","c") != ("a","bc").
std::string digest_of_parts(const std::vector<std::string>& parts);

// describe(x): the canonical Value of a key or config. Overloads below cover numbers,
// strings, tuples, pairs, vectors and arrays; a user type provides its own
// `disttune::Value describe(const T&)` found by argument-dependent lookup.

inline Value describe(bool v) { return v; }
inline Value describe(const std::string& v) { return v; }
inline Value describe(std::string_view v) { return std::string(v); }
inline Value describe(const char* v) { return std::string(v); }
inline Value describe(const Value& v) { return v; }

template <class T>
  requires(std::is_arithmetic_v<T> && !std::is_same_v<T, bool>)
Value describe(T v) {
  return v;
}

template <class T>
Value describe(const std::vector<T>& items);
template <class T, std::size_t N>
Value describe(const std::array<T, N>& items);
template <class A, class B>
Value describe(const std::pair<A, B>& pair);
template <class... Ts>
Value describe(const std::tuple<Ts...>& tuple);

template <class T>
Value describe(const std::vector<T>& items) {
  Value list = Value::array();
  for (const auto& item : items) list.push_back(describe(item));
  return list;
}

template <class T, std::size_t N>
Value describe(const std::array<T, N>& items) {
  Value list = Value::array();
  for (const auto& item : items) list.push_back(describe(item));
  return list;
}

template <class A, class B>
Value describe(const std::pair<A, B>& pair) {
  return Value::array({describe(pair.first), describe(pair.second)});
}

template <class... Ts>
Value describe(const std::tuple<Ts...>& tuple) {
  Value list = Value::array();
  std::apply([&](const auto&... item) { (list.push_back(describe(item)), ...); }, tuple);
  return list;
}

}  // namespace disttune
