// structure: mimeuri's own walk of a message's MIME structure, as GMime's parser would read
// it, for the messages whose structure is plain (src/mime/structure.cc). The inert check
// (src/mime/inert.cc) decides from it which parts a pass would read, without building a
// GMime tree.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mimeuri {

// One entity of the walk, in document order (GMime's walk order).
struct WalkEntity {
    enum class Kind { Leaf, Multipart, Message }; // Message: an embedded message/rfc822 (its body follows)
    Kind kind{Kind::Leaf};
    std::string type, subtype; // lower case; text/plain where no Content-Type field says
    std::string_view content_type; // the raw Content-Type field (name and value), or empty
    std::string encoding;          // Content-Transfer-Encoding, lower case, without white space
    std::size_t header_begin{0};   // the entity's header block
    std::size_t content_begin{0};  // after the empty line that ends it
    std::size_t content_end{0};    // a leaf's: before the line break of the delimiter line after it
    bool content_id{false};        // its header block has a Content-ID field
    std::string_view content_id_field; // the first one (name and value, folds included)
    bool content_ids{false};       // ... more than one
    std::string charset;           // the Content-Type's charset parameter as written, or empty
    bool location{false};          // ... a Content-Location or Content-Base field
    int depth{0};
};

// The entities of message m, or nothing where the walk is not sure to read m as GMime does
// (a header block that is not plain, a Content-Type it does not parse, a delimiter line that
// only begins like one, a digest, more than max_entities entities or
// deeper than max_depth): the caller then asks GMime.
std::optional<std::vector<WalkEntity>> walk_structure(std::string_view m, std::size_t max_entities, int max_depth);
// The same into out (cleared first; its capacity kept, so that a caller walking message after
// message allocates none of it again); false where the walk is not sure (out then holds what
// it read so far).
bool walk_structure(std::string_view m, std::size_t max_entities, int max_depth, std::vector<WalkEntity> &out);

} // namespace mimeuri
