/* Runs gumbo under limits: every allocation it makes is counted against a byte cap and
 * kept on a list, the deadline is asked every few allocations, and the stack gumbo's
 * recursion uses is measured. On any limit, or when malloc fails, the parse is left with
 * longjmp and everything gumbo allocated is freed at once (html_guard_free), so
 * gumbo_destroy_output (recursive) is never needed.
 *
 * C, so that no C++ frame with a destructor lies between setjmp and longjmp. */
#ifndef MIMEURI_HTML_GUARD_H
#define MIMEURI_HTML_GUARD_H

#include <gumbo.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    HTML_GUARD_OK = 0,
    HTML_GUARD_TIME,      /* out_of_time() said so */
    HTML_GUARD_MEMORY,    /* the byte cap */
    HTML_GUARD_NO_MEMORY, /* malloc failed (an address-space limit, or the machine) */
    HTML_GUARD_NESTING,   /* gumbo's recursion went deeper than max_stack bytes */
} HtmlGuardStatus;

typedef struct HtmlGuard HtmlGuard;

/* (transfer full) (nullable: NULL when malloc fails). out_of_time may be NULL; it must not
 * unwind (no C++ exception). */
HtmlGuard *html_guard_new(size_t max_bytes, size_t max_stack, int (*out_of_time)(void *), void *data);

/* Parses html with gumbo (max_errors 0: no error list). On HTML_GUARD_OK, *out is the
 * document, valid until html_guard_free; else *out is NULL. Call once per guard. */
HtmlGuardStatus html_guard_parse(HtmlGuard *g, const char *html, size_t len, GumboOutput **out);


/* Frees every block gumbo still holds, then the guard. */
void html_guard_free(HtmlGuard *g);

#ifdef __cplusplus
}
#endif

#endif
