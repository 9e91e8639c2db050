/* See html_guard.h. */
#include "html_guard.h"

#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>

/* Every gumbo block has this header; 32 bytes keep the block 16-byte aligned. */
typedef struct Block {
    struct Block *prev, *next;
    size_t size;
    size_t pad_;
} Block;

/* The deadline is asked every this many allocations: gumbo allocates at least once per tag
 * (its tag buffer), and a tag costs at most a walk of the open elements, so the time
 * between two checks stays small even in quadratic input. */
enum { TIME_CHECK_EVERY = 32 };

struct HtmlGuard {
    size_t max_bytes, max_stack;
    int (*out_of_time)(void *);
    void *data;
    size_t live;
    unsigned long calls;
    uintptr_t stack_base;
    Block head; /* a circular list of live blocks */
    HtmlGuardStatus status;
    jmp_buf jmp;
};

static void fail(HtmlGuard *g, HtmlGuardStatus status)
{
    g->status = status;
    longjmp(g->jmp, 1);
}

static void check_stack(HtmlGuard *g)
{
    char here;
    uintptr_t at = (uintptr_t)&here;
    uintptr_t used = at < g->stack_base ? g->stack_base - at : at - g->stack_base;
    if (used > g->max_stack) fail(g, HTML_GUARD_NESTING);
}

static void *guard_alloc(void *data, size_t size)
{
    HtmlGuard *g = data;
    check_stack(g);
    if (++g->calls % TIME_CHECK_EVERY == 0 && g->out_of_time && g->out_of_time(g->data)) fail(g, HTML_GUARD_TIME);
    if (size > g->max_bytes || g->max_bytes - size < g->live + sizeof(Block)) fail(g, HTML_GUARD_MEMORY);
    Block *b = malloc(sizeof(Block) + size);
    if (!b) fail(g, HTML_GUARD_NO_MEMORY);
    b->size = size;
    b->next = g->head.next;
    b->prev = &g->head;
    g->head.next->prev = b;
    g->head.next = b;
    g->live += sizeof(Block) + size;
    return b + 1;
}

static void guard_free(void *data, void *p)
{
    HtmlGuard *g = data;
    /* Before the NULL test: gumbo's recursive node destruction (a <frameset> that replaces
     * a body) passes NULL at each level for an element with no attributes. */
    check_stack(g);
    if (!p) return;
    Block *b = (Block *)p - 1;
    b->prev->next = b->next;
    b->next->prev = b->prev;
    g->live -= sizeof(Block) + b->size;
    free(b);
}

HtmlGuard *html_guard_new(size_t max_bytes, size_t max_stack, int (*out_of_time)(void *), void *data)
{
    HtmlGuard *g = calloc(1, sizeof *g);
    if (!g) return NULL;
    g->max_bytes = max_bytes;
    g->max_stack = max_stack;
    g->out_of_time = out_of_time;
    g->data = data;
    g->head.next = g->head.prev = &g->head;
    return g;
}

HtmlGuardStatus html_guard_parse(HtmlGuard *g, const char *html, size_t len, GumboOutput **out)
{
    GumboOptions options = kGumboDefaultOptions;
    options.allocator = guard_alloc;
    options.deallocator = guard_free;
    options.userdata = g;
    options.max_errors = 0; /* do not keep a list of every error in hostile input */
    char base;
    g->stack_base = (uintptr_t)&base;
    g->status = HTML_GUARD_OK;
    *out = NULL;
    if (setjmp(g->jmp) != 0) return g->status; /* gumbo's blocks stay listed for html_guard_free */
    GumboOutput *o = gumbo_parse_with_options(&options, html, len);
    *out = o;
    return HTML_GUARD_OK;
}


void html_guard_free(HtmlGuard *g)
{
    if (!g) return;
    for (Block *b = g->head.next; b != &g->head;) {
        Block *next = b->next;
        free(b);
        b = next;
    }
    free(g);
}
