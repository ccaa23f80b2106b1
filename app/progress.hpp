// A progress bar on stderr for long work (scenario sweeps, leave-one-out refits), only when stderr is a terminal.
#pragma once

#include <cstddef>
#include <functional>
#include <string>

namespace gp::app {

// Called with (done, total) after each unit of work.
using Progress = std::function<void(std::size_t, std::size_t)>;

// A bar labelled `what` ("configurations", "leave-one-out refits"); empty (no output) when `enabled` is false or
// stderr is not a terminal. Short work (under 20 units finishing within half a second) draws nothing.
Progress progress_bar(bool enabled, const std::string& what);

}  // namespace gp::app
