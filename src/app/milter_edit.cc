#include "milter_edit.hh"

#include "header_lines.hh"
#include "streamed_body.hh"

#include <glib.h>

#include <algorithm>

namespace mimeuri {

std::vector<HeaderField> parse_fields(std::string_view block)
{
    std::vector<HeaderField> out;
    // Line by line, not field by field: an empty line (none in a block the MTA sent) is kept
    // as a field with no name, as any other line with no colon.
    Lines lines(block);
    for (Line l; lines.next(l);) {
        std::string_view text = l.content();
        if (!l.lf && !text.empty() && text.back() == '\r') text.remove_suffix(1);
        if (l.folded() && !out.empty()) {
            // The line break before a continuation line belongs to the value.
            out.back().value += "\r\n";
            out.back().value.append(text);
        } else {
            std::size_t colon = text.find(':');
            HeaderField f;
            if (colon == std::string_view::npos) {
                f.name = std::string(text); // not a field: kept whole, so that it still compares
            } else {
                f.name = std::string(text.substr(0, colon));
                f.value = std::string(text.substr(colon + 1));
            }
            out.push_back(std::move(f));
        }
    }
    return out;
}

namespace {

bool same_name(const std::string &a, const std::string &b) { return g_ascii_strcasecmp(a.c_str(), b.c_str()) == 0; }

// libmilter takes a folded value with bare LF line breaks; the MTA writes its own.
std::string lf_breaks(const std::string &v)
{
    std::string out;
    out.reserve(v.size());
    for (std::size_t i = 0; i < v.size(); ++i)
        if (!(v[i] == '\r' && i + 1 < v.size() && v[i + 1] == '\n')) out += v[i];
    return out;
}

// The n-th field of that name, counting from 1, among fields [0, upto) of `fields`.
int occurrence(const std::vector<HeaderField> &fields, std::size_t upto)
{
    int n = 1;
    for (std::size_t i = 0; i < upto; ++i)
        if (same_name(fields[i].name, fields[upto].name)) ++n;
    return n;
}

// One step of an alignment of before with after: a field kept, removed or added.
struct Step {
    enum Kind { Keep, Remove, Add } kind;
    std::size_t old_at; // Keep, Remove: the field in before; Add: the field of before it goes above
    std::size_t new_at; // Keep, Add: the field in after
};

constexpr std::size_t max_cells = 4'000'000; // a 2,000 x 2,000 middle at most

} // namespace

Result<std::vector<HeaderOp>> header_ops(const std::vector<HeaderField> &before, const std::vector<HeaderField> &after)
{
    // Common prefix and suffix, then a longest common subsequence of the middle.
    std::size_t pre = 0;
    while (pre < before.size() && pre < after.size() && before[pre] == after[pre]) ++pre;
    std::size_t suf = 0;
    while (suf < before.size() - pre && suf < after.size() - pre &&
           before[before.size() - 1 - suf] == after[after.size() - 1 - suf])
        ++suf;
    const std::size_t n = before.size() - pre - suf, m = after.size() - pre - suf;
    if (n * m > max_cells)
        return Error{Code::Software, "the header block changed in too many places to hand to the MTA field by field"};
    std::vector<std::uint32_t> lcs((n + 1) * (m + 1), 0);
    auto cell = [&](std::size_t i, std::size_t j) -> std::uint32_t & { return lcs[i * (m + 1) + j]; };
    for (std::size_t i = n; i-- > 0;)
        for (std::size_t j = m; j-- > 0;)
            cell(i, j) = before[pre + i] == after[pre + j] ? cell(i + 1, j + 1) + 1
                                                           : std::max(cell(i + 1, j), cell(i, j + 1));
    std::vector<Step> steps;
    for (std::size_t i = 0, j = 0; i < n || j < m;) {
        if (i < n && j < m && before[pre + i] == after[pre + j]) {
            steps.push_back({Step::Keep, pre + i++, pre + j++});
        } else if (j < m && (i == n || cell(i, j + 1) >= cell(i + 1, j))) {
            steps.push_back({Step::Add, pre + i, pre + j++});
        } else {
            steps.push_back({Step::Remove, pre + i++, 0});
        }
    }

    std::vector<HeaderOp> ops;
    // Fields added below the last field of before: appended, in order.
    std::size_t tail = steps.size();
    if (suf == 0)
        while (tail > 0 && steps[tail - 1].kind == Step::Add) --tail;
    for (std::size_t k = tail; k < steps.size(); ++k)
        ops.push_back({HeaderOp::Kind::Append, after[steps[k].new_at].name, lf_breaks(after[steps[k].new_at].value)});
    // The rest from the bottom up. A field removed next to a field of the same name added
    // in its place is a change of that field.
    for (std::size_t k = tail; k-- > 0;) {
        const Step &s = steps[k];
        if (s.kind == Step::Keep) continue;
        if (k > 0 && s.kind != steps[k - 1].kind && steps[k - 1].kind != Step::Keep) {
            const Step &removed = s.kind == Step::Remove ? s : steps[k - 1];
            const Step &added = s.kind == Step::Add ? s : steps[k - 1];
            // smfi_chgheader keeps the field's name as it was: only for the very same name.
            if (before[removed.old_at].name == after[added.new_at].name) {
                ops.push_back({HeaderOp::Kind::Change, before[removed.old_at].name,
                               lf_breaks(after[added.new_at].value), occurrence(before, removed.old_at)});
                --k;
                continue;
            }
        }
        if (s.kind == Step::Add) {
            ops.push_back({HeaderOp::Kind::Insert, after[s.new_at].name, lf_breaks(after[s.new_at].value),
                           static_cast<int>(s.old_at)});
        } else {
            ops.push_back({HeaderOp::Kind::Delete, before[s.old_at].name, {}, occurrence(before, s.old_at)});
        }
    }
    return ops;
}

Result<SplitEdits> split_edits(const std::vector<Edit> &edits, MessageSplit at)
{
    return split_edits(edits, at, {}, {});
}

Result<SplitEdits> split_edits(const std::vector<Edit> &edits, MessageSplit at, const std::vector<TextAt> &texts,
                               const ReadAt &read_at)
{
    if (!texts.empty() && texts.size() != edits.size())
        return Error{Code::Software, "the edits and where their texts are do not match"};
    SplitEdits out;
    for (std::size_t i = 0; i < edits.size(); ++i) {
        const Edit &e = edits[i];
        const TextAt place = texts.empty() ? TextAt{} : texts[i];
        if (e.end <= at.header_end) {
            out.header.push_back(e);
            if (place.size == 0) continue;
            std::string &text = out.header.back().text;
            text.resize(static_cast<std::size_t>(place.size));
            for (std::size_t got = 0; got < text.size();) {
                auto n = read_at(place.at + static_cast<std::int64_t>(got), text.data() + got, text.size() - got);
                if (!n) return n.error();
                if (*n == 0) return Error{Code::IoErr, "the spooled message ended early"};
                got += *n;
            }
        } else if (e.begin >= at.body_begin) {
            out.body.push_back(e);
            out.body_text.push_back(place);
        } else {
            return Error{Code::Software, "an edit crosses the empty line after the header block"};
        }
    }
    return out;
}

Status stream_edited(const ReadAt &read_at, std::int64_t from, std::int64_t size, const std::vector<Edit> &edits,
                     const std::function<bool(std::string_view)> &sink, std::size_t chunk)
{
    return stream_edited(read_at, from, size, edits, {}, sink, chunk);
}

Status stream_edited(const ReadAt &read_at, std::int64_t from, std::int64_t size, const std::vector<Edit> &edits,
                     const std::vector<TextAt> &texts, const std::function<bool(std::string_view)> &sink,
                     std::size_t chunk)
{
    if (!texts.empty() && texts.size() != edits.size())
        return Error{Code::Software, "the edits and where their texts are do not match"};
    std::vector<std::size_t> sorted(edits.size());
    for (std::size_t i = 0; i < sorted.size(); ++i) sorted[i] = i;
    std::stable_sort(sorted.begin(), sorted.end(),
                     [&](std::size_t a, std::size_t b) { return edits[a].begin < edits[b].begin; });
    std::string out;
    out.reserve(chunk);
    bool go_on = true;
    auto flush = [&](bool all) {
        while (go_on && (out.size() >= chunk || (all && !out.empty()))) {
            std::size_t n = std::min(chunk, out.size());
            go_on = sink(std::string_view(out).substr(0, n));
            out.erase(0, n);
        }
    };
    std::vector<char> buf(chunk);
    auto copy = [&](std::int64_t a, std::int64_t b) -> Status {
        while (a < b && go_on) {
            std::size_t want = static_cast<std::size_t>(std::min<std::int64_t>(b - a, static_cast<std::int64_t>(chunk)));
            auto got = read_at(a, buf.data(), want);
            if (!got) return got.error();
            if (*got == 0) return Error{Code::IoErr, "the spooled message ended early"};
            out.append(buf.data(), *got);
            a += static_cast<std::int64_t>(*got);
            flush(false);
        }
        return ok();
    };
    // A streamed body reads the inlined parts' spans from the same bytes.
    const SpanReader spans = [&read_at](std::int64_t b, std::int64_t e, std::string &into) -> Result<std::string_view> {
        into.resize(static_cast<std::size_t>(e - b));
        for (std::size_t got = 0; got < into.size();) {
            auto n = read_at(b + static_cast<std::int64_t>(got), into.data() + got, into.size() - got);
            if (!n) return n.error();
            if (*n == 0) return Error{Code::IoErr, "the spooled message ended early"};
            got += *n;
        }
        return std::string_view(into);
    };
    std::int64_t pos = from;
    for (std::size_t i : sorted) {
        const Edit *e = &edits[i];
        if (e->begin < pos || e->end < e->begin || e->end > size)
            return Error{Code::Software, "edits overlap or lie outside the body"};
        if (Status s = copy(pos, e->begin); !s) return s;
        if (const TextAt place = texts.empty() ? TextAt{} : texts[i]; place.size > 0) {
            // Its bytes are in the file, past the message: copied as the message's are.
            if (Status s = copy(place.at, place.at + place.size); !s) return s;
            if (!go_on) return ok();
            pos = e->end;
            continue;
        }
        Status made = write_edit(*e, spans, [&](std::string_view v) -> Status {
            if (!go_on) return Error{Code::Software, "stopped"}; // the sink wants no more
            out += v;
            flush(false);
            return ok();
        });
        if (!go_on) return ok();
        if (!made) return made;
        pos = e->end;
    }
    if (Status s = copy(pos, size); !s) return s;
    flush(true);
    return ok();
}

} // namespace mimeuri
