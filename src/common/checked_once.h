// CheckedOnce: the per-element states of a structure adopted lazily from a
// segment (common/array_io.h GetLazy), whose elements (a BM25 term's
// postings, a sparse index's list, a row of sparse vectors or of the walk
// graph) are verified and checked at their first read instead of at
// adoption. Each element is unchecked, good or damaged; the first read runs
// the element's check and records the outcome, later reads cost one
// acquire load.
//
//   CheckedOnce lists(num_terms);
//   if (!lists.Passed(t, [&] { return CheckList(t); },
//                     [&](const Status& s) { array.ReportDamage(s); })) { ...empty... }
//
// Two threads reading an unchecked element at once may both run its check;
// a check is a pure function of immutable bytes, so both record the same
// outcome, and the damage may be reported twice (reporting is idempotent).
//
// Thread-safety: Passed may run concurrently. Memory: one byte per element.
#ifndef FLOWRAG_COMMON_CHECKED_ONCE_H_
#define FLOWRAG_COMMON_CHECKED_ONCE_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "flowrag/status.h"

namespace flowrag {

class CheckedOnce {
 public:
  explicit CheckedOnce(size_t elements) : state_(new std::atomic<uint8_t>[elements]()) {}

  // True when element `i` passed its check: `check()` (a Status) runs at the
  // first call for `i`, and a failure is handed to `report(status)`.
  // REQUIRES: i < elements.
  template <class Check, class Report>
  bool Passed(size_t i, const Check& check, const Report& report) const {
    std::atomic<uint8_t>& state = state_[i];
    const uint8_t known = state.load(std::memory_order_acquire);
    if (known != kUnchecked) return known == kGood;
    const Status checked = check();
    if (!checked.ok()) report(checked);
    state.store(checked.ok() ? kGood : kDamaged, std::memory_order_release);
    return checked.ok();
  }

 private:
  static constexpr uint8_t kUnchecked = 0, kGood = 1, kDamaged = 2;
  std::unique_ptr<std::atomic<uint8_t>[]> state_;
};

}  // namespace flowrag

#endif  // FLOWRAG_COMMON_CHECKED_ONCE_H_
