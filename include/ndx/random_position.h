// Where the per-process generator that seeds kernels' random streams stands: the seed it was
// last given and how many seeds it has handed out since. np.random.get_state / set_state
// save and restore it without drawing.
#pragma once
#include <cstdint>

namespace ndx {

struct RandomPosition {
  uint64_t key;  // the last random_seed() (0x5eed before any)
  uint64_t pos;  // draws since then
};

RandomPosition random_position();
// Seeds the generator with key, then skips pos draws.
void set_random_position(uint64_t key, uint64_t pos);

}  // namespace ndx
