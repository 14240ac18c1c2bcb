// StringSlots: the ids of a StringArena's strings looked up by string, as an
// open-addressing table of uint32 ids (linear probing on Hash64 of the
// string over a power of two ≥ 2·n slots, so at most half full; none for no
// strings). The slots are a flat array, so a structure that keeps the arena
// and the slots in a segment looks strings up in place (the BM25 term
// dictionary, text/bm25_index.h; the token trie's vocabulary,
// lexical/aho_corasick.h).
//
// A lookup probes at most as many slots as the table has, so slots adopted
// from a file need only their count and their ids checked (CheckStringSlots),
// not a free slot.
//
// Thread-safety: pure functions.
#ifndef FLOWRAG_COMMON_STRING_SLOTS_H_
#define FLOWRAG_COMMON_STRING_SLOTS_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/flat_array.h"

namespace flowrag {

inline constexpr uint32_t kNoString = UINT32_MAX;  // an empty slot; Find: not found

// The number of slots for n strings.
size_t StringSlotCount(size_t n);

// The slots of `strings`, string i at id i. *distinct (when not null) is
// set false when two strings are equal (the later is then never found).
// O(n) expected.
std::vector<uint32_t> BuildStringSlots(const StringArena& strings, bool* distinct = nullptr);

// The id of `s`, or kNoString. O(1) expected, at most slots.size() probes.
uint32_t FindString(std::span<const uint32_t> slots, const StringArena& strings,
                    std::string_view s);

// "" when `slots` can be the slots of `strings` (StringSlotCount of them,
// each empty or an id in range), else what is wrong, for the caller's error.
// O(slots).
std::string CheckStringSlots(std::span<const uint32_t> slots, size_t strings);

}  // namespace flowrag

#endif  // FLOWRAG_COMMON_STRING_SLOTS_H_
