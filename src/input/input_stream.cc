// A read-only GMimeStream over bytes in memory at a shifted position (input_stream.hh).
// It follows GMimeStreamMem's semantics (seek clamps to the bounds, eos at bound_end), with
// positions offset by base so that they are the input's.
#include "input_stream.hh"

#include <algorithm>
#include <cstring>

namespace {

struct InputStream {
    GMimeStream parent;
    GBytes *bytes;
    const char *data;
    std::int64_t base; // the input offset of data[0]
};

struct InputStreamClass {
    GMimeStreamClass parent_class;
};

G_DEFINE_TYPE(InputStream, input_stream, GMIME_TYPE_STREAM)

InputStream *self(GMimeStream *s) { return reinterpret_cast<InputStream *>(s); }

ssize_t stream_read(GMimeStream *s, char *buf, size_t len)
{
    if (s->position < s->bound_start || s->position >= s->bound_end) return 0;
    const auto n = static_cast<size_t>(std::min<std::int64_t>(static_cast<std::int64_t>(len), s->bound_end - s->position));
    std::memcpy(buf, self(s)->data + (s->position - self(s)->base), n);
    s->position += static_cast<std::int64_t>(n);
    return static_cast<ssize_t>(n);
}

ssize_t stream_write(GMimeStream *, const char *, size_t) { return -1; } // read-only
int stream_flush(GMimeStream *) { return 0; }
int stream_close(GMimeStream *) { return 0; }
gboolean stream_eos(GMimeStream *s) { return s->position >= s->bound_end; }

int stream_reset(GMimeStream *s)
{
    s->position = s->bound_start;
    return 0;
}

gint64 stream_seek(GMimeStream *s, gint64 offset, GMimeSeekWhence whence)
{
    gint64 real = s->position;
    switch (whence) {
    case GMIME_STREAM_SEEK_SET: real = offset; break;
    case GMIME_STREAM_SEEK_END: real = s->bound_end + offset; break;
    case GMIME_STREAM_SEEK_CUR: real = s->position + offset; break;
    }
    s->position = std::clamp(real, s->bound_start, s->bound_end);
    return s->position;
}

gint64 stream_tell(GMimeStream *s) { return s->position; }
gint64 stream_length(GMimeStream *s) { return s->bound_end - s->bound_start; }

GMimeStream *make(GBytes *bytes, std::int64_t base, gint64 start, gint64 end)
{
    auto *st = static_cast<InputStream *>(g_object_new(input_stream_get_type(), nullptr));
    st->bytes = g_bytes_ref(bytes);
    gsize size = 0;
    st->data = static_cast<const char *>(g_bytes_get_data(bytes, &size));
    st->base = base;
    const gint64 last = base + static_cast<gint64>(size);
    // Bounds inside the bytes, whatever is asked: a read never leaves them.
    start = std::clamp<gint64>(start, base, last);
    end = end < 0 ? last : std::clamp<gint64>(end, start, last);
    g_mime_stream_construct(&st->parent, start, end);
    return &st->parent;
}

GMimeStream *stream_substream(GMimeStream *s, gint64 start, gint64 end)
{
    return make(self(s)->bytes, self(s)->base, start, end);
}

void input_stream_finalize(GObject *o)
{
    auto *st = reinterpret_cast<InputStream *>(o);
    if (st->bytes) g_bytes_unref(st->bytes);
    G_OBJECT_CLASS(input_stream_parent_class)->finalize(o);
}

void input_stream_class_init(InputStreamClass *klass)
{
    G_OBJECT_CLASS(klass)->finalize = input_stream_finalize;
    GMimeStreamClass *sc = &klass->parent_class;
    sc->read = stream_read;
    sc->write = stream_write;
    sc->flush = stream_flush;
    sc->close = stream_close;
    sc->eos = stream_eos;
    sc->reset = stream_reset;
    sc->seek = stream_seek;
    sc->tell = stream_tell;
    sc->length = stream_length;
    sc->substream = stream_substream;
}

void input_stream_init(InputStream *st)
{
    st->bytes = nullptr;
    st->data = nullptr;
    st->base = 0;
}

} // namespace

namespace mimeuri {

GMimeStream *input_stream_new(GBytes *bytes, std::int64_t base) { return make(bytes, base, base, -1); }

} // namespace mimeuri
