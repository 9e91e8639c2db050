// The related pass's options; configuration group [related].
#include "related.hh"
#include "related_report.hh"

namespace mimeuri {

namespace {

OptionTable related_option_table(RelatedOptions &o)
{
    using M = RelatedOptions::Mode;
    OptionTable t;
    t.options = {
        {.long_name = "related", .group = "related", .key = "mode", .kind = OptionKind::Choice, .default_text = "check",
         .help = "Parts an HTML part references outside its multipart/related, or not marked inline: off, check (report "
                 "them) or repair (move them into one multipart/related with it, each marked inline)",
         .access = bind_choice(o.mode, {{"off", M::Off}, {"check", M::Check}, {"repair", M::Repair}})},
    };
    return t;
}

bool related_off(const RelatedOptions &o) { return o.mode == RelatedOptions::Mode::Off; }

} // namespace

PassRow related_row()
{
    PassRow row = pass_row<RelatedPass, RelatedOptions, related_option_table, related_off>("related");
    row.report = &RelatedReport::kind();
    return row;
}

} // namespace mimeuri
