// The oracle for html::sanitize (tests/test_html_sanitize.cc, fuzz/fuzz_html_sanitize.cc):
// the sanitiser's output parsed by gumbo, a tree builder independent of the tokenizer that
// wrote it, and every element and attribute of that tree looked at for what would run,
// navigate to a script, frame, refresh, post or (with remote images off) load from the network.
#pragma once

#include <string>
#include <string_view>

namespace testing {

// "" when gumbo's tree of html holds nothing active, else what it found first.
std::string active_content(std::string_view html, bool allow_remote_images = false);

} // namespace testing
