#define _GNU_SOURCE
/* Baseline for bench/compare.sh: parse every message of an mbox with GMime and write it back
 * (re-serialised, with its From line) to stdout: what a GMime filter that re-serialises does.
 * The mbox is split here ("From " after an empty line), because GMime's own mbox parser
 * stops at the first message without a header block; each message is parsed on its own. */
#include <gmime/gmime.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

static void roundtrip(GMimeStream *out, GMimeFormatOptions *fmt, const char *from, size_t from_len,
                      const char *msg, size_t len, long *n)
{
    g_mime_stream_write(out, from, from_len);
    GMimeStream *in = g_mime_stream_mem_new_with_buffer(msg, len);
    GMimeParser *parser = g_mime_parser_new_with_stream(in);
    GMimeMessage *m = g_mime_parser_construct_message(parser, NULL);
    if (m) {
        g_mime_object_write_to_stream(GMIME_OBJECT(m), fmt, out);
        g_object_unref(m);
    } else {
        g_mime_stream_write(out, msg, len); /* as read */
    }
    g_object_unref(parser);
    g_object_unref(in);
    ++*n;
}

/* Standard output, buffered as a filter would write it, and the count of messages. */
struct out {
    GMimeStream *pipe, *buffered;
    GMimeFormatOptions *fmt;
    long n;
};

static struct out out_open(void)
{
    struct out o = {g_mime_stream_pipe_new(1), NULL, g_mime_format_options_new(), 0};
    g_mime_stream_pipe_set_owner(GMIME_STREAM_PIPE(o.pipe), FALSE);
    o.buffered = g_mime_stream_buffer_new(o.pipe, GMIME_STREAM_BUFFER_BLOCK_WRITE);
    return o;
}

static int out_close(struct out *o)
{
    g_mime_stream_flush(o->buffered);
    fprintf(stderr, "%ld messages\n", o->n);
    g_mime_format_options_free(o->fmt);
    g_object_unref(o->buffered);
    g_object_unref(o->pipe);
    return 0;
}

/* --files F...: each file one message (a Maildir's), written as an mbox. */
static int files(int argc, char **argv)
{
    struct out o = out_open();
    static const char from[] = "From MAILER-DAEMON Thu Jan  1 00:00:00 1970\n";
    for (int k = 2; k < argc; k++) {
        gchar *data = NULL;
        gsize size = 0;
        if (!g_file_get_contents(argv[k], &data, &size, NULL)) continue;
        roundtrip(o.buffered, o.fmt, from, sizeof from - 1, data, size, &o.n);
        g_free(data);
    }
    return out_close(&o);
}

int main(int argc, char **argv)
{
    g_mime_init();
    if (argc > 1 && strcmp(argv[1], "--files") == 0) return files(argc, argv);
    int fd = open(argv[1], O_RDONLY);
    struct stat st;
    fstat(fd, &st);
    const char *data = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    size_t size = st.st_size;
    struct out o = out_open();
    size_t pos = 0;
    while (pos < size) {
        const char *nl = memchr(data + pos, '\n', size - pos);
        size_t body = nl ? (size_t)(nl - data) + 1 : size; /* after the From line */
        size_t next = size;
        for (const char *p = data + body; p && p < data + size;) {
            const char *hit = memmem(p, size - (p - data), "\n\nFrom ", 7);
            if (!hit) break;
            next = (size_t)(hit - data) + 2;
            break;
        }
        roundtrip(o.buffered, o.fmt, data + pos, body - pos, data + body, next - body, &o.n);
        pos = next;
    }
    return out_close(&o);
}
