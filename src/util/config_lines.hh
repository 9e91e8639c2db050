// ConfigLines: where things are in a configuration file, for messages. GKeyFile says what is
// wrong but not on which line, and merges a group written twice; this reads the lines as
// GKeyFile does (blanks around, '#' comments, CR LF) to say where. Only option_table.cc
// includes it.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace mimeuri {

class ConfigLines {
public:
    explicit ConfigLines(const std::string &text)
    {
        std::size_t pos = 0;
        while (pos <= text.size()) {
            std::size_t nl = text.find('\n', pos);
            if (nl == std::string::npos) nl = text.size();
            std::string line = text.substr(pos, nl - pos);
            if (!line.empty() && line.back() == '\r') line.pop_back();
            lines_.push_back(std::move(line));
            pos = nl + 1;
        }
    }

    // The line of a group's header, or of a key in a group (its last, which GKeyFile
    // keeps); 0 when not found.
    std::size_t find(const std::string &group, const std::string &key = {}) const
    {
        std::string current;
        std::size_t found = 0;
        for (std::size_t n = 0; n < lines_.size(); ++n) {
            std::string l = strip(lines_[n]);
            if (l.empty() || l[0] == '#') continue;
            if (l[0] == '[' && l.back() == ']') {
                current = l.substr(1, l.size() - 2);
                if (key.empty() && current == group && !found) found = n + 1;
            } else if (!key.empty() && current == group && strip(l.substr(0, l.find('='))) == key) {
                found = n + 1;
            }
        }
        return found;
    }

    // The lines of every header of `group` (GKeyFile merges a group written twice).
    std::vector<std::size_t> headers(const std::string &group) const
    {
        std::vector<std::size_t> found;
        for (std::size_t n = 0; n < lines_.size(); ++n)
            if (strip(lines_[n]) == "[" + group + "]") found.push_back(n + 1);
        return found;
    }

    // The first line that is no comment, group header or key=value inside a group: where
    // GKeyFile stopped reading. 0 when there is none.
    std::size_t first_invalid() const
    {
        bool in_group = false;
        for (std::size_t n = 0; n < lines_.size(); ++n) {
            std::string l = strip(lines_[n]);
            if (l.empty() || l[0] == '#') continue;
            if (l[0] == '[') {
                if (l.back() != ']' || l.find_first_of("[]", 1) != l.size() - 1) return n + 1;
                in_group = true;
            } else if (!in_group || l.find('=') == std::string::npos || strip(l.substr(0, l.find('='))).empty()) {
                return n + 1;
            }
        }
        return 0;
    }

private:
    static std::string strip(const std::string &s)
    {
        auto b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
        return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
    }
    std::vector<std::string> lines_;
};

} // namespace mimeuri
