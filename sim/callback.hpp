// Callback: a move-only `void()` callable stored inline, without heap allocation.
//
// std::function allocates when a lambda captures more than ~16 bytes, and an event engine creates one
// callable per event, so the allocator would dominate the hot path. Callback keeps the callable in a
// fixed 56-byte buffer (the object is 64 bytes, one cache line); a callable that does not fit is a
// compile error, not a silent allocation: capture a pointer to your state instead of the state.
// Trivially copyable callables (lambdas capturing pointers, ints, doubles) are moved by memcpy.
#pragma once

#include <cstddef>
#include <cstring>
#include <new>
#include <type_traits>
#include <utility>

namespace gp::sim {

class Callback {
 public:
  // Bytes available for the callable's captures.
  static constexpr std::size_t kCapacity = 56;

  Callback() = default;

  // Wraps any `void()` callable that fits in kCapacity bytes and is nothrow-movable.
  template <class F>
    requires(!std::is_same_v<std::decay_t<F>, Callback> && std::is_invocable_r_v<void, std::decay_t<F>&>)
  Callback(F&& f) {  // NOLINT: implicit, so that lambdas pass straight to schedule functions
    using Fn = std::decay_t<F>;
    static_assert(sizeof(Fn) <= kCapacity,
                  "gp::sim::Callback: captures exceed 56 bytes; capture a pointer to the state instead");
    static_assert(alignof(Fn) <= alignof(std::max_align_t), "gp::sim::Callback: over-aligned callable");
    static_assert(std::is_nothrow_move_constructible_v<Fn>, "gp::sim::Callback: callable must be nothrow-movable");
    ::new (static_cast<void*>(buf_)) Fn(std::forward<F>(f));
    ops_ = &kOps<Fn>;
  }

  Callback(Callback&& o) noexcept : ops_(o.ops_) { take(o); }
  Callback& operator=(Callback&& o) noexcept {
    if (this != &o) {
      reset();
      ops_ = o.ops_;
      take(o);
    }
    return *this;
  }
  Callback(const Callback&) = delete;
  Callback& operator=(const Callback&) = delete;
  ~Callback() { reset(); }

  // True when a callable is held.
  explicit operator bool() const { return ops_ != nullptr; }

  // Calls the callable. Precondition: *this holds one.
  void operator()() { ops_->invoke(buf_); }

  // Destroys the held callable, if any.
  void reset() noexcept {
    if (ops_ != nullptr && ops_->destroy != nullptr) ops_->destroy(buf_);
    ops_ = nullptr;
  }

 private:
  struct Ops {
    void (*invoke)(void*);
    void (*move)(void* dst, void* src);  // null: memcpy is enough
    void (*destroy)(void*);              // null: trivially destructible
  };

  template <class Fn>
  static constexpr bool kTrivial = std::is_trivially_copyable_v<Fn> && std::is_trivially_destructible_v<Fn>;

  template <class Fn>
  static constexpr Ops kOps{
      [](void* p) { (*static_cast<Fn*>(p))(); },
      kTrivial<Fn> ? nullptr
                   : +[](void* dst, void* src) {
                       ::new (dst) Fn(std::move(*static_cast<Fn*>(src)));
                       static_cast<Fn*>(src)->~Fn();
                     },
      std::is_trivially_destructible_v<Fn> ? nullptr : +[](void* p) { static_cast<Fn*>(p)->~Fn(); },
  };

  // Moves o's callable into *this (ops_ already copied) and empties o.
  void take(Callback& o) noexcept {
    if (ops_ == nullptr) return;
    if (ops_->move == nullptr) {
      std::memcpy(buf_, o.buf_, kCapacity);
    } else {
      ops_->move(buf_, o.buf_);
    }
    o.ops_ = nullptr;
  }

  alignas(std::max_align_t) std::byte buf_[kCapacity];
  const Ops* ops_ = nullptr;
};

}  // namespace gp::sim
