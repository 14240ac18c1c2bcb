// JsonBuilder: builds one nlohmann::json value from SAX events, so that a
// streaming reader (ingest's JSON document loader, extract's HippoRAG OpenIE
// import) materialises one record at a time instead of the whole file.
//
// Header-only, and the only file in common/ that uses nlohmann::json: include
// it only from modules that link nlohmann_json (ingest and extract do). Not
// thread-safe.
#ifndef FLOWRAG_COMMON_JSON_BUILDER_H_
#define FLOWRAG_COMMON_JSON_BUILDER_H_

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace flowrag {

class JsonBuilder {
 public:
  using json = nlohmann::json;

  // True while a value is being built (inside its outermost container).
  bool active() const { return !stack_.empty(); }
  // The key of the next value in the innermost object.
  void Key(std::string& key) { key_ = std::move(key); }
  // Adds a scalar; true when it completed the value (a scalar root).
  bool Value(json&& v) {
    Insert(std::move(v));
    return stack_.empty();
  }
  // Opens an object or array (`type`) in the current position.
  void Start(json::value_t type) { stack_.push_back(Insert(json(type))); }
  // Closes the innermost container; true when that completed the value.
  bool End() {
    stack_.pop_back();
    return stack_.empty();
  }
  // Moves out the completed value.
  json Take() { return std::move(root_); }

 private:
  // Containers on the stack are only appended to while they are the top, so
  // the pointers to their ancestors stay valid.
  json* Insert(json&& v) {
    if (stack_.empty()) {
      root_ = std::move(v);
      return &root_;
    }
    json& top = *stack_.back();
    if (top.is_array()) {
      top.push_back(std::move(v));
      return &top.back();
    }
    json& slot = top[key_];
    slot = std::move(v);
    return &slot;
  }

  json root_;
  std::vector<json*> stack_;
  std::string key_;
};

}  // namespace flowrag

#endif  // FLOWRAG_COMMON_JSON_BUILDER_H_
