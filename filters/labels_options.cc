// The type-label pass's options; configuration group [labels].
#include "labels.hh"

#include <algorithm>

namespace mimeuri {

namespace {

OptionTable labels_option_table(LabelOptions &o)
{
    using K = OptionKind;
    using M = LabelOptions::Mode;
    using F = LabelOptions::Format;
    const std::string g = "labels";
    OptionTable t;
    t.options = {
        {.long_name = "labels", .group = g, .key = "mode", .kind = K::Choice, .default_text = "off",
         .help = "Type labels: off, top (the top-level entity only; adding a header there keeps a DKIM body hash "
                 "valid) or all (every part: this changes the body)",
         .access = bind_choice(o.mode, {{"off", M::Off}, {"top", M::Top}, {"all", M::All}})},
        {.long_name = "label-header", .group = g, .key = "header", .kind = K::String,
         .default_text = "Content-Type-URI", .help = "Header that carries the label", .arg_name = "NAME",
         .access = {[&o](const OptionValue &v) -> Status {
                        if (auto s = check_header_value(v.text, " x\n"); !s)
                            return usage_error(v.name + " '" + v.text + "' is not a header name");
                        o.header = v.text;
                        return ok();
                    },
                    [&o] { return o.header; }}},
        {.long_name = "label-format", .group = g, .key = "format", .kind = K::Choice, .default_text = "uri",
         .help = "Label form: a ContentType: URI (draft-eastlake-cturi) or a URC tag /type/subtype/attr:value",
         .access = bind_choice(o.format, {{"uri", F::Uri}, {"urc", F::Urc}})},
    };
    return t;
}

bool labels_off(const LabelOptions &o) { return o.mode == LabelOptions::Mode::Off; }

} // namespace

PassRow labels_row()
{
    PassRow row = pass_row<LabelsPass, LabelOptions, labels_option_table, labels_off>("labels");
    row.edits = [](const MessageReport &r) { // a label under a signature is not written
        return static_cast<std::size_t>(std::count_if(r.labels.begin(), r.labels.end(), [](const LabelEntry &l) { return !l.kept; }));
    };
    return row;
}

} // namespace mimeuri
