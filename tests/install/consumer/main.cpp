// A consumer of an installed disttune: tunes a tiny function and prints its result.
#include <cstdio>
#include "disttune/autotune.hpp"
struct C { int unroll; };
disttune::Value describe(const C& c) { return {{"unroll", c.unroll}}; }
int main() {
  disttune::Autotuned<C, int, int(int)>::Spec spec;
  spec.identity = DISTTUNE_FUNCTION("consumer");
  spec.configs = {{1}, {2}};
  spec.key = [](const int& n) { return n; };
  spec.launch = [](const C& c, int n) { return n * c.unroll; };
  spec.options.disk_cache = false;
  disttune::Autotuned<C, int, int(int)> tuned(std::move(spec));
  std::printf("result %d\n", tuned(21));
}
