// The new bytes of a plan's edits, kept out of the plan the front holds (milter_texts.hh).
#include "milter_texts.hh"

#include "fdio.hh"
#include "wire.hh"
#include "streamed_body.hh"

#include <glib.h>

#include <cerrno>
#include <cstdint>
#include <memory>

namespace mimeuri::milter {

namespace {

// What the front would hold of an edit's bytes: its text, or its streamed body's text and
// held parts.
std::size_t held(const Edit &e)
{
    std::size_t n = e.text.size();
    if (e.streamed) {
        n += e.streamed->text.size();
        for (const StreamedBody::Blob &b : e.streamed->blobs)
            if (b.held) n += b.bytes.size();
    }
    return n;
}

} // namespace

Result<std::vector<SpooledText>> spool_texts(Plan &plan, int fd, std::int64_t size)
{
    std::size_t total = 0;
    for (const Edit &e : plan.edits) total += held(e);
    if (total <= kPlanTextMax) return std::vector<SpooledText>{};
    // Written first, then taken out of the plan: a write that fails leaves the plan whole.
    std::vector<SpooledText> texts;
    std::vector<std::shared_ptr<const StreamedBody>> bodies(plan.edits.size());
    auto at = static_cast<std::uint64_t>(size);
    auto put = [&](const std::string &bytes) -> Status {
        if (!pwrite_all(fd, bytes.data(), bytes.size(), static_cast<off_t>(at)))
            return Error{Code::TempFail, std::string("cannot write the new body beside the message: ") +
                                             g_strerror(errno)};
        at += bytes.size();
        return ok();
    };
    for (std::size_t i = 0; i < plan.edits.size(); ++i) {
        const Edit &e = plan.edits[i];
        if (!e.text.empty()) {
            texts.push_back({i, at, e.text.size()});
            if (Status s = put(e.text); !s) return s.error();
        }
        if (!e.streamed || held(e) == 0) continue;
        // Its text and each held inlined part become spans of the file, the parts' bytes
        // passed as read (no transfer encoding to undo: decode_span).
        auto body = std::make_shared<StreamedBody>(*e.streamed);
        if (!body->text.empty()) {
            body->text_at = static_cast<std::int64_t>(at);
            body->text_size = body->text.size();
            if (Status s = put(body->text); !s) return s.error();
            std::string().swap(body->text);
        }
        for (StreamedBody::Blob &b : body->blobs) {
            if (!b.held) continue;
            const std::uint64_t begin = at;
            if (Status s = put(b.bytes); !s) return s.error();
            b = {false, {}, static_cast<std::int64_t>(begin), static_cast<std::int64_t>(at), 0, b.size};
        }
        bodies[i] = std::move(body);
    }
    for (const SpooledText &t : texts) std::string().swap(plan.edits[t.edit].text);
    for (std::size_t i = 0; i < bodies.size(); ++i)
        if (bodies[i]) plan.edits[i].streamed = std::move(bodies[i]);
    return texts;
}

std::string serialize_texts(const std::vector<SpooledText> &texts) { return wire::encode(texts); }

// Read one at a time (wire.hh): a count the bytes do not hold ends at their end (it throws).
std::vector<SpooledText> deserialize_texts(const std::string &bytes)
{
    return wire::decode<std::vector<SpooledText>>(bytes);
}

Result<std::vector<TextAt>> text_places(const Plan &plan, const std::vector<SpooledText> &texts, std::int64_t size)
{
    std::vector<TextAt> places;
    if (texts.empty()) return places;
    places.resize(plan.edits.size());
    const auto end = static_cast<std::uint64_t>(size);
    for (const SpooledText &t : texts) {
        if (t.edit >= places.size() || places[t.edit].size != 0 || !plan.edits[t.edit].text.empty() ||
            plan.edits[t.edit].streamed || t.size == 0 || t.at < end || t.at + t.size < t.at ||
            t.at + t.size > static_cast<std::uint64_t>(INT64_MAX))
            return Error{Code::Software, "the worker's plan names a text it does not hold"};
        places[t.edit] = {static_cast<std::int64_t>(t.at), static_cast<std::int64_t>(t.size)};
    }
    return places;
}

} // namespace mimeuri::milter
