/* Keeps a file chooser's path bar from drawing its two scroll buttons
 * before it has laid them out (GTK 4.8). */
#ifndef TW_UI_PATH_BAR_GUARD_H
#define TW_UI_PATH_BAR_GUARD_H

/* Installs the guard for every file chooser of the process; once is
 * enough, further calls do nothing. Call from the main thread. */
void tw_path_bar_guard_install(void);

#endif
