#include "common/string_slots.h"

#include <bit>

#include "common/hash.h"

namespace flowrag {

size_t StringSlotCount(size_t n) { return n == 0 ? 0 : std::bit_ceil(2 * n); }

std::vector<uint32_t> BuildStringSlots(const StringArena& strings, bool* distinct) {
  std::vector<uint32_t> slots(StringSlotCount(strings.size()), kNoString);
  const size_t mask = slots.size() - 1;
  if (distinct != nullptr) *distinct = true;
  for (size_t i = 0; i < strings.size(); ++i) {
    const std::string_view s = strings[i];
    size_t slot = Hash64(s) & mask;
    while (slots[slot] != kNoString) {
      if (distinct != nullptr && strings[slots[slot]] == s) *distinct = false;
      slot = (slot + 1) & mask;
    }
    slots[slot] = static_cast<uint32_t>(i);
  }
  return slots;
}

uint32_t FindString(std::span<const uint32_t> slots, const StringArena& strings,
                    std::string_view s) {
  if (slots.empty()) return kNoString;
  const size_t mask = slots.size() - 1;
  size_t slot = Hash64(s) & mask;
  for (size_t probe = 0; probe < slots.size(); ++probe) {
    const uint32_t id = slots[slot];
    if (id == kNoString) return kNoString;
    if (strings[id] == s) return id;
    slot = (slot + 1) & mask;
  }
  return kNoString;
}

std::string CheckStringSlots(std::span<const uint32_t> slots, size_t strings) {
  if (slots.size() != StringSlotCount(strings)) {
    return std::to_string(slots.size()) + " slots for " + std::to_string(strings) +
           " strings, expected " + std::to_string(StringSlotCount(strings));
  }
  for (size_t s = 0; s < slots.size(); ++s) {
    if (slots[s] != kNoString && slots[s] >= strings) {
      return "slot " + std::to_string(s) + " names string " + std::to_string(slots[s]) + " of " +
             std::to_string(strings);
    }
  }
  return "";
}

}  // namespace flowrag
