// A new multipart/related's boundary and lines (new_related.hh).
#include "new_related.hh"

#include "gobj.hh"
#include "sha256.hh"
#include "text.hh"

#include <glib.h>
#include <gmime/gmime.h>

#include <memory>
#include <vector>

namespace mimeuri {

std::string hex_sha256(std::initializer_list<std::string_view> pieces)
{
    if (!Sha256::available()) {
        std::unique_ptr<GChecksum, decltype(&g_checksum_free)> sum(g_checksum_new(G_CHECKSUM_SHA256), g_checksum_free);
        for (std::string_view p : pieces)
            g_checksum_update(sum.get(), reinterpret_cast<const guchar *>(p.data()), static_cast<gssize>(p.size()));
        return g_checksum_get_string(sum.get());
    }
    Sha256 h;
    for (std::string_view p : pieces) h.update(p.data(), p.size());
    return text::lower_hex(h.digest());
}

NewRelated NewRelated::around(const MessageContext &ctx, const Node &html, std::string_view prefix,
                              std::initializer_list<std::string_view> seed, std::initializer_list<std::string_view> bodies)
{
    std::vector<std::string> enclosing;
    for (int p = html.parent; p >= 0; p = ctx.nodes()[static_cast<std::size_t>(p)].parent) {
        const Node &pn = ctx.nodes()[static_cast<std::size_t>(p)];
        if (pn.kind == Node::Kind::Multipart)
            if (const char *b = g_mime_multipart_get_boundary(GMIME_MULTIPART(pn.object))) enclosing.emplace_back(b);
    }
    const std::string hash = hex_sha256(seed).substr(0, 24);
    NewRelated r;
    for (int k = 0;; ++k) {
        r.boundary = std::string(prefix) + hash + (k ? "_" + std::to_string(k) : std::string());
        const std::string dashes = "--" + r.boundary;
        bool clash = false;
        for (std::string_view b : bodies) clash = clash || b.find(dashes) != std::string_view::npos;
        for (const auto &e : enclosing)
            clash = clash || r.boundary.compare(0, e.size(), e) == 0 || e.compare(0, r.boundary.size(), r.boundary) == 0;
        if (!clash) return r;
    }
}

} // namespace mimeuri
