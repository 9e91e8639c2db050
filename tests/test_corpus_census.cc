// The census of Message-IDs (src/input/id_census.hh) over every corpus file: no id the run's index
// learns from a message (its own, and each embedded message's: mid_store.cc messages_of, as
// RunIndex::add_message reads them) is ruled out. Each file is read the way a run over it
// reads it (an mbox split into its messages, any other file one message) and its lines go to
// the census as the mbox split gives them (a file with no From_ line is one message of its
// own there too).
#include "helpers.hh"
#include "id_census.hh"
#include "mbox.hh"
#include "message.hh"
#include "mid_store.hh"

#include <doctest/doctest.h>

#include <limits>

using namespace mimeuri;

TEST_CASE("census over the corpus: every id the index learns may come")
{
    std::size_t files = 0, ids = 0, embedded = 0, unsure = 0, ruled_out = 0;
    for (const auto &row : testing::corpus_index()) {
        const std::string path = std::string(MIMEURI_CORPUS) + "/" + row.at(0);
        CAPTURE(path);
        auto src = Source::open_path(path, 1 << 20);
        REQUIRE(src.ok());
        if (src->size() == 0) continue;
        ++files;
        IdCensus census;
        {
            Splitter sp(*src, Format::Mbox);
            sp.census(&census);
            std::vector<Segment> segs;
            for (;;) {
                auto r = sp.step(segs, std::numeric_limits<std::int64_t>::max());
                REQUIRE(r.ok());
                if (*r) break;
            }
        }
        if (!census.complete()) ++unsure;
        auto mbox = looks_like_mbox(*src);
        auto segs = split(*src, mbox.ok() && *mbox ? Format::Mbox : Format::Message);
        REQUIRE(segs.ok());
        for (std::size_t i = 0; i < segs->size(); ++i) {
            auto ctx = MessageContext::parse(*src, (*segs)[i], i + 1, mbox.ok() && *mbox, Limits{});
            for (const StoredMessage &m : messages_of(*ctx)) {
                CAPTURE(m.message_id);
                ++ids;
                embedded += !m.section.empty();
                const bool out = census.rules_out({m.message_id});
                ruled_out += out;
                CHECK_FALSE(out);
            }
        }
    }
    MESSAGE(files << " files, " << ids << " ids (" << embedded << " of embedded messages), census unsure for "
                  << unsure << " files, " << ruled_out << " ids ruled out");
    CHECK(files > 2000);
    CHECK(ids > 2000);
    CHECK(embedded > 20);
    CHECK(unsure * 100 < files); // under 1%: the census helps on real mail
}
