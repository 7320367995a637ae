/*
 * interrupt.c - Ctrl+C in the `sluice` shell (see interrupt.h).
 */
#include "cli/interrupt.h"

#include <signal.h>
#include <stddef.h>
#include <string.h>

static SluiceDb *g_db;                  /* the database a SIGINT interrupts */
static volatile sig_atomic_t g_running; /* a statement runs now */
static volatile sig_atomic_t g_hits;    /* SIGINTs between statements since the last take */
static volatile sig_atomic_t g_stopped; /* a SIGINT came while the statement ran */

static void on_sigint(int signo)
{
    (void)signo;
    if (g_running) {
        g_stopped = 1;
        sluice_interrupt(g_db); /* one atomic store: async-signal-safe */
    } else {
        g_hits++;
    }
}

void cli_interrupt_install(CliState *st)
{
    struct sigaction sa;

    g_db = st->db;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0; /* no SA_RESTART: a blocking read at the prompt returns */
    sigaction(SIGINT, &sa, NULL);
}

void cli_interrupt_begin(void)
{
    g_stopped = 0;
    g_running = 1;
}

bool cli_interrupt_end(void)
{
    g_running = 0;
    return g_stopped != 0;
}

int cli_interrupt_take(void)
{
    int n = g_hits;
    g_hits = 0;
    return n;
}
