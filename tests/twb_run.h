/* Running the twb executable (named by the TWB environment variable) from
 * command-line tests. */
#ifndef TW_TESTS_TWB_RUN_H
#define TW_TESTS_TWB_RUN_H

typedef struct {
    int exit_status; /* -1 when killed by a signal */
    char *out, *err;
} twb_run;

/* Runs twb with the given arguments (NULL-terminated) and waits. */
twb_run run_twb(const char *first, ...) __attribute__((sentinel));
/* The same with an argument vector (NULL-terminated, without twb itself). */
twb_run run_twb_argv(const char *const *args);
void twb_run_clear(twb_run *run);

#endif
