/* Closes a popover whose parent goes away while it is open (its window
 * closes, its drop-down is removed with a rebuilt editor, its page is
 * switched away), as a click outside would have closed it. */
#ifndef TW_UI_POPOVER_GUARD_H
#define TW_UI_POPOVER_GUARD_H

/* Installs the guard for every popover of the process; once is enough,
 * further calls do nothing. Call from the main thread. */
void tw_popover_guard_install(void);

#endif
