// The examples' inputs: the problem size from the command line and seeded random floats.
#pragma once

#include <cstddef>
#include <random>
#include <string>
#include <vector>

namespace example {

/// The first command-line argument as a size when there is one, else `otherwise`.
template <class Size>
Size size_argument(int argc, char** argv, Size otherwise) {
  return argc > 1 ? static_cast<Size>(std::stoll(argv[1])) : otherwise;
}

/// `count` floats drawn from the standard normal distribution with `seed`.
inline std::vector<float> normal_floats(std::size_t count, unsigned seed) {
  std::vector<float> values(count);
  std::mt19937 random(seed);
  std::normal_distribution<float> normal;
  for (float& v : values) v = normal(random);
  return values;
}

}  // namespace example
