// A queue of waiting work served by key in turn (round-robin): what one
// key queues delays another's next item by at most one item of each other
// key. HttpService keys its waiting requests by client address. Not
// thread-safe; the owner locks.
#pragma once

#include <cstddef>
#include <deque>
#include <string>
#include <unordered_map>
#include <utility>

namespace tilestream {

template <typename T>
class FairQueue {
 public:
  size_t size() const { return size_; }

  void Push(const std::string& key, T item) {
    auto& items = by_key_[key];
    if (items.empty()) turns_.push_back(key);
    items.push_back(std::move(item));
    ++size_;
  }

  // The oldest item of the key whose turn it is. REQUIRES: size() > 0.
  T Pop() {
    std::string key = std::move(turns_.front());
    turns_.pop_front();
    auto it = by_key_.find(key);
    T item = std::move(it->second.front());
    it->second.pop_front();
    if (it->second.empty()) {
      by_key_.erase(it);
    } else {
      turns_.push_back(std::move(key));
    }
    --size_;
    return item;
  }

 private:
  std::deque<std::string> turns_;  // keys with items, in turn
  std::unordered_map<std::string, std::deque<T>> by_key_;
  size_t size_ = 0;
};

}  // namespace tilestream
