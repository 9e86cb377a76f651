// Warm start: how near two keys are, which decides whose records order a new key's candidates.
#pragma once

#include <cstddef>
#include <functional>
#include <string>

namespace disttune {

/// The distance between two keys (their canonical JSON texts); smaller is nearer, and a
/// negative, NaN or infinite value means "not a neighbour". Called on every rank alike.
using KeyDistance = std::function<double(const std::string& a, const std::string& b)>;

/// What default_key_distance adds for two key parts that differ and are not both positive
/// numbers: far beyond any difference of sizes (|log2| of 2^64 is 64).
inline constexpr double kKeyPartsDiffer = 1000.0;

/// The default distance: the keys are walked in parallel as JSON. Two positive numbers add
/// |log2 a - log2 b| (4096 and 8192 are 1 apart, 16 and 8192 are 9); arrays of the same
/// length and objects with the same names add their members' distances; any other pair of
/// parts adds 0 when equal, else kKeyPartsDiffer (a dtype, a flag, a shape of another rank).
/// Keys that are not JSON compare as one part. Never throws.
double default_key_distance(const std::string& a, const std::string& b) noexcept;

/// How many of the nearest keys' records make a warm start's prior.
inline constexpr std::size_t kWarmStartNeighbours = 3;

/// The most records of a function a warm start reads from each store (the first it lists):
/// a miss never reads more than this many, however many keys the function has.
inline constexpr std::size_t kWarmStartMostRecords = 256;

}  // namespace disttune
