#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <gmime/gmime.h>

int main(int argc, char **argv)
{
    g_mime_init();
    doctest::Context ctx(argc, argv);
    int rc = ctx.run();
    g_mime_shutdown();
    return rc;
}
